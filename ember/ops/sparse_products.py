"""PyTorch's legacy products with a sparse COO operand: `sspaddmm`/`saddmm` (a sparse result
beta * input + alpha * mat1 @ mat2, the product's entries appended uncoalesced), `smm` (the
same with no input), `hspmm`/`hsmm` (a hybrid result: one sparse dim over the rows mat1
touches, dense rows of the product), `dsmm` (a dense result), and `resize_as_sparse_`.

Like PyTorch, only `dsmm` (an mm) is differentiable; the sparse results are built outside
autograd.
"""
from .._sparse import SparseTensor, make_sparse
from .._tensor import make_tensor, xp_of
from ._graph import grad_disabled
from ._writes import write_out
from .sparse import mm

__all__ = ["sspaddmm", "saddmm", "smm", "hspmm", "hsmm", "dsmm", "resize_as_sparse_"]
METHODS = ["sspaddmm", "smm", "resize_as_sparse_"]


def _check_operands(input, mat1, mat2):
    if not isinstance(input, SparseTensor):
        raise RuntimeError("sspaddmm: expected self to be a sparse tensor")
    if not isinstance(mat1, SparseTensor):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    if mat1.sparse_dim() != 2 or mat1.dense_dim() != 0 or mat2.ndim != 2:
        raise RuntimeError("sspaddmm: Argument #2: matrices expected")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"sspaddmm: Argument #3: Expected dim 0 size {mat1.shape[1]}, got "
                           f"{mat2.shape[0]}")
    if tuple(input.shape) != (mat1.shape[0], mat2.shape[1]):
        raise RuntimeError(f"sspaddmm: Argument #1: Expected size {[mat1.shape[0], mat2.shape[1]]}"
                           f", got {list(input.shape)}")
    if mat2.dtype is not mat1.dtype:
        raise RuntimeError(f"expected scalar type {mat1.dtype._scalar_name} but found "
                           f"{mat2.dtype._scalar_name}")


def _touched_rows(mat1):
    """The rows of sparse matrix mat1 holding entries (sorted, once each)."""
    xp = xp_of(mat1._val)
    return xp.unique(mat1.coalesce()._ind._array[0])


def _rows_product(mat1, mat2, rows):
    with grad_disabled():
        dense = mm(mat1.detach(), mat2.detach())
    return dense._array[rows]


def sspaddmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """beta * input + alpha * (mat1 @ mat2) as a sparse tensor: input's entries (scaled), then
    one entry per (touched row of mat1, column of mat2)."""
    _check_operands(input, mat1, mat2)
    xp = xp_of(mat2)
    rows = _touched_rows(mat1)
    n = mat2.shape[1]
    prod = _rows_product(mat1, mat2, rows) * alpha
    base = input.coalesce()
    base_ind, base_val = base._ind._array, base._val.detach()._array * beta
    ind = xp.concatenate([base_ind, xp.stack([xp.repeat(rows, n), xp.tile(xp.arange(n), rows.size)])
                          .astype(base_ind.dtype)], 1)
    val = xp.concatenate([base_val.astype(prod.dtype), prod.reshape(-1)])
    dev = mat2._device
    res = make_sparse(make_tensor(ind, dev), make_tensor(val, dev), tuple(input.shape),
                      coalesced=ind.shape[1] <= 1)
    return write_out(out, res, "sspaddmm") if out is not None else res


def saddmm(input, mat1, mat2, *, beta=1, alpha=1, out=None):
    """`sspaddmm` under its older name."""
    return sspaddmm(input, mat1, mat2, beta=beta, alpha=alpha, out=out)


def smm(input, mat2):
    """Sparse `input` @ dense `mat2` as a sparse tensor (sspaddmm with no addend)."""
    if not isinstance(input, SparseTensor):
        raise RuntimeError("tensor.sspaddmm(...) can only be called on sparse tensors")
    xp = xp_of(mat2)
    shape = (input.shape[0], mat2.shape[1] if mat2.ndim == 2 else 0)
    empty = make_sparse(make_tensor(xp.zeros((2, 0), "int64"), mat2._device),
                        make_tensor(xp.zeros((0,), mat2._array.dtype), mat2._device), shape, True)
    return sspaddmm(empty, input, mat2, beta=0, alpha=1)


def hspmm(mat1, mat2, *, out=None):
    """Sparse `mat1` @ dense `mat2` as a hybrid sparse tensor: the rows mat1 touches are its
    one sparse dim, each holding a dense row of the product."""
    if not isinstance(mat1, SparseTensor):
        raise NotImplementedError(f"Could not run 'aten::hspmm' with arguments from the "
                                  f"'{mat1.device.type.upper()}' backend.")
    if mat1.sparse_dim() != 2 or mat1.dense_dim() != 0 or mat2.ndim != 2:
        raise RuntimeError("hspmm: Argument #2: matrices expected")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"hspmm: Argument #3: Expected dim 0 size {mat1.shape[1]}, got "
                           f"{mat2.shape[0]}")
    if mat2.dtype is not mat1.dtype:
        raise RuntimeError(f"expected scalar type {mat1.dtype._scalar_name} but found "
                           f"{mat2.dtype._scalar_name}")
    rows = _touched_rows(mat1)
    dev = mat2._device
    res = make_sparse(make_tensor(rows.reshape(1, -1).astype("int64"), dev),
                      make_tensor(_rows_product(mat1, mat2, rows), dev),
                      (mat1.shape[0], mat2.shape[1]), coalesced=True)
    return write_out(out, res, "hspmm") if out is not None else res


def hsmm(input, mat2):
    """`hspmm` under its older name."""
    return hspmm(input, mat2)


def dsmm(input, mat2):
    """`input` (sparse or dense) @ dense `mat2`, a dense result (differentiable as mm)."""
    return mm(input, mat2)


def resize_as_sparse_(input, the_template):
    """Gives sparse `input` the_template's size and sparse/dense dims; an input holding
    entries keeps them and may only keep its numbers of sparse and dense dims."""
    if not isinstance(input, SparseTensor) or not isinstance(the_template, SparseTensor):
        raise RuntimeError("resize_as_sparse_: expected sparse tensors")
    sparse_dim, dense_dim = the_template.sparse_dim(), the_template.dense_dim()
    xp = xp_of(input._val)
    if input._nnz():
        for what, now, new in (("sparse", input.sparse_dim(), sparse_dim),
                               ("dense", input.dense_dim(), dense_dim)):
            if now != new:
                raise RuntimeError(
                    f"changing the number of {what} dimensions (from {now} to {new}) on a "
                    "non-empty sparse tensor is not supported.\nYou could try the following "
                    "options:\n1. If you need an empty sparse tensor of this size, call `x = "
                    "torch.sparse_coo_tensor(size)`.\n2. If you need to resize this tensor, you "
                    "have the following options:\n    1. For both sparse and dense dimensions, "
                    "keep the number of them constant and the size of them non-shrinking, and "
                    "then try the same call again.\n    2. Or, create a new sparse tensor with "
                    "the correct indices and values from this sparse tensor.")
    else:
        dense_shape = tuple(the_template.shape[sparse_dim:])
        input._ind = make_tensor(xp.zeros((sparse_dim, 0), "int64"), input._device)
        input._val = make_tensor(xp.zeros((0,) + dense_shape, input._val._array.dtype),
                                 input._device)
        input._coalesced = True
    input._array = type(input._array)(tuple(the_template.shape), input._array.dtype)
    return input
