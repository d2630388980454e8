"""Strided views and the in-place shape forms: `Tensor.unfold` (sliding windows),
`as_strided` / `as_strided_` (any size, stride and storage offset over the tensor's memory),
and `squeeze_ unsqueeze_ t_ transpose_ swapaxes_ swapdims_ as_strided_`, which change the
tensor's own shape and strides.

ember's "storage" of a tensor is the memory of its root base (`_base`, or itself); offsets and
strides are counted in elements from the root's first element, as `storage_offset()` does.

An in-place shape op keeps the tensor object and its memory: its array becomes the view the
out-of-place op makes, its version is bumped, and under autograd its grad_fn becomes that
op's node under PyTorch's in-place name (`TBackward1`); a view remembers the new op in its
replay chain, so a later write through it still reaches its base (CopySlices).
"""
import builtins
import functools
import math
import operator
import warnings

import numpy as np

from .. import _dtype_casts as _casts, _state
from .._state import grad as _grad_state
from .._storage import span as _span
from .._tensor import _wrap_dim, make_tensor, xp_of
from ._dual import carry_tangent
from ._graph import Node, record
from ._writes import _check_leaf_inplace
from ._varargs import varargs_or_keyword
from .shape import make_view_of, squeeze, transpose, t, unsqueeze, _size_args

__all__ = ["as_strided"]
METHODS = ["unfold", "as_strided", "as_strided_", "squeeze_", "unsqueeze_", "t_",
           "transpose_", "swapaxes_", "swapdims_", "resize_", "resize_as_",
           "resize", "resize_as"]


def _stride_view(xp, arr, shape, strides_el, offset_el=0):
    """A view of `arr`'s memory from element `offset_el` (counted from arr's first element)
    with `shape` and element strides `strides_el`; writable when `arr` is."""
    item = arr.itemsize
    flat = _casts.as_strided(xp, arr, (builtins.max(_span(arr), offset_el + 1),), (item,))
    start = flat[offset_el:]
    return _casts.as_strided(xp, start, tuple(shape), tuple(s * item for s in strides_el))


def _storage_of(t):
    """(root tensor, the array whose memory is t's storage)."""
    root = t._base if t._base is not None else t
    return root, root.__dict__.get("_storage", root._array)


# ---- unfold -------------------------------------------------------------------------------------
class UnfoldBackward0(Node):
    def backward(self, grad):
        return _unfold_backward(grad, self._meta[0][0], self.dim, self.size, self.step)


class UnfoldBackwardBackward0(Node):
    def backward(self, grad):
        return grad.unfold(self.dim, self.size, self.step)


def _unfold_backward(grad, shape, dim, size, step):
    """The input's gradient: each window's gradient added back where the window read."""
    xp = xp_of(grad)
    shape1 = shape if shape else (1,)
    res = xp.zeros(shape1, grad._array.dtype)
    g = grad._array
    n = g.shape[dim] if shape else g.shape[0] and 1
    lead = (slice(None),) * dim
    for k in range(size):
        part = g[..., k] if shape else g[k:k + 1]
        res[lead + (slice(k, k + step * (n - 1) + 1, step),)] += part
    out = make_tensor(res.reshape(shape), grad._device)
    node = record(UnfoldBackwardBackward0, (grad,), out)
    if node is not None:
        node.dim, node.size, node.step = dim, size, step
    return out


def unfold(self, dimension, size, step):
    arr = self._array
    shape = arr.shape
    d = _wrap_dim(dimension, arr.ndim)
    n = shape[d] if shape else 1
    if size > n:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {n} but size is {size}")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    item = arr.itemsize
    strides = [st // item for st in arr.strides]
    if shape:
        new_shape = list(shape)
        new_shape[d] = (n - size) // step + 1
        new_strides = list(strides)
        new_strides[d] = strides[d] * step
        new_shape.append(size)
        new_strides.append(strides[d])
    else:
        new_shape, new_strides = [size], [1]
    view = _xp_view(self, new_shape, new_strides)
    out = make_view_of(self, view, lambda b: b.unfold(d, size, step))
    node = record(UnfoldBackward0, (self,), out)
    if node is not None:
        node.dim, node.size, node.step = d, size, step
    return out


def _xp_view(t, shape, strides_el):
    arr = t._array
    xp = xp_of(t)
    return _casts.as_strided(xp, arr, tuple(shape), tuple(s * arr.itemsize for s in strides_el))


# ---- as_strided ---------------------------------------------------------------------------------
class AsStridedBackward0(Node):
    def backward(self, grad):
        from .creation import zeros
        storage = zeros(self.storage_numel, dtype=grad.dtype, device=grad.device)
        out_pos = _positions(grad, grad.shape, self.stride, self.offset)
        storage = storage.index_add(0, out_pos, grad.reshape(-1))
        in_shape = self._meta[0][0]
        in_pos = _positions(grad, in_shape, self.in_stride, self.in_offset)
        return storage[in_pos].reshape(in_shape)


def _positions(like, shape, strides, offset):
    """The storage positions (flat, C order) of a tensor of `shape` with element `strides`
    starting at `offset`, as an int64 tensor."""
    xp = xp_of(like)
    pos = xp.full((), offset, np.int64)
    for i, (n, st) in enumerate(zip(shape, strides)):
        pos = pos[..., None] + xp.arange(n, dtype=np.int64) * st
    return make_tensor(xp.ascontiguousarray(pos).reshape(-1), like._device)


def _check_geometry(size, stride, offset, storage_numel, item):
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if builtins.any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    if builtins.any(n < 0 for n in size):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    if 0 in size:
        return
    need = offset + 1 + builtins.sum((n - 1) * s for n, s in zip(size, stride))
    if need > storage_numel:
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {offset}, and itemsize {item} requiring a storage size of "
                           f"{need * item} are out of bounds for storage of size "
                           f"{storage_numel * item}")


def as_strided(input, size, stride, storage_offset=None):
    size, stride = (_size_args((size,), "as_strided"),
                    _size_args((stride,), "as_strided", "stride", 2))
    root, storage = _storage_of(input)
    offset = input.storage_offset() if storage_offset is None else builtins.int(storage_offset)
    numel = _span(storage)
    item = input._array.itemsize
    _check_geometry(size, stride, offset, numel, item)
    arr = _stride_view(xp_of(input), storage, size, stride, offset)
    out = make_view_of(input, arr, lambda b: b.as_strided(size, stride, offset))
    if not arr.size:
        out._empty_offset = offset
    node = record(AsStridedBackward0, (input,), out)
    if node is not None:
        node.stride, node.offset, node.storage_numel = stride, offset, numel
        node.in_stride, node.in_offset = tuple(input.stride()), input.storage_offset()
    return out


# ---- in-place shape forms -----------------------------------------------------------------------
_RENAMED = {}


def _renamed(node, name):
    cls = type(node)
    sub = _RENAMED.get((cls, name))
    if sub is None:
        sub = _RENAMED[(cls, name)] = type(name, (cls,), {})
    node.__class__ = sub


def _restride(self, op, name):
    """`self` becomes `op(self)` (a view op), in place: same object and memory."""
    tracked = _grad_state.enabled and (self._requires_grad or (
        self._base is not None and self._base._requires_grad))
    if tracked:
        _check_leaf_inplace(self)
    res = op(self)
    if self._base is None and "_storage" not in self.__dict__:
        self.__dict__["_storage"] = self._array
    self._array = res._array
    if res._empty_offset is not None or self._empty_offset is not None:
        self._empty_offset = res._empty_offset
    self._vc.value += 1
    if res._fw_grad is not None:
        carry_tangent(self, res)
    if res._grad_fn is not None:
        _renamed(res._grad_fn, name)
        self._grad_fn, self._output_nr, self._requires_grad = res._grad_fn, 0, True
    if self._base is not None:
        parent = self._view_fn
        if parent is not None:
            self._view_fn = lambda b: op(parent(b))
        self._fn_version = self._vc.value
    return self


def squeeze_(self, dim=None):
    name = ("SqueezeBackward3" if dim is None else
            "SqueezeBackward4" if isinstance(dim, (builtins.int, np.integer)) else "SqueezeBackward5")
    if dim is not None:  # PyTorch's IndexError before anything changes
        for d in ((dim,) if isinstance(dim, (builtins.int, np.integer)) else dim):
            _wrap_dim(d, self._array.ndim)
    return _restride(self, lambda x: squeeze(x, dim), name)


def unsqueeze_(self, dim):
    d = _wrap_dim(dim, self._array.ndim + 1)
    return _restride(self, lambda x: unsqueeze(x, d), "UnsqueezeBackward1")


def t_(self):
    n = self._array.ndim
    if n > 2:
        raise RuntimeError(f"t_() expects a tensor with <= 2 dimensions, but self is {n}D")
    return _restride(self, t, "TBackward1")


def transpose_(self, dim0, dim1):
    n = self._array.ndim
    d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    return _restride(self, lambda x: transpose(x, d0, d1), "TransposeBackward1")


swapdims_ = transpose_


def swapaxes_(self, axis0, axis1):
    return transpose_(self, axis0, axis1)


def as_strided_(self, size, stride, storage_offset=None):
    size, stride = (_size_args((size,), "as_strided_"),
                    _size_args((stride,), "as_strided_", "stride", 2))
    offset = self.storage_offset() if storage_offset is None else builtins.int(storage_offset)
    return _restride(self, lambda x: as_strided(x, size, stride, offset), "AsStridedBackward1")


# ---- resize_ ------------------------------------------------------------------------------------
def _offset_in(arr, storage):
    from .._tensor import _data_ptr
    return (_data_ptr(arr) - _data_ptr(storage)) // arr.itemsize


def resize_(self, *args, size=None, memory_format=None):
    """New contiguous sizes over the same storage from the same offset; a storage too small
    grows (new memory holding the old contents, the rest zeros, or NaN under determinism) under the tensor and its base.
    Views made earlier of the base keep the old memory (ember has no shared storage object)."""
    if self._requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    sizes = _size_args(varargs_or_keyword(args, size, "size", "resize_"), "resize_")
    if builtins.any(n < 0 for n in sizes):
        raise RuntimeError("numel: integer multiplication overflow")
    if sizes == self._array.shape:
        return self
    xp = xp_of(self)
    root, storage = _storage_of(self)
    offset = self.storage_offset()
    numel = math.prod(sizes)
    strides, step = [], 1
    for n in reversed(sizes):
        strides.append(step)
        step *= builtins.max(n, 1)
    strides.reverse()
    if "_storage" not in root.__dict__:
        root.__dict__["_storage"] = storage
    cap = _span(storage)
    if numel and offset + numel > cap:
        grown = _state.uninitialized(xp, offset + numel, storage.dtype) \
            if _state.deterministic.enabled else xp.zeros(offset + numel, storage.dtype)
        if cap:
            grown[:cap] = _stride_view(xp, storage, (cap,), (1,))
        if root is not self:  # the base sees the grown storage too, as PyTorch's does
            item = root._array.itemsize
            root._array = _stride_view(xp, grown, root._array.shape,
                                       [st // item for st in root._array.strides],
                                       _offset_in(root._array, storage))
        root.__dict__["_storage"] = storage = grown
    self._array = _stride_view(xp, storage, sizes, strides, offset)
    self._vc.value += 1
    return self


def resize_as_(self, the_template, memory_format=None):
    return resize_(self, the_template.shape)


# ---- the deprecated out-of-place resize ------------------------------------------------------
def _autograd_resize(self, sizes):
    """PyTorch's autograd `Resize`: only a new shape for the same number of elements (a view
    of a contiguous `self`), differentiable as that view."""
    numel = functools.reduce(operator.mul, sizes, 1)
    if self.numel() != numel:
        raise RuntimeError(f"requested resize to {'x'.join(map(str, sizes))} ({numel} elements "
                           f"in total), but the given tensor has a size of "
                           f"{'x'.join(map(str, self.shape))} ({self.numel()} elements). "
                           "autograd's resize can only change the shape of a given tensor, while "
                           "preserving the number of elements. ")
    return self.contiguous().view(*sizes)


def resize(self, *sizes):
    warnings.warn("non-inplace resize is deprecated", stacklevel=2)
    return _autograd_resize(self, sizes)


def resize_as(self, tensor):
    warnings.warn("non-inplace resize_as is deprecated", stacklevel=2)
    return _autograd_resize(self, tuple(tensor.shape))
