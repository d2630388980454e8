"""ConvNeXt (torchvision.models.convnext): depthwise 7x7 conv -> LayerNorm -> MLP blocks with
layer scale and stochastic depth, named features.S.B.block.M as torchvision's."""
from typing import Optional

from functools import partial

from ... import nn, ones
from ...nn import functional as F
from ..ops.misc import Conv2dNormActivation, Permute
from ..ops.stochastic_depth import StochasticDepth
from ._api import register_model, weights_enum
from ._utils import handle_legacy_interface, load_weights, prepare_weights

__all__ = ["ConvNeXt", "convnext_tiny", "convnext_small", "convnext_base", "convnext_large",
           "ConvNeXt_Base_Weights", "ConvNeXt_Large_Weights", "ConvNeXt_Small_Weights",
           "ConvNeXt_Tiny_Weights"]


class LayerNorm2d(nn.LayerNorm):
    """LayerNorm over the channels of an NCHW tensor."""

    def forward(self, x):
        x = x.permute(0, 2, 3, 1)
        x = F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)
        return x.permute(0, 3, 1, 2)


class CNBlock(nn.Module):
    def __init__(self, dim, layer_scale, stochastic_depth_prob, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or partial(nn.LayerNorm, eps=1e-6)
        self.block = nn.Sequential(
            nn.Conv2d(dim, dim, kernel_size=7, padding=3, groups=dim, bias=True),
            Permute([0, 2, 3, 1]), norm_layer(dim),
            nn.Linear(dim, 4 * dim, bias=True), nn.GELU(),
            nn.Linear(4 * dim, dim, bias=True), Permute([0, 3, 1, 2]))
        self.layer_scale = nn.Parameter(ones(dim, 1, 1) * layer_scale)
        self.stochastic_depth = StochasticDepth(stochastic_depth_prob, "row")

    def forward(self, input):
        result = self.stochastic_depth(self.layer_scale * self.block(input))
        result += input
        return result


class CNBlockConfig:
    def __init__(self, input_channels, out_channels, num_layers):
        self.input_channels = input_channels
        self.out_channels = out_channels
        self.num_layers = num_layers

    def __repr__(self):
        return (f"{self.__class__.__name__}(input_channels={self.input_channels}, "
                f"out_channels={self.out_channels}, num_layers={self.num_layers})")


class ConvNeXt(nn.Module):
    def __init__(self, block_setting, stochastic_depth_prob=0.0, layer_scale=1e-6,
                 num_classes=1000, block=None, norm_layer=None, **kwargs):
        super().__init__()
        if not block_setting:
            raise ValueError("The block_setting should not be empty")
        if not (isinstance(block_setting, (list, tuple)) and all(
                isinstance(s, CNBlockConfig) for s in block_setting)):
            raise TypeError("The block_setting should be List[CNBlockConfig]")
        block = block or CNBlock
        norm_layer = norm_layer or partial(LayerNorm2d, eps=1e-6)
        first = block_setting[0].input_channels
        layers = [Conv2dNormActivation(3, first, kernel_size=4, stride=4, padding=0,
                                       norm_layer=norm_layer, activation_layer=None, bias=True)]
        total = sum(cnf.num_layers for cnf in block_setting)
        block_id = 0
        for cnf in block_setting:
            stage = []
            for _ in range(cnf.num_layers):
                sd_prob = stochastic_depth_prob * block_id / (total - 1.0)
                stage.append(block(cnf.input_channels, layer_scale, sd_prob))
                block_id += 1
            layers.append(nn.Sequential(*stage))
            if cnf.out_channels is not None:  # downsampling between stages
                layers.append(nn.Sequential(
                    norm_layer(cnf.input_channels),
                    nn.Conv2d(cnf.input_channels, cnf.out_channels, kernel_size=2, stride=2)))
        self.features = nn.Sequential(*layers)
        self.avgpool = nn.AdaptiveAvgPool2d(1)
        last = block_setting[-1]
        last_out = last.out_channels if last.out_channels is not None else last.input_channels
        self.classifier = nn.Sequential(norm_layer(last_out), nn.Flatten(1),
                                        nn.Linear(last_out, num_classes))
        for m in self.modules():
            if isinstance(m, (nn.Conv2d, nn.Linear)):
                nn.init.trunc_normal_(m.weight, std=0.02)
                if m.bias is not None:
                    nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.classifier(self.avgpool(self.features(x)))


def _convnext(name, setting, sd_default, weights, progress, kwargs):
    sd_prob = kwargs.pop("stochastic_depth_prob", sd_default)
    model = ConvNeXt(setting, stochastic_depth_prob=sd_prob, **kwargs)
    return load_weights(model, weights, progress)


ConvNeXt_Base_Weights = weights_enum("ConvNeXt_Base_Weights", __name__)
ConvNeXt_Large_Weights = weights_enum("ConvNeXt_Large_Weights", __name__)
ConvNeXt_Small_Weights = weights_enum("ConvNeXt_Small_Weights", __name__)
ConvNeXt_Tiny_Weights = weights_enum("ConvNeXt_Tiny_Weights", __name__)


@register_model()
@handle_legacy_interface(weights=("pretrained", ConvNeXt_Tiny_Weights.IMAGENET1K_V1))
def convnext_tiny(*, weights: Optional[ConvNeXt_Tiny_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(ConvNeXt_Tiny_Weights, weights, kwargs)
    setting = [CNBlockConfig(96, 192, 3), CNBlockConfig(192, 384, 3),
               CNBlockConfig(384, 768, 9), CNBlockConfig(768, None, 3)]
    return _convnext("convnext_tiny", setting, 0.1, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ConvNeXt_Small_Weights.IMAGENET1K_V1))
def convnext_small(*, weights: Optional[ConvNeXt_Small_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(ConvNeXt_Small_Weights, weights, kwargs)
    setting = [CNBlockConfig(96, 192, 3), CNBlockConfig(192, 384, 3),
               CNBlockConfig(384, 768, 27), CNBlockConfig(768, None, 3)]
    return _convnext("convnext_small", setting, 0.4, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ConvNeXt_Base_Weights.IMAGENET1K_V1))
def convnext_base(*, weights: Optional[ConvNeXt_Base_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(ConvNeXt_Base_Weights, weights, kwargs)
    setting = [CNBlockConfig(128, 256, 3), CNBlockConfig(256, 512, 3),
               CNBlockConfig(512, 1024, 27), CNBlockConfig(1024, None, 3)]
    return _convnext("convnext_base", setting, 0.5, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ConvNeXt_Large_Weights.IMAGENET1K_V1))
def convnext_large(*, weights: Optional[ConvNeXt_Large_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(ConvNeXt_Large_Weights, weights, kwargs)
    setting = [CNBlockConfig(192, 384, 3), CNBlockConfig(384, 768, 3),
               CNBlockConfig(768, 1536, 27), CNBlockConfig(1536, None, 3)]
    return _convnext("convnext_large", setting, 0.5, weights, progress, kwargs)
