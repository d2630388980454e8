"""Max pooling: max_pool1d/2d/3d and their `_with_indices` forms (PyTorch's flat indices into
each input plane).
"""
import numpy as np

from ..._memory_format import follow_channels_last
from ..._parallel import map_parts
from ..._tensor import xp_of
from . import _device_pool, _tiled
from ._checks import _batch_check, _one, _pool_params
from .._graph import needs_grad
from ._common import (_MAXPOOL, _flat_index, _index_shape, _max_result,
                      _padded_planes, _pool1d_via_2d, _separable_max, _strided_selectors,
                      plane_cuts, window_groups)

# ---- max pooling -----------------------------------------------------------------------------
def _lowest(dtype):
    if dtype.kind not in "biu":  # float, complex, and ml_dtypes' bfloat16 (kind "V")
        return -np.inf
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min


def _max_pool(input, nd, fname, kernel_size, stride, padding, dilation, ceil_mode,
              return_indices):
    kernel, stride, padding, dilation, size, osz = _pool_params(
        input, nd, fname, "max", kernel_size, stride, padding, dilation, ceil_mode)
    xp = xp_of(input)
    a = input._array
    overlap = any(t < d * (k - 1) + 1 for t, d, k in zip(stride, dilation, kernel))
    accumulate = window_groups(kernel, stride, dilation) if overlap else False
    if nd == 2 and _device_pool.applies(xp, a):  # one kernel; its backward one too
        window = (kernel, stride, padding, dilation)
        vals, flat = _device_pool.max_pool2d(xp, a, window, osz)
        return _max_result(input, vals, flat, size, _MAXPOOL[nd], accumulate, return_indices,
                           nd, window)
    if not return_indices and _tiled.applies(xp, a, kernel, stride, padding, dilation, size,
                                             osz):
        return _tiled.max_pool(input, nd, kernel, osz)
    vals, flat = _pooled(xp, a, kernel, stride, padding, dilation, osz,
                         return_indices or needs_grad(input))
    return _max_result(input, vals, flat, size, _MAXPOOL[nd], accumulate, return_indices, nd)


def _pooled(xp, a, kernel, stride, padding, dilation, osz, need_idx):
    """(maxima (1, P, *osz), PyTorch's flat indices into each input plane or None) of `a`'s
    planes, by the separable max over the padded planes."""
    nd = len(kernel)
    size = a.shape[a.ndim - nd:]
    padded = _padded_planes(xp, a, nd, padding, kernel, stride, dilation, osz,
                            _lowest(a.dtype), "pool")
    sels = [_strided_selectors(k, t, d, o) for k, t, d, o in zip(kernel, stride, dilation, osz)]
    positions = [_position_fn(xp, nd, d, osz[d], stride[d], padding[d], dilation[d])
                 for d in range(nd)] if need_idx else None

    def pooled(planes):
        vals, won = _separable_max(xp, planes, sels, need_idx)
        return vals, (_flat_index(xp, won, positions, size) if need_idx else None)
    cuts = plane_cuts(xp, padded)
    if cuts is None:
        return pooled(padded)
    parts = map_parts(lambda s: pooled(padded[:, s]), cuts)  # on the intra-op threads
    vals = xp.concatenate([part[0] for part in parts], axis=1)
    flat = xp.concatenate([part[1] for part in parts], axis=1) if need_idx else None
    return vals, flat


def flat_indices(xp, a, kernel, stride, padding, dilation, osz):
    """PyTorch's flat indices (1, P, *osz) of max pooling's winners in `a`'s planes."""
    return _pooled(xp, a, kernel, stride, padding, dilation, osz, True)[1]


def _position_fn(xp, nd, d, o, stride, pad, dil):
    base = (xp.arange(o, dtype=np.int64) * stride - pad).reshape(_index_shape(nd, d, o))

    def position(off):  # in place on the fresh int64 offsets
        if dil != 1:
            off *= dil
        off += base
        return off
    return position


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    _batch_check(input, 1, "max_pool1d", "max")
    if not (input.dtype.is_floating_point) and not return_indices and not input._requires_grad:
        raise NotImplementedError(f"\"max_pool1d_impl\" not implemented for "
                                  f"'{input.dtype._scalar_name}'")
    _pool_params(input, 1, "max_pool1d", "max", kernel_size, stride, padding, dilation, ceil_mode)
    k, s = _one(kernel_size), (_one(stride) if stride not in (None, [], ()) else None)
    return _pool1d_via_2d(
        lambda x: _max_pool(x, 2, "max_pool2d", (1, k), (1, s if s is not None else k),
                            (0, _one(padding)), (1, _one(dilation)), ceil_mode,
                            return_indices), input)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    _batch_check(input, 2, "max_pool2d", "max")
    return follow_channels_last(_max_pool(input, 2, "max_pool2d", kernel_size, stride, padding,
                                          dilation, ceil_mode, return_indices), input)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    _batch_check(input, 3, "max_pool3d", "max")
    return follow_channels_last(_max_pool(input, 3, "max_pool3d", kernel_size, stride, padding,
                                          dilation, ceil_mode, return_indices), input)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)
