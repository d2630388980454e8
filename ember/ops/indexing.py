"""Indexing: `t[...]` and `t[...] = v`, `copy_`, and `nonzero`.

Basic indices (ints, slices, None, Ellipsis) make views through a chain of view ops
(select, slice, unsqueeze), so the result's grad_fn is PyTorch's (`SelectBackward0` for
`x[:, 1]`). A write `t[idx] = v` is `copy_`/`fill_` on such a view: with autograd, the
base becomes the output of CopySlices (see `_graph.inplace`).
"""
import builtins

import numpy as np

from .._state import grad as _grad_state
from .._tensor import Tensor, _wrap_dim, make_tensor
from ._graph import Node, inplace, record
from .shape import SliceBackward0, make_view_of, select, unsqueeze

__all__ = ["nonzero"]
METHODS = ["__getitem__", "__setitem__", "copy_", "nonzero"]


def _expand_index(index, ndim):
    """The index as a tuple with Ellipsis expanded, and whether it is all basic."""
    if not isinstance(index, tuple):
        index = (index,)
    basic = True
    consumed = 0
    for i in index:
        if i is None or i is Ellipsis:
            continue
        if isinstance(i, (builtins.bool, np.bool_)):
            basic = False
        elif isinstance(i, (builtins.int, np.integer, slice)):
            consumed += 1
        elif isinstance(i, Tensor) and i._array.ndim == 0 and i._array.dtype.kind in "iu":
            consumed += 1
        else:
            basic = False
            consumed += i._array.ndim if isinstance(i, Tensor) and i._array.dtype == np.bool_ else 1
    ells = [k for k, i in enumerate(index) if i is Ellipsis]
    if len(ells) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    if ells:
        k = ells[0]
        index = index[:k] + (slice(None),) * (ndim - consumed) + index[k + 1:]
    return index, basic


def _slice(t, dim, start, stop, step):
    size = t._array.shape[dim]
    if step <= 0:
        raise ValueError("step must be greater than zero")
    start, stop, _ = slice(start, stop, step).indices(size)
    stop = builtins.max(start, stop)
    if start == 0 and stop == size and step == 1:
        return t
    index = (slice(None),) * dim + (slice(start, stop, step),)
    out = make_view_of(t, t._array[index], lambda b: _slice(b, dim, start, stop, step))
    node = record(SliceBackward0, (t,), out)
    if node is not None:
        node.dim, node.start, node.length, node.step = dim, start, out._array.shape[dim], step
    return out


def _basic_getitem(t, index):
    dim = 0
    for i in index:
        if i is None:
            t = unsqueeze(t, dim)
            dim += 1
        elif isinstance(i, slice):
            t = _slice(t, dim, i.start, i.stop, 1 if i.step is None else i.step)
            dim += 1
        else:
            if t._array.ndim == 0:
                raise IndexError("invalid index of a 0-dim tensor. Use `tensor.item()` in Python "
                                 "or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")
            t = select(t, dim, builtins.int(i))
    return t


def __getitem__(self, index):
    idx, basic = _expand_index(index, self._array.ndim)
    if basic:
        out = _basic_getitem(self, idx)
        if out is self:  # `t[:]`, `t[...]`: still a new view object, as in PyTorch
            out = make_view_of(self, self._array.view(), lambda b: b[...])
            from .shape import AliasBackward0
            record(AliasBackward0, (self,), out)
        return out
    return _advanced_getitem(self, idx)


# ---- advanced indexing (integer and boolean tensors) ---------------------------------------------
def _array_index(i, dev):
    if isinstance(i, Tensor):
        if i._device != dev and i._array.ndim:
            raise RuntimeError(f"indices should be either on cpu or on the same device as the "
                               f"indexed tensor ({dev})")
        arr = i._array
        if arr.dtype.kind not in "biu":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return arr
    if isinstance(i, (list, tuple)):
        arr = np.asarray(i)
        if arr.dtype.kind == "f":
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
        return arr
    if isinstance(i, slice) and i.step is not None and i.step <= 0:
        raise ValueError("step must be greater than zero")
    return i


class IndexBackward0(Node):
    def backward(self, grad):
        from .creation import zeros
        full = zeros(self._meta[0][0], dtype=grad.dtype, device=grad.device)
        return index_put(full, self.index, grad, accumulate=True)


def _advanced_getitem(self, idx):
    np_idx = tuple(_array_index(i, self._device) for i in idx)
    try:
        arr = self._array[np_idx]
    except IndexError as e:
        raise IndexError(str(e).replace("axis", "dimension")) from None
    out = make_tensor(arr, self._device)
    node = record(IndexBackward0, (self,), out)
    if node is not None:
        node.index = np_idx
    return out


class IndexPutBackward0(Node):
    def backward(self, grad):
        g_self = grad
        if not self.accumulate:
            g_self = grad.clone()
            g_self._array[self.index] = 0
        g_values = make_tensor(grad._array[self.index], grad._device)
        if grad._requires_grad:  # double backward through an index: use the op
            g_values = grad[_tensor_index(self.index, grad)]
        return (g_self, g_values) if len(self._next) == 2 else g_self


def _tensor_index(np_idx, like):
    return tuple(make_tensor(i, like._device) if isinstance(i, np.ndarray) else i for i in np_idx)


def index_put(input, indices, values, accumulate=False):
    """Out of place `input[indices] = values` (or `+=` with accumulate); differentiable."""
    np_idx = tuple(_array_index(i, input._device) for i in indices) if isinstance(indices, tuple) \
        else (_array_index(indices, input._device),)
    arr = input._array.copy()
    vals = values._array if isinstance(values, Tensor) else values
    if isinstance(values, Tensor) and vals.dtype != arr.dtype:
        vals = vals.astype(arr.dtype)
    if accumulate:
        np.add.at(arr, np_idx, vals)  # repeated indices must add up
    else:
        arr[np_idx] = vals
    out = make_tensor(arr, input._device)
    inputs = (input, values) if isinstance(values, Tensor) else (input,)
    node = record(IndexPutBackward0, inputs, out)
    if node is not None:
        node.index, node.accumulate = np_idx, accumulate
    return out


# ---- writes ------------------------------------------------------------------------------------
def _tracked_write(self, value):
    return _grad_state.enabled and (
        self._requires_grad or (isinstance(value, Tensor) and value._requires_grad)
        or (self._base is not None and self._base._requires_grad))


def __setitem__(self, index, value):
    idx, basic = _expand_index(index, self._array.ndim)
    if isinstance(value, Tensor) and value._device != self._device and value._array.ndim:
        raise RuntimeError(f"expected device {self._device} but got device {value._device}")
    if not _tracked_write(self, value):
        np_idx = idx if basic else tuple(_array_index(i, self._device) for i in idx)
        self._array[np_idx] = value._host() if isinstance(value, Tensor) and \
            value._device.type != self._device.type else \
            (value._array if isinstance(value, Tensor) else value)
        self._vc.value += 1
        return
    if basic:
        target = _basic_getitem(self, idx)
        if target is self:
            target = make_view_of(self, self._array.view(), lambda b: b[...])
        if isinstance(value, Tensor):
            copy_(target, value)
        else:
            from .creation import fill_
            fill_(target, value)
        return
    value_t = value if isinstance(value, Tensor) else _scalar_like(value, self)
    inplace(self, lambda s: index_put(s, idx, value_t), (value_t,))


def _scalar_like(value, like):
    from .creation import tensor
    return tensor(value, dtype=like.dtype, device=like._device)


class CopyBackwards(Node):
    def backward(self, grad):
        from .creation import zeros_like
        return zeros_like(grad), grad


def copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        raise TypeError(f"copy_(): argument 'src' (position 1) must be Tensor, not "
                        f"{type(src).__name__}")
    return inplace(self, lambda s: _copied(s, src), (src,))


def _copied(s, src):
    """The value `s.copy_(src)` leaves in s: src moved, broadcast and cast to s."""
    from .conversion import _move
    from .pointwise import xp_of
    shape = s._array.shape
    if np.broadcast_shapes(shape, src._array.shape) != shape if _broadcastable(shape, src) else True:
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                           f"{list(_broadcast_or(shape, src))}")
    arr = xp_of(s).broadcast_to(_move(src._array, src._device, s._device), shape)
    out = make_tensor(arr.astype(s._array.dtype, copy=False), s._device)
    record(CopyBackwards, (s, src), out)
    return out


def _broadcastable(shape, src):
    try:
        np.broadcast_shapes(shape, src._array.shape)
        return True
    except ValueError:
        return False


def _broadcast_or(shape, src):
    return np.broadcast_shapes(shape, src._array.shape) if _broadcastable(shape, src) \
        else src._array.shape


def nonzero(input, *, as_tuple=False):
    idx = input._array.nonzero() if input._array.ndim else np.nonzero(np.atleast_1d(input._array))
    if as_tuple:
        return tuple(make_tensor(i.astype(np.int64), input._device) for i in idx)
    stacked = np.stack(idx, axis=1) if idx else np.zeros((0, 0), np.int64)
    return make_tensor(stacked.astype(np.int64).reshape(-1, builtins.max(input._array.ndim, 0)),
                       input._device)
