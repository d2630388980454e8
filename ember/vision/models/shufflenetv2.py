"""ShuffleNetV2 (torchvision.models.shufflenetv2): split / depthwise / concat blocks with a
channel shuffle, named conv1, stage2..4, conv5, fc as torchvision's."""
from typing import Optional

from ... import cat, nn
from ._api import register_model, weights_enum
from ._utils import handle_legacy_interface, load_weights, prepare_weights

__all__ = ["ShuffleNetV2", "ShuffleNet_V2_X0_5_Weights", "ShuffleNet_V2_X1_0_Weights",
           "ShuffleNet_V2_X1_5_Weights", "ShuffleNet_V2_X2_0_Weights", "shufflenet_v2_x0_5",
           "shufflenet_v2_x1_0", "shufflenet_v2_x1_5", "shufflenet_v2_x2_0"]


def channel_shuffle(x, groups):
    """Interleave the channels of `groups` equal groups (N, g*c, H, W) -> (N, c*g, H, W)."""
    n, channels, h, w = x.size()
    x = x.view(n, groups, channels // groups, h, w).transpose(1, 2).contiguous()
    return x.view(n, channels, h, w)


class InvertedResidual(nn.Module):
    def __init__(self, inp, oup, stride):
        super().__init__()
        if not 1 <= stride <= 3:
            raise ValueError("illegal stride value")
        self.stride = stride
        half = oup // 2
        if stride == 1 and inp != half << 1:
            raise ValueError(
                f"Invalid combination of stride {stride}, inp {inp} and oup {oup} values. If "
                "stride == 1 then inp should be equal to oup // 2 << 1.")
        if stride > 1:
            self.branch1 = nn.Sequential(
                self.depthwise_conv(inp, inp, kernel_size=3, stride=stride, padding=1),
                nn.BatchNorm2d(inp),
                nn.Conv2d(inp, half, kernel_size=1, stride=1, padding=0, bias=False),
                nn.BatchNorm2d(half), nn.ReLU(inplace=True))
        else:
            self.branch1 = nn.Sequential()
        self.branch2 = nn.Sequential(
            nn.Conv2d(inp if stride > 1 else half, half, kernel_size=1, stride=1, padding=0,
                      bias=False),
            nn.BatchNorm2d(half), nn.ReLU(inplace=True),
            self.depthwise_conv(half, half, kernel_size=3, stride=stride, padding=1),
            nn.BatchNorm2d(half),
            nn.Conv2d(half, half, kernel_size=1, stride=1, padding=0, bias=False),
            nn.BatchNorm2d(half), nn.ReLU(inplace=True))

    @staticmethod
    def depthwise_conv(i, o, kernel_size, stride=1, padding=0, bias=False):
        return nn.Conv2d(i, o, kernel_size, stride, padding, bias=bias, groups=i)

    def forward(self, x):
        if self.stride == 1:
            kept, processed = x.chunk(2, dim=1)
            out = cat((kept, self.branch2(processed)), dim=1)
        else:
            out = cat((self.branch1(x), self.branch2(x)), dim=1)
        return channel_shuffle(out, 2)


class ShuffleNetV2(nn.Module):
    def __init__(self, stages_repeats, stages_out_channels, num_classes=1000,
                 inverted_residual=InvertedResidual):
        super().__init__()
        if len(stages_repeats) != 3:
            raise ValueError("expected stages_repeats as list of 3 positive ints")
        if len(stages_out_channels) != 5:
            raise ValueError("expected stages_out_channels as list of 5 positive ints")
        self._stage_out_channels = stages_out_channels
        channels = stages_out_channels[0]
        self.conv1 = nn.Sequential(nn.Conv2d(3, channels, 3, 2, 1, bias=False),
                                   nn.BatchNorm2d(channels), nn.ReLU(inplace=True))
        self.maxpool = nn.MaxPool2d(kernel_size=3, stride=2, padding=1)
        for stage, repeats, out in zip((2, 3, 4), stages_repeats, stages_out_channels[1:]):
            blocks = [inverted_residual(channels, out, 2)]
            blocks += [inverted_residual(out, out, 1) for _ in range(repeats - 1)]
            setattr(self, f"stage{stage}", nn.Sequential(*blocks))
            channels = out
        last = stages_out_channels[-1]
        self.conv5 = nn.Sequential(nn.Conv2d(channels, last, 1, 1, 0, bias=False),
                                   nn.BatchNorm2d(last), nn.ReLU(inplace=True))
        self.fc = nn.Linear(last, num_classes)

    def _forward_impl(self, x):
        x = self.maxpool(self.conv1(x))
        x = self.conv5(self.stage4(self.stage3(self.stage2(x))))
        return self.fc(x.mean([2, 3]))

    def forward(self, x):
        return self._forward_impl(x)


def _shufflenetv2(weights_enum, weights, progress, repeats, channels, kwargs):
    weights = prepare_weights(weights_enum, weights, kwargs)
    return load_weights(ShuffleNetV2(repeats, channels, **kwargs), weights, progress)


ShuffleNet_V2_X0_5_Weights = weights_enum("ShuffleNet_V2_X0_5_Weights", __name__)
ShuffleNet_V2_X1_0_Weights = weights_enum("ShuffleNet_V2_X1_0_Weights", __name__)
ShuffleNet_V2_X1_5_Weights = weights_enum("ShuffleNet_V2_X1_5_Weights", __name__)
ShuffleNet_V2_X2_0_Weights = weights_enum("ShuffleNet_V2_X2_0_Weights", __name__)


@register_model()
@handle_legacy_interface(weights=("pretrained", ShuffleNet_V2_X0_5_Weights.IMAGENET1K_V1))
def shufflenet_v2_x0_5(*, weights: Optional[ShuffleNet_V2_X0_5_Weights] = None, progress=True,
                       **kwargs):
    return _shufflenetv2(ShuffleNet_V2_X0_5_Weights, weights, progress, [4, 8, 4],
                         [24, 48, 96, 192, 1024], kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ShuffleNet_V2_X1_0_Weights.IMAGENET1K_V1))
def shufflenet_v2_x1_0(*, weights: Optional[ShuffleNet_V2_X1_0_Weights] = None, progress=True,
                       **kwargs):
    return _shufflenetv2(ShuffleNet_V2_X1_0_Weights, weights, progress, [4, 8, 4],
                         [24, 116, 232, 464, 1024], kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ShuffleNet_V2_X1_5_Weights.IMAGENET1K_V1))
def shufflenet_v2_x1_5(*, weights: Optional[ShuffleNet_V2_X1_5_Weights] = None, progress=True,
                       **kwargs):
    return _shufflenetv2(ShuffleNet_V2_X1_5_Weights, weights, progress, [4, 8, 4],
                         [24, 176, 352, 704, 1024], kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", ShuffleNet_V2_X2_0_Weights.IMAGENET1K_V1))
def shufflenet_v2_x2_0(*, weights: Optional[ShuffleNet_V2_X2_0_Weights] = None, progress=True,
                       **kwargs):
    return _shufflenetv2(ShuffleNet_V2_X2_0_Weights, weights, progress, [4, 8, 4],
                         [24, 244, 488, 976, 2048], kwargs)
