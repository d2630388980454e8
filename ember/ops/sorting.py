"""Order statistics: sort, argsort, msort, topk, kthvalue, median, nanmedian, mode, unique,
unique_consecutive, with derivatives.

Sorting is always stable, and NaN sorts as the largest value (last ascending, first
descending), as in PyTorch. The gradient of an op that picks elements goes back to the picked
positions through `scatter_add_along`, whose own derivative is `take_along` (a gather) and
vice versa, so picking ops differentiate twice.
"""
import builtins
import math

import numpy as np

from .._meta import refuse_on_meta
from .. import _dtype_casts as _casts, dtypes as _dt
from .._tensor import _wrap_dim, xp_of
from ..device import backend_of
from ._graph import Node, record
from ._writes import write_out, with_out
from ._accumulate import bincount_sized
from .reduction import (MaxBackward0, MaxBackward1, _check_nonempty, const, return_type,
                        select_result)

__all__ = ["sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode",
           "unique", "unique_consecutive"]
METHODS = ["sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "mode",
           "unique", "unique_consecutive"]

_sort_type = return_type("sort")
_topk_type = return_type("topk")
_kthvalue_type = return_type("kthvalue")
_median_type = return_type("median")
_nanmedian_type = return_type("nanmedian")
_mode_type = return_type("mode")


# ---- gather and scatter-add along a dim (the derivatives of picking ops) -----------------------
def _flat_positions(xp, index, axis, shape):
    """Flat (C-order) positions in an array of `shape` of the elements that `index` names
    along `axis`, every other coordinate being the index element's own."""
    ndim = len(shape)
    strides = [1] * ndim
    for d in range(ndim - 2, -1, -1):
        strides[d] = strides[d + 1] * shape[d + 1]
    flat = index.astype(np.int64) * strides[axis]
    for d, size in enumerate(index.shape):
        if d != axis:
            coord = xp.arange(size, dtype=np.int64) * strides[d]
            flat = flat + coord.reshape((size,) + (1,) * (ndim - d - 1))
    return flat


class GatherBackward0(Node):
    def backward(self, grad):
        return scatter_add_along(grad, self.axis, self.index, self._meta[0][0])


def take_along(input, axis, index):
    """input's elements named by `index` (an int array) along `axis`; differentiable."""
    res = const(xp_of(input).take_along_axis(input._array, index, axis), input)
    node = record(GatherBackward0, (input,), res)
    if node is not None:
        node.axis, node.index = axis, index
    return res


class ScatterAddBackward0(Node):
    def backward(self, grad):
        return take_along(grad, self.axis, self.index)


def scatter_add_along(src, axis, index, shape):
    """Zeros of `shape` with each src element added at its `index` along `axis` (repeated
    positions add up); differentiable. One bincount (a scatter-add on a device): no per-element
    Python work."""
    xp = xp_of(src)
    arr = src._array
    flat = _flat_positions(xp, index, axis, shape).reshape(-1)
    size = int(np.prod(shape, dtype=np.int64))

    def add(weights):
        return bincount_sized(xp, flat, weights.reshape(-1).astype(np.float64), size)

    total = add(arr.real) + 1j * add(arr.imag) if arr.dtype.kind == "c" else add(arr)
    res = const(total.astype(arr.dtype).reshape(shape), src)
    node = record(ScatterAddBackward0, (src,), res)
    if node is not None:
        node.axis, node.index = axis, index
    return res


# ---- sort ---------------------------------------------------------------------------------------
def _orderable(arr):
    """`arr`, or its exact float32 values for a bfloat16 array: NumPy's sort of ml_dtypes'
    bfloat16 compares NaN as no float does, and leaves an array holding one unsorted."""
    return arr.astype(np.float32) if arr.dtype == _BFLOAT16 else arr


_BFLOAT16 = _dt.bfloat16.np


def sorting_permutation(xp, arr, axis, descending=False):
    """The stable sorting permutation along `axis`; NaN counts as the largest value."""
    kw = {"kind": "stable"} if xp is np else {}
    arr = _orderable(arr)
    if not descending:
        return xp.argsort(arr, axis=axis, **kw)
    # Ascending on the reversed slices, reversed back, keeps equal elements in input order.
    n = arr.shape[axis]
    return (n - 1) - xp.flip(xp.argsort(xp.flip(arr, axis), axis=axis, **kw), axis)


def _leading(arr, axis, k):
    return arr[(slice(None),) * axis + (slice(0, k),)]


class SortBackward0(Node):
    """sort/topk: each value's gradient goes back to where it came from."""

    def backward(self, grad):
        shape = self._meta[0][0]
        if not shape:
            return grad
        return scatter_add_along(grad, self.axis, self.index, shape)


class SortBackward1(SortBackward0):
    """PyTorch's name when `stable=` is passed."""


class TopkBackward0(SortBackward0):
    pass


def _picked(input, index, axis, node_cls, tuple_type, out, fname):
    """(values, indices) of the elements `index` names along `axis` (several per slice)."""
    arr = input._array
    xp = xp_of(input)
    if arr.ndim == 0:
        vals, ind = arr.copy(), xp.zeros((), dtype=np.int64)
    else:
        vals, ind = xp.take_along_axis(arr, index, axis), index.astype(np.int64, copy=False)
    values, indices = const(vals, input), const(ind, input)
    if out is not None:
        write_out(out[0], values, fname)
        write_out(out[1], indices, fname)
        return tuple_type(out[0], out[1])
    node = record(node_cls, (input,), values)
    if node is not None:
        node.axis, node.index = axis, index
    return tuple_type(values, indices)


_UNSET = object()


def _refuse_complex(input, what):
    """PyTorch's CPU sort and topk have no complex kernels (complex32 has none anywhere)."""
    if input.dtype is _dt.complex32 or (input.is_complex() and input.device.type == "cpu"):
        raise RuntimeError(f" {what} does not support complex dtypes on CPU")


def sort(input, dim=-1, descending=False, *, stable=_UNSET, out=None):
    arr = input._array
    _refuse_complex(input, "Sort")
    if input.dtype._kind:
        _casts.refuse(input.dtype, "sorting_kernel_method_name", (_dt.UINT,))
    axis = _wrap_dim(dim, arr.ndim)
    index = sorting_permutation(xp_of(input), arr, axis, descending) if arr.ndim else None
    node_cls = SortBackward0 if stable is _UNSET else SortBackward1
    return _picked(input, index, axis, node_cls, _sort_type, out, "sort")


@with_out("argsort")
def argsort(input, dim=-1, descending=False, stable=False):
    arr = input._array
    _refuse_complex(input, "Sort")
    axis = _wrap_dim(dim, arr.ndim)
    xp = xp_of(input)
    if not arr.ndim:
        return const(xp.zeros((), dtype=np.int64), input)
    return const(sorting_permutation(xp, arr, axis, descending).astype(np.int64), input)


def msort(input, *, out=None):
    res = sort(input, 0).values
    return write_out(out, res, "msort") if out is not None else res


def topk(input, k, dim=-1, largest=True, sorted=True, *, out=None):
    """The k largest (or smallest) elements along `dim`, always in sorted order."""
    arr = input._array
    _refuse_complex(input, "topk")
    if input.dtype._kind:
        _casts.refuse(input.dtype, "topk_cpu")
    if arr.dtype == np.bool_:
        raise RuntimeError("topk does not support bool dtypes on CPU")
    axis = _wrap_dim(dim, arr.ndim)
    n = arr.shape[axis] if arr.ndim else 1
    if not 0 <= k <= n:
        raise RuntimeError("selected index k out of range")
    index = None
    if arr.ndim:
        index = _leading(sorting_permutation(xp_of(input), arr, axis, largest), axis, k)
    return _picked(input, index, axis, TopkBackward0, _topk_type, out, "topk")


# ---- one pick per slice: kthvalue, median, mode ---------------------------------------------------
class KthvalueBackward0(MaxBackward0):
    pass


class MedianBackward1(MaxBackward0):
    pass


class NanmedianBackward1(MaxBackward0):
    pass


class ModeBackward0(MaxBackward0):
    pass


class MedianBackward0(MaxBackward1):
    """median() of a whole tensor: shared evenly among the elements equal to it."""


class NanmedianBackward0(MaxBackward1):
    pass


def _no_kernel(input, what, bool_too=True):
    """PyTorch's error where its CPU kernel has no loop for the dtype: complex on the CPU
    (kthvalue, median, mode, unique, cummax/cummin), and bool where `bool_too`."""
    if (bool_too and input._array.dtype == np.bool_) or \
            (input.is_complex() and input.device.type == "cpu"):
        raise NotImplementedError(f"\"{what}\" not implemented for '{input.dtype._scalar_name}'")


def kthvalue(input, k, dim=-1, keepdim=False, *, out=None):
    """The k-th smallest element (1-based) of each slice along `dim`, and its index."""
    _no_kernel(input, "kthvalue_cpu")
    arr = input._array
    axis = _wrap_dim(dim, arr.ndim)
    n = arr.shape[axis] if arr.ndim else 1
    if n == 0 and arr.size == 0 and builtins.all(s for i, s in enumerate(arr.shape) if i != axis):
        raise IndexError(f"kthvalue(): Expected reduction dim {axis} to have non-zero size.")
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {axis}")
    index = None
    if arr.ndim:
        order = sorting_permutation(xp_of(input), arr, axis)
        index = order[(slice(None),) * axis + (slice(k - 1, k),)]
    return select_result(input, index, axis, keepdim, KthvalueBackward0, _kthvalue_type, out,
                         "kthvalue")


def _median_position(xp, arr, axis, ignore_nan):
    """The sorted position of each slice's lower median (dim kept). With NaN present: the
    first NaN (median) or the median of the other values (nanmedian; 0 if all are NaN)."""
    arr = _orderable(arr)  # bfloat16's kind is "V": counted as the float it is
    n = arr.shape[axis]
    kept = arr.shape[:axis] + (1,) + arr.shape[axis + 1:]
    if arr.dtype.kind not in "fc":
        return xp.full(kept, (n - 1) // 2, dtype=np.int64)
    valid = n - xp.isnan(arr).sum(axis=axis, keepdims=True)
    if ignore_nan:
        return xp.where(valid > 0, (valid - 1) // 2, 0)
    return xp.where(valid < n, valid, (n - 1) // 2)


def _median(input, dim, keepdim, out, ignore_nan):
    fname = "nanmedian" if ignore_nan else "median"
    _no_kernel(input, "median_cpu" if dim is None else "median_out")  # nanmedian's too
    arr = input._array
    xp = xp_of(input)
    if dim is None:
        flat = arr.reshape(1, -1)
        if flat.size == 0:
            empty = np.nan if arr.dtype.kind in "fc" else np.iinfo(arr.dtype).min
            res = const(xp.full((), empty, dtype=arr.dtype), input)
        else:
            pos = _median_position(xp, flat, 1, ignore_nan)
            ordered = xp.sort(_orderable(flat), axis=1).astype(flat.dtype, copy=False)
            res = const(xp.take_along_axis(ordered, pos, 1).reshape(()), input)
        if out is not None:
            return write_out(out, res, fname)
        node = record(NanmedianBackward0 if ignore_nan else MedianBackward0, (input,), res)
        if node is not None:
            node.save_for_backward(input, res)
        return res
    axis = _wrap_dim(dim, arr.ndim)
    index = None
    if arr.ndim:
        _check_nonempty(arr, (axis,), fname, True)
        order = sorting_permutation(xp, arr, axis)
        index = xp.take_along_axis(order, _median_position(xp, arr, axis, ignore_nan), axis)
    return select_result(input, index, axis, keepdim,
                         NanmedianBackward1 if ignore_nan else MedianBackward1,
                         _nanmedian_type if ignore_nan else _median_type, out, fname)


def median(input, dim=None, keepdim=False, *, out=None):
    """The lower median: of all elements (a 0-dim tensor), or (values, indices) along `dim`.
    NaN if the elements hold a NaN."""
    return _median(input, dim, keepdim, out, False)


def nanmedian(input, dim=None, keepdim=False, *, out=None):
    """median ignoring NaN (NaN only where every element is NaN)."""
    return _median(input, dim, keepdim, out, True)


def mode(input, dim=-1, keepdim=False, *, out=None):
    """The most frequent value of each slice (the smallest among equally frequent ones) and
    the last index where it occurs."""
    _no_kernel(input, "mode_cpu", bool_too=False)
    arr = input._array
    xp = xp_of(input)
    axis = _wrap_dim(dim, arr.ndim)
    index = None
    if arr.ndim:
        _check_nonempty(arr, (axis,), "mode", True)
        rows = xp.moveaxis(arr, axis, -1)
        lead, n = rows.shape[:-1], rows.shape[-1]
        rows = rows.reshape(-1, n)
        m = rows.shape[0]
        order = sorting_permutation(xp, rows, 1)
        ranked = xp.take_along_axis(rows, order, 1)
        starts = xp.ones((m, n), dtype=bool)
        starts[:, 1:] = ranked[:, 1:] != ranked[:, :-1]
        run = xp.cumsum(starts, axis=1) - 1  # which run of equal values each sorted slot is in
        row_base = (xp.arange(m, dtype=np.int64) * n)[:, None]
        counts = bincount_sized(xp, (row_base + run).reshape(-1), None, m * n).reshape(m, n)
        best = counts.argmax(axis=1)[:, None]  # first: the smallest of the most frequent
        last = xp.where(run == best, order, -1).max(axis=1) if m else xp.zeros(0, np.int64)
        index = xp.moveaxis(last.reshape(lead + (1,)), -1, axis)
    return select_result(input, index, axis, keepdim, ModeBackward0, _mode_type, out, "mode")


# ---- unique ---------------------------------------------------------------------------------------
class Unique2Backward0(Node):
    what = "_unique2"

    def backward(self, grad):
        raise NotImplementedError(f"the derivative for '{self.what}' is not implemented.")


class UniqueDimBackward0(Unique2Backward0):
    what = "unique_dim"


class UniqueConsecutiveBackward0(Unique2Backward0):
    what = "unique_consecutive"


def _unique_result(input, vals, inverse, counts, return_inverse, return_counts, node_cls):
    values = const(vals, input)
    record(node_cls, (input,), values)
    if not (return_inverse or return_counts):
        return values
    res = (values,)
    if return_inverse:
        res += (const(inverse.astype(np.int64, copy=False), input),)
    if return_counts:
        res += (const(counts.astype(np.int64, copy=False), input),)
    return res


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct elements (or slices along `dim`), sorted, with optionally the inverse
    (each element's position in the result) and the counts. NaNs are all distinct."""
    refuse_on_meta("aten::_unique2" if dim is None else "aten::unique_dim", input)
    _no_kernel(input, "unique" if dim is None else "unique_dim", bool_too=False)
    if input.dtype._kind:
        _casts.refuse(input.dtype, "unique", (_dt.UINT,))
    # Computed on the host: the result's size depends on the data (PyTorch synchronises
    # too), and NumPy's unique has the axis= and equal_nan= that other backends may lack.
    arr = _orderable(input._host())  # bfloat16 as float32: cast back below
    if dim is None:
        vals, inverse, counts = np.unique(arr.reshape(-1), return_inverse=True,
                                          return_counts=True, equal_nan=False)
        inverse = inverse.reshape(arr.shape)
        node_cls = Unique2Backward0
    else:
        axis = _wrap_dim(dim, arr.ndim)
        node_cls = UniqueDimBackward0
        if arr.size == 0:
            if builtins.any(s == 0 for d, s in enumerate(arr.shape) if d != axis):
                raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                                   "unique cannot be applied")
            vals, inverse, counts = arr.copy(), np.zeros(0, np.int64), np.zeros(0, np.int64)
        else:
            vals, inverse, counts = np.unique(arr, return_inverse=True, return_counts=True,
                                              axis=axis, equal_nan=False)
            inverse = inverse.reshape(-1)
    vals = vals.astype(input._array.dtype, copy=False)
    if input._device.type != "cpu":
        to_device = backend_of(input._device).from_host
        vals, inverse, counts = (to_device(a, input._device.index) for a in (vals, inverse, counts))
    return _unique_result(input, vals, inverse, counts, return_inverse, return_counts, node_cls)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """unique over runs of equal consecutive elements (or slices along `dim`)."""
    refuse_on_meta("aten::unique_consecutive", input)
    _no_kernel(input, "unique", bool_too=False)
    arr = input._array
    xp = xp_of(input)
    if dim is None:
        rows, axis = arr.reshape(-1, 1), 0
    else:
        axis = _wrap_dim(dim, arr.ndim)
        width = math.prod(s for d, s in enumerate(arr.shape) if d != axis)  # sizes, not -1
        rows = xp.moveaxis(arr, axis, 0).reshape(arr.shape[axis] if arr.ndim else 1, width)
    n = rows.shape[0]
    starts = xp.ones(n, dtype=bool)
    if n:
        starts[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    first = xp.nonzero(starts)[0]
    counts = xp.diff(xp.concatenate([first, xp.asarray([n], dtype=first.dtype)]))
    inverse = xp.cumsum(starts) - 1
    if dim is None:
        vals, inverse = arr.reshape(-1)[first], inverse.reshape(arr.shape)
    else:
        vals = xp.take(arr, first, axis=axis) if arr.ndim else arr.reshape(1)
    return _unique_result(input, vals, inverse, counts, return_inverse, return_counts,
                          UniqueConsecutiveBackward0)
