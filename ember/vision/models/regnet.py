"""RegNet (torchvision.models.regnet): stages of residual bottleneck blocks whose widths follow
a quantised linear rule (BlockParams.from_init_params), named stem, trunk_output.blockS.blockS-B,
fc as torchvision's."""
import math
from collections import OrderedDict
from functools import partial
from typing import Optional

import numpy as np

from ... import nn
from ..ops.misc import Conv2dNormActivation, SqueezeExcitation
from ._api import register_model, weights_enum
from ._utils import handle_legacy_interface, load_weights, make_divisible, prepare_weights

_SIZES_Y = ("400MF", "800MF", "1_6GF", "3_2GF", "8GF", "16GF", "32GF", "128GF")
_SIZES_X = ("400MF", "800MF", "1_6GF", "3_2GF", "8GF", "16GF", "32GF")
__all__ = (["RegNet"] + [f"RegNet_Y_{s}_Weights" for s in _SIZES_Y]
           + [f"RegNet_X_{s}_Weights" for s in _SIZES_X]
           + [f"regnet_y_{s.lower()}" for s in _SIZES_Y]
           + [f"regnet_x_{s.lower()}" for s in _SIZES_X])


class SimpleStemIN(Conv2dNormActivation):
    """The ImageNet stem: conv 3x3 stride 2, norm, activation."""

    def __init__(self, width_in, width_out, norm_layer, activation_layer):
        super().__init__(width_in, width_out, kernel_size=3, stride=2, norm_layer=norm_layer,
                         activation_layer=activation_layer)


class BottleneckTransform(nn.Sequential):
    """1x1 (a), grouped 3x3 (b), optional squeeze-excitation (se), 1x1 without activation (c)."""

    def __init__(self, width_in, width_out, stride, norm_layer, activation_layer, group_width,
                 bottleneck_multiplier, se_ratio):
        w_b = int(round(width_out * bottleneck_multiplier))
        groups = w_b // group_width
        layers = OrderedDict()
        layers["a"] = Conv2dNormActivation(width_in, w_b, kernel_size=1, stride=1,
                                           norm_layer=norm_layer,
                                           activation_layer=activation_layer)
        layers["b"] = Conv2dNormActivation(w_b, w_b, kernel_size=3, stride=stride,
                                           groups=groups, norm_layer=norm_layer,
                                           activation_layer=activation_layer)
        if se_ratio:
            # the squeeze width follows the block's input width, not the bottleneck's
            layers["se"] = SqueezeExcitation(input_channels=w_b,
                                             squeeze_channels=int(round(se_ratio * width_in)),
                                             activation=activation_layer)
        layers["c"] = Conv2dNormActivation(w_b, width_out, kernel_size=1, stride=1,
                                           norm_layer=norm_layer, activation_layer=None)
        super().__init__(layers)


class ResBottleneckBlock(nn.Module):
    """activation(shortcut(x) + f(x)); the shortcut projects when the shape changes."""

    def __init__(self, width_in, width_out, stride, norm_layer, activation_layer,
                 group_width=1, bottleneck_multiplier=1.0, se_ratio=None):
        super().__init__()
        self.proj = None
        if width_in != width_out or stride != 1:
            self.proj = Conv2dNormActivation(width_in, width_out, kernel_size=1, stride=stride,
                                             norm_layer=norm_layer, activation_layer=None)
        self.f = BottleneckTransform(width_in, width_out, stride, norm_layer, activation_layer,
                                     group_width, bottleneck_multiplier, se_ratio)
        self.activation = activation_layer(inplace=True)

    def forward(self, x):
        shortcut = x if self.proj is None else self.proj(x)
        return self.activation(shortcut + self.f(x))


class AnyStage(nn.Sequential):
    """`depth` blocks of one output width; the first one strides."""

    def __init__(self, width_in, width_out, stride, depth, block_constructor, norm_layer,
                 activation_layer, group_width, bottleneck_multiplier, se_ratio=None,
                 stage_index=0):
        super().__init__()
        for i in range(depth):
            self.add_module(f"block{stage_index}-{i}", block_constructor(
                width_in if i == 0 else width_out, width_out, stride if i == 0 else 1,
                norm_layer, activation_layer, group_width, bottleneck_multiplier, se_ratio))


class BlockParams:
    def __init__(self, depths, widths, group_widths, bottleneck_multipliers, strides,
                 se_ratio=None):
        self.depths = depths
        self.widths = widths
        self.group_widths = group_widths
        self.bottleneck_multipliers = bottleneck_multipliers
        self.strides = strides
        self.se_ratio = se_ratio

    @classmethod
    def from_init_params(cls, depth, w_0, w_a, w_m, group_width, bottleneck_multiplier=1.0,
                         se_ratio=None, **kwargs):
        """Per-stage settings from the RegNet design rule: block j has the continuous width
        w_0 + j * w_a, snapped to w_0 * w_m**k (k an integer) and then to a multiple of 8;
        consecutive blocks of equal width form a stage. Computed in float32 as torchvision
        does, so the rounding (and so the architecture) is the same."""
        quant, stride = 8, 2
        if w_a < 0 or w_0 <= 0 or w_m <= 1 or w_0 % 8 != 0:
            raise ValueError("Invalid RegNet settings")
        f32 = np.float32
        widths_cont = np.arange(depth, dtype=f32) * f32(w_a) + f32(w_0)
        capacity = np.round(np.log(widths_cont / f32(w_0)) / f32(math.log(w_m)))
        snapped = np.round((f32(w_0) * np.power(f32(w_m), capacity)) / f32(quant)) * quant
        block_widths = snapped.astype(np.int32).tolist()
        num_stages = len(set(block_widths))
        # a stage starts wherever the width changes (the list is padded with 0 at both ends)
        starts = [w != wp for w, wp in zip(block_widths + [0], [0] + block_widths)]
        stage_widths = [w for w, s in zip(block_widths, starts[:-1]) if s]
        stage_depths = np.diff([j for j, s in enumerate(starts) if s]).astype(int).tolist()
        multipliers = [bottleneck_multiplier] * num_stages
        stage_widths, group_widths = cls._adjust_widths_groups_compatibilty(
            stage_widths, multipliers, [group_width] * num_stages)
        return cls(depths=stage_depths, widths=stage_widths, group_widths=group_widths,
                   bottleneck_multipliers=multipliers, strides=[stride] * num_stages,
                   se_ratio=se_ratio)

    def _get_expanded_params(self):
        return zip(self.widths, self.strides, self.depths, self.group_widths,
                   self.bottleneck_multipliers)

    @staticmethod
    def _adjust_widths_groups_compatibilty(stage_widths, bottleneck_ratios, group_widths):
        """Make each bottleneck width a multiple of its group width (shrinking the group width
        to the bottleneck width where it is larger)."""
        bottlenecks = [int(w * b) for w, b in zip(stage_widths, bottleneck_ratios)]
        group_widths = [min(g, w) for g, w in zip(group_widths, bottlenecks)]
        bottlenecks = [make_divisible(w, g) for w, g in zip(bottlenecks, group_widths)]
        stage_widths = [int(w / b) for w, b in zip(bottlenecks, bottleneck_ratios)]
        return stage_widths, group_widths


class RegNet(nn.Module):
    def __init__(self, block_params, num_classes=1000, stem_width=32, stem_type=None,
                 block_type=None, norm_layer=None, activation=None):
        super().__init__()
        stem_type = stem_type or SimpleStemIN
        norm_layer = norm_layer or nn.BatchNorm2d
        block_type = block_type or ResBottleneckBlock
        activation = activation or nn.ReLU
        self.stem = stem_type(3, stem_width, norm_layer, activation)
        width = stem_width
        stages = []
        for i, (width_out, stride, depth, group_width, multiplier) in enumerate(
                block_params._get_expanded_params()):
            stages.append((f"block{i + 1}", AnyStage(
                width, width_out, stride, depth, block_type, norm_layer, activation,
                group_width, multiplier, block_params.se_ratio, stage_index=i + 1)))
            width = width_out
        self.trunk_output = nn.Sequential(OrderedDict(stages))
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.fc = nn.Linear(in_features=width, out_features=num_classes)
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                fan_out = m.kernel_size[0] * m.kernel_size[1] * m.out_channels
                nn.init.normal_(m.weight, mean=0.0, std=math.sqrt(2.0 / fan_out))
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.normal_(m.weight, mean=0.0, std=0.01)
                nn.init.zeros_(m.bias)

    def forward(self, x):
        x = self.avgpool(self.trunk_output(self.stem(x)))
        return self.fc(x.flatten(start_dim=1))


def _regnet(block_params, weights_enum, weights, progress, kwargs):
    weights = prepare_weights(weights_enum, weights, kwargs)
    norm_layer = kwargs.pop("norm_layer", partial(nn.BatchNorm2d, eps=1e-05, momentum=0.1))
    model = RegNet(block_params, norm_layer=norm_layer, **kwargs)
    return load_weights(model, weights, progress)


# name: the design parameters of torchvision's builders (the X models have no squeeze-excitation)
_DESIGNS = {
    "regnet_y_400mf": dict(depth=16, w_0=48, w_a=27.89, w_m=2.09, group_width=8, se_ratio=0.25),
    "regnet_y_800mf": dict(depth=14, w_0=56, w_a=38.84, w_m=2.4, group_width=16, se_ratio=0.25),
    "regnet_y_1_6gf": dict(depth=27, w_0=48, w_a=20.71, w_m=2.65, group_width=24,
                           se_ratio=0.25),
    "regnet_y_3_2gf": dict(depth=21, w_0=80, w_a=42.63, w_m=2.66, group_width=24,
                           se_ratio=0.25),
    "regnet_y_8gf": dict(depth=17, w_0=192, w_a=76.82, w_m=2.19, group_width=56, se_ratio=0.25),
    "regnet_y_16gf": dict(depth=18, w_0=200, w_a=106.23, w_m=2.48, group_width=112,
                          se_ratio=0.25),
    "regnet_y_32gf": dict(depth=20, w_0=232, w_a=115.89, w_m=2.53, group_width=232,
                          se_ratio=0.25),
    "regnet_y_128gf": dict(depth=27, w_0=456, w_a=160.83, w_m=2.52, group_width=264,
                           se_ratio=0.25),
    "regnet_x_400mf": dict(depth=22, w_0=24, w_a=24.48, w_m=2.54, group_width=16),
    "regnet_x_800mf": dict(depth=16, w_0=56, w_a=35.73, w_m=2.28, group_width=16),
    "regnet_x_1_6gf": dict(depth=18, w_0=80, w_a=34.01, w_m=2.25, group_width=24),
    "regnet_x_3_2gf": dict(depth=25, w_0=88, w_a=26.31, w_m=2.25, group_width=48),
    "regnet_x_8gf": dict(depth=23, w_0=80, w_a=49.56, w_m=2.88, group_width=120),
    "regnet_x_16gf": dict(depth=22, w_0=216, w_a=55.59, w_m=2.1, group_width=128),
    "regnet_x_32gf": dict(depth=23, w_0=320, w_a=69.86, w_m=2.0, group_width=168),
}


def _make_builder(name, enum):
    # torchvision publishes no ImageNet-1K-only weights for regnet_y_128gf, so its legacy
    # pretrained=True has nothing to map to
    legacy = None if name == "regnet_y_128gf" else enum.IMAGENET1K_V1

    def builder(*, weights=None, progress=True, **kwargs):
        params = BlockParams.from_init_params(**_DESIGNS[name], **kwargs)
        return _regnet(params, enum, weights, progress, kwargs)
    builder.__name__ = builder.__qualname__ = name
    builder.__module__ = __name__
    builder.__annotations__ = {"weights": Optional[enum]}
    return register_model()(handle_legacy_interface(weights=("pretrained", legacy))(builder))


for _family, _sizes in (("Y", _SIZES_Y), ("X", _SIZES_X)):
    for _size in _sizes:
        _enum_name = f"RegNet_{_family}_{_size}_Weights"
        globals()[_enum_name] = weights_enum(_enum_name, __name__)
        _builder_name = f"regnet_{_family.lower()}_{_size.lower()}"
        globals()[_builder_name] = _make_builder(_builder_name, globals()[_enum_name])
del _family, _sizes, _size, _enum_name, _builder_name
