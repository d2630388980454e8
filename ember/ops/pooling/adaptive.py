"""Adaptive pooling: adaptive_avg_pool1d/2d/3d (a matmul per spatial dim with an averaging
matrix) and adaptive_max_pool1d/2d/3d with their `_with_indices` forms.
"""
import builtins

import numpy as np

from ..._memory_format import follow_channels_last
from ..._tensor import Tensor, xp_of
from .._graph import needs_grad
from ._common import (_ADAPTIVE_AVG, _ADAPTIVE_MAX, _flat_index, _index_shape,
                      _linear, _max_result, _planes, _pool1d_via_2d, _separable_max)

# ---- adaptive pooling ----------------------------------------------------------------------
def _adaptive_bounds(size, out):
    o = np.arange(out)
    return (o * size) // out, -((-(o + 1) * size) // out)


def _adaptive_size(input, output_size, nd, fname):
    if output_size is None:
        raise TypeError(f"{fname}(): argument 'output_size' (position 2) must be tuple of ints, "
                        "not NoneType")
    if isinstance(output_size, (builtins.int, np.integer)):
        vals = (builtins.int(output_size),) * nd
    else:
        vals = tuple(output_size)
        if nd == 1 and len(vals) != 1:
            raise RuntimeError(f"{fname}() argument 'output_size' should contain one int "
                               f"(got {len(vals)})")
        if len(vals) != nd:
            if "max" in fname:
                raise RuntimeError(f"{fname}(): internal error: output_size.size() must be {nd}")
            raise RuntimeError(f"{fname}: output_size must be {nd}")
    size = tuple(input.shape[input.ndim - nd:])
    return tuple(s if v is None else builtins.int(v) for v, s in zip(vals, size))


def _adaptive_check(input, nd, fname, kind):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim not in (nd + 1, nd + 2):
        sep = ": " if kind == "max" else " "
        raise RuntimeError(f"{fname}(): Expected {nd + 1}D or {nd + 2}D tensor, but got"
                           f"{sep}{list(input.shape)}")
    if (kind == "max" or nd == 3) and 0 in input.shape[input.ndim - nd - 1:]:
        dim = input.shape.index(0, input.ndim - nd - 1)
        raise RuntimeError(f"{fname}(): Expected input to have non-zero size for non-batch "
                           f"dimensions, but input has sizes {list(input.shape)} with dimension "
                           f"{dim} being empty")


def _adaptive_avg(input, nd, fname, output_size):
    _adaptive_check(input, nd, fname, "avg")
    osz = _adaptive_size(input, output_size, nd, fname)
    if any(o < 0 for o in osz):
        inner = ", ".join(str(o) for o in osz) if nd < 3 else \
            f"{osz[0]}, {osz[1]},{osz[2]}"
        raise RuntimeError(f"adaptive_avg_pool{nd}d: elements of output_size must be greater "
                           f"than or equal to 0 but received {{{inner}}}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"adaptive_avg_pool{nd}d\" not implemented for "
                                  f"'{input.dtype._scalar_name}'")
    size = tuple(input.shape[input.ndim - nd:])
    if nd == 2 and osz == (1, 1) and input.numel():
        return input.mean((-2, -1), keepdim=True)
    xp = xp_of(input)
    mats = []
    for s, o in zip(size, osz):
        start, end = _adaptive_bounds(s, o)
        pos = np.arange(s)[:, None]
        m = ((pos >= start) & (pos < end)) / np.maximum(end - start, 1)
        mats.append(xp.asarray(m))

    def apply(xp, a, transpose):
        cur = a
        for d in range(nd - 1, -1, -1):
            m = mats[d].T if transpose else mats[d]
            m = m.astype(a.dtype)
            ax = cur.ndim - nd + d
            if ax == cur.ndim - 1:
                cur = xp.matmul(cur, m)
            elif ax == cur.ndim - 2:
                cur = xp.matmul(m.T, cur)
            else:
                cur = xp.moveaxis(xp.matmul(xp.moveaxis(cur, ax, -1), m), -1, ax)
        return xp.ascontiguousarray(cur)

    return _linear(input, lambda xp, a: apply(xp, a, False), lambda xp, g: apply(xp, g, True),
                   _ADAPTIVE_AVG[nd])


def adaptive_avg_pool1d(input, output_size):
    if isinstance(input, Tensor) and input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           "for argument #1 'self' (while checking arguments for "
                           "adaptive_avg_pool1d)")
    (o,) = _adaptive_size(input, output_size, 1, "adaptive_avg_pool1d")
    if o < 0:
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than "
                           f"or equal to 0 but received {{1, {o}}}")
    return _pool1d_via_2d(lambda x: _adaptive_avg(x, 2, "adaptive_avg_pool2d", (1, o)), input)


def adaptive_avg_pool2d(input, output_size):  # (PyTorch's 3-d pools stay contiguous)
    return follow_channels_last(_adaptive_avg(input, 2, "adaptive_avg_pool2d", output_size),
                                input)


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg(input, 3, "adaptive_avg_pool3d", output_size)


def _adaptive_max(input, nd, fname, output_size, return_indices):
    _adaptive_check(input, nd, fname, "max")
    osz = _adaptive_size(input, output_size, nd, fname)
    if any(o < 0 for o in osz):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{builtins.min(osz)}: {list(input.shape[:input.ndim - nd]) + list(osz)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"adaptive_max_pool{nd}d\" not implemented for "
                                  f"'{input.dtype._scalar_name}'")
    xp = xp_of(input)
    size = tuple(input.shape[input.ndim - nd:])
    need_idx = return_indices or needs_grad(input)
    sels, positions = [], []
    overlap = False
    for d, (s, o) in enumerate(zip(size, osz)):
        start, end = _adaptive_bounds(s, o)
        kmax = builtins.int((end - start).max()) if o else 1
        overlap = overlap or (o and s % o != 0)
        table = np.minimum(start[None, :] + np.arange(kmax)[:, None], np.maximum(end - 1, 0))
        table = xp.asarray(table)
        sels.append([table[j] for j in range(kmax)])
        positions.append(_adaptive_position(xp, table, nd, d, o))
    if 0 in osz or input.numel() == 0:
        lead = input.shape[:input.ndim - nd]
        vals = xp.zeros(tuple(lead) + osz, input._array.dtype)
        flat = xp.zeros(vals.shape, np.int64) if need_idx else None
        return _max_result(input, vals, flat, size, _ADAPTIVE_MAX[nd], True, return_indices, nd)
    vals, won = _separable_max(xp, _planes(input._array, nd), sels, need_idx)
    flat = _flat_index(xp, won, positions, size) if need_idx else None
    return _max_result(input, vals, flat, size, _ADAPTIVE_MAX[nd], overlap, return_indices, nd)


def _adaptive_position(xp, table, nd, d, o):
    shape = _index_shape(nd, d, o)
    cols = xp.arange(o).reshape(shape)
    return lambda off: table[off, cols]


def adaptive_max_pool1d(input, output_size, return_indices=False):
    if isinstance(input, Tensor) and input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           "for argument #1 'self' (while checking arguments for "
                           "adaptive_max_pool1d)")
    if isinstance(input, Tensor) and 0 in input.shape[-2:]:
        dim = input.shape.index(0, input.ndim - 2)
        raise RuntimeError(f"adaptive_max_pool1d(): Expected input to have non-zero size for "
                           f"non-batch dimensions, but input has sizes {list(input.shape)} with "
                           f"dimension {dim} being empty")
    (o,) = _adaptive_size(input, output_size, 1, "adaptive_max_pool1d")
    return _pool1d_via_2d(lambda x: _adaptive_max(x, 2, "adaptive_max_pool2d", (1, o),
                                                  return_indices), input)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return follow_channels_last(
        _adaptive_max(input, 2, "adaptive_max_pool2d", output_size, return_indices), input)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max(input, 3, "adaptive_max_pool3d", output_size, return_indices)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool3d(input, output_size, True)
