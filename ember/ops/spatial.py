"""Spatial resampling: pad, interpolate/upsample, grid_sample/affine_grid, pixel and channel
shuffles, with derivatives.

Non-constant padding and every separable interpolation are *axis maps* (`_axis_maps.py`);
interpolate lives in `_spatial_resample.py`, grid_sample in `_grid_sample.py` (it gathers
the corners of each sample point; its backward is written with ember ops, gather and
scatter_add, so it is differentiable again).
"""
import builtins

import numpy as np

from .._memory_format import follow_channels_last
from .._tensor import make_tensor, Tensor, xp_of
from ._axis_maps import AxisMap, _map, _pair
from ._graph import Node, record
from ._grid_sample import (affine_grid, affine_grid_generator, grid_sample,  # noqa: F401
                           grid_sampler)
from ._spatial_resample import (interpolate, upsample, upsample_bilinear,  # noqa: F401
                                upsample_nearest)

__all__ = ["constant_pad_nd", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle",
           "native_channel_shuffle", "grid_sampler", "affine_grid_generator"]
METHODS = []
FUNCTIONAL = ["pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear",
              "grid_sample", "affine_grid", "pixel_shuffle", "pixel_unshuffle",
              "channel_shuffle", "native_channel_shuffle"]


def _check_tensor(t, fname, what="input", pos=1):
    if not isinstance(t, Tensor):
        raise TypeError(f"{fname}(): argument '{what}' (position {pos}) must be Tensor, not "
                        f"{type(t).__name__}")


# ---- pad -----------------------------------------------------------------------------------
class ConstantPadNdBackward0(Node):
    def backward(self, grad):
        return _constant_pad(grad, [-p for p in self.pad], 0)


def _int_list(pad, fname):
    if isinstance(pad, Tensor):
        pad = pad.tolist()
    try:
        vals = list(pad)
    except TypeError:
        raise TypeError(f"{fname}(): argument 'pad' (position 2) must be tuple of ints, not "
                        f"{type(pad).__name__}") from None
    for i, v in enumerate(vals):
        if not isinstance(v, (builtins.int, np.integer)) or isinstance(v, builtins.bool):
            raise TypeError(f"{fname}(): argument 'pad' (position 2) must be tuple of ints, but "
                            f"found element of type {type(v).__name__} at pos {i}")
    return [builtins.int(v) for v in vals]


def _constant_pad(x, pad, value):
    xp = xp_of(x)
    a = x._array
    nd = len(pad) // 2
    src, dst, shape = [], [], list(a.shape)
    for d in range(nd):
        lo, hi = pad[2 * d], pad[2 * d + 1]
        ax = a.ndim - 1 - d
        n = a.shape[ax]
        shape[ax] = n + lo + hi
        src.append((ax, slice(max(-lo, 0), n - max(-hi, 0))))
        dst.append((ax, slice(max(lo, 0), max(lo, 0) + max(n - max(-lo, 0) - max(-hi, 0), 0))))
    out = xp.full(shape, value, dtype=a.dtype)
    si = [slice(None)] * a.ndim
    di = [slice(None)] * a.ndim
    for (ax, s), (_, t) in zip(src, dst):
        si[ax], di[ax] = s, t
    if all(sl.stop is None or sl.stop > (sl.start or 0) for sl in si):
        out[tuple(di)] = a[tuple(si)]
    res = make_tensor(out, x._device)
    node = record(ConstantPadNdBackward0, (x,), res)
    if node is not None:
        node.pad = list(pad)
    return res


def constant_pad_nd(input, pad, value=0):
    _check_tensor(input, "constant_pad_nd")
    pad = _int_list(pad, "constant_pad_nd")
    return _pad_constant_checked(input, pad, value)


def _pad_constant_checked(input, pad, value):
    if len(pad) % 2:
        raise RuntimeError("Length of pad must be even but instead it equals " + str(len(pad)))
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Length of pad should be no more than twice the number of dimensions "
                           f"of the input. Pad length is {len(pad)} while the input has "
                           f"{input.ndim} dimensions.")
    for d in range(len(pad) // 2):
        ax = input.ndim - 1 - d
        n = input.shape[ax]
        if n + builtins.min(pad[2 * d], 0) + builtins.min(pad[2 * d + 1], 0) < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    if isinstance(value, Tensor):
        value = value.item()
    return follow_channels_last(_constant_pad(input, pad, value), input)


_PAD_NAMES = {"reflect": "ReflectionPad{}DBackward0", "replicate": "ReplicationPad{}DBackward0",
              "circular": "CopySlices"}  # PyTorch builds circular padding by slice copies


def _pad_index(mode, n, lo, hi):
    if mode == "circular":  # PyTorch crops first, then wraps around what is left
        start, m = builtins.max(-lo, 0), n - builtins.max(-lo, 0) - builtins.max(-hi, 0)
        lo, hi = builtins.max(lo, 0), builtins.max(hi, 0)
        return (start + np.mod(np.arange(-lo, m + hi, dtype=np.int64), m))[None]
    i = np.arange(-lo, n + hi, dtype=np.int64)
    if mode == "reflect":
        i = np.abs(i)
        i = np.where(i >= n, 2 * (n - 1) - i, i)
    elif mode == "replicate":
        i = np.clip(i, 0, n - 1)
    else:
        i = np.mod(i, n)
    return i[None]


def _unsupported_pad(npad, ndim):
    raise NotImplementedError(
        f"Padding size {npad} is not supported for {ndim}D input tensor.\n"
        "Supported combinations for non-constant padding:\n"
        "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
        "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
        "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def pad(input, pad, mode="constant", value=None):
    """`nn.functional.pad`: `pad` lists (left, right) amounts from the last dim backwards."""
    _check_tensor(input, "pad")
    pad = _int_list(pad, "pad")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError("Padding length should be less than or equal to two times the input "
                           f"dimension but got padding length {len(pad)} and input of dimension "
                           f"{input.ndim}")
    if mode == "constant":
        return _pad_constant_checked(input, pad, 0 if value is None else value)
    if mode not in ("reflect", "replicate", "circular"):
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    nd = len(pad) // 2
    if input.ndim not in (nd + 1, nd + 2) or nd == 0:
        _unsupported_pad(len(pad), input.ndim)
    shape = list(input.shape)
    maps = []
    for d in range(nd):
        lo, hi = pad[2 * d], pad[2 * d + 1]
        ax = input.ndim - 1 - d
        n = shape[ax]
        if mode == "reflect":
            if lo >= n or hi >= n:
                raise RuntimeError(f"Argument #{4 + 2 * d}: Padding size should be less than the "
                                   "corresponding input dimension, but got: padding "
                                   f"({lo}, {hi}) at dimension {ax} of input {shape}")
        elif mode == "circular":
            if lo > n or hi > n:
                raise RuntimeError("Padding value causes wrapping around more than once.")
            if n + lo + hi <= 0 or (lo < 0 and -lo >= n) or (hi < 0 and -hi >= n):
                raise RuntimeError("Negative padding value is resulting in an empty dimension")
        elif n + lo + hi < 1:
            names = "DHW"[3 - nd:]
            raise RuntimeError(f"input ({names[-1 - d]}: {n}) is too small. Calculated output "
                               f"{names[-1 - d]}: {n + lo + hi}")
        maps.append(AxisMap(-1 - d, _pad_index(mode, n, lo, hi), None, n))
    if mode in ("reflect", "replicate"):
        lead = input.shape[:input.ndim - nd]
        if any(s == 0 for s in input.shape[input.ndim - nd:]) or \
                (len(lead) == 2 and lead[1] == 0) or (len(lead) == 1 and lead[0] == 0):
            k = nd + 1
            raise RuntimeError(f"Expected {k}D or {k + 1}D (batch mode) tensor with possibly 0 "
                               "batch size and other non-zero dimensions for input, but got: "
                               f"{shape}")
    out = _map(input, maps, _pair(_PAD_NAMES[mode].format(nd)))
    return out if mode == "circular" else follow_channels_last(out, input)  # as PyTorch's


# ---- pixel and channel shuffles --------------------------------------------------------------
class PixelShuffleBackward0(Node):
    def backward(self, grad):
        return _pixel_unshuffle(grad, self.r)


class PixelUnshuffleBackward0(Node):
    def backward(self, grad):
        return _pixel_shuffle(grad, self.r)


class ChannelShuffleBackward0(Node):
    def backward(self, grad):
        return _channel_shuffle(grad, self.groups)


def _pixel_shuffle(x, r):
    a = x._array
    lead, (c, h, w) = a.shape[:-3], a.shape[-3:]
    oc = c // (r * r)
    b = a.reshape(lead + (oc, r, r, h, w))
    n = len(lead)
    b = b.transpose(tuple(range(n)) + (n, n + 3, n + 1, n + 4, n + 2))
    out = make_tensor(xp_of(x).ascontiguousarray(b).reshape(lead + (oc, h * r, w * r)),
                      x._device)
    node = record(PixelShuffleBackward0, (x,), out)
    if node is not None:
        node.r = r
    return out


def _pixel_unshuffle(x, r):
    a = x._array
    lead, (c, h, w) = a.shape[:-3], a.shape[-3:]
    b = a.reshape(lead + (c, h // r, r, w // r, r))
    n = len(lead)
    b = b.transpose(tuple(range(n)) + (n, n + 2, n + 4, n + 1, n + 3))
    out = make_tensor(xp_of(x).ascontiguousarray(b).reshape(lead + (c * r * r, h // r, w // r)),
                      x._device)
    node = record(PixelUnshuffleBackward0, (x,), out)
    if node is not None:
        node.r = r
    return out


def _factor(v, fname, what):
    if not isinstance(v, (builtins.int, np.integer)) or isinstance(v, builtins.bool):
        raise TypeError(f"{fname}(): argument '{what}' (position 2) must be int, not "
                        f"{type(v).__name__}")
    return builtins.int(v)


def pixel_shuffle(input, upscale_factor):
    _check_tensor(input, "pixel_shuffle")
    r = _factor(upscale_factor, "pixel_shuffle", "upscale_factor")
    if input.ndim < 3:
        raise RuntimeError("pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    c = input.shape[-3]
    if c % (r * r):
        raise RuntimeError("pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    return follow_channels_last(_pixel_shuffle(input, r), input)


def pixel_unshuffle(input, downscale_factor):
    _check_tensor(input, "pixel_unshuffle")
    r = _factor(downscale_factor, "pixel_unshuffle", "downscale_factor")
    if input.ndim < 3:
        raise RuntimeError("pixel_unshuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    h, w = input.shape[-2:]
    if h % r:
        raise RuntimeError("pixel_unshuffle expects height to be divisible by downscale_factor, "
                           f"but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError("pixel_unshuffle expects width to be divisible by downscale_factor, "
                           f"but input.size(-1)={w} is not divisible by {r}")
    return follow_channels_last(_pixel_unshuffle(input, r), input)


def _channel_shuffle(x, groups):
    a = x._array
    n, c = a.shape[:2]
    rest = a.shape[2:]
    b = a.reshape((n, groups, c // groups) + rest).swapaxes(1, 2)
    out = make_tensor(xp_of(x).ascontiguousarray(b).reshape(a.shape), x._device)
    node = record(ChannelShuffleBackward0, (x,), out)
    if node is not None:
        node.groups = c // groups
    return out


def channel_shuffle(input, groups):
    _check_tensor(input, "channel_shuffle")
    g = _factor(groups, "channel_shuffle", "groups")
    if g <= 0:
        raise RuntimeError("Number of groups to divide channels in must be positive. Value of "
                           f"groups:{g}")
    if input.ndim <= 2:
        raise RuntimeError("channel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    c = input.shape[1]
    if c % g:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {g} groups.")
    return follow_channels_last(_channel_shuffle(input, g), input)


native_channel_shuffle = channel_shuffle
