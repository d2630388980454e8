"""Average pooling (avg_pool1d/2d/3d: padding counted or not, a divisor override) and
power-average pooling (lp_pool1d/2d/3d, PyTorch's composite over avg pooling).
"""
import builtins
import math

import numpy as np

from ..._memory_format import follow_channels_last
from ..._tensor import xp_of
from ._checks import _batch_check, _ints, _one, _pool_params
from ._common import (_AVG, _axis_take, _index_shape, _linear, _padded_planes, _planes,
                      _pool1d_via_2d, _strided_selectors)

# ---- average pooling -----------------------------------------------------------------------
def _counts(xp, size, k, stride, pad, o, include_pad):
    start = np.arange(o) * stride - pad
    end = np.minimum(start + k, size + pad)
    if include_pad:
        return end - start
    return np.minimum(end, size) - np.maximum(start, 0)


def _avg_pool(input, nd, fname, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    kernel, stride, padding, dilation, size, osz = _pool_params(
        input, nd, fname, "avg", kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    xp = xp_of(input)
    if divisor_override is not None:
        divisor = builtins.float(divisor_override)
    else:
        divisor = np.ones((), np.float64)
        for d in range(nd):
            c = _counts(xp, size[d], kernel[d], stride[d], padding[d], osz[d], count_include_pad)
            divisor = divisor * c.reshape(_index_shape(nd, d, osz[d]))
        if xp is not np:
            divisor = xp.asarray(divisor)
    lead = input.shape[:input.ndim - nd]
    sels = [_strided_selectors(k, t, 1, o) for k, t, o in zip(kernel, stride, osz)]

    def fn(xp, a):
        padded = _padded_planes(xp, a, nd, padding, kernel, stride, dilation, osz, 0, "pool")
        cur = padded
        for d in range(nd - 1, -1, -1):
            ax = cur.ndim - nd + d
            acc = _axis_take(cur, ax, sels[d][0]).copy()
            for sel in sels[d][1:]:
                acc += _axis_take(cur, ax, sel)
            cur = acc
        if cur.dtype.kind in "iub":
            cur = xp.trunc(cur / divisor).astype(cur.dtype)
        else:
            cur /= xp.asarray(divisor, dtype=cur.dtype) if not isinstance(divisor, float) \
                else cur.dtype.type(divisor)
        return cur.reshape(tuple(lead) + osz)

    def adjoint(xp, g):
        cur = _planes(g, nd) / (xp.asarray(divisor, dtype=g.dtype) if not isinstance(divisor, float)
                                else g.dtype.type(divisor))
        for d in range(nd):
            ax = cur.ndim - nd + d
            full = list(cur.shape)
            full[ax] = (osz[d] - 1) * stride[d] + kernel[d]
            full[ax] = builtins.max(full[ax], size[d] + 2 * padding[d])
            out = xp.zeros(full, g.dtype)
            for sel in sels[d]:
                out[(slice(None),) * ax + (sel,)] += cur
            cur = out
        cur = cur[(slice(None),) * 2 + tuple(slice(p, p + s) for p, s in zip(padding, size))]
        return xp.ascontiguousarray(cur).reshape(tuple(lead) + size)

    return _linear(input, fn, adjoint, _AVG[nd])


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    _batch_check(input, 1, "avg_pool1d", "avg")
    _ints(kernel_size, 1, "avg_pool1d", "kernel_size")
    k = _one(kernel_size)
    s = _ints(stride, 1, "avg_pool1d", "stride", True) if stride is not None else None
    s = k if not s else s[0]
    return _pool1d_via_2d(
        lambda x: _avg_pool(x, 2, "avg_pool2d", (1, k), (1, s), (0, _one(padding)), ceil_mode,
                            count_include_pad, None), input)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    _batch_check(input, 2, "avg_pool2d", "avg")
    return follow_channels_last(_avg_pool(input, 2, "avg_pool2d", kernel_size, stride, padding,
                                          ceil_mode, count_include_pad, divisor_override), input)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    _batch_check(input, 3, "avg_pool3d", "avg")
    return _avg_pool(input, 3, "avg_pool3d", kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


# ---- power-average pooling (PyTorch's composite) -------------------------------------------
def _lp(out, norm_type, n):
    from ..pointwise import abs as _abs, relu, sign
    return (sign(out) * relu(_abs(out))).mul(n).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, _one(kernel_size))


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    k = _ints(kernel_size, 2, "lp_pool2d", "kernel_size")
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, k[0] * k[1])


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    k = _ints(kernel_size, 3, "lp_pool3d", "kernel_size")
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, math.prod(k))
