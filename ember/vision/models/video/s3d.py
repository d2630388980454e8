"""S3D (torchvision.models.video.s3d): an Inception-v1 layout whose 3D convolutions are
separated into a spatial (1, k, k) and a temporal (k, 1, 1) one, named features.N as
torchvision's."""
from functools import partial
from typing import Optional

from .... import cat, mean, nn
from ...ops.misc import Conv3dNormActivation
from .._api import register_model, weights_enum
from .._utils import handle_legacy_interface, load_weights, prepare_weights

__all__ = ["S3D", "S3D_Weights", "s3d"]


class TemporalSeparableConv(nn.Sequential):
    def __init__(self, in_planes, out_planes, kernel_size, stride, padding, norm_layer):
        super().__init__(
            Conv3dNormActivation(in_planes, out_planes, kernel_size=(1, kernel_size, kernel_size),
                                 stride=(1, stride, stride), padding=(0, padding, padding),
                                 bias=False, norm_layer=norm_layer),
            Conv3dNormActivation(out_planes, out_planes, kernel_size=(kernel_size, 1, 1),
                                 stride=(stride, 1, 1), padding=(padding, 0, 0), bias=False,
                                 norm_layer=norm_layer))


class SepInceptionBlock3D(nn.Module):
    """Four branches concatenated on channels: 1x1; 1x1 -> separable 3x3x3 (twice, different
    widths); 3x3x3 max-pool -> 1x1."""

    def __init__(self, in_planes, b0_out, b1_mid, b1_out, b2_mid, b2_out, b3_out, norm_layer):
        super().__init__()
        self.branch0 = Conv3dNormActivation(in_planes, b0_out, kernel_size=1, stride=1,
                                            norm_layer=norm_layer)
        self.branch1 = nn.Sequential(
            Conv3dNormActivation(in_planes, b1_mid, kernel_size=1, stride=1,
                                 norm_layer=norm_layer),
            TemporalSeparableConv(b1_mid, b1_out, kernel_size=3, stride=1, padding=1,
                                  norm_layer=norm_layer))
        self.branch2 = nn.Sequential(
            Conv3dNormActivation(in_planes, b2_mid, kernel_size=1, stride=1,
                                 norm_layer=norm_layer),
            TemporalSeparableConv(b2_mid, b2_out, kernel_size=3, stride=1, padding=1,
                                  norm_layer=norm_layer))
        self.branch3 = nn.Sequential(
            nn.MaxPool3d(kernel_size=(3, 3, 3), stride=1, padding=1),
            Conv3dNormActivation(in_planes, b3_out, kernel_size=1, stride=1,
                                 norm_layer=norm_layer))

    def forward(self, x):
        return cat((self.branch0(x), self.branch1(x), self.branch2(x), self.branch3(x)), 1)


class S3D(nn.Module):
    def __init__(self, num_classes=400, dropout=0.2, norm_layer=None):
        super().__init__()
        norm_layer = norm_layer or partial(nn.BatchNorm3d, eps=0.001, momentum=0.001)
        block = partial(SepInceptionBlock3D, norm_layer=norm_layer)
        self.features = nn.Sequential(
            TemporalSeparableConv(3, 64, 7, 2, 3, norm_layer),
            nn.MaxPool3d(kernel_size=(1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1)),
            Conv3dNormActivation(64, 64, kernel_size=1, stride=1, norm_layer=norm_layer),
            TemporalSeparableConv(64, 192, 3, 1, 1, norm_layer),
            nn.MaxPool3d(kernel_size=(1, 3, 3), stride=(1, 2, 2), padding=(0, 1, 1)),
            block(192, 64, 96, 128, 16, 32, 32),
            block(256, 128, 128, 192, 32, 96, 64),
            nn.MaxPool3d(kernel_size=(3, 3, 3), stride=(2, 2, 2), padding=(1, 1, 1)),
            block(480, 192, 96, 208, 16, 48, 64),
            block(512, 160, 112, 224, 24, 64, 64),
            block(512, 128, 128, 256, 24, 64, 64),
            block(512, 112, 144, 288, 32, 64, 64),
            block(528, 256, 160, 320, 32, 128, 128),
            nn.MaxPool3d(kernel_size=(2, 2, 2), stride=(2, 2, 2), padding=(0, 0, 0)),
            block(832, 256, 160, 320, 32, 128, 128),
            block(832, 384, 192, 384, 48, 128, 128))
        self.avgpool = nn.AvgPool3d(kernel_size=(2, 7, 7), stride=1)
        self.classifier = nn.Sequential(
            nn.Dropout(p=dropout), nn.Conv3d(1024, num_classes, kernel_size=1, stride=1, bias=True))

    def forward(self, x):
        x = self.classifier(self.avgpool(self.features(x)))
        return mean(x, dim=(2, 3, 4))


S3D_Weights = weights_enum("S3D_Weights", __name__)


@register_model()
@handle_legacy_interface(weights=("pretrained", S3D_Weights.KINETICS400_V1))
def s3d(*, weights: Optional[S3D_Weights] = None, progress=True, **kwargs):
    weights = prepare_weights(S3D_Weights, weights, kwargs)
    return load_weights(S3D(**kwargs), weights, progress)
