"""Helpers shared by the gather/scatter family's modules: device-aware index arrays, PyTorch's
index checks and messages, and the flat-position machinery every scatter-like forward uses.

`_scatter_positions` turns an index along `dim` into linear (C-order) indices of the output,
and `_reduce_flat` reduces repeated positions by `bincount` or a sort
(`_accumulate.accumulate_flat`, `_accumulate.segment_reduce`), never by `np.add.at`.
"""
import builtins

import numpy as np

from ... import dtypes as _dt
from ..._tensor import Tensor, _wrap_dim, make_tensor
from ...device import assert_on_device, checks_on_host
from .._accumulate import accumulate_flat, scatter_extreme, segment_reduce


def _xp(t):
    from ..._tensor import xp_of
    return xp_of(t)


def _zeros(shape, like):
    return make_tensor(_xp(like).zeros(shape, like._array.dtype), like._device)


def _index_arr(index, like):
    arr = index._array
    if index._device != like._device:
        from ..conversion import _move
        arr = _move(arr, index._device, like._device)
    return arr


# ---- checks ----------------------------------------------------------------------------------
def _check_int_index(index, fname, msg=None):
    if not isinstance(index, Tensor):
        raise TypeError(f"{fname}(): argument 'index' must be Tensor, not {type(index).__name__}")
    if index._array.dtype not in (np.int64, np.int32):
        raise RuntimeError(msg or f"{fname}(): Expected dtype int32/int64 for index")


def _check_long_index(index, fname):
    if index._array.dtype != np.int64:
        raise RuntimeError(f"{fname}(): Expected a long tensor for index, but got "
                           f"{_dt.FROM_NUMPY[index._array.dtype]._scalar_name}")


def _dims1(shape):
    return shape if shape else (1,)


def _check_gather_shapes(self_shape, dim, index_shape, src_shape, fname):
    s, i = _dims1(self_shape), _dims1(index_shape)
    if len(i) != len(s):
        raise RuntimeError("Index tensor must have the same number of dimensions as "
                           f"{'input' if fname == 'gather' else 'self'} tensor")
    if src_shape is not None and len(_dims1(src_shape)) < len(i):
        n = len(_dims1(src_shape))
        _wrap_dim(n, n)  # PyTorch reads src.size(d) past src's dims: its IndexError
    if 0 in index_shape:
        return
    for d in range(len(i)):
        if d != dim and i[d] > s[d]:
            if fname == "gather":
                raise RuntimeError(f"Size does not match at dimension {d} expected index "
                                   f"{list(index_shape)} to be no larger than self "
                                   f"{list(self_shape)} apart from dimension {dim}")
            break
        if src_shape is not None and i[d] > _dims1(src_shape)[d]:
            break
    else:
        return
    extra = "" if src_shape is None else \
        f" and to be no larger size than src {list(src_shape)}"
    raise RuntimeError(f"Expected index {list(index_shape)} to be no larger than self "
                       f"{list(self_shape)} apart from dimension {dim}{extra}")


def _check_range(idx, size, dim, dev, exc=RuntimeError, prefix="", allow_negative=False):
    """The indices `idx` (along a dim of `size`) to use, checked: on the CPU here, raising
    PyTorch's error; on a device by a device-side assert (`assert_on_device`), while the op
    goes on with the indices wrapped into range, so that it never writes outside its arrays."""
    if idx.size == 0:
        return idx
    lo = -size if allow_negative else 0
    if size and not checks_on_host(dev):
        assert_on_device(dev, (idx < lo) | (idx >= size),
                         'Assertion `idx_dim >= 0 && idx_dim < index_size && "index out of bounds"`')
        return idx % size
    if builtins.int(idx.min()) < lo or builtins.int(idx.max()) >= size:
        flat = idx.reshape(-1)
        pos = builtins.int(((flat < lo) | (flat >= size)).argmax())
        raise exc(f"{prefix}index {builtins.int(flat[pos])} is out of bounds for dimension {dim} "
                  f"with size {size}")
    return idx


# ---- flat positions ----------------------------------------------------------------------------
def _strides(shape):
    out, s = [], 1
    for n in reversed(shape):
        out.append(s)
        s *= n
    return out[::-1]


def _scatter_positions(shape, dim, idx, xp):
    """Flat positions in a C-contiguous array of `shape` for `out[..., idx, ...]` along `dim`:
    element e of `idx` (same ndim as shape) addresses its own coordinates but idx[e] on dim."""
    strides = _strides(shape)
    lin = idx.astype(np.int64, copy=False) * strides[dim]
    for d, n in enumerate(idx.shape):
        if d != dim and n > 1:
            lin = lin + (xp.arange(n, dtype=np.int64) * strides[d]).reshape(
                (1,) * d + (n,) + (1,) * (idx.ndim - d - 1))
    return xp.broadcast_to(lin, idx.shape)


def _narrow_to(t, shape):
    """t narrowed to `shape` (every dim no larger), differentiably; t itself when equal."""
    for d, n in enumerate(shape):
        if t._array.shape[d] != n:
            t = t.narrow(d, 0, n)
    return t


_INIT = {"sum": 0, "mean": 0, "prod": 1}


def _reduce_flat(flat, lin, vals, reduce, xp):
    """flat[lin] op= vals, repeated positions reduced together."""
    if reduce == "sum":
        accumulate_flat(flat, lin, vals)
        return
    ufunc = {"prod": "multiply", "amax": "maximum", "amin": "minimum"}[reduce]
    if xp is np:
        pos, red = segment_reduce(lin, vals, getattr(np, ufunc))
        flat[pos] = getattr(np, ufunc)(flat[pos], red)
        return
    if reduce != "prod":
        scatter_extreme(xp, flat, lin, vals, reduce == "amax")
        return
    _multiply_rows_on_device(xp, flat, lin, vals.astype(flat.dtype, copy=False))


def _multiply_rows_on_device(xp, flat, lin, vals):
    """`flat[lin] *= vals`, repeated positions multiplying together, on a device (CuPy has no
    multiply.at). Sorted by position, a segmented scan of log2(len(lin)) passes leaves each
    position's product at its last entry; only those entries write into a multiplier (the
    others write to one spare slot past the end), so no element gets two racing writes.
    All shapes are known up front: no sync."""
    n = lin.size
    if not n:
        return
    order = xp.argsort(lin)  # stable
    rows = lin[order]
    prods = vals[order]
    one = xp.ones(1, prods.dtype)
    step = 1
    while step < n:  # prods[k] *= prods[k - step] where both are the same position's
        same = rows[step:] == rows[:-step]
        prods[step:] = prods[step:] * xp.where(same, prods[:-step], one)
        step *= 2
    last = xp.concatenate((rows[1:] != rows[:-1], xp.ones(1, bool)))
    multiplier = xp.ones(flat.size + 1, flat.dtype)
    multiplier[xp.where(last, rows, flat.size)] = prods
    flat *= multiplier[:flat.size]



def _broadcast(a_shape, b_shape):
    try:
        return tuple(np.broadcast_shapes(a_shape, b_shape))
    except ValueError:
        for k in range(1, builtins.max(len(a_shape), len(b_shape)) + 1):
            a = a_shape[-k] if k <= len(a_shape) else 1
            b = b_shape[-k] if k <= len(b_shape) else 1
            if a != b and a != 1 and b != 1:
                raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b "
                                   f"({b}) at non-singleton dimension "
                                   f"{builtins.max(len(a_shape), len(b_shape)) - k}") from None
        raise
