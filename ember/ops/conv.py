"""Convolutions: conv1d/2d/3d and their transposes, unfold/fold, with derivatives.

Everything rests on three array routines over any number of spatial dims:
`conv_forward` (im2col by one strided-window copy, then one batched BLAS matmul),
`conv_transpose_forward` (the adjoint in the input: a stride-1 one is a convolution with
the flipped kernel; a strided one is a matmul then col2im, accumulated per kernel offset)
and `conv_weight_grad` (im2col, then a matmul with the output gradient).

Those three are bilinear, and each one's derivatives are the other two, so three graph ops
(`_conv`, `_conv_transpose`, `_conv_weight`) close under differentiation: double backward
is convolutions again. Nothing loops over pixels or batch elements; col2im loops over
kernel offsets only. Large temporaries (padded inputs, im2col buffers) are thread-local
scratch reused between calls, which spares the page faults of fresh large allocations.
"""
import builtins
import itertools
import math
import threading
import warnings

import numpy as np

from .._tensor import make_tensor, Tensor, xp_of
from .._state import autocast as _autocast, selective_checkpoint_anywhere as _sac_anywhere
from ._autocast import lower
from ._graph import Node, kept_output, record

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "convolution"]
METHODS = []
FUNCTIONAL = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
              "conv_transpose3d", "unfold", "fold"]


# ---- scratch memory ------------------------------------------------------------------------
_local = threading.local()
_SCRATCH_MIN, _SCRATCH_MAX = 1 << 20, 1 << 30


def scratch(xp, slot, shape, dtype):
    """An uninitialised array that is only used inside one op call (never returned)."""
    n = math.prod(shape) * np.dtype(dtype).itemsize
    if xp is not np or not _SCRATCH_MIN <= n <= _SCRATCH_MAX:
        return xp.empty(shape, dtype)
    bufs = getattr(_local, "bufs", None)
    if bufs is None:
        bufs = _local.bufs = {}
    buf = bufs.get(slot)
    if buf is None or buf.nbytes < n:
        buf = bufs[slot] = np.empty(n, np.uint8)
    return buf[:n].view(dtype).reshape(shape)


# ---- array routines --------------------------------------------------------------------------
def _strided(xp):
    return xp.lib.stride_tricks.as_strided


def pad_array(xp, a, lo, hi, value=0, slot=None):
    """`a` (N, C, *S) padded by lo/hi per spatial dim (negative amounts crop)."""
    if any(p < 0 for p in lo) or any(p < 0 for p in hi):
        a = a[(slice(None), slice(None)) + tuple(
            slice(max(-l, 0), s - max(-h, 0)) for s, l, h in zip(a.shape[2:], lo, hi))]
        lo, hi = [max(p, 0) for p in lo], [max(p, 0) for p in hi]
    if not any(lo) and not any(hi):
        return a
    shape = a.shape[:2] + tuple(s + l + h for s, l, h in zip(a.shape[2:], lo, hi))
    every = (slice(None),)
    if xp is not np and value == 0:  # a device: one memset and one copy (see pad_channels_last)
        out = xp.zeros(shape, a.dtype)
        out[every * 2 + tuple(slice(l, l + s) for l, s in zip(lo, a.shape[2:]))] = a
        return out
    out = scratch(xp, slot, shape, a.dtype) if slot else xp.empty(shape, a.dtype)
    for d, (l, h) in enumerate(zip(lo, hi)):  # fill only the borders
        ax = every * (2 + d)
        if l:
            out[ax + (slice(0, l),)] = value
        if h:
            out[ax + (slice(shape[2 + d] - h, None),)] = value
    out[every * 2 + tuple(slice(l, l + s) for l, s in zip(lo, a.shape[2:]))] = a
    return out


def windows(xp, a, kernel, stride, dilation, out_size):
    """A strided view (N, C, *kernel, *out_size) of `a` (N, C, *S): every window, no copy."""
    st = a.strides
    return _strided(xp)(a, a.shape[:2] + tuple(kernel) + tuple(out_size),
                        st[:2] + tuple(s * d for s, d in zip(st[2:], dilation))
                        + tuple(s * t for s, t in zip(st[2:], stride)))


def out_size(size, kernel, stride, dilation):
    return tuple((s - d * (k - 1) - 1) // t + 1
                 for s, k, t, d in zip(size, kernel, stride, dilation))


def im2col(xp, a, kernel, stride, dilation, slot="col", osz=None):
    """The contiguous (N, C, *kernel, *out) copy of the windows of an (already padded) `a`.
    One copy in destination order: each input plane is read while it sits in cache."""
    if osz is None:
        osz = out_size(a.shape[2:], kernel, stride, dilation)
    view = windows(xp, a, kernel, stride, dilation, osz)
    col = scratch(xp, slot, view.shape, a.dtype) if slot else xp.empty(view.shape, a.dtype)
    col[...] = view
    return col, osz


def col2im(xp, col, size, kernel, stride, dilation, lo, hi):
    """Adjoint of im2col: (N, C, *kernel, *out) summed back into (N, C, *size), one strided
    accumulation per kernel offset (windows of one offset never overlap)."""
    n = len(size)
    osz = col.shape[2 + n:]
    padded = tuple(s + l + h for s, l, h in zip(size, lo, hi))
    out = xp.zeros(col.shape[:2] + padded, col.dtype)
    every = (slice(None),) * 2
    for off in itertools.product(*[range(k) for k in kernel]):
        target = every + tuple(slice(o * d, o * d + t * (m - 1) + 1, t)
                               for o, d, t, m in zip(off, dilation, stride, osz))
        out[target] += col[every + off]
    if any(lo) or any(hi):
        out = xp.ascontiguousarray(out[every + tuple(slice(l, l + s) for l, s in zip(lo, size))])
    return out


_COMPUTE = {np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64),
            np.dtype(np.complex128), np.dtype(np.int64), np.dtype(np.int32)}


def _matmul(xp, a, b, out=None):
    if a.dtype not in _COMPUTE:  # half, bfloat16, small ints: BLAS works in float32
        return xp.matmul(a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
    return xp.matmul(a, b, out=out)


# The most bytes one im2col buffer may take: a larger batch is convolved in slices, so that
# ResNet-18 at batch 256 on a GPU needs a few hundred MB of scratch per layer, not GBs.
COL_BUDGET = 1 << 28


def _batch_slices(x, kernel, p, osz):
    """Slices of the batch whose im2col buffers each fit COL_BUDGET (one slice: all of it)."""
    n = x.shape[0]
    if osz is None:
        stride, lo, hi, dil, _ = p
        padded = tuple(s + l + h for s, l, h in zip(x.shape[2:], lo, hi))
        osz = out_size(padded, kernel, stride, dil)
    per_sample = x.shape[1] * math.prod(kernel) * math.prod(osz) * x.dtype.itemsize
    step = max(1, COL_BUDGET // max(per_sample, 1))
    if n <= step:
        return None
    return [slice(i, min(i + step, n)) for i in range(0, n, step)]


# ---- channels-last path (groups 1) ----------------------------------------------------------
# With the column matrix in (N*L, K*C) order, a whole batch is ONE tall product
# (N*L, K*C) @ (K*C, O) that BLAS runs near its peak even for the thin 16..64-channel layers,
# where the (N, C*K, L) order costs N small products. The column copy reads runs of C
# contiguous channels of a channels-last padded input, built by one copy that also pads.

def pad_channels_last(xp, x, lo, hi):
    """x (N, C, *S) as a zero-padded (N, *padded, C) array: one copy does layout and padding."""
    nd = x.ndim - 2
    shape = (x.shape[0],) + tuple(s + l + h for s, l, h in zip(x.shape[2:], lo, hi)) \
        + (x.shape[1],)
    every = (slice(None),)
    inner = every + tuple(slice(l, l + s) for l, s in zip(lo, x.shape[2:]))
    if xp is not np:
        # A device zeroes the whole buffer in one memset: one array call, where zeroing the
        # borders takes two per padded dim (each call is host time, the step's bottleneck
        # there). The host zeroes only the borders of a reused buffer (no page faults).
        out = xp.zeros(shape, x.dtype)
        out[inner] = xp.moveaxis(x, 1, -1)
        return out
    out = scratch(xp, "pad", shape, x.dtype)
    for d, (l, h) in enumerate(zip(lo, hi)):  # zero only the borders
        ax = every * (1 + d)
        if l:
            out[ax + (slice(0, l),)] = 0
        if h:
            out[ax + (slice(shape[1 + d] - h, None),)] = 0
    out[inner] = xp.moveaxis(x, 1, -1)
    return out


def im2col_channels_last(xp, x, kernel, p, osz):
    """The (N*L, K*C) column matrix of x (N, C, *S): rows are output pixels, columns are
    (kernel offset, channel) pairs."""
    stride, lo, hi, dil, _ = p
    a = pad_channels_last(xp, x, lo, hi)
    nd, st = len(kernel), a.strides
    view = _strided(xp)(a, (a.shape[0],) + tuple(osz) + tuple(kernel) + (a.shape[-1],),
                        (st[0],) + tuple(s * t for s, t in zip(st[1:-1], stride))
                        + tuple(s * d for s, d in zip(st[1:-1], dil)) + (st[-1],))
    col = scratch(xp, "col", view.shape, a.dtype)
    col[...] = view
    return col.reshape(x.shape[0] * math.prod(osz), math.prod(kernel) * x.shape[1])


def _weight_matrix(w):
    """w (O, C, *K) as the (O, K*C) matrix matching im2col_channels_last's columns."""
    return w.reshape(w.shape[:2] + (-1,)).swapaxes(1, 2).reshape(w.shape[0], -1)


def _rows(xp, y):
    """(N, O, *out) as the contiguous (N*L, O) matrix."""
    t = scratch(xp, "rows", (y.shape[0],) + y.shape[2:] + (y.shape[1],), y.dtype)
    t[...] = xp.moveaxis(y, 1, -1)
    return t.reshape(-1, y.shape[1])


def _from_rows(xp, m, n, osz):
    """The (N*L, O) matrix back as a contiguous (N, O, *out) array (explicit sizes, not -1:
    an empty batch must reshape too)."""
    return xp.ascontiguousarray(xp.moveaxis(m.reshape((n,) + tuple(osz) + (m.shape[1],)), -1, 1))


def col2im_channels_last(xp, col, n, c, size, kernel, stride, dilation, lo, hi, osz):
    """Adjoint of im2col_channels_last: the (N*L, K*C) matrix summed into (N, C, *size)."""
    nd = len(size)
    col = col.reshape((n,) + tuple(osz) + tuple(kernel) + (c,))
    padded = tuple(s + l + h for s, l, h in zip(size, lo, hi))
    out = xp.zeros((n,) + padded + (c,), col.dtype)
    every = (slice(None),)
    for off in itertools.product(*[range(k) for k in kernel]):
        target = every + tuple(slice(o * d, o * d + t * (m - 1) + 1, t)
                               for o, d, t, m in zip(off, dilation, stride, osz))
        out[target] += col[every * (1 + nd) + off]
    out = out[every + tuple(slice(l, l + s) for l, s in zip(lo, size))]
    return xp.ascontiguousarray(xp.moveaxis(out, -1, 1))


# Which column layout convolutions use: "auto" (channels-last where it applies), or one forced
# ("channels_last" still falls back for groups > 1 and non-BLAS dtypes; "batched" is the
# per-sample (N, C*K, L) layout). Tests force each branch through this switch.
LAYOUT = "auto"


# Measured at 1 thread (OpenBLAS, CIFAR ResNet and ResNet-18 shapes): the channels-last layout
# wins from 32 channels up on k x k kernels (up to 2x for 32 channels on 16x16); with fewer
# channels its copies run over too short rows (3 channels: 2x slower), and 1x1 kernels need no
# window copy in the batched layout at all.
CHANNELS_LAST_MIN_CHANNELS = 32


def _channels_last_ok(a, g, channels, kernel):
    """Whether a convolution of `a` with `channels` per copied row takes the channels-last path."""
    if LAYOUT == "batched" or g != 1 or a.dtype not in _COMPUTE:
        return False
    return LAYOUT == "channels_last" or (channels >= CHANNELS_LAST_MIN_CHANNELS
                                          and math.prod(kernel) > 1)


def conv_forward(xp, x, w, p, osz=None):
    """Convolution of arrays x (N, C, *S) and w (O, C/g, *K) with params `p`; `osz` keeps
    only the first windows (the adjoint of a transposed convolution with output_padding)."""
    stride, lo, hi, dil, g = p
    kernel = w.shape[2:]
    parts = _batch_slices(x, kernel, p, osz)
    if parts is not None:
        return xp.concatenate([conv_forward(xp, x[s], w, p, osz) for s in parts])
    n, o = x.shape[0], w.shape[0]
    if _channels_last_ok(x, g, x.shape[1], kernel):
        if osz is None:
            padded = tuple(s + l + h for s, l, h in zip(x.shape[2:], lo, hi))
            osz = out_size(padded, kernel, stride, dil)
        col = im2col_channels_last(xp, x, kernel, p, osz)
        return _from_rows(xp, xp.matmul(col, _weight_matrix(w).T), n, osz)
    xpad = pad_array(xp, x, lo, hi, slot="pad")
    col, osz = im2col(xp, xpad, kernel, stride, dil, osz=osz)
    # explicit sizes, not -1: an empty batch (N = 0) must reshape too
    col = col.reshape(n, g, (x.shape[1] // g) * math.prod(kernel), math.prod(osz))
    y = _matmul(xp, w.reshape(g, o // g, -1), col)
    return y.reshape((n, o) + osz)


def conv_transpose_forward(xp, y, w, p, size):
    """The adjoint of `conv_forward` in x: y (N, O, *out) to (N, C, *size)."""
    stride, lo, hi, dil, g = p
    kernel, nd = w.shape[2:], len(size)
    o, cg = w.shape[:2]
    if all(s == 1 for s in stride):
        # Stride 1: a convolution with the flipped, transposed kernel (im2col + one matmul
        # beats matmul + col2im: no scatter pass at all).
        wf = w.reshape((g, o // g, cg) + kernel).swapaxes(1, 2)
        wf = wf[(Ellipsis,) + (slice(None, None, -1),) * nd].reshape((g * cg, o // g) + kernel)
        lo2 = [d * (k - 1) - l for d, k, l in zip(dil, kernel, lo)]
        hi2 = [s - m - l2 + d * (k - 1)
               for s, m, l2, d, k in zip(size, y.shape[2:], lo2, dil, kernel)]
        return conv_forward(xp, y, xp.ascontiguousarray(wf), ((1,) * nd, lo2, hi2, dil, g))
    n, osz = y.shape[0], y.shape[2:]
    per_sample = g * cg * math.prod(kernel) * math.prod(osz) * y.dtype.itemsize
    if n > 1 and n * per_sample > COL_BUDGET:
        step = max(1, COL_BUDGET // per_sample)
        return xp.concatenate([conv_transpose_forward(xp, y[i:i + step], w, p, size)
                               for i in range(0, n, step)])
    if _channels_last_ok(y, g, cg, kernel):
        col = xp.matmul(_rows(xp, y), _weight_matrix(w))  # (N*L, K*C)
        return col2im_channels_last(xp, col, n, cg, size, kernel, stride, dil, lo, hi, osz)
    y = xp.ascontiguousarray(y)  # BLAS wants unit strides (a summed loss gives stride 0)
    wm = w.reshape(g, o // g, -1).swapaxes(1, 2)
    ym = y.reshape(n, g, o // g, math.prod(osz))
    col = scratch(xp, "col", (n, g, wm.shape[1], ym.shape[-1]), y.dtype) \
        if y.dtype in _COMPUTE else None
    col = _matmul(xp, wm, ym, out=col)
    col = col.reshape((n, g * cg) + tuple(kernel) + tuple(osz))
    return col2im(xp, col, size, kernel, stride, dil, lo, hi)


def conv_weight_grad(xp, x, gy, p, w_shape):
    """d<gy, conv(x, w)>/dw: (O, C/g, *K)."""
    stride, lo, hi, dil, g = p
    kernel = tuple(w_shape[2:])
    parts = _batch_slices(x, kernel, p, gy.shape[2:])
    if parts is not None:
        gw = conv_weight_grad(xp, x[parts[0]], gy[parts[0]], p, w_shape)
        for s in parts[1:]:
            gw += conv_weight_grad(xp, x[s], gy[s], p, w_shape)
        return gw
    if _channels_last_ok(x, g, x.shape[1], kernel):
        col = im2col_channels_last(xp, x, kernel, p, gy.shape[2:])
        # (K*C, N*L) @ (N*L, O): the sum over N*L inside BLAS (this operand order measured
        # 1.4-2x faster than (O, N*L) @ (N*L, K*C) with OpenBLAS)
        gw = xp.matmul(col.T, _rows(xp, gy))
        gw = gw.reshape((math.prod(kernel), w_shape[1], w_shape[0])).transpose(2, 1, 0)
        return xp.ascontiguousarray(gw).reshape(w_shape)
    xpad = pad_array(xp, x, lo, hi, slot="pad")
    osz = gy.shape[2:]
    col, osz = im2col(xp, xpad, kernel, stride, dil, osz=osz)
    n, o = gy.shape[:2]
    col = col.reshape(n, g, (x.shape[1] // g) * math.prod(kernel), math.prod(osz))
    gym = xp.ascontiguousarray(gy).reshape(n, g, o // g, math.prod(osz))
    gw = _matmul(xp, gym, col.swapaxes(-1, -2)).sum(0)
    return gw.reshape(w_shape)


# ---- graph ops ---------------------------------------------------------------------------
def _bias_grad(grad):
    return grad.sum([0] + list(range(2, grad.ndim)))


def _add_bias(xp, y, bias):
    if bias is not None:
        y += bias._array.reshape((1, -1) + (1,) * (y.ndim - 2))
    return y


class ConvolutionBackward0(Node):
    """conv (transposed=False) or conv_transpose (transposed=True) of input and weight."""

    def backward(self, grad):
        x, w = self.saved_tensors
        p, nxt = self.params, self._next
        gx = gw = None
        if self.transposed:
            if nxt[0][0] is not None:
                gx = _conv(grad, w, None, p, x.shape[2:])
            if nxt[1][0] is not None:
                gw = _conv_weight(grad, x, p, w.shape)
        else:
            if nxt[0][0] is not None:
                gx = _conv_transpose(grad, w, None, p, x.shape[2:])
            if nxt[1][0] is not None:
                gw = _conv_weight(x, grad, p, w.shape)
        if len(nxt) == 3:
            return gx, gw, (_bias_grad(grad) if nxt[2][0] is not None else None)
        return gx, gw


class ConvolutionBackwardBackward0(Node):
    """The weight gradient of a convolution, as a function of input and output gradient."""

    def backward(self, grad):
        x, gy = self.saved_tensors
        p = self.params
        gx = _conv_transpose(gy, grad, None, p, x.shape[2:]) if self._next[0][0] is not None \
            else None
        ggy = _conv(x, grad, None, p, gy.shape[2:]) if self._next[1][0] is not None else None
        return gx, ggy


def _record_conv(out, x, w, bias, p, transposed):
    node = record(ConvolutionBackward0, _inputs(x, w, bias), out)
    if node is not None:
        node.save_for_backward(x, w)
        node.params, node.transposed = p, transposed
    return out


def _inputs(x, w, bias):
    return (x, w) if bias is None else (x, w, bias)


def _conv(x, w, bias, p, osz=None):
    xp = xp_of(x)
    # a selective checkpoint's recomputation hands back the forward's result when it kept it
    y = kept_output(ConvolutionBackward0, _inputs(x, w, bias)) if _sac_anywhere.count else None
    if y is None:
        y = _add_bias(xp, conv_forward(xp, x._array, w._array, p, osz), bias)
    return _record_conv(make_tensor(y, x._device), x, w, bias, p, False)


def _conv_transpose(y, w, bias, p, size):
    xp = xp_of(y)
    x = kept_output(ConvolutionBackward0, _inputs(y, w, bias)) if _sac_anywhere.count else None
    if x is None:
        x = _add_bias(xp, conv_transpose_forward(xp, y._array, w._array, p, tuple(size)), bias)
    return _record_conv(make_tensor(x, y._device), y, w, bias, p, True)


def _conv_weight(x, gy, p, w_shape):
    gw = make_tensor(conv_weight_grad(xp_of(x), x._array, gy._array, p, tuple(w_shape)),
                     x._device)
    node = record(ConvolutionBackwardBackward0, (x, gy), gw)
    if node is not None:
        node.save_for_backward(x, gy)
        node.params = p
    return gw


# ---- argument checking -----------------------------------------------------------------------
def _int_tuple(value, n, what, fname):
    if isinstance(value, (builtins.int, np.integer)) and not isinstance(value, builtins.bool):
        return (builtins.int(value),) * n
    if isinstance(value, Tensor):
        value = value.tolist()
    try:
        vals = tuple(value)
    except TypeError:
        raise TypeError(f"{fname}(): argument '{what}' must be tuple of ints, not "
                        f"{type(value).__name__}") from None
    for v in vals:
        if not isinstance(v, (builtins.int, np.integer)) or isinstance(v, builtins.bool):
            raise TypeError(f"{fname}(): argument '{what}' must be tuple of ints, but found "
                            f"element of type {type(v).__name__} at pos 0")
    vals = tuple(builtins.int(v) for v in vals)
    if len(vals) == 1 and n > 1:
        vals = vals * n
    if len(vals) != n:
        raise RuntimeError(f"expected {what} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got "
                           f"{what}={list(vals)}")
    return vals



def _sizes(shape):
    return " x ".join(str(s) for s in shape)


def _check_tensor(t, what, fname, pos):
    if not isinstance(t, Tensor):
        raise TypeError(f"{fname}(): argument '{what}' (position {pos}) must be Tensor, not "
                        f"{type(t).__name__}")


def _prepare(input, weight, bias, nd, fname, transposed):
    """Shared checks; returns (batched input, unbatched?)."""
    _check_tensor(input, "input", fname, 1)
    _check_tensor(weight, "weight", fname, 2)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{fname}, but got input of size: {list(input.shape)}")
    unbatched = input.ndim == nd + 1
    if unbatched:
        input = input.unsqueeze(0)
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype._scalar_name} but found "
                           f"{weight.dtype._scalar_name}")
    if bias is not None:
        _check_tensor(bias, "bias", fname, 3)
        if bias.dtype is not input.dtype:
            raise RuntimeError(f"Input type ({input.dtype._cpp_name}) and bias type "
                               f"({bias.dtype._cpp_name}) should be the same")
    if input.dtype.name == "bool":
        raise NotImplementedError(f"\"slow_conv{nd}d_cpu\" not implemented for 'Bool'")
    if input._device != weight._device:
        raise RuntimeError(f"Input type ({input.device}) and weight type ({weight.device}) "
                           "should be the same")
    return input, unbatched


def _check_params(input, weight, bias, stride, dilation, groups, transposed):
    nd = weight.ndim - 2
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got {list(dilation)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    shape_w = list(weight.shape)
    if weight.ndim != input.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional "
                           f"weight {shape_w}, but got {input.ndim}-dimensional input of size "
                           f"{list(input.shape)} instead")
    if shape_w[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{shape_w}] instead")
    c = input.shape[1]
    if not transposed:
        if c != shape_w[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {shape_w}, expected "
                               f"input{list(input.shape)} to have {shape_w[1] * groups} channels, "
                               f"but got {c} channels instead")
        n_out = shape_w[0]
    else:
        if c != shape_w[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {shape_w}, expected "
                               f"input{list(input.shape)} to have {shape_w[0]} channels, but got "
                               f"{c} channels instead")
        n_out = shape_w[1] * groups
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != n_out):
        pre = "Given transposed=1, weight" if transposed else "Given weight"
        raise RuntimeError(f"{pre} of size {shape_w}, expected bias to be 1-dimensional with "
                           f"{n_out} elements, but got bias of size {list(bias.shape)} instead")


_warned_same = []


def _conv_nd(nd, fname, input, weight, bias, stride, padding, dilation, groups):
    if _autocast.active:
        input, weight, bias = lower(input, weight, bias)
    input, unbatched = _prepare(input, weight, bias, nd, fname, False)
    if weight.ndim != nd + 2:
        nd = max(weight.ndim - 2, 1)
    stride = _int_tuple(stride, nd, "stride", fname)
    dilation = _int_tuple(dilation, nd, "dilation", fname)
    groups = builtins.int(groups)
    kernel = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            lo = hi = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for d, k in zip(dilation, kernel)]
            lo = tuple(t // 2 for t in total)
            hi = tuple(t - t // 2 for t in total)
            if lo != hi and not _warned_same:  # PyTorch warns once per process
                _warned_same.append(True)
                warnings.warn("Using padding='same' with even kernel lengths and odd dilation may "
                              "require a zero-padded copy of the input be created", UserWarning,
                              stacklevel=3)
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        lo = hi = _int_tuple(padding, nd, "padding", fname)
        if any(p < 0 for p in lo):
            raise RuntimeError("negative padding is not supported")
    _check_params(input, weight, bias, stride, dilation, groups, False)
    padded = tuple(s + l + h for s, l, h in zip(input.shape[2:], lo, hi))
    eff = tuple(d * (k - 1) + 1 for d, k in zip(dilation, kernel))
    if any(e > s for e, s in zip(eff, padded)):
        raise RuntimeError(f"Calculated padded input size per channel: ({_sizes(padded)}). "
                           f"Kernel size: ({_sizes(eff)}). Kernel size can't be greater than "
                           "actual input size")
    out = _conv(input, weight, bias, (stride, lo, hi, dilation, groups))
    return out.squeeze(0) if unbatched else out


def _conv_transpose_nd(nd, fname, input, weight, bias, stride, padding, output_padding, groups,
                       dilation):
    if _autocast.active:
        input, weight, bias = lower(input, weight, bias)
    input, unbatched = _prepare(input, weight, bias, nd, fname, True)
    if weight.ndim != nd + 2:
        nd = max(weight.ndim - 2, 1)
    if isinstance(padding, str):
        raise TypeError(f"{fname}(): argument 'padding' must be tuple of ints, not str")
    stride = _int_tuple(stride, nd, "stride", fname)
    padding = _int_tuple(padding, nd, "padding", fname)
    output_padding = _int_tuple(output_padding, nd, "output_padding", fname)
    dilation = _int_tuple(dilation, nd, "dilation", fname)
    groups = builtins.int(groups)
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    _check_params(input, weight, bias, stride, dilation, groups, True)
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        if nd == 1:  # PyTorch checks 1-d as 2-d of height 1
            output_padding, stride, dilation = ((0,) + output_padding, (1,) + stride,
                                                (1,) + dilation)
        names = ("depth", "height", "width")[3 - len(stride):]
        parts = [f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)]
        parts += [f"stride_{n}: {v}" for n, v in zip(names, stride)]
        parts += [f"dilation_{n}: {v}" for n, v in zip(names, dilation)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                           "got " + " ".join(parts))
    kernel = tuple(weight.shape[2:])
    size = tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1 for i, s, p, d, k, op in
                 zip(input.shape[2:], stride, padding, dilation, kernel, output_padding))
    if any(s <= 0 for s in size):
        one = (1,) if nd == 1 else ()  # PyTorch computes 1-d as 2-d of height 1
        raise RuntimeError(f"Given input size per channel: ({_sizes(one + input.shape[2:])}). "
                           f"Calculated output size per channel: ({_sizes(one + size)}). Output "
                           "size is too small")
    out = _conv_transpose(input, weight, bias, (stride, padding, padding, dilation, groups), size)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose_nd(1, "conv_transpose1d", input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose_nd(2, "conv_transpose2d", input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose_nd(3, "conv_transpose3d", input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """`torch.convolution`: batched input, any number of spatial dims."""
    nd = weight.ndim - 2
    if transposed:
        return _conv_transpose_nd(nd, "convolution", input, weight, bias, stride, padding,
                                  output_padding, groups, dilation)
    return _conv_nd(nd, "convolution", input, weight, bias, stride, padding, dilation, groups)


# ---- unfold / fold (im2col / col2im as user ops) -----------------------------------------
class Im2ColBackward0(Node):
    def backward(self, grad):
        return _fold(grad, *self.args)


class Col2ImBackward0(Node):
    def backward(self, grad):
        return _unfold(grad, *self.args)


def _unfold(x, size, kernel, dilation, padding, stride):
    xp = xp_of(x)
    xpad = pad_array(xp, x._array, padding, padding)
    col, osz = im2col(xp, xpad, kernel, stride, dilation, slot=None)
    n, c = x.shape[:2]
    out = make_tensor(col.reshape(n, c * math.prod(kernel), math.prod(osz)), x._device)
    node = record(Im2ColBackward0, (x,), out)
    if node is not None:
        node.args = (size, kernel, dilation, padding, stride)
    return out


def _fold(col, size, kernel, dilation, padding, stride):
    xp = xp_of(col)
    n = col.shape[0]
    c = col.shape[1] // math.prod(kernel)
    osz = out_size(tuple(s + 2 * p for s, p in zip(size, padding)), kernel, stride, dilation)
    arr = col._array.reshape((n, c) + tuple(kernel) + osz)
    out = make_tensor(col2im(xp, arr, size, kernel, stride, dilation, padding, padding),
                      col._device)
    node = record(Col2ImBackward0, (col,), out)
    if node is not None:
        node.args = (size, kernel, dilation, padding, stride)
    return out


def _pair(v, what):
    return _int_tuple(v, 2, what, "unfold")


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """`nn.functional.unfold`: (N, C, H, W) to (N, C*kh*kw, L) sliding blocks (im2col)."""
    _check_tensor(input, "input", "unfold", 1)
    if input.ndim not in (3, 4) or 0 in input.shape[1:]:
        raise RuntimeError("Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and "
                           f"other non-zero dimensions for input, but got: {list(input.shape)}")
    kernel, dilation = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    padding, stride = _pair(padding, "padding"), _pair(stride, "stride")
    unbatched = input.ndim == 3
    x = input.unsqueeze(0) if unbatched else input
    size = tuple(x.shape[2:])
    blocks = out_size(tuple(s + 2 * p for s, p in zip(size, padding)), kernel, stride, dilation)
    if any(b < 1 for b in blocks):
        raise RuntimeError(f"Given input with spatial size {size}, kernel_size={kernel}, "
                           f"dilation={dilation}, padding={padding}, calculated shape of the "
                           f"array of sliding blocks as {blocks}, but its components must be at "
                           "least one.")
    out = _unfold(x, size, kernel, dilation, padding, stride)
    return out.squeeze(0) if unbatched else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """`nn.functional.fold`: (N, C*kh*kw, L) blocks summed into (N, C, H, W) (col2im)."""
    _check_tensor(input, "input", "fold", 1)
    if input.ndim not in (2, 3) or 0 in input.shape[1:]:
        raise RuntimeError("Expected 2D or 3D (batch mode) tensor with possibly 0 batch size and "
                           f"non-zero dimensions for input, but got: {list(input.shape)}")
    size = _pair(output_size, "output_size")
    kernel, dilation = _pair(kernel_size, "kernel_size"), _pair(dilation, "dilation")
    padding, stride = _pair(padding, "padding"), _pair(stride, "stride")
    unbatched = input.ndim == 2
    x = input.unsqueeze(0) if unbatched else input
    k = math.prod(kernel)
    if x.shape[1] % k:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size={kernel}.")
    blocks = out_size(tuple(s + 2 * p for s, p in zip(size, padding)), kernel, stride, dilation)
    if any(b < 1 for b in blocks):
        raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, "
                           f"padding={padding}, stride={stride}, calculated shape of the array of "
                           f"sliding blocks as {blocks}, but its components must be at least one.")
    if x.shape[2] != math.prod(blocks):
        raise RuntimeError(f"Given output_size={size}, kernel_size={kernel}, dilation={dilation}, "
                           f"padding={padding}, stride={stride}, expected size of input's "
                           f"dimension 2 to match the calculated number of sliding blocks "
                           f"{blocks[0]} * {blocks[1]} = {math.prod(blocks)}, but got "
                           f"input.size(2)={x.shape[2]}.")
    out = _fold(x, size, kernel, dilation, padding, stride)
    return out.squeeze(0) if unbatched else out
