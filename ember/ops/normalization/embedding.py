"""Embedding lookups: embedding (with max_norm renormalisation), embedding_bag (sum, mean, max
over bags) and one_hot.

Embedding gradients accumulate rows with `bincount` on the host and a deterministic sorted
segment sum on a device (`_accumulate.add_rows_on_device`); the accumulation and the row gather are each other's adjoints, both recorded,
so embedding differentiates twice.
"""
import builtins
import math
import warnings

import numpy as np

from ... import dtypes as _dt
from ..._dtype_casts import cast_if_needed
from ..._memory_format import c_ordered
from ..._tensor import make_tensor, xp_of
from ...device import backend_of, check_data, checks_on_host
from .._device_kernels import Kernel, trial_verdict, usable
from .._graph import Node, record
from .._accumulate import add_rows_on_device, bincount_sized, scatter_extreme
from ._common import _opmath, _prod
from ._fused import shaped

__all__ = [
    "embedding", "embedding_bag", "one_hot",
]


# ---- embedding ------------------------------------------------------------------------------
class _RowAccumulate(Node):
    """out[n, D] = sum of value rows (M, D) into rows `index`: the adjoint of a row gather."""

    def backward(self, grad):
        return _gather_rows(grad, self.index, self.scale)


class EmbeddingDenseBackward0(_RowAccumulate):
    pass


class _RowGather(Node):
    def backward(self, grad):
        return _accumulate_rows(grad, self.index, self.num_rows, self.scale)


class EmbeddingBackward0(_RowGather):
    sparse = False

    def backward(self, grad):
        rows = grad.reshape(-1, grad.shape[-1])
        if self.sparse:
            if self.by_freq:
                raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with "
                                   "sparse gradients")
            return _sparse_rows(rows, self.index, self.num_rows, self.padding_idx)
        return _accumulate_rows(rows, self.index, self.num_rows, self.scale)


def _sparse_rows(rows, index, num_rows, padding_idx):
    """PyTorch's sparse embedding gradient: one entry per looked-up index, in lookup order,
    without those of `padding_idx` (uncoalesced: repeated indices stay repeated)."""
    from ..._sparse import make_sparse
    xp = xp_of(rows)
    if padding_idx is not None:  # selected (a copy) whether or not any row is dropped
        keep = index != padding_idx
        index = index[keep]
        rows = rows.index_select(0, make_tensor(xp.nonzero(keep)[0].astype(np.int64),
                                                rows._device))
    ind = make_tensor(index.astype(np.int64).reshape(1, -1), rows._device)
    return make_sparse(ind, rows, (num_rows, rows.shape[-1]), coalesced=index.size <= 1)


def _accumulate_rows(values, index, num_rows, scale=None, node_cls=EmbeddingDenseBackward0):
    """rows[index[i]] += values[i] * scale[i] (index: int array (M,), values (M, *rest))."""
    xp = xp_of(values)
    v = values._array
    rest = v.shape[1:]
    d = _prod(rest)
    flat = shaped(v, (v.shape[0], d))
    if scale is not None:
        flat = flat * scale.reshape(-1, 1).astype(flat.dtype)
    if d == 0 or v.shape[0] == 0:
        out = xp.zeros((num_rows,) + rest, dtype=v.dtype)
    elif xp is not np:  # a device sums whole rows (log2(M) passes, not log2(M * D))
        out = xp.zeros((num_rows, d), dtype=v.dtype)
        add_rows_on_device(out, index.reshape(-1), flat)
    else:
        pos = (index.reshape(-1, 1) * d + xp.arange(d).reshape(1, d)).reshape(-1)
        data = flat.reshape(-1)
        if data.dtype.kind == "c":  # NumPy's bincount takes no complex weights
            out = (np.bincount(pos, data.real, num_rows * d)
                   + 1j * np.bincount(pos, data.imag, num_rows * d))
        else:
            out = bincount_sized(xp, pos, data if data.dtype.kind == "c" else
                                 data.astype(np.float64), num_rows * d)
        out = out.reshape((num_rows,) + rest).astype(v.dtype)  # (a fresh array: see below)
    # no reshape of a device's (rows, D) table to its own shape: that is a view, which
    # gradient accumulation would copy, the array being no longer its own
    res = make_tensor(out if out.shape == (num_rows,) + rest else
                      out.reshape((num_rows,) + rest), values._device)
    node = record(node_cls, (values,), res)
    if node is not None:
        node.index, node.scale = index, scale
    return res


def _gather_rows(table, index, scale=None, node_cls=_RowGather):
    """table[index] (* scale per row), recorded."""
    xp = xp_of(table)
    t = table._array
    out = xp.take(t, index, axis=0)
    if scale is not None:
        out = out * scale.reshape((-1,) + (1,) * (t.ndim - 1)).astype(t.dtype)
    res = make_tensor(out, table._device)
    node = record(node_cls, (table,), res)
    if node is not None:
        node.index, node.scale, node.num_rows = index, scale, t.shape[0]
    return res


_ROWS_ASSERTION = "embedding: Assertion `srcIndex < srcSelectDimSize`"


def _rows_in_range(idx, n, dev, table):
    """Row indices (int64) checked against a table of `n` rows (`table`, its array): on a
    device by a device-side assert, meanwhile wrapped into range so that the gathers and the
    backward's scatter stay inside the table."""
    xp = backend_of(dev).xp
    if not checks_on_host(dev) and n and usable(xp, table):
        safe, bad = _ROWS_IN_RANGE(xp, idx, n)  # one kernel where four array calls ran
        check_data(dev, bad, IndexError("index out of range in self"), _ROWS_ASSERTION)
        return safe
    check_data(dev, (idx < 0) | (idx >= n), IndexError("index out of range in self"),
               _ROWS_ASSERTION)
    return idx if checks_on_host(dev) or not n else idx % n


_ROWS_IN_RANGE = Kernel("ember_rows_in_range", "int64 idx, int64 n", "int64 safe, bool bad",
                        "bad = idx < 0 || idx >= n; safe = (idx % n + n) % n",
                        trial=lambda xp, dtype: _rows_in_range_trial(xp))


def _rows_in_range_trial(xp):
    """_ROWS_IN_RANGE on a small case (negative, in range, past the end) against NumPy's;
    a difference fails the next read as a device-side assert does."""
    idx = np.array([-5, -1, 0, 3, 4, 9])
    got_safe, got_bad = _ROWS_IN_RANGE(xp, xp.asarray(idx), 4)
    bad = (got_safe != xp.asarray(idx % 4)) | (got_bad != xp.asarray((idx < 0) | (idx >= 4)))
    trial_verdict(xp, bad, "ember_rows_in_range", "embedding's index check")


def _check_indices(indices, fname):
    if indices.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"{indices.type()} instead (while checking arguments for "
                           f"{fname})")


def _embedding_renorm(weight, idx, max_norm, norm_type):
    xp = xp_of(weight)
    rows = xp.unique(idx.reshape(-1))
    w = weight._array
    sel = w[rows]
    if norm_type == math.inf:
        norms = xp.abs(sel).max(axis=1)
    else:
        norms = (xp.abs(sel) ** norm_type).sum(axis=1) ** (1.0 / norm_type)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(w.dtype)
    w[rows] = sel * scale.reshape(-1, 1)
    weight._vc.value += 1


def _embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse=False):
    _check_indices(indices, "embedding")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    xp = xp_of(weight)
    idx = shaped(cast_if_needed(indices._array, np.int64), (indices._array.size,))
    n = weight.shape[0]
    idx = _rows_in_range(idx, n, weight._device, weight._array)
    out = shaped(xp.take(weight._array, idx, axis=0), tuple(indices.shape) + (weight.shape[1],))
    res = make_tensor(out, weight._device)
    node = record(EmbeddingBackward0, (weight,), res)
    if node is not None:
        scale = None
        if padding_idx is not None and padding_idx >= 0:
            scale = (idx != padding_idx).astype(np.float64)
        if scale_grad_by_freq:
            counts = bincount_sized(xp, idx, None, n)
            freq = 1.0 / counts[idx]
            scale = freq if scale is None else scale * freq
        node.index, node.scale, node.num_rows = idx, scale, n
        if sparse:
            node.sparse, node.by_freq, node.padding_idx = True, scale_grad_by_freq, padding_idx
    return res


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """`F.embedding(input, weight, ...)`; also `torch.embedding(weight, indices,
    padding_idx=-1, scale_grad_by_freq=False, sparse=False)` (told apart by dtypes)."""
    if (input.dtype.is_floating_point or input.dtype.is_complex) and \
            not (weight.dtype.is_floating_point or weight.dtype.is_complex):
        pad = -1 if padding_idx is None else padding_idx
        sgbf = max_norm if isinstance(max_norm, bool) else scale_grad_by_freq
        # torch.embedding(weight, indices, padding_idx, scale_grad_by_freq, sparse)
        sp = norm_type if isinstance(max_norm, bool) and isinstance(norm_type, bool) else sparse
        return _embedding(input, weight, pad if pad >= 0 else None, sgbf, bool(sp))
    if padding_idx is not None:
        if padding_idx > 0:
            if padding_idx >= weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
        elif padding_idx < 0:
            if padding_idx < -weight.size(0):
                raise AssertionError("Padding_idx must be within num_embeddings")
            padding_idx = weight.size(0) + padding_idx
    if max_norm is not None:
        _check_indices(input, "embedding")
        _embedding_renorm(weight, input._array.astype(np.int64, copy=False), max_norm,
                          norm_type)
    return _embedding(weight, input, padding_idx, scale_grad_by_freq, bool(sparse))


class EmbeddingBagBackward0(Node):
    sparse = False

    def _sparse_weight_grad(self, per_row, psw, num_rows):
        if self.by_freq:
            raise RuntimeError("embedding_backward: scale_grad_by_freq not supported with "
                               "sparse gradients")
        if self.mode == "mean":
            per_row = per_row / make_tensor(self.bag_size.reshape(-1, 1).astype(
                per_row._array.dtype), per_row._device)
        if psw is not None:
            per_row = per_row * psw.reshape(-1, 1)
        return _sparse_rows(per_row, self.idx, num_rows, self.padding_idx)

    def backward(self, grad):
        saved = self.saved_tensors
        weight = saved[0]
        psw = saved[1] if len(saved) > 1 else None
        gw = gp = None
        if self.mode == "max":
            return _max_grad(grad, self.argrow, weight.shape[0])
        # grad of each looked-up row: its bag's gradient, scaled
        per_row = _gather_rows(grad, self.bag, None)
        if self._next[0][0] is not None and self.sparse:
            gw = self._sparse_weight_grad(per_row, psw, weight.shape[0])
        elif self._next[0][0] is not None:
            scaled = per_row * psw.reshape(-1, 1) if psw is not None else per_row
            gw = _accumulate_rows(scaled, self.idx, weight.shape[0], self.scale)
        if psw is not None and self._next[1][0] is not None:
            rows = _gather_rows(weight, self.idx, self.scale)
            gp = (per_row * rows).sum(-1).reshape(self.psw_shape)
        return (gw, gp) if psw is not None else gw


def _max_grad(grad, argrow, num_rows):
    """grad (B, D) into the rows that were the maxima: argrow (B, D), -1 where none."""
    xp = xp_of(grad)
    b, d = grad.shape
    valid = (argrow >= 0).reshape(-1)
    rows = xp.where(valid, argrow.reshape(-1), 0)
    g = grad.reshape(b * d, 1)
    # one value per (bag, column): accumulate the column-expanded values
    col = xp.tile(xp.arange(d), b)
    pos = rows * d + col
    gcol = g * make_tensor(valid.astype(g._array.dtype).reshape(-1, 1), grad._device)
    out = _accumulate_rows(gcol, pos, num_rows * d, None)
    return out.reshape(num_rows, d)


def _bag_maxima(xp, rows, idx, bag, valid, nbags):
    """Each bag's column-wise maximum of its valid rows (0 for an empty bag), the index of the
    row behind each maximum (the first in the bag reaching it; -1 for an empty bag) and the
    bag sizes: by scatter-max and scatter-min, so no shape depends on the data (no read)."""
    m, d = rows.shape
    vals = xp.where(valid[:, None], _opmath(rows), -xp.inf)
    best = xp.full((nbags, d), -xp.inf, dtype=vals.dtype)
    scatter_extreme(xp, best, bag, vals, largest=True)
    reached = best[bag]
    hit = valid[:, None] & ((vals == reached) | (xp.isnan(vals) & xp.isnan(reached)))
    first = xp.full((nbags, d), m, dtype=np.int64)
    xp.minimum.at(first, bag, xp.where(hit, xp.arange(m, dtype=np.int64)[:, None], m))
    counts = bincount_sized(xp, xp.where(valid, bag, nbags), None, nbags + 1)[:nbags]
    empty = (counts == 0)[:, None]
    out = xp.where(empty, 0, best).astype(rows.dtype)
    argrow = xp.take(idx, xp.minimum(first, m - 1)) if m else first
    return out, xp.where(empty | (first >= m), -1, argrow), counts


def _embedding_bag(weight, indices, offsets, scale_grad_by_freq, mode, per_sample_weights,
                   include_last_offset, padding_idx, sparse=False):
    _check_indices(indices, "embedding_bag")
    xp = xp_of(weight)
    idx = shaped(cast_if_needed(indices._array, np.int64), (indices._array.size,))
    off = offsets._array.astype(np.int64, copy=False).reshape(-1)
    n, d = weight.shape
    m = idx.size
    idx = _rows_in_range(idx, n, weight._device, weight._array)
    starts = off[:-1] if include_last_offset else off
    nbags = starts.size
    if padding_idx is not None and padding_idx < 0:
        padding_idx = n + padding_idx
    bag = xp.searchsorted(starts, xp.arange(m), side="right") - 1 if m else idx
    if include_last_offset and m:
        bag = xp.minimum(bag, nbags - 1)
    valid = (idx != padding_idx) if padding_idx is not None else xp.ones(m, dtype=bool)
    valid = valid & (bag >= 0)
    bag = xp.where(bag >= 0, bag, 0)
    w = weight._array
    rows = xp.take(w, idx, axis=0)
    if mode == "max":
        out, argrow, counts = _bag_maxima(xp, rows, idx, bag, valid, nbags)
        res = make_tensor(out, weight._device)
        node = record(EmbeddingBagBackward0, (weight,), res)
        if node is not None:
            node.mode, node.argrow = "max", argrow
            node.save_for_backward(weight)
        return res, bag, counts, argrow
    scale = valid.astype(np.float64)
    counts = bincount_sized(xp, bag, scale, nbags) if m else xp.zeros(nbags)
    if mode == "mean":
        scale = scale / xp.maximum(xp.take(counts, bag), 1) if m else scale
    if scale_grad_by_freq and m:
        freq = bincount_sized(xp, idx, None, n)
        grad_scale = scale / xp.take(freq, idx)
    else:
        grad_scale = scale
    contrib = rows.astype(np.float64) * scale[:, None] if m else rows
    psw = per_sample_weights
    if psw is not None:
        contrib = contrib * psw._array.reshape(-1, 1).astype(np.float64)
    pos = (bag.reshape(-1, 1) * d + xp.arange(d).reshape(1, d)).reshape(-1)
    out = bincount_sized(xp, pos, contrib.reshape(-1), nbags * d) if m and d else \
        xp.zeros(nbags * d)
    res = make_tensor(out.reshape(nbags, d).astype(w.dtype), weight._device)
    inputs = (weight,) if psw is None else (weight, psw)
    node = record(EmbeddingBagBackward0, inputs, res)
    if node is not None:
        node.mode, node.bag, node.idx, node.scale = mode, bag, idx, grad_scale
        node.psw_shape = tuple(psw.shape) if psw is not None else None
        node.save_for_backward(*inputs)
        if sparse:
            node.sparse, node.by_freq, node.padding_idx = True, scale_grad_by_freq, padding_idx
            node.bag_size = xp.maximum(xp.take(counts, bag), 1) if m else counts
    return res, bag, counts, None


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False, per_sample_weights=None,
                  include_last_offset=False, padding_idx=None):
    """`F.embedding_bag` (`torch.embedding_bag`, the native form with integer modes and four
    results, is in aten_forms.py)."""
    if weight.dtype is _dt.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and input.size() != per_sample_weights.size():
        raise ValueError(f"embedding_bag: If per_sample_weights ({per_sample_weights.shape}) is "
                         f"not None, then it must have the same shape as the input "
                         f"({input.shape})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError("if input is 2D, then offsets has to be None, as input is treated "
                             "is a mini-batch of fixed length sequences. However, found offsets "
                             f"of type {type(offsets)}")
        xp = xp_of(input)
        offsets = make_tensor(xp.arange(0, input.numel(), builtins.max(input.size(1), 1),
                                        dtype=np.int64), input._device)
        include_last_offset = False
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        if offsets.numel():  # (on a device, checked with the next read: no sync here)
            check_data(offsets._device, offsets._array[:1] != 0, RuntimeError(
                "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to "
                "start from position 0."), "embedding_bag: Assertion `offsets[0] == 0`")
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if mode == "max":
        if scale_grad_by_freq:
            raise ValueError("max mode does not support scaling the gradient by the frequency")
        if sparse:
            raise ValueError("max mode does not support sparse weights")
    if max_norm is not None:
        _embedding_renorm(weight, input._array.astype(np.int64, copy=False), max_norm,
                          norm_type)
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError("embedding_bag: per_sample_weights was not None. "
                                  "per_sample_weights is only supported for mode='sum' "
                                  f"(got mode='{mode}'). Please open a feature request on "
                                  "GitHub.")
    res = _embedding_bag(weight, input, offsets, scale_grad_by_freq, mode,
                               per_sample_weights, include_last_offset, padding_idx,
                               bool(sparse))[0]
    return res


def one_hot(input, num_classes=-1):
    # `input`, as PyTorch's parser names it (its stubs and documentation say `tensor`, which
    # the parser refuses)
    if input.dtype is not _dt.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    xp = xp_of(input)
    arr = input._array
    if num_classes == -1:
        if arr.size == 0:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
        num_classes = int(arr.max()) + 1
    # PyTorch's CUDA one_hot leaves the range to its scatter kernel's device-side assert
    assertion = 'one_hot: Assertion `idx_dim >= 0 && idx_dim < index_size && "index out of bounds"`'
    check_data(input._device, arr < 0, RuntimeError("Class values must be non-negative."),
               assertion)
    check_data(input._device, arr >= num_classes,
               RuntimeError("Class values must be smaller than num_classes."), assertion)
    out = (c_ordered(arr)[..., None] == xp.arange(num_classes)).astype(np.int64)
    return make_tensor(out, input._device)  # contiguous whatever the indices' layout, as PyTorch's
