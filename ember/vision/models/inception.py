"""Inception v3 (torchvision.models.inception_v3): the factorised-convolution Inception
blocks A-E and the auxiliary classifier, with torchvision's module names (Conv2d_1a_3x3,
Mixed_5b.branch5x5_1.conv, AuxLogits.fc ...) so its checkpoints load with strict=True."""
from typing import Optional

import warnings
from collections import namedtuple

from ... import cat, flatten, nn
from ...nn import functional as F
from ._api import register_model, weights_enum
from ._utils import handle_legacy_interface, load_weights, overwrite_named_param, prepare_weights
from .googlenet import BasicConv2d, GoogLeNet

__all__ = ["Inception3", "InceptionOutputs", "_InceptionOutputs", "inception_v3",
           "Inception_V3_Weights"]

InceptionOutputs = namedtuple("InceptionOutputs", ["logits", "aux_logits"])
InceptionOutputs.__annotations__ = {"logits": object, "aux_logits": object}
_InceptionOutputs = InceptionOutputs


def _pool_branch(x, conv):
    return conv(F.avg_pool2d(x, kernel_size=3, stride=1, padding=1))


class InceptionA(nn.Module):
    """35x35 grid: 1x1, 5x5, double 3x3 and pooled branches."""

    def __init__(self, in_channels, pool_features, conv_block=None):
        super().__init__()
        conv_block = conv_block or BasicConv2d
        self.branch1x1 = conv_block(in_channels, 64, kernel_size=1)
        self.branch5x5_1 = conv_block(in_channels, 48, kernel_size=1)
        self.branch5x5_2 = conv_block(48, 64, kernel_size=5, padding=2)
        self.branch3x3dbl_1 = conv_block(in_channels, 64, kernel_size=1)
        self.branch3x3dbl_2 = conv_block(64, 96, kernel_size=3, padding=1)
        self.branch3x3dbl_3 = conv_block(96, 96, kernel_size=3, padding=1)
        self.branch_pool = conv_block(in_channels, pool_features, kernel_size=1)

    def _forward(self, x):
        double = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        return [self.branch1x1(x), self.branch5x5_2(self.branch5x5_1(x)), double,
                _pool_branch(x, self.branch_pool)]

    def forward(self, x):
        return cat(self._forward(x), 1)


class InceptionB(nn.Module):
    """35x35 -> 17x17 grid reduction."""

    def __init__(self, in_channels, conv_block=None):
        super().__init__()
        conv_block = conv_block or BasicConv2d
        self.branch3x3 = conv_block(in_channels, 384, kernel_size=3, stride=2)
        self.branch3x3dbl_1 = conv_block(in_channels, 64, kernel_size=1)
        self.branch3x3dbl_2 = conv_block(64, 96, kernel_size=3, padding=1)
        self.branch3x3dbl_3 = conv_block(96, 96, kernel_size=3, stride=2)

    def _forward(self, x):
        double = self.branch3x3dbl_3(self.branch3x3dbl_2(self.branch3x3dbl_1(x)))
        return [self.branch3x3(x), double, F.max_pool2d(x, kernel_size=3, stride=2)]

    def forward(self, x):
        return cat(self._forward(x), 1)


class InceptionC(nn.Module):
    """17x17 grid: 7x7 convolutions factorised into 1x7 and 7x1."""

    def __init__(self, in_channels, channels_7x7, conv_block=None):
        super().__init__()
        conv_block = conv_block or BasicConv2d
        c7 = channels_7x7
        wide, tall = dict(kernel_size=(1, 7), padding=(0, 3)), dict(kernel_size=(7, 1),
                                                                    padding=(3, 0))
        self.branch1x1 = conv_block(in_channels, 192, kernel_size=1)
        self.branch7x7_1 = conv_block(in_channels, c7, kernel_size=1)
        self.branch7x7_2 = conv_block(c7, c7, **wide)
        self.branch7x7_3 = conv_block(c7, 192, **tall)
        self.branch7x7dbl_1 = conv_block(in_channels, c7, kernel_size=1)
        self.branch7x7dbl_2 = conv_block(c7, c7, **tall)
        self.branch7x7dbl_3 = conv_block(c7, c7, **wide)
        self.branch7x7dbl_4 = conv_block(c7, c7, **tall)
        self.branch7x7dbl_5 = conv_block(c7, 192, **wide)
        self.branch_pool = conv_block(in_channels, 192, kernel_size=1)

    def _forward(self, x):
        single = self.branch7x7_3(self.branch7x7_2(self.branch7x7_1(x)))
        double = x
        for k in range(1, 6):
            double = getattr(self, f"branch7x7dbl_{k}")(double)
        return [self.branch1x1(x), single, double, _pool_branch(x, self.branch_pool)]

    def forward(self, x):
        return cat(self._forward(x), 1)


class InceptionD(nn.Module):
    """17x17 -> 8x8 grid reduction."""

    def __init__(self, in_channels, conv_block=None):
        super().__init__()
        conv_block = conv_block or BasicConv2d
        self.branch3x3_1 = conv_block(in_channels, 192, kernel_size=1)
        self.branch3x3_2 = conv_block(192, 320, kernel_size=3, stride=2)
        self.branch7x7x3_1 = conv_block(in_channels, 192, kernel_size=1)
        self.branch7x7x3_2 = conv_block(192, 192, kernel_size=(1, 7), padding=(0, 3))
        self.branch7x7x3_3 = conv_block(192, 192, kernel_size=(7, 1), padding=(3, 0))
        self.branch7x7x3_4 = conv_block(192, 192, kernel_size=3, stride=2)

    def _forward(self, x):
        tower = x
        for k in range(1, 5):
            tower = getattr(self, f"branch7x7x3_{k}")(tower)
        return [self.branch3x3_2(self.branch3x3_1(x)), tower,
                F.max_pool2d(x, kernel_size=3, stride=2)]

    def forward(self, x):
        return cat(self._forward(x), 1)


class InceptionE(nn.Module):
    """8x8 grid: 3x3 convolutions split into parallel 1x3 and 3x1 halves."""

    def __init__(self, in_channels, conv_block=None):
        super().__init__()
        conv_block = conv_block or BasicConv2d
        wide, tall = dict(kernel_size=(1, 3), padding=(0, 1)), dict(kernel_size=(3, 1),
                                                                    padding=(1, 0))
        self.branch1x1 = conv_block(in_channels, 320, kernel_size=1)
        self.branch3x3_1 = conv_block(in_channels, 384, kernel_size=1)
        self.branch3x3_2a = conv_block(384, 384, **wide)
        self.branch3x3_2b = conv_block(384, 384, **tall)
        self.branch3x3dbl_1 = conv_block(in_channels, 448, kernel_size=1)
        self.branch3x3dbl_2 = conv_block(448, 384, kernel_size=3, padding=1)
        self.branch3x3dbl_3a = conv_block(384, 384, **wide)
        self.branch3x3dbl_3b = conv_block(384, 384, **tall)
        self.branch_pool = conv_block(in_channels, 192, kernel_size=1)

    def _forward(self, x):
        single = self.branch3x3_1(x)
        single = cat([self.branch3x3_2a(single), self.branch3x3_2b(single)], 1)
        double = self.branch3x3dbl_2(self.branch3x3dbl_1(x))
        double = cat([self.branch3x3dbl_3a(double), self.branch3x3dbl_3b(double)], 1)
        return [self.branch1x1(x), single, double, _pool_branch(x, self.branch_pool)]

    def forward(self, x):
        return cat(self._forward(x), 1)


class InceptionAux(nn.Module):
    """The auxiliary classifier on the 17x17 grid (training only)."""

    def __init__(self, in_channels, num_classes, conv_block=None):
        super().__init__()
        conv_block = conv_block or BasicConv2d
        self.conv0 = conv_block(in_channels, 128, kernel_size=1)
        self.conv1 = conv_block(128, 768, kernel_size=5)
        self.conv1.stddev = 0.01
        self.fc = nn.Linear(768, num_classes)
        self.fc.stddev = 0.001

    def forward(self, x):
        x = self.conv1(self.conv0(F.avg_pool2d(x, kernel_size=5, stride=3)))
        return self.fc(flatten(F.adaptive_avg_pool2d(x, (1, 1)), 1))


class Inception3(nn.Module):
    def __init__(self, num_classes=1000, aux_logits=True, transform_input=False,
                 inception_blocks=None, init_weights=None, dropout=0.5):
        super().__init__()
        if inception_blocks is None:
            inception_blocks = [BasicConv2d, InceptionA, InceptionB, InceptionC, InceptionD,
                                InceptionE, InceptionAux]
        if init_weights is None:
            warnings.warn(
                "The default weight initialization of inception_v3 will be changed in future "
                "releases of torchvision. If you wish to keep the old behavior (which leads to "
                "long initialization times due to scipy/scipy#11299), please set "
                "init_weights=True.", FutureWarning)
            init_weights = True
        if len(inception_blocks) != 7:
            raise ValueError(f"length of inception_blocks should be 7 instead of "
                             f"{len(inception_blocks)}")
        conv, block_a, block_b, block_c, block_d, block_e, aux = inception_blocks
        self.aux_logits = aux_logits
        self.transform_input = transform_input
        self.Conv2d_1a_3x3 = conv(3, 32, kernel_size=3, stride=2)
        self.Conv2d_2a_3x3 = conv(32, 32, kernel_size=3)
        self.Conv2d_2b_3x3 = conv(32, 64, kernel_size=3, padding=1)
        self.maxpool1 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.Conv2d_3b_1x1 = conv(64, 80, kernel_size=1)
        self.Conv2d_4a_3x3 = conv(80, 192, kernel_size=3)
        self.maxpool2 = nn.MaxPool2d(kernel_size=3, stride=2)
        self.Mixed_5b = block_a(192, pool_features=32)
        self.Mixed_5c = block_a(256, pool_features=64)
        self.Mixed_5d = block_a(288, pool_features=64)
        self.Mixed_6a = block_b(288)
        self.Mixed_6b = block_c(768, channels_7x7=128)
        self.Mixed_6c = block_c(768, channels_7x7=160)
        self.Mixed_6d = block_c(768, channels_7x7=160)
        self.Mixed_6e = block_c(768, channels_7x7=192)
        self.AuxLogits = aux(768, num_classes) if aux_logits else None
        self.Mixed_7a = block_d(768)
        self.Mixed_7b = block_e(1280)
        self.Mixed_7c = block_e(2048)
        self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
        self.dropout = nn.Dropout(p=dropout)
        self.fc = nn.Linear(2048, num_classes)
        if init_weights:
            for m in self.modules():
                if isinstance(m, (nn.Conv2d, nn.Linear)):
                    std = getattr(m, "stddev", 0.1)
                    nn.init.trunc_normal_(m.weight, mean=0.0, std=std, a=-2, b=2)
                elif isinstance(m, nn.BatchNorm2d):
                    nn.init.constant_(m.weight, 1)
                    nn.init.constant_(m.bias, 0)

    _transform_input = GoogLeNet._transform_input  # the same ImageNet re-normalisation

    def _forward(self, x):
        for name in ("Conv2d_1a_3x3", "Conv2d_2a_3x3", "Conv2d_2b_3x3", "maxpool1",
                     "Conv2d_3b_1x1", "Conv2d_4a_3x3", "maxpool2", "Mixed_5b", "Mixed_5c",
                     "Mixed_5d", "Mixed_6a", "Mixed_6b", "Mixed_6c", "Mixed_6d", "Mixed_6e"):
            x = getattr(self, name)(x)
        aux = self.AuxLogits(x) if self.AuxLogits is not None and self.training else None
        x = self.avgpool(self.Mixed_7c(self.Mixed_7b(self.Mixed_7a(x))))
        return self.fc(flatten(self.dropout(x), 1)), aux

    def eager_outputs(self, x, aux):
        if self.training and self.aux_logits:
            return InceptionOutputs(x, aux)
        return x

    def forward(self, x):
        x, aux = self._forward(self._transform_input(x))
        return self.eager_outputs(x, aux)


Inception_V3_Weights = weights_enum("Inception_V3_Weights", __name__)


@register_model()
@handle_legacy_interface(weights=("pretrained", Inception_V3_Weights.IMAGENET1K_V1))
def inception_v3(*, weights: Optional[Inception_V3_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(Inception_V3_Weights, weights, kwargs)
    original_aux_logits = kwargs.get("aux_logits", True)
    if weights is not None:
        if "transform_input" not in kwargs:
            overwrite_named_param(kwargs, "transform_input", True)
        overwrite_named_param(kwargs, "aux_logits", True)
        overwrite_named_param(kwargs, "init_weights", False)
    model = Inception3(**kwargs)
    if weights is not None:
        load_weights(model, weights, progress)
        if not original_aux_logits:
            model.aux_logits = False
            model.AuxLogits = None
    return model
