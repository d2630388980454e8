"""The sparse COO tensor (`layout=torch.sparse_coo`).

A `SparseTensor` holds its coordinates (`_ind`: an int64 Tensor of shape (sparse_dim, nnz))
and its values (`_val`: a dense Tensor of shape (nnz, *dense_shape)); it never holds a dense
copy. Its `_array` is a small stand-in that only knows shape, dtype and size, so the
Tensor metadata (`shape`, `dtype`, `dim()`, `numel()`) works unchanged while no dense op can
silently read it as data.

Gradients flow to the values through the ordinary graph: a sparse tensor's `requires_grad`
and `grad_fn` are its values'. A sparse tensor made with `requires_grad=True` is a leaf;
its `.grad` is the sparse tensor of its values' gradient at its (unique) coordinates.
The ops live in `ember/ops/sparse.py`, the arithmetic in `ember/ops/sparse_arith.py`; the
methods that run them (`values`, `mm`, `t`, `add`, `mul`, `__repr__` ...) are bound onto
SparseTensor from there by the ops package, as every Tensor method is.

A sparse tensor is also what a dense parameter's `.grad` holds after an embedding lookup with
sparse=True; the autograd engine sums such gradients as PyTorch's does.
"""
import numpy as np

from ._layout import sparse_coo
from ._tensor import Tensor, _make

__all__ = ["SparseTensor"]


class _Meta:
    """What a sparse tensor's `_array` answers: shape, ndim, dtype, size (no data)."""

    __slots__ = ("shape", "dtype")

    def __init__(self, shape, dtype):
        self.shape = tuple(shape)
        self.dtype = dtype

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def __repr__(self):
        return f"<sparse_coo {self.shape} {self.dtype}>"


def make_sparse(indices, values, shape, coalesced=False, leaf=False):
    """A SparseTensor over an int64 index Tensor and a values Tensor (no checks, no copy)."""
    t = _make(SparseTensor, _Meta(shape, values._array.dtype), values._device)
    t._ind = indices
    t._val = values
    t._coalesced = bool(coalesced)
    t._leaf = leaf
    return t


class SparseBase:
    """What every sparse layout (COO, CSR ...) shares. Its autograd is its values' (`_val`):
    `requires_grad` and `grad_fn` are theirs; one made with requires_grad=True (`_leaf`) is a
    leaf whose `.grad` is its values' gradient in the tensor's own layout
    (`_grad_from_values`). Conversions go through `to`; host reads through `to_dense`."""

    __slots__ = ()

    def double(self):
        return self.to(values_dtype("float64"))

    def float(self):
        return self.to(values_dtype("float32"))

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None, non_blocking=False):
        return self.to("cuda" if device is None else device)

    def _host(self):
        return self.to_dense()._host()

    def numpy(self, *, force=False):
        raise RuntimeError("ember: call .to_dense() before .numpy() on a sparse tensor")

    @property
    def requires_grad(self):
        return self._val._requires_grad

    @requires_grad.setter
    def requires_grad(self, flag):
        if self._val._grad_fn is not None and not flag:
            self._val.requires_grad = flag  # PyTorch's non-leaf error
        if flag and not self._leaf:
            if self._val._grad_fn is not None:
                return
            self._val = self._val.detach()
            self._leaf = True
        self._val.requires_grad = flag

    def requires_grad_(self, requires_grad=True):
        self.requires_grad = requires_grad
        return self

    @property
    def grad_fn(self):
        return None if self._leaf else self._val.grad_fn

    @property
    def is_leaf(self):
        return self.grad_fn is None

    @property
    def grad(self):
        g = self._val._grad
        if g is None or not self._leaf:
            return None
        return self._grad_from_values(g)

    @grad.setter
    def grad(self, value):
        if value is not None:
            raise RuntimeError(f"ember: assigning .grad of a {self.layout} tensor is not supported")
        self._val._grad = None


class SparseTensor(SparseBase, Tensor):
    """A sparse COO tensor (`layout=torch.sparse_coo`)."""

    __slots__ = ("_ind", "_val", "_coalesced", "_leaf")

    # ---- layout -------------------------------------------------------------------------
    @property
    def is_sparse(self):
        return True

    @property
    def layout(self):
        return sparse_coo

    def sparse_dim(self):
        return self._ind._array.shape[0]

    def dense_dim(self):
        return self._val._array.ndim - 1

    def _nnz(self):
        return self._ind._array.shape[1]

    def is_coalesced(self):
        return self._coalesced

    def _indices(self):
        return self._ind

    def _values(self):
        # the same memory, outside autograd (PyTorch's `_values` is not differentiable)
        return self._val.detach()

    def indices(self):
        if not self._coalesced:
            raise RuntimeError("Cannot get indices on an uncoalesced tensor, please call "
                               ".coalesce() first")
        return self._ind

    def _grad_from_values(self, g):
        return self._grad_at_unique(g)  # ember/ops/sparse.py

    def detach(self):
        return make_sparse(self._ind, self._val.detach(), self._array.shape, self._coalesced)

    def clone(self, *, memory_format=None):
        return make_sparse(self._ind.clone(), self._val.clone(), self._array.shape,
                           self._coalesced)

    # ---- arithmetic: add, add_, mul, mul_, div, div_, neg, zero_, __radd__ and their operators
    # are bound from ember/ops/sparse_arith.py
    def sub(self, other, *, alpha=1):
        return self.add(other, alpha=-alpha)

    def sub_(self, other, *, alpha=1):
        return self.add_(other, alpha=-alpha)

    def __add__(self, other):
        return self.add(other)

    __sub__ = sub
    __isub__ = sub_

    # ---- conversions and products: values, mm, matmul, t and __repr__ are bound from
    # ember/ops/sparse.py (its to_dense and coalesce, which take both layouts, are Tensor's)
    def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
        if layout is not None and layout is not sparse_coo:
            return self._to_compressed(layout, blocksize, dense_dim)  # ops/sparse.py
        if blocksize is not None:  # (ops/sparse_compressed.refuse_blocksize's words)
            raise RuntimeError("to_sparse: conversion from Sparse to Sparse with blocksize "
                               "argument given is not supported")
        if sparse_dim is not None and sparse_dim != self.sparse_dim():
            raise RuntimeError(f"to_sparse: conversion from Sparse to Sparse with sparse_dim "
                               f"argument !=self.sparse_dim() is not supported")
        return self

    to_sparse_coo = to_sparse

    def to(self, *args, **kwargs):
        values = self._val.to(*args, **kwargs)
        if values is self._val:
            return self
        return make_sparse(self._ind.to(values._device), values, self._array.shape,
                           self._coalesced)

    def __reduce_ex__(self, proto):
        return (_rebuild_sparse, (self._ind, self._val, tuple(self._array.shape),
                                  self._coalesced))


def values_dtype(name):
    from . import dtypes
    return getattr(dtypes, name)


def _rebuild_sparse(indices, values, shape, coalesced):
    return make_sparse(indices, values, shape, coalesced)
