"""gather and the scatter family (scatter, scatter_add, scatter_reduce) with their in-place
forms, and take_along_dim (a gather after broadcasting): the ops that pick or place elements
along one dim by an index tensor of the input's rank. Each derivative is written with these
same ops (gather's is a scatter_add, scatter's a gather), so double backward works.
"""
import numpy as np

from ... import _dtype_casts as _casts
from ..._state import warn_once
from ..._tensor import Tensor, _wrap_dim, make_tensor
from .._graph import Node, record
from .._writes import inplace, write_out
from .._accumulate import accumulate_flat
from ._common import (_broadcast, _check_gather_shapes, _check_int_index, _check_range, _dims1,
                      _index_arr, _narrow_to, _reduce_flat, _scatter_positions, _xp, _zeros)
from .masked import masked_fill

__all__ = [
    "gather", "scatter", "scatter_add", "scatter_reduce", "take_along_dim", "scatter_",
    "scatter_add_", "scatter_reduce_",
]


# ---- gather --------------------------------------------------------------------------------------
class GatherBackward0(Node):
    def backward(self, grad):
        full = _zeros(self._meta[0][0], grad)
        return scatter_add(full, self.dim, self.index, grad)


def _gather_arrays(arr, dim, idx, xp):
    if arr.ndim == 0:
        return arr.reshape(1)[idx.reshape(-1)].reshape(idx.shape)
    sl = tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(idx.shape))
    src = arr[sl]
    if xp is np and dim == src.ndim - 1 and idx.ndim and src.size and src.flags.c_contiguous:
        return _gather_rows(src, idx)
    return xp.take_along_axis(src, idx.reshape(_dims1(idx.shape)) if idx.ndim == 0 else idx,
                              axis=dim).reshape(idx.shape)


def _gather_rows(src, idx):
    """take_along_axis along the last dim of a contiguous array, as one flat take: NumPy's
    take_along_axis builds an index array per dim and runs fancy indexing, 4x slower at
    (64, 64, 64). (Along other dims the offsets cost more than they save.)"""
    n = src.shape[-1]
    offsets = np.arange(0, src.size, n, dtype=np.intp).reshape(idx.shape[:-1] + (1,))
    return np.take(src.reshape(-1), idx + offsets)


def gather(input, dim, index, *, sparse_grad=False, out=None):
    if input.dtype._kind:
        _casts.refuse(input.dtype, "scatter_gather_tensor_cpu")
    _check_int_index(index, "gather")
    shape = input._array.shape
    d = _wrap_dim(dim, len(shape))
    _check_gather_shapes(shape, d, index._array.shape, None, "gather")
    idx = _index_arr(index, input)
    idx = _check_range(idx, _dims1(shape)[d], d, input._device)
    res = make_tensor(_gather_arrays(input._array, d, idx, _xp(input)), input._device)
    if out is not None:
        return write_out(out, res, "gather")
    node = record(GatherBackward0, (input,), res)
    if node is not None:
        node.dim, node.index = d, index
    return res


# ---- scatter family --------------------------------------------------------------------------------
class ScatterBackward0(Node):
    """scatter with a src tensor."""

    def backward(self, grad):
        g_self = scatter(grad, self.dim, self.index, 0) if self._next[0][0] is not None else None
        g_src = gather(grad, self.dim, self.index) if self._next[1][0] is not None else None
        return g_self, g_src


class ScatterBackward1(Node):
    """scatter with a value."""

    def backward(self, grad):
        return scatter(grad, self.dim, self.index, 0)


class ScatterAddBackward0(Node):
    def backward(self, grad):
        g_src = gather(grad, self.dim, self.index) if self._next[1][0] is not None else None
        return grad, g_src


def _not_implemented(op):
    def backward(self, *grads):
        raise RuntimeError(f"derivative for aten::{op} is not implemented")
    return type("NotImplemented", (Node,), {"backward": backward})


_ScatterNotImplemented = _not_implemented("scatter")


def _scatter_setup(input, dim, index, src, fname):
    """Checks shared by the scatter family; (dim, index array, src narrowed or None)."""
    _check_int_index(index, "scatter")
    shape = input._array.shape
    d = _wrap_dim(dim, len(shape))
    if isinstance(src, Tensor):
        _wrap_dim(dim, src._array.ndim)
        if src.dtype is not input.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        _check_gather_shapes(shape, d, index._array.shape, src._array.shape, fname)
    else:
        _check_gather_shapes(shape, d, index._array.shape, None, fname)
    idx = _index_arr(index, input)
    idx = _check_range(idx, _dims1(shape)[d], d, input._device)
    if isinstance(src, Tensor) and src._array.ndim:
        src = _narrow_to(src, index._array.shape)
    return d, idx, src


def _scatter_array(input, d, idx, src, reduce):
    """The result array of a scatter (reduce: None, 'sum', 'prod', 'amax', 'amin')."""
    xp = _xp(input)
    out = input._array.copy(order="C")
    shape = _dims1(out.shape)
    flat = out.reshape(-1)
    lin = _scatter_positions(shape, d, idx.reshape(_dims1(idx.shape)), xp).reshape(-1)
    if isinstance(src, Tensor):
        vals = src._array.astype(out.dtype, copy=False).reshape(-1)
        vals = xp.broadcast_to(vals, lin.shape) if vals.size == 1 else vals
    else:
        vals = xp.full(lin.shape, src, dtype=out.dtype)
    if reduce is None:
        flat[lin] = vals
    else:
        _reduce_flat(flat, lin, xp.ascontiguousarray(vals), reduce, xp)
    return out


def scatter(input, dim, index, src=None, value=None, *, reduce=None, out=None):
    if input.dtype._kind:
        _casts.refuse(input.dtype, "scatter_gather_tensor_cpu")
    if src is None:
        src = value
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    tensor_src = isinstance(src, Tensor)
    if tensor_src and reduce is not None:
        warn_once("The reduce argument of torch.scatter with Tensor src is deprecated and will be "
                  "removed in a future PyTorch release. Use torch.scatter_reduce instead for "
                  "more reduction options.")
    d, idx, src = _scatter_setup(input, dim, index, src, "scatter")
    red = None if reduce is None else ("sum" if reduce == "add" else "prod")
    res = make_tensor(_scatter_array(input, d, idx, src, red), input._device)
    if out is not None:
        return write_out(out, res, "scatter")
    if reduce is not None:
        record(_ScatterNotImplemented, (input, src) if tensor_src else (input,), res)
        return res
    node = record(ScatterBackward0 if tensor_src else ScatterBackward1,
                  (input, src) if tensor_src else (input,), res)
    if node is not None:
        node.dim, node.index = d, index
    return res


def scatter_(self, dim, index, src=None, value=None, *, reduce=None):
    if src is None:
        src = value
    return inplace(self, lambda s: scatter(s, dim, index, src, reduce=reduce), (src,))


def scatter_add(input, dim, index, src, *, out=None):
    d, idx, src_n = _scatter_setup(input, dim, index, src, "scatter_add")
    res = make_tensor(_scatter_array(input, d, idx, src_n, "sum"), input._device)
    if out is not None:
        return write_out(out, res, "scatter_add")
    node = record(ScatterAddBackward0, (input, src_n), res)
    if node is not None:
        node.dim, node.index = d, index
    return res


def scatter_add_(self, dim, index, src):
    return inplace(self, lambda s: scatter_add(s, dim, index, src), (src,))


_REDUCTIONS = ("sum", "prod", "mean", "amax", "amin")


class ScatterReduceBackward0(Node):
    def backward(self, grad):
        from ..pointwise import where
        self_t, src, result = self.saved_tensors
        d, index, reduce = self.dim, self.index, self.reduce
        if reduce not in _REDUCTIONS:  # 'max'/'min' run forward only, as in PyTorch
            raise RuntimeError("Expected 'reduce' to be one of 'sum', 'prod', 'mean', 'amax', "
                               f"'amin' but got {reduce}.")
        if reduce == "sum":
            g_self, g_src = grad, gather(grad, d, index)
        elif reduce == "prod":
            masked_self = masked_fill(self_t, self_t == 0, 1)
            masked_self_result = scatter_reduce(masked_self, d, index, src, reduce,
                                                include_self=self.include_self)
            g_self = grad * masked_self_result / masked_self
            src_zero = src == 0
            n_zeros = gather(scatter_add(_zeros(self_t._array.shape, grad), d, index,
                                         src_zero.to(grad.dtype)), d, index)
            single_zero = src_zero & (n_zeros == 1)
            masked_src = masked_fill(src, single_zero, 1)
            masked_src_result = scatter_reduce(self_t, d, index, masked_src, reduce,
                                               include_self=self.include_self)
            g_src = where(single_zero, gather(grad * masked_src_result, d, index),
                          gather(grad * result, d, index) / masked_fill(src, src_zero, 1))
        elif reduce == "mean":
            from ..creation import ones_like
            n = ones_like(grad) if self.include_self else _zeros(grad._array.shape, grad)
            n = scatter_add(n, d, index, ones_like(src))
            n = masked_fill(n, n == 0, 1)
            g_self = grad / n
            g_src = gather(grad, d, index) / gather(n, d, index)
        else:
            value = gather(result, d, index)
            self_is = (self_t == result).to(grad.dtype)
            src_is = (src == value).to(grad.dtype)
            spread = grad / scatter_add(self_is, d, index, src_is)
            g_self = self_is * spread
            g_src = src_is * gather(spread, d, index)
        if not self.include_self:
            g_self = scatter(g_self, d, index, 0)
        return g_self, g_src


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True, out=None):
    name, reduce = reduce, {"max": "amax", "min": "amin"}.get(reduce, reduce)
    if reduce not in _REDUCTIONS:
        raise RuntimeError("reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    d, idx, src_n = _scatter_setup(input, dim, index, src, "scatter_reduce")
    xp = _xp(input)
    arr = input._array
    if not include_self:
        arr = arr.copy(order="C")
        shape = _dims1(arr.shape)
        lin = _scatter_positions(shape, d, idx.reshape(_dims1(idx.shape)), xp).reshape(-1)
        arr.reshape(-1)[lin] = _identity(reduce, arr.dtype)
    base = make_tensor(arr, input._device)
    res_arr = _scatter_array(base, d, idx, src_n, "sum" if reduce == "mean" else reduce)
    if reduce == "mean":
        shape = _dims1(res_arr.shape)
        lin = _scatter_positions(shape, d, idx.reshape(_dims1(idx.shape)), xp).reshape(-1)
        count = xp.zeros(res_arr.size, np.int64)
        accumulate_flat(count, lin, xp.ones(lin.shape, np.int64))
        count = count.reshape(res_arr.shape) + (1 if include_self else 0)
        count = xp.maximum(count, 1)
        if res_arr.dtype.kind in "fc":
            res_arr = (res_arr / count).astype(res_arr.dtype, copy=False)
        else:
            res_arr = (res_arr // count).astype(res_arr.dtype, copy=False)
    res = make_tensor(res_arr, input._device)
    if out is not None:
        return write_out(out, res, "scatter_reduce")
    node = record(ScatterReduceBackward0, (input, src_n), res)
    if node is not None:
        node.dim, node.index, node.reduce, node.include_self = d, index, name, include_self
        node.save_for_backward(input, src_n, res)
    return res


def _identity(reduce, dtype):
    if reduce in ("sum", "mean"):
        return 0
    if reduce == "prod":
        return 1
    if dtype.kind == "f" or dtype.name == "bfloat16":
        return -np.inf if reduce == "amax" else np.inf
    if dtype.kind == "b":
        return reduce == "amin"
    info = np.iinfo(dtype)
    return info.min if reduce == "amax" else info.max


def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
    return inplace(self, lambda s: scatter_reduce(s, dim, index, src, reduce,
                                                  include_self=include_self), (src,))


def take_along_dim(input, indices, dim=None, *, out=None):
    if indices._array.dtype != np.int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{indices.dtype._scalar_name}")
    if dim is None:
        res = gather(input.reshape(-1), 0, indices.reshape(-1))
    else:
        shape, ishape = input._array.shape, indices._array.shape
        if len(shape) != len(ishape):
            raise RuntimeError("torch.take_along_dim(): input and indices should have the same "
                               f"number of dimensions, but got {len(shape)} dimensions for input, "
                               f"and {len(ishape)} dimensions for indices")
        d = _wrap_dim(dim, len(shape))
        s = list(shape)
        i = list(ishape)
        s[d] = i[d] = 1
        b = list(_broadcast(tuple(s), tuple(i)))
        bs, bi = list(b), list(b)
        bs[d], bi[d] = shape[d] if shape else 1, ishape[d] if ishape else 1
        x = input.expand(bs)  # always, as PyTorch (an ExpandBackward0 even to the same shape)
        ix = indices.expand(bi) if tuple(bi) != ishape else indices
        res = gather(x, d, ix)
    if out is not None:
        return write_out(out, res, "take_along_dim")
    return res
