"""What a sparse compressed tensor (CSR, CSC, BSR, BSC) does beyond construction and conversion
(`ember/ops/sparse_compressed.py`): its products with dense tensors, the arithmetic users do
(scaling, negation, the sum of two tensors of one layout, dense + sparse), transposition,
printing as PyTorch prints it, and the methods that run these, which this module binds onto
`SparseCompressedTensor` when it loads (`ember/ops/__init__.py` puts stand-ins there that
load it on first use, ember/_lazy.py).

Products go through the COO tensor of the stored entries (`to_coo`), whose product
(`ember/ops/sparse.py`) takes its gradients to the values and the dense operand, on NumPy
alone.
"""
import builtins

from .._layout import sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr
from .._sparse import SparseTensor, make_sparse
from .._sparse_compressed import (BLOCK_LAYOUTS, LAYOUT_NAMES, SparseCompressedTensor,
                                  make_compressed)
from .._tensor import Tensor, make_tensor
from .sparse import _body, _values_view, _xp, coalesce
from .sparse import to_dense as _coo_to_dense
from .sparse_compressed import (_assemble, blocksize_of, refuse_blocksize, stored_pairs,
                                to_compressed, to_coo)

_TRANSPOSED = {sparse_csr: sparse_csc, sparse_csc: sparse_csr, sparse_bsr: sparse_bsc,
               sparse_bsc: sparse_bsr}


# ---- conversions as methods ----------------------------------------------------------------------
def to_dense(self, dtype=None, *, masked_grad=None):
    return _coo_to_dense(to_coo(self), dtype)


def to_sparse(self, sparse_dim=None, *, layout=None, blocksize=None, dense_dim=None):
    if layout is None or layout is sparse_coo:
        refuse_blocksize(self, layout, blocksize)
        if sparse_dim is not None and sparse_dim != 2:
            raise RuntimeError(f"sparse_compressed_to_sparse: conversion from "
                               f"{LAYOUT_NAMES[self._layout]} to Sparse with sparse_dim "
                               "argument !=2 is not supported")
        return to_coo(self)
    return to_compressed(self, layout, blocksize, dense_dim)


def to_sparse_coo(self, sparse_dim=None):
    return to_sparse(self, sparse_dim)


def values(self):
    return _values_view(self._val)


def transpose_matrix(self):
    """`t()`: the transposed matrix in the transposed layout, sharing the indices (blocks
    transposed too)."""
    n, m = self._array.shape
    v = self._val.transpose(1, 2) if self._layout in BLOCK_LAYOUTS else self._val
    return make_compressed(self._cind, self._pind, v, (m, n), _TRANSPOSED[self._layout])


def _not_coo(name):
    def method(self, *args, **kwargs):
        raise RuntimeError(f"{name} expected sparse coordinate tensor layout but got "
                           f"{LAYOUT_NAMES[self._layout]}")
    method.__name__ = name
    return method


# ---- products: through the COO tensor of the entries -------------------------------------------
def mm(self, mat2):
    from .sparse import mm as _mm
    return _mm(self, mat2)


def matmul(self, other):
    from .linalg import matmul as _matmul
    return _matmul(self, other)


def rmatmul(self, other):
    from .linalg import matmul as _matmul
    return _matmul(other, self)


def mv(self, vec):
    from .linalg import mv as _mv
    return _mv(self, vec)


# ---- arithmetic -------------------------------------------------------------------------------------
def _with_values(t, values):
    return make_compressed(t._cind, t._pind, values, t._array.shape, t._layout)


def _is_number(x):
    return isinstance(x, (bool, int, float, complex)) or (
        isinstance(x, Tensor) and not isinstance(x, (SparseTensor, SparseCompressedTensor))
        and x.dim() == 0)


def mul(self, other):
    """`self * other` for a number or 0-dim tensor (the values scaled), or a dense tensor of
    self's size for CSR/CSC (the product at the stored entries)."""
    if _is_number(other):
        return _with_values(self, self._val * other)
    if isinstance(other, (SparseTensor, SparseCompressedTensor)) or \
            self._layout in BLOCK_LAYOUTS:
        raise NotImplementedError(f"ember: mul of a {self._layout} tensor with a "
                                  f"{other.layout} tensor is not supported")
    if tuple(other.shape) != tuple(self._array.shape):
        raise RuntimeError(f"mul(sparse, dense): expected the dense operand to be 0-dim or of "
                           f"size {list(self._array.shape)}, got {list(other.shape)}")
    rows, cols = stored_pairs(self)
    picked = other[make_tensor(rows, self._device), make_tensor(cols, self._device)]
    return _with_values(self, self._val * picked)


def div(self, other):
    if not _is_number(other):
        raise RuntimeError("ember: a sparse tensor divides only by a number or a 0-dim tensor")
    return _with_values(self, self._val / other)


def neg(self):
    return _with_values(self, -self._val)


def add(self, other, *, alpha=1):
    """`self + alpha * other`: a tensor of self's layout when other has it (entries at equal
    positions summed), a dense tensor when other is dense."""
    if not isinstance(other, (SparseTensor, SparseCompressedTensor)):
        if not isinstance(other, Tensor):
            raise TypeError(f"add(): argument 'other' must be Tensor, not "
                            f"{type(other).__name__}")
        from .pointwise import add as _add
        return _add(to_dense(self), other, alpha=alpha) if alpha != 1 else radd(self, other)
    if other.layout is not self._layout:
        raise RuntimeError(f"add: expected 'self' and 'other' to have the same layout, but got "
                           f"{LAYOUT_NAMES[self._layout]} and {other.layout}")
    if tuple(other.shape) != tuple(self._array.shape):
        raise RuntimeError(f"add: expected 'self' and 'other' to have same size, but self has "
                           f"size {list(self._array.shape)} while other has size "
                           f"{list(other.shape)}")
    if blocksize_of(other) != blocksize_of(self):
        raise RuntimeError(f"add: expected 'self' and 'other' to have the same blocksize, but "
                           f"got {list(blocksize_of(self))} and {list(blocksize_of(other))}")
    from .sparse_arith import add_sparse
    total = coalesce(add_sparse(_block_coo(self), _block_coo(other), alpha))
    return _assemble(total._ind._array[0], total._ind._array[1], total._val,
                     tuple(self._array.shape), self._layout)


def _block_coo(t):
    """The stored (block row, block column) pairs with their values, as a COO tensor over the
    grid of blocks (hybrid: a block is its dense part)."""
    brow, bcol = stored_pairs(t)
    bs = blocksize_of(t)
    grid = (t._array.shape[0] // bs[0], t._array.shape[1] // bs[1])
    dense = tuple(t._val._array.shape[1:])
    return make_sparse(make_tensor(_xp(t).stack([brow, bcol]), t._device), t._val,
                       grid + dense, False)


def sub(self, other, *, alpha=1):
    return add(self, other, alpha=-alpha)


def radd(self, other):
    # Python asks the subclass first: dense + sparse lands here (a dense result)
    if isinstance(other, Tensor):
        return _dense_plus(other, self, 1)
    return add(self, other)


def _dense_plus(dense, s, alpha):
    """`dense + alpha * s` (a dense tensor): dense's elements kept where s stores nothing (a
    -0.0 stays -0.0, as PyTorch's), gradients to both."""
    from .sparse_arith import add_dense_sparse
    return add_dense_sparse(dense, to_coo(s), alpha)


def sum_(self, dim=None, keepdim=False, *, dtype=None):
    if dim is not None:
        raise NotImplementedError("ember: sum over a dimension of a sparse compressed tensor "
                                  "is not supported; call .to_dense() first")
    values = self._val if dtype is None else self._val.to(dtype)
    return values.sum()


# ---- printing -------------------------------------------------------------------------------------
def compressed_repr(t, *, tensor_contents=None):
    """As PyTorch prints it: the three index/value tensors, then size, nnz, dtype, layout and
    the autograd suffix, wrapped at the print width."""
    from .._printing import _default_dtype_name, get_printoptions
    indent = len("tensor(")
    row = t._layout in (sparse_csr, sparse_bsr)
    cname, pname = ("crow_indices", "col_indices") if row else ("ccol_indices", "row_indices")
    parts = []
    for name, value in ((cname, t._cind), (pname, t._pind), ("values", t._val)):
        body = _body(value.detach(), indent + len(name) + len("=tensor("))
        parts.append(f"{name}=tensor({body})")
    text = "tensor(" + (",\n" + " " * indent).join(parts)
    suffixes = []
    if t._device.type != "cpu":
        suffixes.append(f"device='{t._device}'")
    suffixes += [f"size={tuple(t._array.shape)}", f"nnz={t._nnz()}"]
    if str(t.dtype) not in (_default_dtype_name(), "torch.int64", "torch.bool"):
        suffixes.append(f"dtype={t.dtype}")
    suffixes.append(f"layout={t._layout}")
    fn = t.grad_fn
    if fn is not None:
        suffixes.append(f"grad_fn=<{fn.name()}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    width = get_printoptions().get("linewidth", 80)
    for suffix in suffixes:
        # PyTorch's rule: the last line's length plus two, the suffix and ", " must fit
        last_line = len(text) - text.rfind("\n") + 1
        if last_line + len(suffix) + 2 > width:
            text += ",\n" + " " * indent + suffix
        else:
            text += ", " + suffix
    return text + ")"


COMPRESSED_METHODS = {
    "to_dense": to_dense, "to_sparse": to_sparse, "to_sparse_coo": to_sparse_coo,
    "values": values, "t": transpose_matrix,
    "mm": mm, "matmul": matmul, "__matmul__": matmul, "__rmatmul__": rmatmul, "mv": mv,
    "mul": mul, "__mul__": mul, "__rmul__": mul, "div": div, "__truediv__": div,
    "neg": neg, "__neg__": neg, "add": add, "__add__": add, "__radd__": radd,
    "sub": sub, "__sub__": sub, "sum": sum_,
    "is_coalesced": _not_coo("is_coalesced"), "coalesce": _not_coo("coalesce"),
    "indices": _not_coo("indices"),
    "__repr__": compressed_repr, "__str__": compressed_repr,
}
for _name, _method in COMPRESSED_METHODS.items():
    setattr(SparseCompressedTensor, _name, _method)
