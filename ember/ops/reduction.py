"""Reductions: sum, mean, max/min, argmax/argmin, all/any, and the comparisons of whole
tensors (`equal`, `allclose`), with derivatives."""
import builtins
from collections import namedtuple

import numpy as np

from .. import dtypes as _dt
from .._tensor import Tensor, _wrap_dim, make_tensor
from ._graph import Node, record, write_out

__all__ = ["sum", "mean", "sum_to_size"]
METHODS = ["sum", "mean", "sum_to_size"]

return_types_max = namedtuple("max", ["values", "indices"])
return_types_min = namedtuple("min", ["values", "indices"])


def dims_of(dim, ndim):
    """`dim` (None, int, or sequence) as a sorted tuple of non-negative axes."""
    if dim is None:
        return tuple(range(ndim))
    if isinstance(dim, (builtins.int, np.integer)):
        return (_wrap_dim(builtins.int(dim), ndim),)
    axes = tuple(sorted(_wrap_dim(d, ndim) for d in dim))
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"dim {axes[0]} appears multiple times in the list of dims")
    return axes if axes else tuple(range(ndim))


def _restore_dims(grad, shape, axes, keepdim):
    """A reduced gradient reshaped so it broadcasts back over `shape`."""
    if not keepdim and axes:
        kept = list(shape)
        for a in axes:
            kept[a] = 1
        grad = grad.reshape(kept)
    return grad.expand(shape)


class SumBackward1(Node):
    """PyTorch names the full sum SumBackward0 and the sum over dims SumBackward1."""

    def backward(self, grad):
        return _restore_dims(grad, self._meta[0][0], self.axes, self.keepdim)


def _sum_dtype(input, dtype):
    if dtype is not None:
        return _dt.to_dtype(dtype)
    d = input.dtype
    return _dt.int64 if (d is _dt.bool or (not d.is_floating_point and not d.is_complex)) else d


def as_array(x):
    """A reduction's result as an array: NumPy returns scalars for full reductions."""
    return np.asarray(x) if isinstance(x, np.generic) else x


def sum(input, dim=None, keepdim=False, *, dtype=None, out=None):
    arr = input._array
    if dim is None and dtype is None and out is None and not keepdim and arr.dtype.kind in "fc":
        # the common full sum, without the general path's bookkeeping
        res = make_tensor(as_array(arr.sum()), input._device)
        node = record(SumBackward0, (input,), res)
        if node is not None:
            node.axes, node.keepdim = tuple(range(arr.ndim)), False
        return res
    d = _sum_dtype(input, dtype)
    if arr.dtype is not d.np:
        arr = arr.astype(d.np)
    axes = dims_of(dim, arr.ndim)
    res = make_tensor(as_array(arr.sum(axis=axes, keepdims=keepdim)), input._device)
    if out is not None:
        return write_out(out, res, "sum")
    node = record(SumBackward0 if dim is None else SumBackward1, (input,), res)
    if node is not None:
        node.axes, node.keepdim = axes, keepdim
    return res


def sum_to_size(input, *size):
    """Sum `input` down to `size`, the shape it was broadcast from."""
    size = tuple(size[0]) if len(size) == 1 and not isinstance(size[0], builtins.int) else size
    shape = input._array.shape
    lead = len(shape) - len(size)
    axes = tuple(range(lead)) + tuple(i + lead for i, s in enumerate(size)
                                      if s == 1 and shape[i + lead] != 1)
    if not axes:
        return input
    res = input.sum(axes, keepdim=True)
    return res.reshape(size) if lead else res


class MeanBackward1(Node):
    def backward(self, grad):
        shape = self._meta[0][0]
        n = 1
        for a in self.axes:
            n *= shape[a]
        return _restore_dims(grad, shape, self.axes, self.keepdim) / builtins.max(n, 1)


class SumBackward0(SumBackward1):
    pass


class MeanBackward0(MeanBackward1):
    pass


def _numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def mean(input, dim=None, keepdim=False, *, dtype=None, out=None):
    d = _dt.to_dtype(dtype) if dtype is not None else input.dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {_type_name(d)}")
    arr = input._array
    if arr.dtype is not d.np:
        arr = arr.astype(d.np)
    axes = dims_of(dim, arr.ndim)
    res = make_tensor(as_array(arr.mean(axis=axes, keepdims=keepdim)), input._device)
    if out is not None:
        return write_out(out, res, "mean")
    node = record(MeanBackward0 if dim is None else MeanBackward1, (input,), res)
    if node is not None:
        node.axes, node.keepdim = axes, keepdim
    return res


def _type_name(d):
    from ._graph import _type_name as name
    return name(d)
