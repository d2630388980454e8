"""MNASNet (torchvision.models.mnasnet), the B1 variant: a stem, six stacks of inverted
residuals and a 1280-channel head, all in `layers` as torchvision's. Checkpoints saved by
torchvision's first version (state_dict metadata version 1) keep their fixed 32/16-channel stem,
which is rebuilt before loading them."""
import warnings
from typing import Optional

from ... import nn
from ._api import register_model, weights_enum
from ._utils import handle_legacy_interface, load_weights, prepare_weights

__all__ = ["MNASNet", "MNASNet0_5_Weights", "MNASNet0_75_Weights", "MNASNet1_0_Weights",
           "MNASNet1_3_Weights", "mnasnet0_5", "mnasnet0_75", "mnasnet1_0", "mnasnet1_3"]

# the reference implementation is TensorFlow's, whose batch-norm momentum 0.9997 is the weight
# of the running value
_BN_MOMENTUM = 1 - 0.9997


class _InvertedResidual(nn.Module):
    def __init__(self, in_ch, out_ch, kernel_size, stride, expansion_factor, bn_momentum=0.1):
        super().__init__()
        if stride not in [1, 2]:
            raise ValueError(f"stride should be 1 or 2 instead of {stride}")
        if kernel_size not in [3, 5]:
            raise ValueError(f"kernel_size should be 3 or 5 instead of {kernel_size}")
        mid_ch = in_ch * expansion_factor
        self.apply_residual = in_ch == out_ch and stride == 1
        self.layers = nn.Sequential(
            nn.Conv2d(in_ch, mid_ch, 1, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=bn_momentum), nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, mid_ch, kernel_size, padding=kernel_size // 2, stride=stride,
                      groups=mid_ch, bias=False),
            nn.BatchNorm2d(mid_ch, momentum=bn_momentum), nn.ReLU(inplace=True),
            nn.Conv2d(mid_ch, out_ch, 1, bias=False),
            nn.BatchNorm2d(out_ch, momentum=bn_momentum))

    def forward(self, input):
        out = self.layers(input)
        return out + input if self.apply_residual else out


def _stack(in_ch, out_ch, kernel_size, stride, exp_factor, repeats, bn_momentum):
    """`repeats` inverted residuals; only the first changes channels and stride."""
    if repeats < 1:
        raise ValueError(f"repeats should be >= 1, instead got {repeats}")
    blocks = [_InvertedResidual(in_ch, out_ch, kernel_size, stride, exp_factor,
                                bn_momentum=bn_momentum)]
    blocks += [_InvertedResidual(out_ch, out_ch, kernel_size, 1, exp_factor,
                                 bn_momentum=bn_momentum) for _ in range(1, repeats)]
    return nn.Sequential(*blocks)


def _round_to_multiple_of(val, divisor, round_up_bias=0.9):
    """Round `val` to a multiple of `divisor`, going up unless that loses more than 10%."""
    if not 0.0 < round_up_bias < 1.0:
        raise ValueError("round_up_bias should be greater than 0.0 and smaller than 1.0 instead "
                         f"of {round_up_bias}")
    new_val = max(divisor, int(val + divisor / 2) // divisor * divisor)
    return new_val if new_val >= round_up_bias * val else new_val + divisor


def _get_depths(alpha):
    return [_round_to_multiple_of(depth * alpha, 8)
            for depth in (32, 16, 24, 40, 80, 96, 192, 320)]


def _stem(depths):
    """The layers before the stacks: conv 3x3/2, depthwise 3x3, pointwise to depths[1]."""
    return [nn.Conv2d(3, depths[0], 3, padding=1, stride=2, bias=False),
            nn.BatchNorm2d(depths[0], momentum=_BN_MOMENTUM), nn.ReLU(inplace=True),
            nn.Conv2d(depths[0], depths[0], 3, padding=1, stride=1, groups=depths[0],
                      bias=False),
            nn.BatchNorm2d(depths[0], momentum=_BN_MOMENTUM), nn.ReLU(inplace=True),
            nn.Conv2d(depths[0], depths[1], 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(depths[1], momentum=_BN_MOMENTUM)]


class MNASNet(nn.Module):
    _version = 2

    def __init__(self, alpha, num_classes=1000, dropout=0.2):
        super().__init__()
        if alpha <= 0.0:
            raise ValueError(f"alpha should be greater than 0.0 instead of {alpha}")
        self.alpha = alpha
        self.num_classes = num_classes
        d = _get_depths(alpha)
        self.layers = nn.Sequential(
            *_stem(d),
            _stack(d[1], d[2], 3, 2, 3, 3, _BN_MOMENTUM),
            _stack(d[2], d[3], 5, 2, 3, 3, _BN_MOMENTUM),
            _stack(d[3], d[4], 5, 2, 6, 3, _BN_MOMENTUM),
            _stack(d[4], d[5], 3, 1, 6, 2, _BN_MOMENTUM),
            _stack(d[5], d[6], 5, 2, 6, 4, _BN_MOMENTUM),
            _stack(d[6], d[7], 3, 1, 6, 1, _BN_MOMENTUM),
            nn.Conv2d(d[7], 1280, 1, padding=0, stride=1, bias=False),
            nn.BatchNorm2d(1280, momentum=_BN_MOMENTUM), nn.ReLU(inplace=True))
        self.classifier = nn.Sequential(nn.Dropout(p=dropout, inplace=True),
                                        nn.Linear(1280, num_classes))
        for m in self.modules():
            if isinstance(m, nn.Conv2d):
                nn.init.kaiming_normal_(m.weight, mode="fan_out", nonlinearity="relu")
                if m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.BatchNorm2d):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
            elif isinstance(m, nn.Linear):
                nn.init.kaiming_uniform_(m.weight, mode="fan_out", nonlinearity="sigmoid")
                nn.init.zeros_(m.bias)

    def forward(self, x):
        return self.classifier(self.layers(x).mean([2, 3]))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        version = local_metadata.get("version", None)
        if version not in [1, 2]:
            raise ValueError(f"version should be set to 1 or 2 instead of {version}")
        if version == 1 and not self.alpha == 1.0:
            # version 1 kept the stem at alpha=1 widths whatever alpha was
            depths = _get_depths(self.alpha)
            old_stem = _stem([32, 16]) + [_stack(16, depths[2], 3, 2, 3, 3, _BN_MOMENTUM)]
            for idx, layer in enumerate(old_stem):
                self.layers[idx] = layer
            self._version = 1
            warnings.warn(
                "A new version of MNASNet model has been implemented. Your checkpoint was saved "
                "using the previous version. This checkpoint will load and work as before, but "
                "you may want to upgrade by training a newer model or transfer learning from an "
                "updated ImageNet checkpoint.", UserWarning)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, strict, missing_keys,
                                      unexpected_keys, error_msgs)


def _mnasnet(alpha, weights_enum, weights, progress, kwargs):
    weights = prepare_weights(weights_enum, weights, kwargs)
    return load_weights(MNASNet(alpha, **kwargs), weights, progress)


MNASNet0_5_Weights = weights_enum("MNASNet0_5_Weights", __name__)
MNASNet0_75_Weights = weights_enum("MNASNet0_75_Weights", __name__)
MNASNet1_0_Weights = weights_enum("MNASNet1_0_Weights", __name__)
MNASNet1_3_Weights = weights_enum("MNASNet1_3_Weights", __name__)


@register_model()
@handle_legacy_interface(weights=("pretrained", MNASNet0_5_Weights.IMAGENET1K_V1))
def mnasnet0_5(*, weights: Optional[MNASNet0_5_Weights] = None, progress=True, **kwargs):
    return _mnasnet(0.5, MNASNet0_5_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", MNASNet0_75_Weights.IMAGENET1K_V1))
def mnasnet0_75(*, weights: Optional[MNASNet0_75_Weights] = None, progress=True, **kwargs):
    return _mnasnet(0.75, MNASNet0_75_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", MNASNet1_0_Weights.IMAGENET1K_V1))
def mnasnet1_0(*, weights: Optional[MNASNet1_0_Weights] = None, progress=True, **kwargs):
    return _mnasnet(1.0, MNASNet1_0_Weights, weights, progress, kwargs)


@register_model()
@handle_legacy_interface(weights=("pretrained", MNASNet1_3_Weights.IMAGENET1K_V1))
def mnasnet1_3(*, weights: Optional[MNASNet1_3_Weights] = None, progress=True, **kwargs):
    return _mnasnet(1.3, MNASNet1_3_Weights, weights, progress, kwargs)
