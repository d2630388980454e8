"""torch.sparse.softmax and log_softmax of sparse COO tensors: over each line along `dim` of
the specified entries only (the unspecified ones count as -inf: they take no share), on the
coalesced values; the result is coalesced, with the input's coordinates. Along a dense
dimension each stored value's slice is normalised as a whole. As everywhere in `sparse.py`,
the gradient goes to the values, in ember ops (so `create_graph=True` works)."""
import math

import numpy as np

from .._sparse import SparseTensor, make_sparse
from .._tensor import _wrap_dim, make_tensor
from ._accumulate import accumulate_flat, scatter_extreme
from ._graph import Node, record
from .sparse import _no_kernel, _unique_coords, _xp, coalesce

__all__ = ["sparse_softmax", "sparse_log_softmax"]


def _lines(s, d):
    """(line id (nnz,) of each stored entry: the entries that share every coordinate but the
    d-th, the number of lines)."""
    others = [k for k in range(s.sparse_dim()) if k != d]
    shape = tuple(s._array.shape[k] for k in others)
    dense = tuple(s._array.shape[s.sparse_dim():])
    keyed = make_sparse(s._ind[others], s._val, shape + dense, False)
    coords, inverse, _ = _unique_coords(keyed)
    return inverse.astype(np.int64), coords.shape[1]


def _line_sums(xp, a, line, count):
    """Sums of the rows of `a` (nnz, ...) over each line: (count, ...)."""
    width = math.prod(a.shape[1:])
    out = xp.zeros(count * width, a.dtype)
    if a.shape[0]:
        positions = line.reshape(-1, 1) * width + xp.arange(width, dtype=line.dtype)
        accumulate_flat(out, positions.reshape(-1), a.reshape(-1))
    return out.reshape((count,) + a.shape[1:])


def _normalised(xp, v, line, count, axis, log):
    """(log-)softmax of the values `v` over their lines (`line` ids) or, with `axis`, along
    that axis of each value."""
    if axis is not None:
        top = v.max(axis=axis, keepdims=True) if v.size else v
        shifted = v - top
        total = xp.exp(shifted).sum(axis=axis, keepdims=True)
        return shifted - xp.log(total) if log else xp.exp(shifted) / total
    top = xp.full((count,) + v.shape[1:], -np.inf, v.dtype)
    scatter_extreme(xp, top, line, v, True)
    shifted = v - top[line]
    e = xp.exp(shifted)
    total = _line_sums(xp, e, line, count)[line]
    return shifted - xp.log(total) if log else e / total


class _SparseSoftmaxNode(Node):
    """Saved: the result's values `y`; `line` ids and `count`, or a dense `axis`."""

    def _sums(self, t):
        if self.axis is not None:
            return t.sum(self.axis, keepdim=True)
        zeros = t.new_zeros((self.count,) + tuple(t.shape[1:]))
        return zeros.index_add(0, self.line, t).index_select(0, self.line)


class SparseSoftmaxBackward0(_SparseSoftmaxNode):
    def backward(self, grad):
        (y,) = self.saved_tensors
        return y * (grad - self._sums(grad * y))


class SparseLogSoftmaxBackward0(_SparseSoftmaxNode):
    def backward(self, grad):
        (y,) = self.saved_tensors
        return grad - y.exp() * self._sums(grad)


def _softmax(input, dim, dtype, log):
    op = "_sparse_log_softmax" if log else "_sparse_softmax"
    if not isinstance(input, SparseTensor):
        _no_kernel(input, op)
    d = _wrap_dim(dim, input._array.ndim)
    s = coalesce(input if dtype is None else input.to(dtype))
    xp, values = _xp(s), s._val
    axis = line = None
    count = 0
    if d >= s.sparse_dim():  # a dense dimension: within each stored value
        axis = d - s.sparse_dim() + 1
    else:
        line_ids, count = _lines(s, d)
        line = make_tensor(line_ids, s._device)
    out = _normalised(xp, values._array, None if line is None else line._array, count, axis,
                      log)
    res = make_tensor(out, s._device)
    node = record(SparseLogSoftmaxBackward0 if log else SparseSoftmaxBackward0, (values,), res)
    if node is not None:
        node.axis, node.line, node.count = axis, line, count
        node.save_for_backward(res)
    return make_sparse(s._ind, res, s._array.shape, True)


def sparse_softmax(input, dim, *, dtype=None):
    """torch.sparse.softmax: softmax along `dim` over the specified entries of a sparse COO
    tensor (the unspecified ones count as -inf)."""
    return _softmax(input, dim, dtype, False)


def sparse_log_softmax(input, dim, *, dtype=None):
    """torch.sparse.log_softmax: log_softmax along `dim` over the specified entries."""
    return _softmax(input, dim, dtype, True)
