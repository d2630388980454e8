"""The sparse compressed tensors (`layout=torch.sparse_csr`, `sparse_csc`, `sparse_bsr`,
`sparse_bsc`): one class for the four layouts.

A `SparseCompressedTensor` holds three Tensors and never a dense copy: `_cind`, the compressed
indices (CSR/BSR: `crow_indices`, one more than the rows of blocks; CSC/BSC: `ccol_indices`),
`_pind`, the plain indices (CSR/BSR: `col_indices`; CSC/BSC: `row_indices`), and `_val`, the
values (nnz entries, or nnz blocks of shape blocksize for BSR/BSC). As for the COO tensor
(`ember/_sparse.py`), its `_array` is a `_Meta` stand-in that only knows shape and dtype.

Gradients flow to the values through the ordinary graph: the tensor's `requires_grad` and
`grad_fn` are its values'. One made with `requires_grad=True` is a leaf; its `.grad` is a tensor
of the same layout and indices holding the values' gradient. The ops (construction, conversions,
products, arithmetic, printing) live in `ember/ops/sparse_compressed.py`, which binds the
methods that run them onto this class.
"""
from ._layout import sparse_bsc, sparse_bsr, sparse_csc, sparse_csr
from ._sparse import SparseBase, _Meta
from ._tensor import Tensor, _make

__all__ = ["SparseCompressedTensor", "make_compressed", "COMPRESSED_LAYOUTS", "ROW_LAYOUTS",
           "BLOCK_LAYOUTS"]

COMPRESSED_LAYOUTS = (sparse_csr, sparse_csc, sparse_bsr, sparse_bsc)
ROW_LAYOUTS = (sparse_csr, sparse_bsr)          # compressed along rows: crow/col indices
BLOCK_LAYOUTS = (sparse_bsr, sparse_bsc)
# how PyTorch names a layout in its messages ("... but got SparseCsc")
LAYOUT_NAMES = {sparse_csr: "SparseCsr", sparse_csc: "SparseCsc", sparse_bsr: "SparseBsr",
                sparse_bsc: "SparseBsc"}


def make_compressed(compressed, plain, values, shape, layout, leaf=False):
    """A SparseCompressedTensor over its three Tensors (no checks, no copy)."""
    t = _make(SparseCompressedTensor, _Meta(shape, values._array.dtype), values._device)
    t._cind, t._pind, t._val, t._layout, t._leaf = compressed, plain, values, layout, leaf
    return t


def _wrong_layout(name, t, row):
    kind = "row" if row else "column"
    got = LAYOUT_NAMES.get(getattr(t, "_layout", None), "Strided")
    raise RuntimeError(f"{name} expected sparse {kind} compressed tensor layout but got {got}")


class SparseCompressedTensor(SparseBase, Tensor):
    """A sparse CSR, CSC, BSR or BSC tensor (which one: `layout`)."""

    __slots__ = ("_cind", "_pind", "_val", "_layout", "_leaf")

    # ---- layout -------------------------------------------------------------------------------
    @property
    def layout(self):
        return self._layout

    @property
    def is_sparse_csr(self):
        return self._layout is sparse_csr  # PyTorch: True for CSR alone

    def _is_row(self):
        return self._layout in ROW_LAYOUTS

    def crow_indices(self):
        if not self._is_row():
            _wrong_layout("crow_indices", self, True)
        return self._cind

    def col_indices(self):
        if not self._is_row():
            _wrong_layout("col_indices", self, True)
        return self._pind

    def ccol_indices(self):
        if self._is_row():
            _wrong_layout("ccol_indices", self, False)
        return self._cind

    def row_indices(self):
        if self._is_row():
            _wrong_layout("row_indices", self, False)
        return self._pind

    def _nnz(self):
        return self._pind._array.shape[-1]

    def sparse_dim(self):
        return 2

    def dense_dim(self):
        return 0

    def is_contiguous(self, memory_format=None):
        raise RuntimeError("Sparse CSR tensors do not have is_contiguous")

    def stride(self, dim=None):
        raise RuntimeError("Sparse CSR tensors do not have strides")

    def _grad_from_values(self, g):
        return make_compressed(self._cind, self._pind, g, self._array.shape, self._layout)

    def detach(self):
        return make_compressed(self._cind, self._pind, self._val.detach(), self._array.shape,
                               self._layout)

    def clone(self, *, memory_format=None):
        return make_compressed(self._cind.clone(), self._pind.clone(), self._val.clone(),
                               self._array.shape, self._layout)

    # ---- device and dtype ---------------------------------------------------------------------
    def to(self, *args, **kwargs):
        values = self._val.to(*args, **kwargs)
        if values is self._val:
            return self
        return make_compressed(self._cind.to(values._device), self._pind.to(values._device),
                               values, self._array.shape, self._layout)

    def __reduce_ex__(self, proto):
        return (_rebuild_compressed, (self._cind, self._pind, self._val,
                                      tuple(self._array.shape), self._layout.name))


def _rebuild_compressed(compressed, plain, values, shape, layout_name):
    from ._layout import _layout_by_name
    return make_compressed(compressed, plain, values, shape, _layout_by_name(layout_name))
