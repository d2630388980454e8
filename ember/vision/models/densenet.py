"""DenseNet (torchvision.models.densenet): dense blocks whose layers see the concatenation of
every earlier feature map, named features.denseblockN.denselayerM.* as torchvision's."""
from typing import Optional

import re
from collections import OrderedDict

from ... import cat, flatten, nn
from ...nn import functional as F
from ._api import register_model, weights_enum
from ._utils import handle_legacy_interface, load_weights, prepare_weights

__all__ = ["DenseNet", "densenet121", "densenet161", "densenet169", "densenet201",
           "DenseNet121_Weights", "DenseNet161_Weights", "DenseNet169_Weights",
           "DenseNet201_Weights"]


class _DenseLayer(nn.Module):
    def __init__(self, num_input_features, growth_rate, bn_size, drop_rate,
                 memory_efficient=False):
        super().__init__()
        self.norm1 = nn.BatchNorm2d(num_input_features)
        self.relu1 = nn.ReLU(inplace=True)
        self.conv1 = nn.Conv2d(num_input_features, bn_size * growth_rate, kernel_size=1,
                               stride=1, bias=False)
        self.norm2 = nn.BatchNorm2d(bn_size * growth_rate)
        self.relu2 = nn.ReLU(inplace=True)
        self.conv2 = nn.Conv2d(bn_size * growth_rate, growth_rate, kernel_size=3, stride=1,
                               padding=1, bias=False)
        self.drop_rate = float(drop_rate)
        # torchvision's checkpointing only trades memory for time; the values are the same
        self.memory_efficient = memory_efficient

    def forward(self, input):
        prev = [input] if not isinstance(input, (list, tuple)) else input
        bottleneck = self.conv1(self.relu1(self.norm1(cat(prev, 1))))
        new = self.conv2(self.relu2(self.norm2(bottleneck)))
        if self.drop_rate > 0:
            new = F.dropout(new, p=self.drop_rate, training=self.training)
        return new


class _DenseBlock(nn.ModuleDict):
    _version = 2

    def __init__(self, num_layers, num_input_features, bn_size, growth_rate, drop_rate,
                 memory_efficient=False):
        super().__init__()
        for i in range(num_layers):
            self.add_module(f"denselayer{i + 1}",
                            _DenseLayer(num_input_features + i * growth_rate, growth_rate,
                                        bn_size, drop_rate, memory_efficient))

    def forward(self, init_features):
        features = [init_features]
        for _, layer in self.items():
            features.append(layer(features))
        return cat(features, 1)


class _Transition(nn.Sequential):
    def __init__(self, num_input_features, num_output_features):
        super().__init__()
        self.norm = nn.BatchNorm2d(num_input_features)
        self.relu = nn.ReLU(inplace=True)
        self.conv = nn.Conv2d(num_input_features, num_output_features, kernel_size=1, stride=1,
                              bias=False)
        self.pool = nn.AvgPool2d(kernel_size=2, stride=2)


class DenseNet(nn.Module):
    def __init__(self, growth_rate=32, block_config=(6, 12, 24, 16), num_init_features=64,
                 bn_size=4, drop_rate=0, num_classes=1000, memory_efficient=False):
        super().__init__()
        self.features = nn.Sequential(OrderedDict([
            ("conv0", nn.Conv2d(3, num_init_features, kernel_size=7, stride=2, padding=3,
                                bias=False)),
            ("norm0", nn.BatchNorm2d(num_init_features)),
            ("relu0", nn.ReLU(inplace=True)),
            ("pool0", nn.MaxPool2d(kernel_size=3, stride=2, padding=1))]))
        num_features = num_init_features
        for i, num_layers in enumerate(block_config):
            self.features.add_module(
                f"denseblock{i + 1}",
                _DenseBlock(num_layers, num_features, bn_size, growth_rate, drop_rate,
                            memory_efficient))
            num_features += num_layers * growth_rate
            if i != len(block_config) - 1:
                self.features.add_module(f"transition{i + 1}",
                                         _Transition(num_features, num_features // 2))
                num_features //= 2
        self.features.add_module("norm5", nn.BatchNorm2d(num_features))
        self.classifier = nn.Linear(num_features, num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.constant_(m.weight, 1)
                nn.init.constant_(m.bias, 0)
            elif isinstance(m, nn.Linear):
                nn.init.constant_(m.bias, 0)

    def forward(self, x):
        out = F.relu(self.features(x), inplace=True)
        out = flatten(F.adaptive_avg_pool2d(out, (1, 1)), 1)
        return self.classifier(out)


# torchvision's published DenseNet files name layers "norm.1" where the modules say "norm1"
_LEGACY_KEY = re.compile(
    r"^(.*denselayer\d+\.(?:norm|relu|conv))\.((?:[12])\.(?:weight|bias|running_mean|running_var))$")


def _fix_legacy_keys(state):
    out = OrderedDict()
    for key, value in state.items():
        m = _LEGACY_KEY.match(key)
        out[m.group(1) + m.group(2) if m else key] = value
    return out


def _densenet(name, growth_rate, block_config, num_init_features, weights, progress, kwargs):
    model = DenseNet(growth_rate, block_config, num_init_features, **kwargs)
    return load_weights(model, weights, progress, fix_state=_fix_legacy_keys)


DenseNet121_Weights = weights_enum("DenseNet121_Weights", __name__)
DenseNet161_Weights = weights_enum("DenseNet161_Weights", __name__)
DenseNet169_Weights = weights_enum("DenseNet169_Weights", __name__)
DenseNet201_Weights = weights_enum("DenseNet201_Weights", __name__)


@register_model()
@handle_legacy_interface(weights=("pretrained", DenseNet121_Weights.IMAGENET1K_V1))
def densenet121(*, weights: Optional[DenseNet121_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(DenseNet121_Weights, weights, kwargs)
    return _densenet("densenet121", 32, (6, 12, 24, 16), 64, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", DenseNet161_Weights.IMAGENET1K_V1))
def densenet161(*, weights: Optional[DenseNet161_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(DenseNet161_Weights, weights, kwargs)
    return _densenet("densenet161", 48, (6, 12, 36, 24), 96, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", DenseNet169_Weights.IMAGENET1K_V1))
def densenet169(*, weights: Optional[DenseNet169_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(DenseNet169_Weights, weights, kwargs)
    return _densenet("densenet169", 32, (6, 12, 32, 32), 64, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", DenseNet201_Weights.IMAGENET1K_V1))
def densenet201(*, weights: Optional[DenseNet201_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(DenseNet201_Weights, weights, kwargs)
    return _densenet("densenet201", 32, (6, 12, 48, 32), 64, weights, progress, kwargs)
