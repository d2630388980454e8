"""Index-driven ops: gather, scatter (and its reductions), index_select/add/copy/fill, the
masked ops, take/put, take_along_dim, searchsorted and bucketize.

Every scatter-like forward works on flat (C-order) positions: `_scatter_positions` turns an
index along `dim` into linear indices of the output, and repeated positions are reduced by
`bincount` or a sort (`indexing.accumulate_flat`, `indexing.segment_reduce`), never by
`np.add.at`. Each derivative is written with these same ops, so double backward works.
"""
import builtins

import numpy as np

from .. import dtypes as _dt
from .._tensor import Tensor, _wrap_dim, make_tensor
from ._graph import Node, _type_name, inplace, record, warn_expanded, write_out
from .indexing import accumulate_flat, add_along, segment_reduce

__all__ = ["gather", "scatter", "scatter_add", "scatter_reduce", "index_select", "index_add",
           "index_copy", "index_fill", "masked_fill", "masked_select", "masked_scatter", "take",
           "take_along_dim", "put", "searchsorted", "bucketize"]
METHODS = ["gather", "scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce",
           "scatter_reduce_", "index_select", "index_add", "index_add_", "index_copy",
           "index_copy_", "index_fill", "index_fill_", "masked_fill", "masked_fill_",
           "masked_select", "masked_scatter", "masked_scatter_", "take", "take_along_dim", "put",
           "put_"]


def _xp(t):
    from .pointwise import xp_of
    return xp_of(t)


def _zeros(shape, like):
    return make_tensor(_xp(like).zeros(shape, like._array.dtype), like._device)


def _index_arr(index, like):
    arr = index._array
    if index._device != like._device:
        from .conversion import _move
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
                           f"{_type_name(_dt.FROM_NUMPY[index._array.dtype])}")


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


def _check_range(idx, size, dim, exc=RuntimeError, prefix="", allow_negative=False):
    if idx.size == 0:
        return
    lo = -size if allow_negative else 0
    if builtins.int(idx.min()) < lo or builtins.int(idx.max()) >= size:
        flat = idx.reshape(-1)
        pos = builtins.int(((flat < lo) | (flat >= size)).argmax())
        raise exc(f"{prefix}index {builtins.int(flat[pos])} is out of bounds for dimension {dim} "
                  f"with size {size}")


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
        getattr(xp, ufunc).at(flat, lin, vals)
        return
    # CuPy has no multiply.at: reduce on the host (a rarely used reduction)
    host = xp.asnumpy(flat)
    pos, red = segment_reduce(xp.asnumpy(lin), xp.asnumpy(vals), np.multiply)
    host[pos] = host[pos] * red
    flat[...] = xp.asarray(host)


# ---- gather --------------------------------------------------------------------------------------
class GatherBackward0(Node):
    def backward(self, grad):
        full = _zeros(self._meta[0][0], grad)
        return scatter_add(full, self.dim, self.index, grad)


def _gather_arrays(arr, dim, idx, xp):
    if arr.ndim == 0:
        return arr.reshape(1)[idx.reshape(-1)].reshape(idx.shape)
    sl = tuple(slice(None) if d == dim else slice(0, n) for d, n in enumerate(idx.shape))
    return xp.take_along_axis(arr[sl], idx.reshape(_dims1(idx.shape)) if idx.ndim == 0 else idx,
                              axis=dim).reshape(idx.shape)


def gather(input, dim, index, *, sparse_grad=False, out=None):
    _check_int_index(index, "gather")
    shape = input._array.shape
    d = _wrap_dim(dim, len(shape))
    _check_gather_shapes(shape, d, index._array.shape, None, "gather")
    idx = _index_arr(index, input)
    _check_range(idx, _dims1(shape)[d], d)
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
    _check_range(idx, _dims1(shape)[d], d)
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


_warned_reduce = False


def scatter(input, dim, index, src=None, value=None, *, reduce=None, out=None):
    if src is None:
        src = value
    if reduce is not None and reduce not in ("add", "multiply"):
        raise RuntimeError("reduce argument must be either add or multiply.")
    tensor_src = isinstance(src, Tensor)
    global _warned_reduce
    if tensor_src and reduce is not None and not _warned_reduce:
        _warned_reduce = True  # PyTorch's TORCH_WARN_ONCE
        import warnings
        warnings.warn("The reduce argument of torch.scatter with Tensor src is deprecated and will "
                      "be removed in a future PyTorch release. Use torch.scatter_reduce instead "
                      "for more reduction options.", UserWarning, stacklevel=2)
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
        from .pointwise import where
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
            from .creation import ones_like
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


# ---- index_select / index_add / index_copy / index_fill -------------------------------------------
def _vector_index(index, like, dim):
    """The index of an index_* op as a 1-D array on `like`'s device."""
    return _index_arr(index, like).reshape(-1)


class IndexSelectBackward0(Node):
    def backward(self, grad):
        full = _zeros(self._meta[0][0], grad)
        return index_add(full, self.dim, self.index, grad)


def index_select(input, dim, index, *, out=None):
    if not isinstance(index, Tensor):
        raise TypeError(f"index_select(): argument 'index' (position 2) must be Tensor, not "
                        f"{type(index).__name__}")
    if index._array.ndim > 1:
        raise IndexError("index_select(): Index is supposed to be a vector")
    if index._array.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_select(): Expected dtype int32 or int64 for index")
    shape = input._array.shape
    d = _wrap_dim(dim, len(shape))
    idx = _vector_index(index, input, d)
    size = _dims1(shape)[d]
    if idx.size and (builtins.int(idx.min()) < 0 or builtins.int(idx.max()) >= size):
        raise IndexError("index out of range in self")
    arr = input._array
    res_arr = arr.copy() if arr.ndim == 0 else \
        _xp(input).take(arr, idx, axis=d)
    res = make_tensor(res_arr, input._device)
    if out is not None:
        return write_out(out, res, "index_select")
    node = record(IndexSelectBackward0, (input,), res)
    if node is not None:
        node.dim, node.index = d, index.reshape(-1)
    return res


def _index_src_positions(shape, d, idx, src_shape, xp):
    """Flat positions in `shape` for each element of a source of `src_shape` placed at rows
    `idx` along dim d (index_add / index_copy)."""
    full = idx.reshape((1,) * d + (idx.size,) + (1,) * (len(shape) - d - 1))
    full = xp.broadcast_to(full, src_shape)
    return _scatter_positions(shape, d, full, xp)


def _check_index_source(input, d, index, source, fname):
    shape, sshape = _dims1(input._array.shape), _dims1(source._array.shape)
    n = index._array.size
    if fname == "index_add_":
        if len(sshape) != len(shape) or any(a != b for k, (a, b) in enumerate(zip(shape, sshape))
                                            if k != d):
            raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                               f"specified dimension. Got self.shape = {list(input.shape)} "
                               f"source.shape = {list(source.shape)}")
        if n != sshape[d]:
            raise RuntimeError(f"index_add_(): Number of indices ({n}) should be equal to "
                               f"source.size(dim): ({sshape[d]}), for dim: {d}")
    else:
        if n != (sshape[d] if d < len(sshape) else 1):
            raise IndexError(f"index_copy_(): Number of indices ({n}) should be equal to "
                             f"source.size(dim) ({sshape[d]})")
        for k in range(len(shape)):
            if k != d and (k >= len(sshape) or shape[k] != sshape[k]):
                raise RuntimeError("index_copy_(): Source/destination tensor must have same slice "
                                   f"shapes. Destination slice shape: {shape[k]} at dimension "
                                   f"{d} and source slice shape: "
                                   f"{sshape[k] if k < len(sshape) else 1} at dimension {d}.")


class IndexAddBackward0(Node):
    def backward(self, grad):
        g_src = None
        if self._next[1][0] is not None:
            g_src = index_select(grad, self.dim, self.index)
            if self.alpha != 1:
                g_src = g_src * self.alpha
            g_src = g_src.reshape(self._meta[1][0])
        return grad, g_src


def index_add(input, dim, index, source, *, alpha=1, out=None):
    if index._array.ndim > 1:
        raise IndexError(f"index_add_(): Index is supposed to be a vector, but got dim: "
                         f"{index._array.ndim} with type: "
                         f"{_type_name(_dt.FROM_NUMPY[index._array.dtype])} and size: "
                         f"{list(index.shape)}")
    if index._array.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{_type_name(_dt.FROM_NUMPY[index._array.dtype])}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_add_(): self ({_type_name(input.dtype)}) and source "
                           f"({_type_name(source.dtype)}) must have the same scalar type")
    shape = input._array.shape
    d = _wrap_dim(dim, len(shape))
    _check_index_source(input, d, index, source, "index_add_")
    idx = _vector_index(index, input, d)
    _check_range(idx, _dims1(shape)[d], d)
    xp = _xp(input)
    res_arr = input._array.copy(order="C")
    vals = source._array.reshape(_dims1(source._array.shape))
    if alpha != 1:
        vals = (vals * alpha).astype(res_arr.dtype, copy=False)
    add_along(res_arr.reshape(_dims1(shape)), d, idx, vals, xp)
    res = make_tensor(res_arr, input._device)
    if out is not None:
        return write_out(out, res, "index_add")
    node = record(IndexAddBackward0, (input, source), res)
    if node is not None:
        node.dim, node.index, node.alpha = d, index.reshape(-1), alpha
    return res


def index_add_(self, dim, index, source, *, alpha=1):
    return inplace(self, lambda s: index_add(s, dim, index, source, alpha=alpha), (source,))


class IndexCopyBackward0(Node):
    def backward(self, grad):
        g_self = index_fill(grad, self.dim, self.index, 0) if self._next[0][0] is not None \
            else None
        g_src = None
        if self._next[1][0] is not None:
            g_src = index_select(grad, self.dim, self.index).reshape(self._meta[1][0])
        return g_self, g_src


def index_copy(input, dim, index, source):
    if index._array.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got "
                         f"{index._array.ndim})")
    _check_long_index(index, "index_copy_")
    if source.dtype is not input.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {_type_name(input.dtype)} and (source) "
                           f"{_type_name(source.dtype)}")
    shape = input._array.shape
    d = _wrap_dim(dim, len(shape))
    _check_index_source(input, d, index, source, "index_copy_")
    idx = _vector_index(index, input, d)
    _check_range(idx, _dims1(shape)[d], d, IndexError, "index_copy_(): ")
    xp = _xp(input)
    res_arr = input._array.copy(order="C")
    sshape = _dims1(source._array.shape)
    lin = _index_src_positions(_dims1(shape), d, idx, sshape, xp).reshape(-1)
    res_arr.reshape(-1)[lin] = source._array.reshape(-1) if source._array.flags.c_contiguous \
        else xp.ascontiguousarray(source._array).reshape(-1)
    res = make_tensor(res_arr, input._device)
    node = record(IndexCopyBackward0, (input, source), res)
    if node is not None:
        node.dim, node.index = d, index.reshape(-1)
    return res


def index_copy_(self, dim, index, source):
    return inplace(self, lambda s: index_copy(s, dim, index, source), (source,))


class IndexFillBackward0(Node):
    def backward(self, grad):
        return index_fill(grad, self.dim, self.index, 0)


class IndexFillBackward1(Node):
    def backward(self, grad):
        g_self = index_fill(grad, self.dim, self.index, 0) if self._next[0][0] is not None \
            else None
        g_value = None
        if self._next[1][0] is not None:
            g_value = index_select(grad, self.dim, self.index).sum()
        return g_self, g_value


def index_fill(input, dim, index, value):
    if index._array.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    if index._array.dtype != np.int64:
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    tensor_value = isinstance(value, Tensor)
    if tensor_value and value._array.ndim:
        raise RuntimeError("index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._array.ndim} dimension(s).")
    shape = input._array.shape
    d = _wrap_dim(dim, len(shape))
    idx = _vector_index(index, input, d)
    _check_range(idx, _dims1(shape)[d], d, IndexError, allow_negative=True)
    res_arr = input._array.copy()
    fill = value._array if tensor_value else value
    if res_arr.ndim == 0:
        if idx.size:
            res_arr[...] = fill
    else:
        res_arr[(slice(None),) * d + (idx,)] = fill
    res = make_tensor(res_arr, input._device)
    if tensor_value:
        node = record(IndexFillBackward1, (input, value), res)
    else:
        node = record(IndexFillBackward0, (input,), res)
    if node is not None:
        node.dim, node.index = d, index.reshape(-1)
    return res


def index_fill_(self, dim, index, value):
    warn_expanded(self, "index_fill_", "tensor[mask] = scalar")
    return inplace(self, lambda s: index_fill(s, dim, index, value), (value,), allow_overlap=True)


# ---- masked ops ----------------------------------------------------------------------------------
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


class MaskedFillBackward0(Node):
    def backward(self, grad):
        return masked_fill(grad, self.mask, 0)


class MaskedFillBackward1(Node):
    def backward(self, grad):
        from .pointwise import where
        g_self = masked_fill(grad, self.mask, 0) if self._next[0][0] is not None else None
        g_value = where(self.mask, grad, 0).sum() if self._next[1][0] is not None else None
        return g_self, g_value


def masked_fill(input, mask, value):
    if mask._array.dtype != np.bool_:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{_ctype(mask)}")
    tensor_value = isinstance(value, Tensor)
    if tensor_value and value._array.ndim:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._array.ndim} dimension(s).")
    if not tensor_value and not isinstance(value, (builtins.bool, builtins.int, builtins.float,
                                                   builtins.complex, np.generic)):
        name = type(value).__name__
        raise TypeError(f"masked_fill() received an invalid combination of arguments - got "
                        f"(Tensor, {name}), but expected one of:\n * (Tensor mask, Tensor value)\n"
                        f"      didn't match because some of the arguments have invalid types: "
                        f"(Tensor, !{name}!)\n * (Tensor mask, Number value)\n      didn't match "
                        f"because some of the arguments have invalid types: (Tensor, !{name}!)\n")
    _broadcast(mask._array.shape, input._array.shape)
    xp = _xp(input)
    arr = input._array
    fill = _index_arr(value, input) if tensor_value else value
    if isinstance(fill, builtins.float) and arr.dtype.kind in "iub":
        fill = builtins.int(fill)
    res_arr = xp.where(_index_arr(mask, input), xp.asarray(fill).astype(arr.dtype), arr)
    res = make_tensor(res_arr.astype(arr.dtype, copy=False), input._device)
    if tensor_value:
        node = record(MaskedFillBackward1, (input, value), res)
    else:
        node = record(MaskedFillBackward0, (input,), res)
    if node is not None:
        node.mask = mask
    return res


def _ctype(t):
    return {"uint8": "unsigned char", "int8": "signed char", "int16": "short", "int32": "int",
            "int64": "long int", "float32": "float", "float64": "double"}.get(
        t._array.dtype.name, t._array.dtype.name)


def masked_fill_(self, mask, value):
    if mask._array.dtype == np.bool_:
        _broadcast(self._array.shape, mask._array.shape)
    warn_expanded(self, "masked_fill_", "tensor[mask] = scalar")
    return inplace(self, lambda s: masked_fill(s, mask, value), (value,), allow_overlap=True)


class MaskedSelectBackward0(Node):
    def backward(self, grad):
        shape = _broadcast(self._meta[0][0], self.mask._array.shape)
        return masked_scatter(_zeros(shape, grad), self.mask, grad)


def masked_select(input, mask, *, out=None):
    if mask._array.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _broadcast(mask._array.shape, input._array.shape)
    xp = _xp(input)
    arr = xp.broadcast_to(input._array, shape)
    res = make_tensor(arr[xp.broadcast_to(_index_arr(mask, input), shape)], input._device)
    if out is not None:
        return write_out(out, res, "masked_select")
    node = record(MaskedSelectBackward0, (input,), res)
    if node is not None:
        node.mask = mask
    return res


class MaskedScatterBackward0(Node):
    def backward(self, grad):
        g_self = masked_fill(grad, self.mask, 0) if self._next[0][0] is not None else None
        g_src = None
        if self._next[1][0] is not None:
            from .shape import cat
            shape = self._meta[1][0]
            n = 1
            for s in shape:
                n *= s
            sel = masked_select(grad, self.mask)
            pad = n - sel._array.size
            if pad:
                sel = cat([sel, _zeros((pad,), grad)])
            g_src = sel.reshape(shape)
        return g_self, g_src


def _check_scatter_mask(mask):
    if mask._array.dtype == np.uint8:
        import warnings
        warnings.warn("masked_scatter_ received a mask with dtype torch.uint8, this behavior is "
                      "now deprecated,please use a mask with dtype torch.bool instead.",
                      UserWarning, stacklevel=3)
    if mask._array.dtype != np.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_type_name(mask.dtype)}")


def masked_scatter(input, mask, source):
    _check_scatter_mask(mask)
    if mask._array.dtype != np.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_type_name(mask.dtype)}")
    if source.dtype is not input.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but got"
                           f"{_type_name(input.dtype)} and {_type_name(source.dtype)}")
    shape = _broadcast(input._array.shape, mask._array.shape)
    xp = _xp(input)
    res_arr = xp.broadcast_to(input._array, shape).copy()
    m = xp.broadcast_to(_index_arr(mask, input), shape)
    n = builtins.int(m.sum())
    if n > source._array.size:
        raise RuntimeError("Number of elements of source < number of ones in mask")
    res_arr[m] = source._array.reshape(-1)[:n]
    res = make_tensor(res_arr, input._device)
    node = record(MaskedScatterBackward0, (input, source), res)
    if node is not None:
        node.mask = mask
    return res


def masked_scatter_(self, mask, source):
    _check_scatter_mask(mask)
    if mask._array.dtype != np.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{_type_name(mask.dtype)}")
    shape, mshape = self._array.shape, mask._array.shape
    if len(mshape) > len(shape) or _broadcast(shape, mshape) != tuple(shape):
        raise RuntimeError(f"expand(CPUBoolType{{{list(mshape)}}}, size={list(shape)}): the number "
                           f"of sizes provided ({len(shape)}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({len(mshape)})")
    return inplace(self, lambda s: masked_scatter(s, mask, source), (source,))


# ---- take / put / take_along_dim -----------------------------------------------------------------
def _flat_index(index, input, fname):
    idx = _index_arr(index, input)
    n = input._array.size
    if idx.size and (builtins.int(idx.min()) < -n or builtins.int(idx.max()) >= n):
        flat = idx.reshape(-1)
        pos = builtins.int(((flat < -n) | (flat >= n)).argmax())
        raise IndexError(f"out of range: tried to access index {builtins.int(flat[pos])} on a "
                         f"tensor of {n} elements.")
    return idx % n if n else idx


class TakeBackward0(Node):
    def backward(self, grad):
        full = _zeros(self._meta[0][0], grad)
        return put(full, self.index, grad, accumulate=True)


def take(input, index):
    _check_long_index(index, "take")
    idx = _flat_index(index, input, "take")
    arr = input._array
    flat = arr.reshape(-1) if arr.flags.c_contiguous else _xp(input).ascontiguousarray(arr).reshape(-1)
    res = make_tensor(flat[idx], input._device)
    node = record(TakeBackward0, (input,), res)
    if node is not None:
        node.index = index
    return res


class PutBackward0(Node):
    def backward(self, grad):
        g_self = g_src = None
        if self._next[0][0] is not None:
            g_self = grad if self.accumulate else put(grad, self.index,
                                                      _zeros(self._meta[1][0], grad))
        if self._next[1][0] is not None:
            g_src = take(grad, self.index).reshape(self._meta[1][0])
        return g_self, g_src


def put(input, index, source, accumulate=False):
    _check_long_index(index, "put_")
    if source.dtype is not input.dtype:
        raise RuntimeError("put_(): self and source expected to have the same dtype, but got "
                           f"self.dtype = {_type_name(input.dtype)} and source.dtype = "
                           f"{_type_name(source.dtype)}")
    if source._array.size != index._array.size:
        raise IndexError("put_(): Expected source and index to have the same number of elements, "
                         f"but got source.numel() = {source._array.size}, index.numel() = "
                         f"{index._array.size}")
    idx = _flat_index(index, input, "put_").reshape(-1)
    xp = _xp(input)
    res_arr = input._array.copy(order="C")
    vals = xp.ascontiguousarray(source._array).reshape(-1)
    if accumulate:
        accumulate_flat(res_arr.reshape(-1), idx, vals)
    else:
        res_arr.reshape(-1)[idx] = vals
    res = make_tensor(res_arr, input._device)
    node = record(PutBackward0, (input, source), res)
    if node is not None:
        node.index, node.accumulate = index, accumulate
    return res


def put_(self, index, source, accumulate=False):
    return inplace(self, lambda s: put(s, index, source, accumulate), (source,))


def take_along_dim(input, indices, dim=None, *, out=None):
    if indices._array.dtype != np.int64:
        raise RuntimeError("torch.take_along_dim(): dtype of indices should be Long but got "
                           f"{_type_name(indices.dtype)}")
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
        x = input.expand(bs) if tuple(bs) != shape else input
        ix = indices.expand(bi) if tuple(bi) != ishape else indices
        res = gather(x, d, ix)
    if out is not None:
        return write_out(out, res, "take_along_dim")
    return res


# ---- searchsorted / bucketize --------------------------------------------------------------------
def _search(seq, vals, right, xp):
    """Row-wise insertion points of `vals` (..., K) in `seq` (..., M): PyTorch's binary
    search exactly (its comparisons decide where NaN goes), vectorised over all elements."""
    m = seq.shape[-1]
    if seq.ndim == 1 and xp is np and not (seq.dtype.kind == "f" and np.isnan(seq).any()) and \
            not (vals.dtype.kind == "f" and np.isnan(vals).any()):
        return np.searchsorted(seq, vals, side="right" if right else "left").astype(np.int64)
    lo = xp.zeros(vals.shape, np.int64)
    hi = xp.full(vals.shape, m, np.int64)
    while True:
        active = lo < hi
        if not builtins.bool(active.any()):
            return lo
        mid = lo + ((hi - lo) >> 1)
        safe = xp.minimum(mid, m - 1)
        if seq.ndim == 1:
            mv = seq[safe]
        else:
            mv = xp.take_along_axis(seq, safe, axis=-1)
        go_right = ~(mv > vals) if right else ~(mv >= vals)
        lo = xp.where(active & go_right, mid + 1, lo)
        hi = xp.where(active & ~go_right, mid, hi)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None, sorter=None,
                 out=None):
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"torch.searchsorted(): side can only be 'left' or 'right' but got "
                               f"{side}")
        if right and side == "left":
            raise RuntimeError("torch.searchsorted(): side and right can't be set to opposites, "
                               "got side of left while right was True")
        right = side == "right"
    bd = sorted_sequence
    xp = _xp(bd)
    seq = bd._array
    if seq.ndim == 0:
        raise RuntimeError("torch.searchsorted(): boundaries tensor should have positive "
                           "dimension, but got 0 dimension")
    scalar = not isinstance(input, Tensor)
    if scalar:
        vals = xp.asarray(input)
        if seq.ndim != 1:
            raise RuntimeError("torch.searchsorted(): input value can be a scalar only when "
                               f"boundaries tensor dimension is 1, but we got boundaries tensor "
                               f"dim({seq.ndim}) and input value's dim(0) numel(1)")
    else:
        vals = _index_arr(input, bd)
        if seq.ndim != 1 and (seq.shape[:-1] != vals.shape[:-1] or vals.ndim != seq.ndim):
            raise RuntimeError("torch.searchsorted(): boundaries tensor should be 1 dimension or "
                               "the first N-1 dimensions of boundaries tensor and input value "
                               f"tensor must match, but we got boundaries tensor {list(seq.shape)} "
                               f"and input value tensor {list(vals.shape)}")
    if sorter is not None:
        if sorter._array.dtype != np.int64:
            raise RuntimeError("torch.searchsorted(): sorter must be a tensor of long dtype but "
                               f"got dtype {_type_name(sorter.dtype)}")
        if sorter._array.shape != seq.shape:
            raise RuntimeError("torch.searchsorted(): boundary and sorter must have the same size, "
                               f"but got boundary tensor {list(seq.shape)}and got sorter tensor "
                               f"{list(sorter._array.shape)}")
        srt = _index_arr(sorter, bd)
        if srt.size and (builtins.int(srt.min()) < 0 or builtins.int(srt.max()) >= seq.shape[-1]):
            raise RuntimeError("torch.searchsorted(): sorter index out of range")
        seq = xp.take_along_axis(seq, srt, axis=-1)
    if seq.dtype != vals.dtype:
        common = np.promote_types(seq.dtype, vals.dtype) if vals.dtype != np.bool_ else seq.dtype
        seq, vals = seq.astype(common, copy=False), vals.astype(common, copy=False)
    if seq.shape[-1] == 0:
        pos = xp.zeros(vals.shape, np.int64)
    else:
        pos = _search(seq, vals, right, xp)
    res = make_tensor(xp.asarray(pos).astype(np.int32 if out_int32 else np.int64, copy=False),
                      bd._device)
    if out is not None:
        return write_out(out, res, "searchsorted")
    return res


def bucketize(input, boundaries, *, out_int32=False, right=False, out=None):
    if boundaries._array.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got dim("
                           f"{boundaries._array.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right, out=out)
