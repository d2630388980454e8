"""Arithmetic on sparse COO tensors, as PyTorch's: sparse + sparse (PyTorch's merge of the two
coordinate lists, which sums entries only where the lists meet at equal coordinates and so
leaves uncoalesced inputs uncoalesced), dense + sparse, scaling by a number, negation,
zeroing, and a dense tensor masked by a sparse one (`sparse_mask`).

Values stay ordinary Tensors in the graph, so gradients reach them through these ops.
"""
import numpy as np

from .._sparse import SparseTensor, make_sparse
from .._tensor import Tensor, make_tensor
from ._numpy_names import for_users
from .sparse import _SegmentSum, _host, _through, _named, _xp, coalesce

AddBackward0 = type("AddBackward0", (_SegmentSum,), {})
SparseMaskBackward0 = _named("SparseMaskBackward0")


def _size_list(t):
    return list(t._array.shape)


def _keys(s):
    """Each coordinate of `s` as one integer, ordered as PyTorch compares coordinates."""
    ind = _host(s._ind._array)
    if ind.shape[0] == 0:
        return np.zeros(ind.shape[1], np.int64)
    return np.ravel_multi_index(tuple(ind), s._array.shape[:ind.shape[0]]).astype(np.int64)


def _run(keys, start, bound):
    """How many keys from `start` on are smaller than `bound` (windows that double)."""
    n, width, count = keys.shape[0], 16, 0
    while start + count < n:
        window = keys[start + count:start + count + width] < bound
        if not window.all():
            return count + int(np.argmin(window))
        count += window.shape[0]
        width *= 2
    return count


def _merge_positions(kt, ks):
    """Output slot of every entry of two coordinate lists merged as PyTorch merges them:
    the smaller head goes first, equal heads share one slot."""
    nt, ns = kt.shape[0], ks.shape[0]
    pos_t, pos_s = np.empty(nt, np.int64), np.empty(ns, np.int64)
    i = j = r = 0
    while i < nt and j < ns:
        a, b = kt[i], ks[j]
        if a < b:
            n = _run(kt, i, b)
            pos_t[i:i + n] = np.arange(r, r + n)
            i, r = i + n, r + n
        elif a > b:
            n = _run(ks, j, a)
            pos_s[j:j + n] = np.arange(r, r + n)
            j, r = j + n, r + n
        else:
            pos_t[i] = pos_s[j] = r
            i, j, r = i + 1, j + 1, r + 1
    pos_t[i:] = np.arange(r, r + nt - i)
    r += nt - i
    pos_s[j:] = np.arange(r, r + ns - j)
    return pos_t, pos_s, r + ns - j


def add_sparse(t, s, alpha=1):
    """`t + alpha * s` for two sparse COO tensors (a new sparse tensor)."""
    if not isinstance(s, SparseTensor):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    if tuple(t._array.shape) != tuple(s._array.shape):
        raise RuntimeError(f"add: expected sizes of 'self' and 'other' to match, but "
                           f"{_size_list(t)} != {_size_list(s)}")
    from ..dtypes import result_type
    dtype = result_type(t._val, s._val)
    tv, sv = t._val.to(dtype), s._val.to(dtype)
    if s._nnz() == 0:
        return make_sparse(t._ind.clone(), tv.clone(), t._array.shape, t._coalesced)
    if t._nnz() == 0:
        return make_sparse(s._ind.clone(), sv * alpha, s._array.shape, s._coalesced)
    if t.sparse_dim() != s.sparse_dim():
        raise RuntimeError(f"add: expected 'self' and 'other' to have same density, but 'self' "
                           f"has {t.sparse_dim()} sparse dimensions while 'other' has "
                           f"{s.sparse_dim()} sparse dimensions")
    if _xp(t) is not np or not (t._val._array.flags.c_contiguous and
                                s._val._array.flags.c_contiguous):
        return _concatenated(t, s, tv, sv, alpha)
    pos_t, pos_s, count = _merge_positions(_keys(t), _keys(s))
    xp = _xp(t)
    ind = xp.empty((t.sparse_dim(), count), np.int64)
    pt, ps = xp.asarray(pos_t), xp.asarray(pos_s)
    ind[:, pt] = t._ind._array
    ind[:, ps] = s._ind._array
    from .shape import cat
    if not (isinstance(alpha, (int, float)) and alpha == 1):
        sv = sv * alpha
    values = cat([tv, sv])
    inverse = make_tensor(xp.concatenate([pt, ps]), t._device)
    from .sparse import _segment_sum
    summed = _segment_sum(values, inverse, count, AddBackward0)
    return make_sparse(make_tensor(ind, t._device), summed, t._array.shape,
                       t._coalesced and s._coalesced)


def _concatenated(t, s, tv, sv, alpha):
    """PyTorch's sum on a device, and on the CPU when either values tensor is not contiguous
    (a broadcast gradient, as `.sum()` gives): both coordinate lists one after the other,
    coalesced only once the entries outnumber the elements (the merge would read the
    coordinates on the host: PyTorch's CUDA add concatenates to make no sync)."""
    from .shape import cat
    if not (isinstance(alpha, (int, float)) and alpha == 1):
        sv = sv * alpha
    shape = t._array.shape
    r = make_sparse(cat([t._ind, s._ind], 1), cat([tv, sv]), shape, False)
    nnz = r._nnz()
    if nnz > t._array.size:
        r = coalesce(r)
        nnz = r._nnz()
    r._coalesced = nnz < 2
    return r


def add_sparse_(t, s, alpha=1):
    r = add_sparse(t, s, alpha)
    if r._val.dtype is not t._val.dtype:
        raise RuntimeError(f"result type {r._val.dtype._scalar_name} can't be cast to the desired "
                           f"output type {t._val.dtype._scalar_name}")
    _become(t, r)
    return t


def _become(t, r):
    t._ind, t._val, t._coalesced = r._ind, r._val, r._coalesced


def _is_number(x):
    return isinstance(x, (bool, int, float, complex)) or (isinstance(x, Tensor) and
                                                           not x.is_sparse and x.dim() == 0)


def mul_sparse(s, other):
    """`s * other` for a number, a 0-dim tensor, or a dense tensor of s's size (the product
    at s's coordinates)."""
    if _is_number(other):
        return make_sparse(s._ind, s._val * other, s._array.shape, s._coalesced)
    if isinstance(other, SparseTensor):
        return _mul_sparse_sparse(s, other)
    if tuple(other.shape) != tuple(s._array.shape):
        raise RuntimeError(f"mul(sparse, dense): expected the dense operand to be 0-dim or of "
                           f"size {_size_list(s)}, got {list(other.shape)}")
    sd = s.sparse_dim()
    picked = other[tuple(s._ind[d] for d in range(sd))]
    return make_sparse(s._ind, s._val * picked, s._array.shape, s._coalesced)


def _mul_sparse_sparse(s, other):
    """The elementwise product of two sparse tensors: coordinates present in both."""
    a, b = s.coalesce(), other.coalesce()
    if tuple(a._array.shape) != tuple(b._array.shape):
        raise RuntimeError(f"mul: expected 'self' and 'other' to have same sizes, but "
                           f"{_size_list(a)} != {_size_list(b)}")
    ka, kb = _keys(a), _keys(b)
    common, ia, ib = np.intersect1d(ka, kb, assume_unique=True, return_indices=True)
    xp = _xp(a)
    ia_t = make_tensor(xp.asarray(ia.astype(np.int64)), a._device)
    ib_t = make_tensor(xp.asarray(ib.astype(np.int64)), a._device)
    values = a._val.index_select(0, ia_t) * b._val.index_select(0, ib_t)
    return make_sparse(a._ind.index_select(1, ia_t), values, a._array.shape, True)


def mul_sparse_(s, other):
    _become(s, mul_sparse(s, other))
    return s


def div_sparse(s, other):
    if not _is_number(other):
        raise RuntimeError("ember: a sparse tensor divides only by a number or a 0-dim tensor")
    return make_sparse(s._ind, s._val / other, s._array.shape, s._coalesced)


def div_sparse_(s, other):
    _become(s, div_sparse(s, other))
    return s


def neg_sparse(s):
    return make_sparse(s._ind, -s._val, s._array.shape, s._coalesced)


def zero_sparse_(s):
    """Drop every entry: nnz 0, coalesced (as PyTorch's `zero_`)."""
    xp = _xp(s)
    s._ind = make_tensor(xp.zeros((s.sparse_dim(), 0), np.int64), s._device)
    s._val = make_tensor(xp.zeros((0,) + tuple(s._val._array.shape[1:]), s._val._array.dtype),
                         s._device)
    s._coalesced = True
    return s


# ---- dense with sparse -----------------------------------------------------------------------------
def _check_dense_sparse(dense, s):
    if tuple(dense._array.shape) != tuple(s._array.shape):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {_size_list(dense)} while other has size {_size_list(s)} (FYI: "
                           "dense-sparse addition does not currently support broadcasting)")


def _scatter_into(arr, s, alpha):
    """arr[coordinates] += alpha * values, duplicates summed first (in place, on arrays)."""
    c = coalesce(s.detach()) if not s._coalesced else s
    if c._nnz() == 0:
        return
    idx = tuple(c._ind._array)
    vals = c._val._array
    if not (isinstance(alpha, (int, float)) and alpha == 1):
        vals = vals * alpha
    arr[idx] += vals.astype(arr.dtype, copy=False)


def add_dense_sparse(dense, s, alpha=1):
    """`dense + alpha * s` (a dense tensor): differentiable in both operands."""
    _check_dense_sparse(dense, s)
    from ._graph import _grad_state
    from .pointwise import add
    if (_grad_state.enabled and (dense._requires_grad or s.requires_grad)) or \
            dense.dtype is not s.dtype:
        from .sparse import to_dense
        return add(dense, to_dense(s), alpha=alpha)
    arr = dense._array.copy()
    _scatter_into(arr, s, alpha)
    return make_tensor(arr, dense._device)


def add_dense_sparse_(dense, s, alpha=1):
    """`dense += alpha * s` in place."""
    _check_dense_sparse(dense, s)
    from ._writes import inplace, tracks
    from .pointwise import add
    if tracks(dense, (s._val,)) or s.dtype is not dense.dtype:
        return inplace(dense, lambda d: add(d, _to_dense(s), alpha=alpha), (s._val,))
    _scatter_into(dense._array, s, alpha)
    dense._vc.value += 1
    return dense


def _to_dense(s):
    from .sparse import to_dense
    return to_dense(s)


# ---- a dense tensor masked by a sparse one ----------------------------------------------------------
def sparse_mask(input, mask):
    """The entries of dense `input` at `mask`'s coordinates, as a sparse tensor with mask's
    indices (and coalesced flag)."""
    if not isinstance(mask, SparseTensor):
        raise NotImplementedError(
            f"Could not run 'aten::sparse_mask' with arguments from the "
            f"'{'CUDA' if input._device.type == 'cuda' else 'CPU'}' backend. This could be "
            "because the operator doesn't exist for this backend, or was omitted during the "
            "selective/custom build process (if using custom build).")
    if tuple(input._array.shape) != tuple(mask._array.shape):
        raise RuntimeError(f"sparse_mask(): operands have incompatible sizes; self has size "
                           f"{_size_list(input)} but mask has size {_size_list(mask)}")
    sd = mask.sparse_dim()
    values = input[tuple(mask._ind[d] for d in range(sd))] if sd else \
        input.unsqueeze(0).expand(mask._nnz(), *input.shape)
    values = _through(SparseMaskBackward0, values)
    return make_sparse(mask._ind, values, mask._array.shape, mask._coalesced)


# ---- SparseTensor's arithmetic methods (bound onto it by ember/ops/__init__.py) -------------------
def _add(self, other, *, alpha=1):
    return add_sparse(self, other, alpha)


def _add_(self, other, *, alpha=1):
    return add_sparse_(self, other, alpha)


def _radd(self, other):
    # Python asks the subclass first: dense + sparse lands here
    if isinstance(other, Tensor):
        return add_dense_sparse(other, self)
    raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")


SPARSE_METHODS = {
    "add": _add, "add_": _add_, "__iadd__": _add_, "__radd__": _radd,
    "mul": mul_sparse, "__mul__": mul_sparse, "__rmul__": mul_sparse,
    "mul_": mul_sparse_, "__imul__": mul_sparse_,
    "div": div_sparse, "__truediv__": div_sparse, "div_": div_sparse_, "__itruediv__": div_sparse_,
    "neg": neg_sparse, "__neg__": neg_sparse, "zero_": zero_sparse_,
}
for _name, _method in SPARSE_METHODS.items():  # methods as PyTorch's parser binds them
    setattr(SparseTensor, _name, _method if _name.startswith("_") else
            for_users(_method, "SparseTensor", _name))
