"""index_select, index_add, index_copy, index_fill (a 1-D index along one dim) and take and
put (an index into the flattened tensor), with their backward nodes and in-place forms.
"""
import builtins

import numpy as np

from ... import _state, dtypes as _dt
from ..._tensor import Tensor, _wrap_dim, make_tensor
from ...device import assert_on_device, checks_on_host
from .._graph import Node, record
from .._writes import inplace, warn_expanded, write_out, with_out
from .._accumulate import accumulate_flat, add_along
from ._common import (_check_long_index, _check_range, _dims1, _index_arr, _scatter_positions,
                      _xp, _zeros)

__all__ = [
    "index_select", "index_add", "index_copy", "index_fill", "take", "put", "index_add_",
    "index_copy_", "index_fill_", "put_",
]


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
    if not checks_on_host(input._device):  # CuPy's take wraps an index around meanwhile
        assert_on_device(input._device, (idx < 0) | (idx >= size),
                         "index_select: Assertion `srcIndex < srcSelectDimSize`")
    elif idx.size and (builtins.int(idx.min()) < 0 or builtins.int(idx.max()) >= size):
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
                         f"{_dt.FROM_NUMPY[index._array.dtype]._scalar_name} and size: "
                         f"{list(index.shape)}")
    if index._array.dtype not in (np.int64, np.int32):
        raise RuntimeError("index_add_(): Expected dtype int32/int64 for index but got: "
                           f"{_dt.FROM_NUMPY[index._array.dtype]._scalar_name}")
    if source.dtype is not input.dtype:
        raise RuntimeError(f"index_add_(): self ({input.dtype._scalar_name}) and source "
                           f"({source.dtype._scalar_name}) must have the same scalar type")
    shape = input._array.shape
    d = _wrap_dim(dim, len(shape))
    _check_index_source(input, d, index, source, "index_add_")
    idx = _vector_index(index, input, d)
    idx = _check_range(idx, _dims1(shape)[d], d, input._device)
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


@with_out("index_copy")
def index_copy(input, dim, index, source):
    if index._array.ndim > 1:
        raise IndexError(f"index_copy_(): Index should have dimension 1 or 0 (got "
                         f"{index._array.ndim})")
    _check_long_index(index, "index_copy_")
    if source.dtype is not input.dtype:
        raise RuntimeError("index_copy_(): self and source expected to have the same dtype, but "
                           f"got (self) {input.dtype._scalar_name} and (source) "
                           f"{source.dtype._scalar_name}")
    shape = input._array.shape
    d = _wrap_dim(dim, len(shape))
    _check_index_source(input, d, index, source, "index_copy_")
    idx = _vector_index(index, input, d)
    idx = _check_range(idx, _dims1(shape)[d], d, input._device, IndexError, "index_copy_(): ")
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
    idx = _check_range(idx, _dims1(shape)[d], d, input._device, IndexError, allow_negative=True)
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


# ---- take / put / take_along_dim -----------------------------------------------------------------
def _flat_index(index, input, fname):
    idx = _index_arr(index, input)
    n = input._array.size
    if n and not checks_on_host(input._device):
        assert_on_device(input._device, (idx < -n) | (idx >= n),
                         f'{fname}: Assertion `index >= -sizes[i] && index < sizes[i] && '
                         '"index out of bounds"`')
    elif idx.size and (builtins.int(idx.min()) < -n or builtins.int(idx.max()) >= n):
        flat = idx.reshape(-1)
        pos = builtins.int(((flat < -n) | (flat >= n)).argmax())
        raise IndexError(f"out of range: tried to access index {builtins.int(flat[pos])} on a "
                         f"tensor of {n} elements.")
    return idx % n if n else idx


class TakeBackward0(Node):
    def backward(self, grad):
        full = _zeros(self._meta[0][0], grad)
        return put(full, self.index, grad, accumulate=True)


@with_out("take")
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
                           f"self.dtype = {input.dtype._scalar_name} and source.dtype = "
                           f"{source.dtype._scalar_name}")
    if source._array.size != index._array.size:
        raise IndexError("put_(): Expected source and index to have the same number of elements, "
                         f"but got source.numel() = {source._array.size}, index.numel() = "
                         f"{index._array.size}")
    idx = _flat_index(index, input, "put_").reshape(-1)
    if not accumulate:
        _state.alert_not_deterministic("put_")
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
