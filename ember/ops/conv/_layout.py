"""Which algorithm and column layout a convolution takes: the switch tests force, and the
measured rules."""
import math

import numpy as np

from ._im2col import _COMPUTE

# Which path convolutions take: "auto" (shifted rows, Winograd or channels-last where they
# apply and pay), or one forced: "shifted" or "winograd" wherever it applies (else as auto),
# "im2col" (auto's choice of column layout, never Winograd nor shifted rows), "channels_last"
# (still falls back for groups > 1 and non-BLAS dtypes) or "batched" (the per-sample
# (N, C*K, L) layout), these three never Winograd nor shifted rows. Tests and
# benchmarks/bench_conv.py --layout force each branch through this switch.
LAYOUT = "auto"


# Measured at 1 thread (OpenBLAS, CIFAR ResNet and ResNet-18 shapes): the channels-last layout
# wins from 32 channels up on k x k kernels (up to 2x for 32 channels on 16x16); with fewer
# channels its copies run over too short rows (3 channels: 2x slower), and 1x1 kernels need no
# window copy in the batched layout at all. On small images (DigitsCNN's 8x8) the batched
# layout's per-sample products are tiny, and channels-last wins from 16 channels (0.6x).
CHANNELS_LAST_MIN_CHANNELS = 32
CHANNELS_LAST_SMALL = (16, 64)  # (fewest channels, most output positions per sample)


def channels_last_ok(a, g, channels, kernel, positions=None):
    """Whether a convolution of `a` with `channels` per copied row (and `positions` output
    positions per sample, when known) takes the channels-last path."""
    if LAYOUT == "batched" or g != 1 or a.dtype not in _COMPUTE:
        return False
    if LAYOUT == "channels_last":
        return True
    if math.prod(kernel) == 1:
        return False
    small_channels, small_positions = CHANNELS_LAST_SMALL
    return channels >= CHANNELS_LAST_MIN_CHANNELS or (
        positions is not None and channels >= small_channels and positions <= small_positions)


# Measured at 1 thread (OpenBLAS; CIFAR ResNet, bench_train CNN and ResNet-18 shapes):
# Winograd's 16 products are thin when channels are few, and its transforms stream through
# ~4x the input. A convolution (forward or input gradient) gains from 32 channels on 16x16
# outputs (0.95x the im2col time; 1.1x at 8x8; 16 channels: 1.1x) and from 64 on 8x8
# (0.65x); ResNet-18's 14x14 to 56x56 layers take 0.25-0.5x. A weight gradient, whose
# products sum over the long tile axis, gains from 16 channels on 16x16 outputs (0.6-0.8x)
# and 64 on 8x8 (0.55x). Smaller outputs lose (7x7 at 512 channels: 1.3-1.5x slower). Each
# rule is (fewest channels in and out, smallest output side, fewest 2x2 output tiles in the
# batch); any one suffices.
# A forward whose weight gradient is to come ("forward_kept") keeps its transformed input
# for it, sparing the weight gradient its own input transform, and the backward then takes
# both gradients from one transform of the output gradient (`conv_backward`): it takes
# Winograd wherever either rule holds. That whole training pass (forward, input and weight
# gradients), Winograd against the rules before it: 16 channels on 32x32 0.75x; on 8x8 to
# 14x14 outputs from 16 channels (DigitsCNN's 16->32 at 8x8, bench_train CNN's at 14x14,
# batch 32) 0.45-0.8x, batch 8 at 8x8 0.88x, but batch 2-4 (under 128 tiles) 1.1-1.25x.
WINOGRAD_RULES = {"forward": ((32, 16, 0), (64, 8, 0)),
                  "weight": ((16, 16, 0), (64, 8, 0), (16, 8, 128))}
WINOGRAD_RULES["forward_kept"] = WINOGRAD_RULES["forward"] + WINOGRAD_RULES["weight"]
_WINOGRAD_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def winograd_ok(xp, a, in_channels, out_channels, kernel, p, out_size, job):
    """Whether a 2-d convolution (job "forward": of `a`; "forward_kept": of `a`, keeping the
    transformed input for a weight gradient; "weight": its weight gradient) takes Winograd
    F(2x2, 3x3): 3x3 kernel, stride and dilation 1, groups 1, float32/64, on the CPU
    (the transforms are NumPy passes)."""
    stride, _, _, dil, g = p
    if LAYOUT in ("batched", "channels_last", "im2col") or xp is not np or g != 1 \
            or a.dtype not in _WINOGRAD_DTYPES or tuple(kernel) != (3, 3) \
            or any(s != 1 for s in stride) or any(d != 1 for d in dil):
        return False
    if LAYOUT == "winograd":
        return True
    if shifted_ok(xp, a, in_channels, out_channels, kernel, p, out_size):
        return False
    channels, side = min(in_channels, out_channels), min(out_size)
    tiles = a.shape[0] * math.prod((s + 1) // 2 for s in out_size)
    return any(channels >= c and side >= s and tiles >= t for c, s, t in WINOGRAD_RULES[job])


# Measured at 1 thread (CIFAR ResNet's 3x3 stride-2 layers, batch 32): the input gradient of
# a stride-2 convolution summed into a parity-split gradient (`parity_conv_transpose`), whose
# per-offset sums run over whole rows of channels, took 0.4x (16 channels on 32x32) and 0.6x
# (32 on 16x16) the time of the column scatter, whose strided sums run over rows of a few
# pixels. A 1x1 kernel has no overlapping windows to sum: its scatter is one strided copy,
# and the split layout's extra copies make it 1.7-2x slower.
def parity_transpose_ok(xp, y, g, kernel, stride, dil):
    """Whether the adjoint of a 2-d convolution in its input, for gradient `y`, takes the
    parity-split sum: stride 2, dilation 1, groups 1, a kernel wider than 1, BLAS dtypes, on
    the CPU."""
    return LAYOUT in ("auto", "winograd") and xp is np and g == 1 and len(kernel) == 2 \
        and tuple(stride) == (2, 2) and tuple(dil) == (1, 1) and max(kernel) > 1 \
        and y.dtype in _COMPUTE


# Measured at 1 thread (OpenBLAS), fwd + input and weight gradients (batch 32 unless said)
# against the other paths (`/work/notes/s22/conv_paths2.py`), once its kernel rows became one
# product: 16 channels on 32x32 0.85x Winograd, on 16x16 0.75-0.85x, on 8x8 0.82x; 8 channels
# on 16x16 0.65x im2col; batch 1-8 at 8-16x16 0.8-0.9x. Even with Winograd at 32 channels on
# 16x16 and 16 -> 32 on 14x14, slower at 64 on 8x8 (1.2x). Each rule is (most channels in
# or out, fewest, smallest output side).
SHIFTED_RULES = ((16, 8, 8),)


def shifted_ok(xp, a, in_channels, out_channels, kernel, p, out_size):
    """Whether a 2-d convolution of `a` (or its weight gradient) takes the shifted-row
    products (`_shifted`): stride and dilation 1, groups 1, a kernel wider than 1x1,
    float32/64, on the CPU; forced by LAYOUT "shifted", else where a SHIFTED_RULE holds."""
    if LAYOUT != "shifted":  # the rules first: they turn most convolutions away at once
        most, fewest = max(in_channels, out_channels), min(in_channels, out_channels)
        if LAYOUT != "auto" or not any(most <= m and fewest >= f and min(out_size) >= s
                                       for m, f, s in SHIFTED_RULES):
            return False
    stride, _, _, dil, g = p
    return xp is np and g == 1 and len(kernel) == 2 and kernel[0] * kernel[1] > 1 \
        and a.dtype in _WINOGRAD_DTYPES and stride[0] == stride[1] == 1 \
        and dil[0] == dil[1] == 1
