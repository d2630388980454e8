"""Sparse COO tensors (NumPy on the CPU, CuPy's on the GPU): construction, coalescing,
conversion to and from dense, the sparse x dense product and sums, with derivatives.

The tensor itself is `ember._sparse.SparseTensor`. Every op here takes its gradient to the
sparse operand's values (a dense Tensor in the ordinary graph), so a backward pass is made
of ember ops and `create_graph=True` works. Nothing here needs SciPy (nor, on the GPU,
cupyx.scipy.sparse): the same array code runs on NumPy and CuPy.
"""
import builtins
import math

import numpy as np

from .. import dtypes as _dt
from .._sparse import SparseTensor, make_sparse
from .._sparse_compressed import SparseCompressedTensor
from .. import _state
from .._state import warn_once
from .._tensor import Tensor, make_tensor
from ..device import _BACKENDS
from ._graph import Node, record
from ._numpy_names import for_users
from .shape import cat

__all__ = ["sparse_coo_tensor", "spmm", "mm"]
METHODS = ["to_sparse", "to_sparse_coo", "to_dense", "sparse_mask", "sparse_dim", "dense_dim",
           "coalesce", "is_coalesced", "indices", "values", "_indices", "_values", "_nnz"]


def _xp(t):
    return _BACKENDS[t._device.type].xp


def _coo_times_dense(xp, rows, cols, values, m, dense):
    """`S @ D` for S given by COO (rows, cols, values) of m rows, in array operations alone
    (no SciPy, no cupyx.scipy.sparse, no host reads): each stored value scales a row of D, and
    the scaled rows are added into their output rows (`accumulate_flat`: repeated rows add)."""
    from ._accumulate import accumulate_flat
    dtype = np.result_type(values.dtype, dense.dtype)
    width = math.prod(dense.shape[1:])
    out = xp.zeros(m * width, dtype)
    if rows.size:
        scaled = dense[cols].reshape(-1, width) * values.reshape(-1, 1)
        positions = rows.reshape(-1, 1) * width + xp.arange(width, dtype=rows.dtype)
        accumulate_flat(out, positions.reshape(-1), scaled.astype(dtype, copy=False).reshape(-1))
    return out.reshape((m,) + tuple(dense.shape[1:]))


# ---- identity nodes that name what made a sparse tensor's values ---------------------------
class _Identity(Node):
    def backward(self, grad):
        return grad


def _named(name):
    return type(name, (_Identity,), {})


SparseCooTensorWithDimsAndTensorsBackward0 = _named("SparseCooTensorWithDimsAndTensorsBackward0")
ValuesBackward0 = _named("ValuesBackward0")
ToSparseBackward1 = _named("ToSparseBackward1")


def _through(node_cls, t):
    """`t`'s memory as the output of an identity node of `node_cls` (when tracked)."""
    out = make_tensor(t._array, t._device)
    record(node_cls, (t,), out)
    return out


def _values_view(values):
    return _through(ValuesBackward0, values)


# ---- construction ------------------------------------------------------------------------------
def sparse_coo_tensor(indices, values, size=None, *, dtype=None, device=None, pin_memory=False,
                      requires_grad=False, check_invariants=None, is_coalesced=None):
    """A sparse COO tensor from `indices` (sparse_dim x nnz) and `values` (nnz x dense dims)."""
    from .creation import tensor as _tensor
    if not isinstance(values, Tensor):
        values = _tensor(values, dtype=dtype, device=device)
    elif dtype is not None or device is not None:
        values = values.to(device=device, dtype=dtype)
    if not isinstance(indices, Tensor):
        indices = _tensor(indices, dtype=_dt.int64, device=values._device)
    check_invariants = _invariants_checked(check_invariants)
    if size is not None and indices._array.ndim >= 1 and not check_invariants:
        sparse_dim, dense_dim = indices._array.shape[0], builtins.max(values._array.ndim - 1, 0)
        if len(size) != sparse_dim + dense_dim:
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                               f"len(size) = {len(size)}, sparse_dim = {sparse_dim}, "
                               f"dense_dim = {dense_dim}")
    if indices._array.ndim != 2:
        raise RuntimeError(f"indices must be sparse_dim x nnz, but got: "
                           f"{list(indices._array.shape)}")
    if indices.dtype is not _dt.int64:
        indices = indices.to(_dt.int64)
    if indices._device != values._device:
        indices = indices.to(values._device)
    sparse_dim, nnz = indices._array.shape
    if values._array.ndim == 0:
        values = values.reshape(1)
    if values._array.shape[0] != nnz:
        raise RuntimeError(f"indices and values must have same nnz, but got nnz from indices: "
                           f"{nnz}, nnz from values: {values._array.shape[0]}")
    dense_shape = tuple(values._array.shape[1:])
    ind = indices._array
    if size is None:
        if nnz:
            sparse_shape = tuple(int(m) + 1 for m in _host(ind.max(axis=1)))
        else:
            sparse_shape = (0,) * sparse_dim
        size = sparse_shape + dense_shape
    else:
        size = tuple(int(s) for s in size)
        if len(size) != sparse_dim + len(dense_shape):
            raise RuntimeError(f"'len(size) == sparse_dim + dense_dim' is not satisfied: "
                               f"len(size) = {len(size)}, sparse_dim = {sparse_dim}, "
                               f"dense_dim = {len(dense_shape)}")
        if tuple(size[sparse_dim:]) != dense_shape:
            raise RuntimeError(f"values has incorrect size, expected {list(size[:1]) + list(size[sparse_dim:])}"
                               f", got {list(values._array.shape)}")
        if check_invariants and nnz:
            hi, lo = _host(ind.max(axis=1)), _host(ind.min(axis=1))
            for d in builtins.range(sparse_dim):
                if lo[d] < 0:
                    raise RuntimeError(f"found negative index {int(lo[d])} for dim {d}")
                if hi[d] >= size[d]:
                    raise RuntimeError(f"size is inconsistent with indices: for dim {d}, size is "
                                       f"{size[d]} but found index {int(hi[d])}")
    if requires_grad:
        values = values.detach().requires_grad_()
        return make_sparse(indices, values, size, bool(is_coalesced) or nnz <= 1, leaf=True)
    values = _through(SparseCooTensorWithDimsAndTensorsBackward0, values)
    return make_sparse(indices, values, size, bool(is_coalesced) or nnz <= 1)


def _invariants_checked(check_invariants):
    """Whether a constructor checks its indices: as told, else as
    torch.sparse.check_sparse_tensor_invariants says (off by default, with PyTorch's warning
    once a process)."""
    if check_invariants is not None:
        return check_invariants
    if _state.sparse_invariants.enabled:
        return True
    warn_once("Sparse invariant checks are implicitly disabled. Memory errors (e.g. SEGFAULT) "
              "will occur when operating on a sparse tensor which violates the invariants, but "
              "checks incur performance overhead. To silence this warning, explicitly opt in "
              "or out. See `torch.sparse.check_sparse_tensor_invariants.__doc__` for "
              "guidance. ")
    return False


def _host(a):
    return a.get() if hasattr(a, "get") else np.asarray(a)


# ---- coalescing: duplicates summed, coordinates sorted ------------------------------------------
def _unique_coords(s):
    """(unique coordinates array (sparse_dim, u), inverse (nnz,), first occurrence (u,))."""
    xp = _xp(s)
    ind = s._ind._array
    shape = tuple(s._array.shape[:ind.shape[0]])
    if ind.shape[1] == 0:
        return ind, xp.zeros(0, np.int64), xp.zeros(0, np.int64)
    lin = xp.ravel_multi_index(tuple(ind), shape) if ind.shape[0] else xp.zeros(ind.shape[1], np.int64)
    uniq, first, inv = xp.unique(lin, return_index=True, return_inverse=True)
    coords = xp.stack(xp.unravel_index(uniq, shape)).astype(np.int64) if ind.shape[0] else \
        xp.zeros((0, uniq.shape[0]), np.int64)
    return coords, inv.reshape(-1), first


class _SegmentSum(Node):
    """Rows of the values summed into segments: each input row's gradient is its segment's."""

    def backward(self, grad):
        return grad.index_select(0, self.inverse)


CoalesceBackward0 = type("CoalesceBackward0", (_SegmentSum,), {})
SparseSumBackward0 = type("SparseSumBackward0", (_SegmentSum,), {})


def _segment_sum(values, inverse, count, node_cls):
    from ._accumulate import accumulate_flat
    xp = _xp(values)
    v, inv = values._array, inverse._array
    width = math.prod(v.shape[1:])
    out = xp.zeros(count * width, v.dtype)
    if v.shape[0]:
        positions = inv.reshape(-1, 1) * width + xp.arange(width, dtype=inv.dtype)
        accumulate_flat(out, positions.reshape(-1), v.reshape(-1))
    res = make_tensor(out.reshape((count,) + tuple(v.shape[1:])), values._device)
    node = record(node_cls, (values,), res)
    if node is not None:
        node.inverse = inverse
    return res


def coalesce(input):
    if not isinstance(input, SparseTensor):
        _not_sparse(input, "coalesce")
    if input._coalesced:
        return input
    coords, inv, _ = _unique_coords(input)
    inverse = make_tensor(inv.astype(np.int64), input._device)
    values = _segment_sum(input._val, inverse, coords.shape[1], CoalesceBackward0)
    return make_sparse(make_tensor(coords, input._device), values, input._array.shape, True)


def _grad_at_unique(s, grad_values):
    """A leaf's sparse gradient: the values' gradient at each unique coordinate (every
    duplicate of a coordinate has the same gradient)."""
    coords, _, first = _unique_coords(s)
    g = grad_values.index_select(0, make_tensor(first.astype(np.int64), s._device))
    return make_sparse(make_tensor(coords, s._device), g, s._array.shape, True)


# ---- what a dense tensor answers to the sparse tensor methods (SparseTensor has its own) ------
def _not_sparse(input, name, layout="sparse coordinate tensor"):
    raise RuntimeError(f"{name} expected {layout} layout but got Strided")


def _no_kernel(input, op):
    backend = "CUDA" if input._device.type == "cuda" else "CPU"
    raise NotImplementedError(f"Could not run 'aten::{op}' with arguments from the '{backend}' "
                              "backend. This could be because the operator doesn't exist for "
                              "this backend, or was omitted during the selective/custom build "
                              "process (if using custom build).")


def sparse_dim(input):
    return 0


def dense_dim(input):
    return input._array.ndim


def is_coalesced(input):
    _not_sparse(input, "is_coalesced")


def indices(input):
    _not_sparse(input, "indices")


def values(input):
    _not_sparse(input, "values", "sparse tensor")


def _indices(input):
    _no_kernel(input, "_indices")


def _values(input):
    _no_kernel(input, "_values")


def _nnz(input):
    _no_kernel(input, "_nnz")


def sparse_mask(input, mask):
    """`dense.sparse_mask(mask)`: dense's entries at mask's coordinates (a sparse tensor)."""
    from .sparse_arith import sparse_mask as _mask
    return _mask(input, mask)


# ---- dense <-> sparse ----------------------------------------------------------------------------
class ToDenseBackward0(Node):
    def backward(self, grad):
        idx = tuple(self.indices[d] for d in builtins.range(self.indices._array.shape[0]))
        return grad[idx]


def to_dense(input, dtype=None, *, masked_grad=None):
    """A sparse tensor as a dense one (duplicates summed); a dense tensor is returned as is."""
    if not isinstance(input, SparseTensor):
        return input if dtype is None else input.to(dtype)
    xp = _xp(input)
    if input._coalesced or xp is np:
        s = input if input._coalesced else coalesce(input.detach())
        out = xp.zeros(input._array.shape, s._val._array.dtype)
        if s._ind._array.shape[1]:
            out[tuple(s._ind._array)] = s._val._array
    else:
        out = _summed_into_dense(xp, input)
    res = make_tensor(out, input._device)
    node = record(ToDenseBackward0, (input._val,), res)
    if node is not None:
        node.indices = input._ind
    return res if dtype is None else res.to(dtype)


def _summed_into_dense(xp, t):
    """An uncoalesced `t` as a dense array on a device, repeated coordinates added up by a
    scatter-add (as PyTorch's CUDA to_dense): coalescing first would read its count."""
    from ._accumulate import add_rows_on_device
    ind, vals, shape = t._ind._array, t._val._array, t._array.shape
    sparse_dim = ind.shape[0]
    rows = xp.zeros(ind.shape[1], np.int64)
    for d in builtins.range(sparse_dim):
        rows = rows * shape[d] + ind[d]
    out = xp.zeros((math.prod(shape[:sparse_dim]),) + shape[sparse_dim:], vals.dtype)
    if rows.size:
        add_rows_on_device(out, rows, vals)
    return out.reshape(shape)


def to_sparse(input, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    """A dense tensor as a coalesced sparse COO tensor of its nonzero entries (the first
    `sparse_dim` dimensions sparse: a row is kept when any of its entries is nonzero)."""
    if isinstance(input, SparseTensor):
        return input.to_sparse(sparse_dim, layout=layout, blocksize=blocksize)
    if layout is not None and layout.name != "sparse_coo" and layout.name != "strided":
        from .sparse_compressed import to_compressed
        return to_compressed(input, layout, blocksize, dense_dim)
    if blocksize is not None:
        from .sparse_compressed import refuse_blocksize
        refuse_blocksize(input, layout, blocksize)
    ndim = input._array.ndim
    if sparse_dim is None:
        sparse_dim = ndim if dense_dim is None else ndim - dense_dim
    if not 0 <= sparse_dim <= ndim:
        raise RuntimeError(f"sparse_dim argument must be in [0,{ndim}] range, but {sparse_dim} "
                           "is given")
    xp = _xp(input)
    a = input._array
    mask = a != 0
    if sparse_dim < ndim:
        mask = mask.any(axis=tuple(builtins.range(sparse_dim, ndim)))
    coords = xp.stack(xp.nonzero(mask)).astype(np.int64).reshape(sparse_dim, -1)
    idx = make_tensor(coords, input._device)
    values = input[tuple(idx[d] for d in builtins.range(sparse_dim))]
    values = _through(ToSparseBackward1, values)
    return make_sparse(idx, values, a.shape, True)


to_sparse_coo = to_sparse


def _transpose(s):
    if s.sparse_dim() != 2:
        raise RuntimeError("t() expects a tensor with <= 2 sparse and 0 dense dimensions, but "
                           f"got {s.sparse_dim()} sparse and {s.dense_dim()} dense dimensions")
    ind = s._ind[[1, 0]]
    m, n = s._array.shape[:2]
    return make_sparse(ind, s._val, (n, m) + tuple(s._array.shape[2:]), False)


# ---- sparse x dense product -------------------------------------------------------------------------
class _SparseMm(Node):
    """out = S @ D with S given by (indices, values, shape): grad D = S^T @ G, and
    grad values[k] = (G @ D^T)[row_k, col_k], computed at the nnz positions only."""

    def backward(self, grad):
        values, dense = self.saved_tensors
        rows, cols = self.indices[0], self.indices[1]
        gv = gd = None
        if self._next[0][0] is not None:
            gv = (grad.index_select(0, rows) * dense.index_select(0, cols).conj()).sum(1)
        if self._next[1][0] is not None:
            m, k = self.shape
            gd = _product(self.indices[[1, 0]], values.conj(), (k, m), grad, type(self))
        return gv, gd


MmBackward0 = type("MmBackward0", (_SparseMm,), {})
SparseAddmmBackward0 = type("SparseAddmmBackward0", (_SparseMm,), {})


def _product(indices, values, shape, dense, node_cls):
    ind = indices._array
    d = dense._array
    out = _coo_times_dense(_xp(dense), ind[0], ind[1], values._array, shape[0], d)
    res = make_tensor(out.astype(d.dtype, copy=False).reshape(shape[0], *d.shape[1:]),
                      dense._device)
    node = record(node_cls, (values, dense), res)
    if node is not None:
        node.save_for_backward(values, dense)
        node.indices, node.shape = indices, shape
    return res


def _sparse_times_dense(input, mat2, node_cls, fname):
    if input.sparse_dim() != 2 or input.dense_dim() != 0:
        raise RuntimeError(f"{fname}: matrices expected, got {input.sparse_dim()}D sparse "
                           f"tensor with {input.dense_dim()} dense dimensions")
    if isinstance(mat2, SparseTensor):
        return to_sparse(_sparse_times_dense(input, mat2.to_dense(), node_cls, fname))
    if mat2._array.ndim not in (1, 2):
        raise RuntimeError(f"{fname}: matrices expected, got {mat2._array.ndim}D tensor")
    if input.dtype is not mat2.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype._scalar_name} but found "
                           f"{mat2.dtype._scalar_name}")
    m, k = input._array.shape
    if mat2._array.shape[0] != k:
        raise RuntimeError(f"addmm: Argument #3 (dense): Expected dim 0 size {k}, got "
                           f"{mat2._array.shape[0]}")
    return _product(input._ind, input._val, (m, k), mat2, node_cls)


def _coo_form(t):
    """A sparse compressed operand (CSR ...) as the COO tensor of its entries, whose products
    below take gradients to its values; anything else as it is."""
    if isinstance(t, SparseCompressedTensor):
        from .sparse_compressed import to_coo
        return to_coo(t)
    return t


def spmm(input, mat2):
    """`torch.spmm`, `torch.mm` and `@` with a sparse first operand: a dense product."""
    input, mat2 = _coo_form(input), _coo_form(mat2)
    if not isinstance(input, SparseTensor):
        from .linalg import mm as dense_mm
        return dense_mm(input, mat2)
    return _sparse_times_dense(input, mat2, MmBackward0, "mm")


def mm(input, mat2, *, out=None):
    """`torch.mm`: the dense product (ember/ops/linalg/matmul.py), or sparse @ dense."""
    input, mat2 = _coo_form(input), _coo_form(mat2)
    if isinstance(input, SparseTensor):
        if out is not None:
            raise RuntimeError("mm(): out= with a sparse operand is not supported")
        return _sparse_times_dense(input, mat2, MmBackward0, "mm")
    if isinstance(mat2, SparseTensor):
        return _sparse_times_dense(_transpose(mat2), input.t(), MmBackward0, "mm").t()
    from .linalg import mm as dense_mm
    return dense_mm(input, mat2, out=out)


def sparse_mm(sparse, dense, reduce=None):
    """`torch.sparse.mm`: sparse @ dense (gradients to the values and the dense operand)."""
    if reduce is not None:
        raise NotImplementedError("ember: torch.sparse.mm(..., reduce=) is not supported")
    sparse, dense = _coo_form(sparse), _coo_form(dense)
    if not isinstance(sparse, SparseTensor):
        return mm(sparse, dense)
    return _sparse_times_dense(sparse, dense, SparseAddmmBackward0, "addmm")


def sparse_addmm(mat, mat1, mat2, *, beta=1., alpha=1.):
    """`torch.sparse.addmm`: addmm whose mat1 may be sparse COO (gradients to its values)."""
    from .linalg import addmm
    return addmm(mat, mat1, mat2, beta=beta, alpha=alpha)


# ---- sums -------------------------------------------------------------------------------------------
def sparse_sum(input, dim=None, dtype=None):
    """`torch.sparse.sum`: a dense 0-dim tensor for a full sum; for `dim`, a sparse tensor
    while sparse dimensions remain, else a dense one."""
    if not isinstance(input, SparseTensor):
        return input.sum() if dim is None else input.sum(dim)
    values = input._val if dtype is None else input._val.to(dtype)
    if dim is None:
        return values.sum()
    ndim = input._array.ndim
    dims = [dim] if isinstance(dim, int) else list(dim)
    dims = sorted({d + ndim if d < 0 else d for d in dims})
    for d in dims:
        if not 0 <= d < ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-ndim}, {ndim - 1}], but got {d})")
    sd = input.sparse_dim()
    dense_red = [d - sd + 1 for d in dims if d >= sd]
    sparse_keep = [d for d in builtins.range(sd) if d not in dims]
    if dense_red:
        values = values.sum(dense_red)
    if not sparse_keep:
        return values.sum(0)
    shape = tuple(input._array.shape)
    new_shape = tuple(shape[d] for d in sparse_keep) + tuple(
        shape[d] for d in builtins.range(sd, ndim) if d not in dims)
    kept = make_sparse(input._ind[sparse_keep], values, new_shape, False)
    coords, inv, _ = _unique_coords(kept)
    inverse = make_tensor(inv.astype(np.int64), input._device)
    summed = _segment_sum(values, inverse, coords.shape[1], SparseSumBackward0)
    return make_sparse(make_tensor(coords, input._device), summed, new_shape, True)


def _sum_method(self, dim=None, keepdim=False, *, dtype=None):
    """`Tensor.sum` of a sparse tensor: torch.sparse.sum's result, with `keepdim` each summed
    dimension put back with size 1, as PyTorch's unsqueeze puts it (a sparse dimension while
    it falls within the sparse ones, a dense one after)."""
    if dim is None:
        if keepdim:
            raise TypeError("sum() received an invalid combination of arguments - got "
                            "(keepdim=bool), but expected (tuple of ints dim, bool keepdim = "
                            "False, *, torch.dtype dtype = None)")
        return sparse_sum(self, dtype=dtype)
    result = sparse_sum(self, dim, dtype)
    if not keepdim:
        return result
    ndim = self._array.ndim
    for d in sorted({d % ndim for d in ([dim] if isinstance(dim, int) else dim)}):
        if not isinstance(result, SparseTensor):
            result = result.unsqueeze(d)
            continue
        ind, values, shape = result._ind, result._val, tuple(result._array.shape)
        if d <= result.sparse_dim():
            ind = cat([ind[:d], ind.new_zeros((1, ind.shape[1])), ind[d:]])
        else:
            values = values.unsqueeze(d - result.sparse_dim() + 1)
        result = make_sparse(ind, values, shape[:d] + (1,) + shape[d:], result._coalesced)
    return result


# ---- printing -----------------------------------------------------------------------------------------
def sparse_repr(s):
    from .._printing import _default_dtype_name
    indent = len("tensor(")
    ind = _body(s._ind.detach(), indent + len("indices=tensor("))
    val = _body(s._val.detach(), indent + len("values=tensor("))
    text = (f"tensor(indices=tensor({ind}),\n" + " " * indent + f"values=tensor({val})")
    suffixes = []
    if s._device.type != "cpu":
        suffixes.append(f"device='{s._device}'")
    suffixes += [f"size={tuple(s._array.shape)}", f"nnz={s._nnz()}"]
    if str(s.dtype) not in (_default_dtype_name(), "torch.int64", "torch.bool"):
        suffixes.append(f"dtype={s.dtype}")
    suffixes.append("layout=torch.sparse_coo")
    fn = s.grad_fn
    if fn is not None:
        suffixes.append(f"grad_fn=<{fn.name()}>")
    elif s.requires_grad:
        suffixes.append("requires_grad=True")
    from .._printing import get_printoptions
    width = get_printoptions().get("linewidth", 80)
    parts, last, newline = [text], len(text) - text.rfind("\n") + 1, True
    for suffix in suffixes:
        if newline or last + len(suffix) + 2 > width:
            parts.append(",\n" + " " * indent + suffix)
            last, newline = indent + len(suffix), False
        else:
            parts.append(", " + suffix)
            last += len(suffix) + 2
    return "".join(parts) + ")"


def _body(t, indent):
    """The contents of `repr(t)` between `tensor(` and its suffixes, laid out as if its first
    line started at column `indent` (PyTorch narrows the rows of a sparse tensor's parts so)."""
    if t._array.size == 0:
        return f"[], size={tuple(t._array.shape)}"
    from .._printing import tensor_repr
    r = tensor_repr(make_tensor(t._array, t._device), prefix=" " * indent)
    return r[indent:r.rindex("]") + 1]


# ---- SparseTensor's methods over these ops (bound onto it by ember/ops/__init__.py) ---------------
# (its to_dense and coalesce are Tensor's: the functions above take both layouts)
def _coalesced_values(self):
    if not self._coalesced:
        raise RuntimeError("Cannot get values on an uncoalesced tensor, please call "
                           ".coalesce() first")
    return _values_view(self._val)


def _matmul(self, other):
    return spmm(self, other)


def _repr(self, *, tensor_contents=None):
    return sparse_repr(self)


def _to_compressed(self, layout, blocksize, dense_dim):
    from .sparse_compressed import to_compressed
    return to_compressed(self, layout, blocksize, dense_dim)


SPARSE_METHODS = {
    "values": _coalesced_values, "mm": spmm, "matmul": _matmul, "__matmul__": _matmul,
    "t": _transpose, "__repr__": _repr, "__str__": _repr,
    "_grad_at_unique": _grad_at_unique,  # read by SparseTensor.grad
    "_to_compressed": _to_compressed,  # read by SparseTensor.to_sparse(layout=...)
    "sum": _sum_method,
}
# a sparse tensor's own forms of methods, bound when this family loads (ember/ops/__init__.py
# leaves stand-ins that load it); sparse_arith binds its arithmetic the same way
for _name, _method in SPARSE_METHODS.items():  # methods as PyTorch's parser binds them
    setattr(SparseTensor, _name, _method if _name.startswith("_") else
            for_users(_method, "SparseTensor", _name))
from . import sparse_arith  # noqa: E402,F401
