"""Which column layout a convolution takes: the switch tests force, and the measured rule."""
import math

from ._im2col import _COMPUTE

# Which column layout convolutions use: "auto" (channels-last where it applies), or one forced
# ("channels_last" still falls back for groups > 1 and non-BLAS dtypes; "batched" is the
# per-sample (N, C*K, L) layout). Tests force each branch through this switch.
LAYOUT = "auto"


# Measured at 1 thread (OpenBLAS, CIFAR ResNet and ResNet-18 shapes): the channels-last layout
# wins from 32 channels up on k x k kernels (up to 2x for 32 channels on 16x16); with fewer
# channels its copies run over too short rows (3 channels: 2x slower), and 1x1 kernels need no
# window copy in the batched layout at all.
CHANNELS_LAST_MIN_CHANNELS = 32


def channels_last_ok(a, g, channels, kernel):
    """Whether a convolution of `a` with `channels` per copied row takes the channels-last path."""
    if LAYOUT == "batched" or g != 1 or a.dtype not in _COMPUTE:
        return False
    return LAYOUT == "channels_last" or (channels >= CHANNELS_LAST_MIN_CHANNELS
                                          and math.prod(kernel) > 1)
