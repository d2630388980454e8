"""The channels-last column layout (groups 1): im2col into (N*L, K*C) rows, and its adjoint."""
import functools
import itertools
import math

import numpy as np

from ._im2col import _strided, by_phase, copied, scratch, sum_by_phase


# ---- channels-last path (groups 1) ----------------------------------------------------------
# With the column matrix in (N*L, K*C) order, a whole batch is ONE tall product
# (N*L, K*C) @ (K*C, O) that BLAS runs near its peak even for the thin 16..64-channel layers,
# where the (N, C*K, L) order costs N small products. The column copy reads runs of C
# contiguous channels of a channels-last padded input, built by one copy that also pads.

def pad_channels_last(xp, x, lo, hi):
    """x (N, C, *S) as a zero-padded (N, *padded, C) array: one copy does layout and padding."""
    shape, inner = _pad_plan(x.shape, tuple(lo), tuple(hi))
    if xp is not np:
        # A device zeroes the whole buffer in one memset: one array call, where zeroing the
        # borders takes two per padded dim (each call is host time, the step's bottleneck
        # there). The host zeroes only the borders of a reused buffer (no page faults).
        out = xp.zeros(shape, x.dtype)
        out[inner] = xp.moveaxis(x, 1, -1)
        return out
    out = scratch(xp, "pad", shape, x.dtype)
    every = (slice(None),)
    for d, (l, h) in enumerate(zip(lo, hi)):  # zero only the borders
        ax = every * (1 + d)
        if l:
            out[ax + (slice(0, l),)] = 0
        if h:
            out[ax + (slice(shape[1 + d] - h, None),)] = 0
    out[inner] = xp.moveaxis(x, 1, -1)
    return out


# The shapes, strides and indices of the two routines above and below, per layer shape: a
# model's few come back every step, and building them took ~10 generator frames a call.
@functools.lru_cache(maxsize=256)
def _pad_plan(shape, lo, hi):
    """The padded channels-last shape of an (N, C, *S) array and the index of its place."""
    padded = (shape[0],) + tuple(s + l + h for s, l, h in zip(shape[2:], lo, hi)) + (shape[1],)
    return padded, (slice(None),) + tuple(slice(l, l + s) for l, s in zip(lo, shape[2:]))


@functools.lru_cache(maxsize=256)
def _window_plan(shape, strides, osz, kernel, stride, dil):
    """The (N, *out, *kernel, C) window view of a padded (N, *padded, C) array: its shape and
    strides, and the (rows, columns) of the column matrix it is copied into."""
    view_shape = (shape[0],) + osz + kernel + (shape[-1],)
    view_strides = (strides[0],) + tuple(s * t for s, t in zip(strides[1:-1], stride)) \
        + tuple(s * d for s, d in zip(strides[1:-1], dil)) + (strides[-1],)
    return view_shape, view_strides, (shape[0] * math.prod(osz),
                                      math.prod(kernel) * shape[-1])


def im2col_channels_last(xp, x, kernel, p, osz, slot="col"):
    """The (N*L, K*C) column matrix of x (N, C, *S): rows are output pixels, columns are
    (kernel offset, channel) pairs; in scratch memory, or (`slot` None) a fresh array."""
    stride, lo, hi, dil, _ = p
    a = pad_channels_last(xp, x, lo, hi)
    view_shape, view_strides, matrix = _window_plan(a.shape, a.strides, tuple(osz),
                                                    tuple(kernel), tuple(stride), tuple(dil))
    return copied(xp, _strided(xp)(a, view_shape, view_strides), slot).reshape(matrix)


def _weight_matrix(w):
    """w (O, C, *K) as the (O, K*C) matrix matching im2col_channels_last's columns."""
    return w.transpose((0,) + tuple(range(2, w.ndim)) + (1,)).reshape(w.shape[0], -1)


# Output channels a block when `flipped_weight_matrix` copies: a block's part of w (32 rows of
# C*K numbers) stays in L2 while each of the K kernel offsets reads it, where one copy of
# the whole flipped view read all of w from memory once per offset (measured at 512 channels:
# 3.5 -> 1.3 ms; the flipped view's contiguous copy and its _weight_matrix took 3.5-5.2).
_FLIP_BLOCK = 32


def flipped_weight_matrix(w):
    """The _weight_matrix of w (O, C, *K)'s flipped transpose (C, O, *K reversed), the kernel
    a stride-1 transposed convolution convolves with: (C, K*O), a transposed view of a
    contiguous (K*O, C) matrix, made in blocks of output channels."""
    o, c, kernel = w.shape[0], w.shape[1], w.shape[2:]
    nd = len(kernel)
    m = np.empty(tuple(kernel) + (o, c), w.dtype)
    flip = (slice(None, None, -1),) * nd
    for start in range(0, o, _FLIP_BLOCK):
        block = slice(start, start + _FLIP_BLOCK)
        m[(Ellipsis, block, slice(None))] = \
            w[block].transpose(tuple(range(2, 2 + nd)) + (0, 1))[flip]
    return m.reshape(-1, c).T


def _rows(xp, y):
    """(N, O, *out) as the contiguous (N*L, O) matrix."""
    return copied(xp, xp.moveaxis(y, 1, -1), "rows").reshape(-1, y.shape[1])


def _from_rows(xp, m, n, osz, out=None):
    """The (N*L, O) matrix back as a contiguous (N, O, *out) array, or into `out` (explicit
    sizes, not -1: an empty batch must reshape too)."""
    y = xp.moveaxis(m.reshape((n,) + tuple(osz) + (m.shape[1],)), -1, 1)
    if out is None:
        return xp.ascontiguousarray(y)
    out[...] = y
    return out


def col2im_channels_last(xp, col, n, c, size, kernel, stride, dilation, lo, hi, osz):
    """Adjoint of im2col_channels_last: the (N*L, K*C) matrix summed into (N, C, *size)."""
    nd = len(size)
    col = col.reshape((n,) + tuple(osz) + tuple(kernel) + (c,))
    padded = tuple(s + l + h for s, l, h in zip(size, lo, hi))
    every = (slice(None),)
    if by_phase(xp, kernel, stride, dilation):
        # (N, out_1, kernel_1, out_2, kernel_2, ..., C): a view
        out = sum_by_phase(xp, col.transpose((0,) + tuple(
            a for i in range(nd) for a in (1 + i, 1 + nd + i)) + (1 + 2 * nd,)), 1, kernel,
            stride, padded)
    else:
        out = xp.zeros((n,) + padded + (c,), col.dtype)
        for off in itertools.product(*[range(k) for k in kernel]):
            target = every + tuple(slice(o * d, o * d + t * (m - 1) + 1, t)
                                   for o, d, t, m in zip(off, dilation, stride, osz))
            part = out[target]  # summed in place: `out[target] += ...` writes the view back
            xp.add(part, col[every * (1 + nd) + off], out=part)
    out = out[every + tuple(slice(l, l + s) for l, s in zip(lo, size))]
    return xp.ascontiguousarray(xp.moveaxis(out, -1, 1))
