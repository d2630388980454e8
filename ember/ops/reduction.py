"""Reductions: sum, mean, prod, max/min (and their argmax/argmin, amax/amin forms), all/any,
the statistics (std, var, their _mean forms, norm, logsumexp), the NaN-skipping forms
(nansum, nanmean), count_nonzero and the whole-tensor comparisons (equal, allclose), with
derivatives. std/var/norm/logsumexp live in `statistics.py`, the scans (cumsum, cummax ...)
and diff in `cumulative.py`.

PyTorch's named result tuples (`torch.return_types.max` ...) are made here by
`return_type`: the order statistics of `sorting.py` and `cumulative.py` use it too.
"""
import builtins
import math
import numpy as np

from .._meta import refuse_on_meta
from .. import _dtype_casts as _casts, dtypes as _dt, return_types
from .._memory_format import c_ordered
from ..return_types import return_type
from .._state import autocast as _autocast
from .._tensor import _wrap_dim, make_tensor, Tensor, xp_of
from ._autocast import fp32
from ._graph import Node, first_order_arrays, record
from ._writes import write_out
from ._varargs import varargs_or_keyword
from .pointwise import maximum, minimum, operands, where
from .pointwise._common import as_array, broadcast_error
from .shape import broadcast_array, wrap_dims_once

__all__ = ["sum", "mean", "sum_to_size", "max", "min", "argmax", "argmin", "amax", "amin",
           "all", "any", "allclose", "equal", "prod", "count_nonzero", "nansum", "nanmean",
           "return_types"]
METHODS = ["sum", "mean", "sum_to_size", "max", "min", "argmax", "argmin", "amax", "amin",
           "all", "any", "allclose", "equal", "prod", "count_nonzero", "nansum", "nanmean"]


# ---- named result tuples (the types live in ember/return_types.py, as in PyTorch) --------------
return_types_max = return_type("max")
return_types_min = return_type("min")


# ---- shared helpers ----------------------------------------------------------------------------
def dims_of(dim, ndim):
    """`dim` (None, int, or sequence) as a sorted tuple of non-negative axes."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (builtins.int, np.integer)):
        d = _wrap_dim(builtins.int(dim), ndim)
        return (d,) if ndim else ()
    axes = tuple(sorted(wrap_dims_once(dim, ndim)))
    if not ndim:
        return ()
    return axes if axes else tuple(range(ndim))


def keep_dims(t, shape, axes, keepdim):
    """A reduced tensor reshaped with size-1 axes where `axes` were (broadcasts over `shape`)."""
    if keepdim or not axes:
        return t
    return t.reshape(_kept_shape(shape, axes))


def _kept_shape(shape, axes):
    kept = list(shape)
    for a in axes:
        kept[a] = 1
    return kept


def _restore_dims(grad, shape, axes, keepdim):
    """A reduced gradient reshaped and expanded back over `shape`."""
    return keep_dims(grad, shape, axes, keepdim).expand(shape)


_numel = math.prod


_HALF_PRECISION = (np.dtype(np.float16), _dt.bfloat16.np)


def accumulating(arr):
    """`arr` in the type a sum over it accumulates in: PyTorch adds float16 and bfloat16 in
    float32 and rounds once at the end (a float16 variance of 1e4s is 0, not inf; 4096 bfloat16
    ones sum to 4096, not 256). Other dtypes accumulate in their own type."""
    return arr.astype(np.float32) if arr.dtype in _HALF_PRECISION else arr


def const(arr, like):
    """A constant tensor (no graph) over `arr`, on `like`'s device: the result of a reduction,
    a sort or a scan, C-ordered where NumPy followed a non-contiguous input's order (PyTorch
    gives these a contiguous result, which `.view` takes)."""
    return make_tensor(c_ordered(as_array(arr)), like._device)


def _reduced_size(shape, axes):
    n = 1
    for a in axes:
        n *= shape[a]
    return n


def _check_nonempty(arr, axes, fname, specified):
    """PyTorch's errors for a reduction without identity (max-like) over an empty extent."""
    if arr.size:
        return
    if not specified:
        raise RuntimeError(f"{fname}(): Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' argument.")
    for a in axes:
        if arr.shape[a] == 0:
            raise IndexError(f"{fname}(): Expected reduction dim {a} to have non-zero size.")


# ---- sum and mean ---------------------------------------------------------------------------------
class SumBackward1(Node):
    """PyTorch names the full sum SumBackward0 and the sum over dims SumBackward1."""

    def backward(self, grad):
        return _restore_dims(grad, self._meta[0][0], self.axes, self.keepdim)


class SumBackward0(SumBackward1):
    def backward(self, grad):
        # the whole tensor was summed: grad (0-dim, or all ones with keepdim) expands to its
        # shape as it is, as PyTorch's formula does (no reshape node under create_graph)
        return grad.expand(self._meta[0][0])


def _sum_dtype(input, dtype, fname="sum"):
    if dtype is not None:
        return _dt.dtype_arg(dtype, fname)
    d = input.dtype
    return _dt.int64 if (d is _dt.bool or (not d.is_floating_point and not d.is_complex)) else d


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    arr = input._array
    if input.dtype._kind:
        _casts.refuse(input.dtype, "sum_cpu", (_dt.UINT,))
    if dim is None and dtype is None and out is None and not keepdim and arr.dtype.kind in "fc":
        # the common full sum, without the general path's bookkeeping
        res = make_tensor(_casts.cast_if_needed(as_array(accumulating(arr).sum()), arr.dtype),
                          input._device)
        node = record(SumBackward0, (input,), res)
        if node is not None:
            node.axes, node.keepdim = tuple(range(arr.ndim)), False
        return res
    d = _sum_dtype(input, dtype)
    if arr.dtype is not d.np:
        arr = arr.astype(d.np)
    axes = dims_of(dim, arr.ndim)
    total = accumulating(arr).sum(axis=axes, keepdims=keepdim)
    res = const(_casts.cast_if_needed(as_array(total), arr.dtype), input)
    if out is not None:
        return write_out(out, res, "sum")
    node = record(SumBackward0 if dim is None else SumBackward1, (input,), res)
    if node is not None:
        node.axes, node.keepdim = axes, keepdim
    return res


def sum_to_size(input, *args, size=None):
    """Sum `input` down to `size`, the shape it was broadcast from."""
    size = varargs_or_keyword(args, size, "size", "sum_to_size")
    size = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], builtins.int) else size
    shape = input._array.shape
    lead = len(shape) - len(size)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(size)
                                      if s == 1 and shape[i + lead] != 1)
    if not axes:
        return input
    arrays = first_order_arrays(input)
    if arrays is not None:  # nothing to record (a backward reducing a broadcast gradient)
        res = make_tensor(arrays[0].sum(axis=axes, keepdims=True), input._device)
    else:
        res = input.sum(axes, keepdim=True)
    return res.reshape(size) if lead else res


class MeanBackward1(Node):
    def backward(self, grad):
        shape = self._meta[0][0]
        n = builtins.max(_reduced_size(shape, self.axes), 1)
        arrays = first_order_arrays(grad)
        if arrays is not None:  # the same division on arrays (ops/_graph.py)
            g = arrays[0]
            if not self.keepdim and self.axes:
                g = g.reshape(_kept_shape(shape, self.axes))
            return make_tensor(broadcast_array(g, shape, grad._device) / n, grad._device)
        return _restore_dims(grad, shape, self.axes, self.keepdim) / n


class MeanBackward0(MeanBackward1):
    def backward(self, grad):  # the whole tensor, as SumBackward0
        shape = self._meta[0][0]
        n = builtins.max(_numel(shape), 1)
        arrays = first_order_arrays(grad)
        if arrays is not None:
            return make_tensor(broadcast_array(arrays[0], shape, grad._device) / n,
                               grad._device)
        return grad.expand(shape) / n


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    d = _dt.dtype_arg(dtype, "mean") if dtype is not None else input.dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {d._scalar_name}")
    arr = input._array
    if input.dtype._kind:
        _casts.refuse(input.dtype, "sum_cpu")
    if arr.dtype is not d.np:
        arr = arr.astype(d.np)
    axes = dims_of(dim, arr.ndim)
    avg = accumulating(arr).mean(axis=axes, keepdims=keepdim)
    res = const(_casts.cast_if_needed(as_array(avg), arr.dtype), input)
    if out is not None:
        return write_out(out, res, "mean")
    node = record(MeanBackward0 if dim is None else MeanBackward1, (input,), res)
    if node is not None:
        node.axes, node.keepdim = axes, keepdim
    return res


# ---- max, min and their index and amax forms -------------------------------------------------
def tie_weights(xp, xa, va, axes, nan_ties=True):
    """Weights sharing a gradient evenly among the elements of `xa` equal to the reduced value
    `va` (keepdim-shaped); with `nan_ties`, a NaN result is shared among the NaNs."""
    mask = xa == va
    if nan_ties and (xa.dtype.kind == "f" or xa.dtype.name == "bfloat16"):
        mask |= xp.isnan(xa) & xp.isnan(va)
    count = mask.sum(axis=axes, keepdims=True)
    return (mask / count).astype(xa.dtype)


class MaxBackward1(Node):
    """max()/min() of a whole tensor: the gradient is shared evenly among tied extremes."""

    def backward(self, grad):
        x, res = self.saved_tensors
        w = tie_weights(xp_of(x), x._array, res._array, None)
        # PyTorch's CPU form fills the tied places (masked_fill): an infinite gradient gives
        # the others 0, not inf * 0
        return where(const(w != 0, grad), grad * const(w, grad), 0.0)


class MinBackward1(MaxBackward1):
    pass


class MaxBackward0(Node):
    """A reduction that picks one element per slice (max/min over a dim, median, kthvalue,
    mode): the gradient goes to the picked element. `index`: the picks, dim kept."""

    def backward(self, grad):
        shape = self._meta[0][0]
        if not shape:
            return grad
        axis = self.axis
        g = grad if self.keepdim else grad.unsqueeze(axis)
        n = shape[axis]
        pos = xp_of(grad).arange(n).reshape((n,) + (1,) * (len(shape) - axis - 1))
        return where(const(pos == self.index, grad), g, 0)


class MinBackward0(MaxBackward0):
    pass


def select_result(input, index, axis, keepdim, node_cls, tuple_type, out=None, fname=""):
    """`(values, indices)` of a reduction that picks the element `index` (dim kept) of each
    slice of `input` along `axis`."""
    arr, dev = input._array, input._device
    xp = xp_of(input)
    if arr.ndim == 0:
        vals, ind = arr.copy(), xp.zeros((), dtype=np.int64)
    else:
        vals = xp.take_along_axis(arr, index, axis)
        ind = index.astype(np.int64, copy=False)
        if not keepdim:
            vals, ind = vals.squeeze(axis), ind.squeeze(axis)
        vals, ind = c_ordered(vals), c_ordered(ind)  # contiguous, as PyTorch's
    values, indices = make_tensor(vals, dev), make_tensor(ind, dev)
    if out is not None:
        write_out(out[0], values, fname)
        write_out(out[1], indices, fname)
        return tuple_type(out[0], out[1])
    node = record(node_cls, (input,), values)
    if node is not None:
        node.axis, node.keepdim, node.index = axis, keepdim, index
    return tuple_type(values, indices)


def _check_not_complex(input, what):
    if input._array.dtype.kind == "c":
        raise NotImplementedError(f'"{what}" not implemented for \'{input.dtype._scalar_name}\'')


def _extreme(input, dim, keepdim, out, is_max):
    fname = "max" if is_max else "min"
    arr = input._array
    if input.dtype is _dt.complex32 and dim is not None:
        raise RuntimeError(f"{fname}(): does not support complex input")
    if input.dtype._kind:
        _casts.refuse(input.dtype, f"{fname}_all" if dim is None else f"{fname}_cpu")
    if dim is None:
        _check_not_complex(input, f"{fname}_all")
        _check_nonempty(arr, (), fname, False)
        res = const(arr.max() if is_max else arr.min(), input)
        if out is not None:
            return write_out(out, res, fname)
        node = record(MaxBackward1 if is_max else MinBackward1, (input,), res)
        if node is not None:
            node.save_for_backward(input, res)
        return res
    _check_not_complex(input, f"{fname}_values_cpu")
    axis = _wrap_dim(dim, arr.ndim)
    index = None
    if arr.ndim:
        _check_nonempty(arr, (axis,), fname, True)
        index = _arg_index(xp_of(input), arr, axis, is_max, True)
    return select_result(input, index, axis, keepdim, MaxBackward0 if is_max else MinBackward0,
                         return_types_max if is_max else return_types_min, out, fname)


def max(input, dim=None, keepdim=False, *, other=None, out=None):
    """`max(input)`: the largest value; `max(input, dim)`: (values, indices); `max(a, b)`:
    the elementwise maximum."""
    if other is not None:
        return maximum(input, other, out=out)
    if isinstance(dim, Tensor):
        return maximum(input, dim, out=out)
    return _extreme(input, dim, keepdim, out, True)


def min(input, dim=None, keepdim=False, *, other=None, out=None):
    if other is not None:
        return minimum(input, other, out=out)
    if isinstance(dim, Tensor):
        return minimum(input, dim, out=out)
    return _extreme(input, dim, keepdim, out, False)


def _arg_index(xp, arr, axis, is_max, keepdims):
    """argmax/argmin along `axis` as PyTorch's: the first NaN wins. NumPy's do so; CuPy's
    reductions may pick another NaN, so on a device the first NaN is found on its own."""
    fn = arr.argmax if is_max else arr.argmin
    if xp is np or arr.dtype.kind not in "fc":
        return fn(axis=axis, keepdims=keepdims)
    nan = xp.isnan(arr)
    return xp.where(nan.any(axis=axis, keepdims=keepdims),
                    nan.argmax(axis=axis, keepdims=keepdims), fn(axis=axis, keepdims=keepdims))


def _arg_extreme(input, dim, keepdim, out, fname):
    arr = input._array
    if arr.dtype == np.bool_:
        raise RuntimeError(f"{fname}(): does not support bool input")
    if input.dtype is _dt.complex32:
        raise RuntimeError(f"{fname}(): does not support complex input")
    if input.dtype._kind:
        _casts.refuse(input.dtype, f"{fname}_cpu")
    _check_not_complex(input, f"{fname}_cpu")
    xp = xp_of(input)
    if dim is None:
        if not arr.size:
            raise IndexError(f"{fname}(): Expected reduction dim to be specified for "
                             "input.numel() == 0.")
        res = _arg_index(xp, arr.reshape(-1), 0, fname == "argmax", False).astype(np.int64)
        res = res.reshape((1,) * arr.ndim if keepdim else ())
    else:
        axis = _wrap_dim(dim, arr.ndim)
        if arr.ndim == 0:
            res = xp.zeros((), dtype=np.int64)
        else:
            _check_nonempty(arr, (axis,), fname, True)
            res = _arg_index(xp, arr, axis, fname == "argmax", keepdim).astype(np.int64)
    res = const(res, input)
    return write_out(out, res, fname) if out is not None else res


def argmax(input, dim=None, keepdim=False, *, out=None):
    return _arg_extreme(input, dim, keepdim, out, "argmax")


def argmin(input, dim=None, keepdim=False, *, out=None):
    return _arg_extreme(input, dim, keepdim, out, "argmin")


class AmaxBackward0(Node):
    """amax/amin: the gradient is shared evenly among the tied extremes of each slice."""

    def backward(self, grad):
        x, res = self.saved_tensors
        shape = x._array.shape
        r = res._array
        if not self.keepdim and self.axes:
            r = r.reshape(keep_dims(res, shape, self.axes, False).shape)
        w = tie_weights(xp_of(x), x._array, r, self.axes, nan_ties=False)
        return keep_dims(grad, shape, self.axes, self.keepdim) * const(w, grad)


class AminBackward0(AmaxBackward0):
    pass


def _amax(input, dim, keepdim, out, is_max):
    fname = "amax" if is_max else "amin"
    arr = input._array
    specified = dim is not None and not (isinstance(dim, (tuple, list)) and not dim)
    axes = dims_of(dim if specified else None, arr.ndim)
    if input.dtype._kind:
        _casts.refuse(input.dtype, f"{'max' if is_max else 'min'}_values_cpu")
    _check_not_complex(input, f"{fname}_cpu")
    _check_nonempty(arr, axes, fname, specified)
    res = const((arr.max if is_max else arr.min)(axis=axes, keepdims=keepdim), input)
    if out is not None:
        return write_out(out, res, fname)
    node = record(AmaxBackward0 if is_max else AminBackward0, (input,), res)
    if node is not None:
        node.axes, node.keepdim = axes, keepdim
        node.save_for_backward(input, res)
    return res


def amax(input, dim=(), keepdim=False, *, out=None):
    return _amax(input, dim, keepdim, out, True)


def amin(input, dim=(), keepdim=False, *, out=None):
    return _amax(input, dim, keepdim, out, False)


# ---- logic and whole-tensor comparisons ---------------------------------------------------------
def _truth(input, dim, keepdim, out, is_all):
    arr = input._array
    if input.dtype._kind:
        arr = _barebones_values(input, "copy_")
    if arr.dtype.kind not in "biu":
        arr = arr != 0  # NaN counts as true, as in PyTorch
    axes = dims_of(dim, arr.ndim)
    res = (arr.all if is_all else arr.any)(axis=axes, keepdims=keepdim)
    if input._array.dtype == np.uint8:  # PyTorch keeps uint8 for backward compatibility
        res = res.astype(np.uint8)
    res = const(res, input)
    return write_out(out, res, "all" if is_all else "any") if out is not None else res


def all(input, dim=None, keepdim=False, *, out=None):
    return _truth(input, dim, keepdim, out, True)


def any(input, dim=None, keepdim=False, *, out=None):
    return _truth(input, dim, keepdim, out, False)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    if input.is_meta or other.is_meta:  # its answer is a Python bool: PyTorch reads it
        raise RuntimeError("Tensor.item() cannot be called on meta tensors")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype._scalar_name} did not match {other.dtype._scalar_name}")
    if input.dtype._kind and input.dtype._kind is not _dt.UINT:
        return builtins.bool(input.isclose(other, rtol, atol, equal_nan).all())
    x, y, _, _ = operands(input, other, "allclose")
    mismatch = broadcast_error(x.shape, y.shape)
    if mismatch is not None:
        raise mismatch
    if x.dtype == np.bool_:
        x, y = x.astype(np.int8), y.astype(np.int8)
    return builtins.bool(xp_of(input).isclose(x, y, rtol, atol, equal_nan).all())


def equal(input, other):
    """Same shape and same values (after type promotion); NaN is never equal."""
    refuse_on_meta("aten::equal", input, other)
    if input._array.shape != other._array.shape:
        return False
    for t in (input, other):
        if t.dtype._kind:
            _casts.refuse(t.dtype, "equal_notnan_cpu", (_dt.UINT,))
    x, y, _, _ = operands(input, other, "equal")
    return builtins.bool((x == y).all())


def _barebones_values(input, kernel, takes=(_dt.UINT, _dt.FLOAT8, _dt.COMPLEX32)):
    """The values of a barebones tensor in a NumPy type ops compute with (complex32's as
    complex64), or PyTorch's refusal of `kernel` for its dtype."""
    _casts.refuse(input.dtype, kernel, takes)
    d = input.dtype
    if d is _dt.complex32:
        return _casts.complex32_to_complex64(input._array)
    return input._array.astype(np.float32) if d._kind is _dt.FLOAT8 else input._array


def count_nonzero(input, dim=None):
    arr = input._array
    if input.dtype._kind:
        arr = _barebones_values(input, "nonzero_count_cpu", (_dt.COMPLEX32,))
    axes = dims_of(dim, arr.ndim)
    return const((arr != 0).sum(axis=axes).astype(np.int64), input)


# ---- prod ---------------------------------------------------------------------------------------
class ProdBackward1(Node):
    """The product of the other elements of each slice. Without zeros that is out / x; with
    zeros it is built from exclusive running products (a polynomial in x), so it stays exact
    and differentiates again."""

    def backward(self, grad):
        x, res = self.saved_tensors
        shape, axes, keepdim = x._array.shape, self.axes, self.keepdim
        g = keep_dims(grad, shape, axes, keepdim)
        if not (x._array == 0).any():
            return g * keep_dims(res, shape, axes, keepdim) / x
        return g * _prod_of_others(x, axes)


def _prod_of_others(x, axes):
    """For each element, the product of the other elements of its slice over `axes`."""
    from .cumulative import _flip, cumprod
    from .shape import cat
    shape = x._array.shape
    if not axes:
        return x * 0 + 1
    rest = [a for a in range(len(shape)) if a not in axes]
    order = rest + list(axes)
    n = _reduced_size(shape, axes)
    rows = x.permute(order).reshape([shape[a] for a in rest] + [n])
    one = const(xp_of(x).ones(rows._array.shape[:-1] + (1,), dtype=x._array.dtype), x)
    before = cumprod(cat([one, rows.narrow(-1, 0, n - 1)], -1), -1)
    after = _flip(cumprod(_flip(cat([rows.narrow(-1, 1, n - 1), one], -1), -1), -1), -1)
    others = (before * after).reshape([shape[a] for a in order])
    return others.permute([order.index(a) for a in range(len(shape))])


class ProdBackward0(ProdBackward1):
    pass


def _prod(input, axes, keepdim, dtype, node_cls=ProdBackward1, out=None):
    d = _sum_dtype(input, dtype, "prod")
    arr = input._array
    if input.dtype._kind:
        _casts.refuse(input.dtype, "prod_out_cpu", (_dt.UINT,))
    if arr.dtype is not d.np:
        arr = arr.astype(d.np)
    res = const(arr.prod(axis=axes, keepdims=keepdim), input)
    if out is not None:
        return write_out(out, res, "prod")
    node = record(node_cls, (input,), res)
    if node is not None:
        node.axes, node.keepdim = axes, keepdim
        node.save_for_backward(input, res)
    return res


def prod(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if _autocast.active:  # on autocast's float32 list: a product of many halves overflows
        (input,) = fp32(input)
    axes = dims_of(dim, input._array.ndim)
    return _prod(input, axes, keepdim, dtype, ProdBackward0 if dim is None else ProdBackward1,
                 out)


# ---- NaN-skipping sums ----------------------------------------------------------------------------
class NansumBackward0(Node):
    def backward(self, grad):
        g = keep_dims(grad, self._meta[0][0], self.axes, self.keepdim)
        # a product, not a where: an infinite gradient makes NaN at the NaNs, as in PyTorch
        return g * const(~self.nan, grad) if self.nan is not None else g.expand(self._meta[0][0])


def nansum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if input.dtype.is_complex:
        raise RuntimeError("nansum does not support complex inputs")
    arr = input._array
    axes = dims_of(dim, arr.ndim)
    nan = None
    if input.dtype.is_floating_point:
        nan = xp_of(input).isnan(arr)
        arr = arr.copy()
        arr[nan] = 0
    d = _sum_dtype(input, dtype, "nansum")
    if arr.dtype is not d.np:
        arr = arr.astype(d.np)
    total = accumulating(arr).sum(axis=axes, keepdims=keepdim)
    res = const(_casts.cast_if_needed(as_array(total), arr.dtype), input)
    if out is not None:
        return write_out(out, res, "nansum")
    node = record(NansumBackward0, (input,), res)
    if node is not None:
        node.axes, node.keepdim, node.nan = axes, keepdim, nan
    return res


def nanmean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("nanmean(): expected input to have floating point or complex dtype "
                           f"but got {input.dtype._scalar_name}")
    arr = input._array
    count = (~xp_of(input).isnan(arr)).sum(axis=dims_of(dim, arr.ndim), keepdims=keepdim)
    res = nansum(input, dim, keepdim, dtype=dtype) / const(count, input)
    return write_out(out, res, "nanmean") if out is not None else res
