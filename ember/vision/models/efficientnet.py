"""EfficientNet B0-B7 (torchvision.models.efficientnet): MBConv stages with squeeze-excitation,
SiLU and stochastic depth, named features.S.B.block.M as torchvision's."""
from typing import Optional

import copy
import math
from functools import partial

from ... import flatten, nn
from ..ops.misc import Conv2dNormActivation, SqueezeExcitation
from ..ops.stochastic_depth import StochasticDepth
from ._api import register_model, weights_enum
from ._utils import handle_legacy_interface, load_weights, make_divisible, prepare_weights

__all__ = ["EfficientNet", "efficientnet_b0", "efficientnet_b1", "efficientnet_b2",
           "efficientnet_b3", "efficientnet_b4", "efficientnet_b5", "efficientnet_b6",
           "efficientnet_b7", "EfficientNet_B0_Weights", "EfficientNet_B1_Weights",
           "EfficientNet_B2_Weights", "EfficientNet_B3_Weights", "EfficientNet_B4_Weights",
           "EfficientNet_B5_Weights", "EfficientNet_B6_Weights", "EfficientNet_B7_Weights",
           "EfficientNet_V2_L_Weights", "EfficientNet_V2_M_Weights", "EfficientNet_V2_S_Weights"]


class MBConvConfig:
    def __init__(self, expand_ratio, kernel, stride, input_channels, out_channels, num_layers,
                 width_mult=1.0, depth_mult=1.0):
        self.expand_ratio = expand_ratio
        self.kernel = kernel
        self.stride = stride
        self.input_channels = self.adjust_channels(input_channels, width_mult)
        self.out_channels = self.adjust_channels(out_channels, width_mult)
        self.num_layers = int(math.ceil(num_layers * depth_mult))
        self.block = MBConv

    @staticmethod
    def adjust_channels(channels, width_mult, min_value=None):
        return make_divisible(channels * width_mult, 8, min_value)


class MBConv(nn.Module):
    def __init__(self, cnf, stochastic_depth_prob, norm_layer, se_layer=SqueezeExcitation):
        super().__init__()
        if not (1 <= cnf.stride <= 2):
            raise ValueError("illegal stride value")
        self.use_res_connect = cnf.stride == 1 and cnf.input_channels == cnf.out_channels
        act = nn.SiLU
        expanded = cnf.adjust_channels(cnf.input_channels, cnf.expand_ratio)
        layers = []
        if expanded != cnf.input_channels:
            layers.append(Conv2dNormActivation(cnf.input_channels, expanded, kernel_size=1,
                                               norm_layer=norm_layer, activation_layer=act))
        layers.append(Conv2dNormActivation(expanded, expanded, kernel_size=cnf.kernel,
                                           stride=cnf.stride, groups=expanded,
                                           norm_layer=norm_layer, activation_layer=act))
        squeeze = max(1, cnf.input_channels // 4)
        layers.append(se_layer(expanded, squeeze, activation=partial(nn.SiLU, inplace=True)))
        layers.append(Conv2dNormActivation(expanded, cnf.out_channels, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=None))
        self.block = nn.Sequential(*layers)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")
        self.out_channels = cnf.out_channels

    def forward(self, input):
        result = self.block(input)
        if self.use_res_connect:
            result = self.stochastic_depth(result)
            result += input
        return result


class EfficientNet(nn.Module):
    def __init__(self, inverted_residual_setting, dropout, stochastic_depth_prob=0.2,
                 num_classes=1000, norm_layer=None, last_channel=None):
        super().__init__()
        if not inverted_residual_setting:
            raise ValueError("The inverted_residual_setting should not be empty")
        if not (isinstance(inverted_residual_setting, (list, tuple)) and all(
                isinstance(s, MBConvConfig) for s in inverted_residual_setting)):
            raise TypeError("The inverted_residual_setting should be List[MBConvConfig]")
        norm_layer = norm_layer or nn.BatchNorm2d
        first = inverted_residual_setting[0].input_channels
        layers = [Conv2dNormActivation(3, first, kernel_size=3, stride=2, norm_layer=norm_layer,
                                       activation_layer=nn.SiLU)]
        total = sum(cnf.num_layers for cnf in inverted_residual_setting)
        block_id = 0
        for cnf in inverted_residual_setting:
            stage = []
            for _ in range(cnf.num_layers):
                block_cnf = copy.copy(cnf)
                if stage:  # later blocks of a stage keep its width and resolution
                    block_cnf.input_channels = block_cnf.out_channels
                    block_cnf.stride = 1
                sd_prob = stochastic_depth_prob * float(block_id) / total
                stage.append(block_cnf.block(block_cnf, sd_prob, norm_layer))
                block_id += 1
            layers.append(nn.Sequential(*stage))
        last_in = inverted_residual_setting[-1].out_channels
        last_out = last_channel if last_channel is not None else 4 * last_in
        layers.append(Conv2dNormActivation(last_in, last_out, kernel_size=1,
                                           norm_layer=norm_layer, activation_layer=nn.SiLU))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True),
                                        nn.Linear(last_out, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, (nn.BatchNorm2d, nn.GroupNorm)):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                init_range = 1.0 / math.sqrt(m.out_features)
                nn.init.uniform_(m.weight, -init_range, init_range)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.avgpool(self.features(x))
        return self.classifier(flatten(x, 1))


def _efficientnet(name, width_mult, depth_mult, dropout, weights, progress, kwargs,
                  norm_layer=None):
    c = partial(MBConvConfig, width_mult=width_mult, depth_mult=depth_mult)
    setting = [c(1, 3, 1, 32, 16, 1), c(6, 3, 2, 16, 24, 2), c(6, 5, 2, 24, 40, 2),
               c(6, 3, 2, 40, 80, 3), c(6, 5, 1, 80, 112, 3), c(6, 5, 2, 112, 192, 4),
               c(6, 3, 1, 192, 320, 1)]
    dropout = kwargs.pop("dropout", dropout)
    if norm_layer is not None:
        kwargs.setdefault("norm_layer", norm_layer)
    model = EfficientNet(setting, dropout, **kwargs)
    return load_weights(model, weights, progress)


EfficientNet_B0_Weights = weights_enum("EfficientNet_B0_Weights", __name__)
EfficientNet_B1_Weights = weights_enum("EfficientNet_B1_Weights", __name__)
EfficientNet_B2_Weights = weights_enum("EfficientNet_B2_Weights", __name__)
EfficientNet_B3_Weights = weights_enum("EfficientNet_B3_Weights", __name__)
EfficientNet_B4_Weights = weights_enum("EfficientNet_B4_Weights", __name__)
EfficientNet_B5_Weights = weights_enum("EfficientNet_B5_Weights", __name__)
EfficientNet_B6_Weights = weights_enum("EfficientNet_B6_Weights", __name__)
EfficientNet_B7_Weights = weights_enum("EfficientNet_B7_Weights", __name__)
EfficientNet_V2_L_Weights = weights_enum("EfficientNet_V2_L_Weights", __name__)
EfficientNet_V2_M_Weights = weights_enum("EfficientNet_V2_M_Weights", __name__)
EfficientNet_V2_S_Weights = weights_enum("EfficientNet_V2_S_Weights", __name__)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B0_Weights.IMAGENET1K_V1))
def efficientnet_b0(*, weights: Optional[EfficientNet_B0_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(EfficientNet_B0_Weights, weights, kwargs)
    return _efficientnet("efficientnet_b0", 1.0, 1.0, 0.2, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B1_Weights.IMAGENET1K_V1))
def efficientnet_b1(*, weights: Optional[EfficientNet_B1_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(EfficientNet_B1_Weights, weights, kwargs)
    return _efficientnet("efficientnet_b1", 1.0, 1.1, 0.2, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B2_Weights.IMAGENET1K_V1))
def efficientnet_b2(*, weights: Optional[EfficientNet_B2_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(EfficientNet_B2_Weights, weights, kwargs)
    return _efficientnet("efficientnet_b2", 1.1, 1.2, 0.3, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B3_Weights.IMAGENET1K_V1))
def efficientnet_b3(*, weights: Optional[EfficientNet_B3_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(EfficientNet_B3_Weights, weights, kwargs)
    return _efficientnet("efficientnet_b3", 1.2, 1.4, 0.3, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B4_Weights.IMAGENET1K_V1))
def efficientnet_b4(*, weights: Optional[EfficientNet_B4_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(EfficientNet_B4_Weights, weights, kwargs)
    return _efficientnet("efficientnet_b4", 1.4, 1.8, 0.4, weights, progress, kwargs)


_BN_B5 = partial(nn.BatchNorm2d, eps=0.001, momentum=0.01)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B5_Weights.IMAGENET1K_V1))
def efficientnet_b5(*, weights: Optional[EfficientNet_B5_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(EfficientNet_B5_Weights, weights, kwargs)
    return _efficientnet("efficientnet_b5", 1.6, 2.2, 0.4, weights, progress, kwargs, _BN_B5)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B6_Weights.IMAGENET1K_V1))
def efficientnet_b6(*, weights: Optional[EfficientNet_B6_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(EfficientNet_B6_Weights, weights, kwargs)
    return _efficientnet("efficientnet_b6", 1.8, 2.6, 0.5, weights, progress, kwargs, _BN_B5)


@register_model()
@handle_legacy_interface(weights=("pretrained", EfficientNet_B7_Weights.IMAGENET1K_V1))
def efficientnet_b7(*, weights: Optional[EfficientNet_B7_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(EfficientNet_B7_Weights, weights, kwargs)
    return _efficientnet("efficientnet_b7", 2.0, 3.1, 0.5, weights, progress, kwargs, _BN_B5)
