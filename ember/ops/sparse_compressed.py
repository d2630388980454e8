"""Sparse compressed tensors (CSR, CSC, BSR, BSC; `ember/_sparse_compressed.py`): construction
with PyTorch's invariant checks, and conversion to and from dense and COO tensors and between
the compressed layouts. Products, arithmetic and printing are in
`ember/ops/sparse_compressed_ops.py`.

Every stored entry is one (block row, block column) pair with its value (CSR/CSC: a number,
BSR/BSC: a block); a layout is an order of those pairs (rows first or columns first) with the
major index compressed into offsets. Conversions regroup the pairs with index arrays and move
the values with differentiable ops (index_select, indexing, index_add), so gradients reach the
values, and no dense copy is ever made. NumPy alone is enough (CuPy's arrays on the GPU).
"""
import builtins

import numpy as np

from .. import dtypes as _dt
from .._layout import sparse_bsc, sparse_bsr, sparse_coo, sparse_csc, sparse_csr, strided
from .._sparse import SparseTensor, make_sparse
from .._sparse_compressed import (BLOCK_LAYOUTS, COMPRESSED_LAYOUTS, LAYOUT_NAMES, ROW_LAYOUTS,
                                  SparseCompressedTensor, _wrong_layout, make_compressed)
from .._tensor import Tensor, make_tensor
from .sparse import _host, _invariants_checked, _named, _through, _xp, coalesce

__all__ = ["sparse_compressed_tensor", "sparse_csr_tensor", "sparse_csc_tensor",
           "sparse_bsr_tensor", "sparse_bsc_tensor", "crow_indices_copy", "col_indices_copy",
           "ccol_indices_copy", "row_indices_copy"]
METHODS = ["crow_indices", "col_indices", "ccol_indices", "row_indices", "to_sparse_csr",
           "to_sparse_csc", "to_sparse_bsr", "to_sparse_bsc"]

SparseCompressedTensorBackward0 = _named("SparseCompressedTensorBackward0")
ToSparseCsrBackward0 = _named("ToSparseCsrBackward0")
ToSparseCscBackward0 = _named("ToSparseCscBackward0")
ToSparseBsrBackward0 = _named("ToSparseBsrBackward0")
ToSparseBscBackward0 = _named("ToSparseBscBackward0")
_TO_NODES = {sparse_csr: ToSparseCsrBackward0, sparse_csc: ToSparseCscBackward0,
             sparse_bsr: ToSparseBsrBackward0, sparse_bsc: ToSparseBscBackward0}


def _layout_name(layout):
    if layout is None:
        return "none"
    return LAYOUT_NAMES.get(layout, {strided: "Strided", sparse_coo: "Sparse"}.get(layout))


def _index_names(layout):
    """(compressed, plain, what the compressed index counts, what the plain index counts)."""
    if layout in ROW_LAYOUTS:
        return "crow_indices", "col_indices", "rows", "ncols"
    return "ccol_indices", "row_indices", "columns", "nrows"


# ---- construction ---------------------------------------------------------------------------------
def _as_index(x, device):
    from .creation import tensor as _tensor
    if not isinstance(x, Tensor):
        x = _tensor(x, device=device)
    elif x._device != device:
        x = x.to(device)
    if x.dtype not in (_dt.int32, _dt.int64):
        x = x.to(_dt.int64)
    return x


def sparse_compressed_tensor(compressed_indices, plain_indices, values, size=None, *,
                             dtype=None, layout=None, device=None, pin_memory=False,
                             requires_grad=False, check_invariants=None):
    """A sparse CSR, CSC, BSR or BSC tensor (`layout`) from its compressed indices, plain
    indices and values (nnz numbers, or nnz blocks for BSR/BSC)."""
    if layout not in COMPRESSED_LAYOUTS:
        raise RuntimeError("sparse_compressed_tensor expected sparse compressed tensor layout "
                           f"but got {_layout_name(layout)}")
    from .creation import tensor as _tensor
    if not isinstance(values, Tensor):
        values = _tensor(values, dtype=dtype, device=device)
    elif dtype is not None or device is not None:
        values = values.to(device=device, dtype=dtype)
    cind = _as_index(compressed_indices, values._device)
    pind = _as_index(plain_indices, values._device)
    check_invariants = _invariants_checked(check_invariants)
    cname, pname, counted, plain_count = _index_names(layout)
    if cind._array.ndim != 1 or pind._array.ndim != 1:
        raise NotImplementedError(f"ember: sparse compressed tensors with batch dimensions "
                                  f"({cname} of {cind._array.ndim} dimensions) are not supported")
    block = layout in BLOCK_LAYOUTS
    if values._array.ndim != (3 if block else 1):
        raise NotImplementedError(f"ember: hybrid sparse compressed tensors (values of "
                                  f"{values._array.ndim} dimensions for layout "
                                  f"{layout}) are not supported")
    blocksize = tuple(values._array.shape[1:]) if block else (1, 1)
    nnz = values._array.shape[0]
    if pind._array.shape[0] != nnz:
        raise RuntimeError(f"{pname}.shape[-1] must be equal to nnz (={nnz}) as defined by "
                           f"values.shape[0], but got {pind._array.shape[0]}")
    if size is None:  # inferred from the largest plain index: a read, as in PyTorch
        major = cind._array.shape[0] - 1
        minor = int(_host(pind._array.max())) + 1 if nnz else 0
        blocks = (major, minor) if layout in ROW_LAYOUTS else (minor, major)
        size = (blocks[0] * blocksize[0], blocks[1] * blocksize[1])
    else:
        size = tuple(int(s) for s in size)
        _check_size(size, blocksize, layout, cind, cname, counted)
    if check_invariants:
        _check_invariants(cind, pind, nnz, size, blocksize, layout)
    if requires_grad:
        return make_compressed(cind, pind, values.detach().requires_grad_(), size, layout,
                               leaf=True)
    return make_compressed(cind, pind, _through(SparseCompressedTensorBackward0, values), size,
                           layout)


def _check_size(size, blocksize, layout, cind, cname, counted):
    if len(size) != 2:
        raise NotImplementedError(f"ember: sparse compressed tensors of {len(size)} dimensions "
                                  "(batch or dense dimensions) are not supported; size must "
                                  "have 2")
    for d in (0, 1):
        if blocksize[d] == 0 or size[d] % blocksize[d]:
            raise RuntimeError(f"tensor shape[{d}] (={size[d]}) must be divisible with "
                               f"blocksize[{d}] (={blocksize[d]}) as defined by values shape")
    row = layout in ROW_LAYOUTS
    blocks = size[0 if row else 1] // blocksize[0 if row else 1]
    what = counted if layout not in BLOCK_LAYOUTS else f"{counted[:-1]} blocks"
    if cind._array.shape[0] != blocks + 1:
        raise RuntimeError(f"{cname}.shape[-1] must be equal to the number of {what} + 1 "
                           f"(={blocks + 1}), but got {cind._array.shape[0]}")


def _check_invariants(cind, pind, nnz, size, blocksize, layout):
    """PyTorch's checks (`check_invariants=True`), in its order and with its messages."""
    cname, pname, counted, plain_count = _index_names(layout)
    if cind.dtype is not pind.dtype:
        raise RuntimeError(f"{cname} and {pname} must have the same dtype, bot got "
                           f"{cind.dtype._scalar_name} and {pind.dtype._scalar_name}, "
                           "respectively")
    c, p = _host(cind._array).astype(np.int64), _host(pind._array).astype(np.int64)
    if c[0] != 0:
        raise RuntimeError(f"`{cname}[..., 0] == 0` is not satisfied.")
    if c[-1] != nnz:
        raise RuntimeError(f"`{cname}[..., -1] == nnz` is not satisfied.")
    row = layout in ROW_LAYOUTS
    limit = size[1] // blocksize[1] if row else size[0] // blocksize[0]
    if nnz and (p.min() < 0 or p.max() >= limit):
        raise RuntimeError(f"`0 <= {pname} < {plain_count}` is not satisfied.")
    bad_count = (np.diff(c) < 0) | (np.diff(c) > limit)
    # each slice of the plain indices increases strictly; slice by slice, the first failing
    # slice decides the message (as PyTorch's kernel reports)
    for i in np.flatnonzero(bad_count | _unsorted_slices(c, p, bad_count)):
        if bad_count[i]:
            raise RuntimeError(f"`0 <= {cname}[..., 1:] - {cname}[..., :-1] <= {plain_count}` "
                               "is not satisfied.")
        raise RuntimeError(f"`{pname}[..., {cname}[..., i - 1]:{cname}[..., i]] for all i = 1, "
                           f"..., {'nrows' if row else 'ncols'} are sorted and distinct along "
                           "the last dimension values` is not satisfied.")


def _unsorted_slices(c, p, bad_count):
    """Which slices p[c[i]:c[i+1]] (of sound length) hold a step that does not increase."""
    nnz = p.shape[0]
    if nnz < 2:
        return np.zeros(bad_count.shape, bool)
    bad_steps = np.zeros(nnz, np.int64)  # bad_steps[k]: non-increasing steps among 1..k
    bad_steps[1:] = np.cumsum(p[1:] <= p[:-1])
    first, last = np.clip(c[:-1], 0, nnz - 1), np.clip(c[1:] - 1, 0, nnz - 1)
    return ~bad_count & (np.diff(c) >= 2) & (bad_steps[last] > bad_steps[first])


def _named_constructor(layout, cname, pname):
    def construct(compressed, plain, values, size=None, *, dtype=None, device=None,
                  pin_memory=False, requires_grad=False, check_invariants=None):
        return sparse_compressed_tensor(compressed, plain, values, size, dtype=dtype,
                                        layout=layout, device=device, pin_memory=pin_memory,
                                        requires_grad=requires_grad,
                                        check_invariants=check_invariants)
    construct.__name__ = construct.__qualname__ = f"sparse_{layout.name[7:]}_tensor"
    construct.__doc__ = (f"A sparse {layout.name[7:].upper()} tensor from `{cname}`, "
                         f"`{pname}` and `values` (`sparse_compressed_tensor` with "
                         f"layout={layout}).")
    # PyTorch's argument names for this layout (keyword callers use them)
    code = construct.__code__
    names = (cname, pname) + code.co_varnames[2:]
    construct.__code__ = code.replace(co_varnames=names)
    return construct


sparse_csr_tensor = _named_constructor(sparse_csr, "crow_indices", "col_indices")
sparse_csc_tensor = _named_constructor(sparse_csc, "ccol_indices", "row_indices")
sparse_bsr_tensor = _named_constructor(sparse_bsr, "crow_indices", "col_indices")
sparse_bsc_tensor = _named_constructor(sparse_bsc, "ccol_indices", "row_indices")


# ---- the stored entries ----------------------------------------------------------------------------
def blocksize_of(t):
    return tuple(t._val._array.shape[1:3]) if t._layout in BLOCK_LAYOUTS else (1, 1)


def stored_pairs(t):
    """(block rows, block columns) of `t`'s stored entries, in storage order (int64 arrays)."""
    xp = _xp(t)
    c = t._cind._array.astype(np.int64, copy=False)
    plain = t._pind._array.astype(np.int64, copy=False)
    # entry k lies in the slice whose offsets bracket it (searchsorted, not repeat: CuPy's
    # repeat takes no array of counts)
    positions = xp.arange(plain.shape[0], dtype=np.int64)
    major = xp.searchsorted(c[1:], positions, side="right").astype(np.int64)
    return (major, plain) if t._layout in ROW_LAYOUTS else (plain, major)


def _assemble(brow, bcol, values, shape, layout, node_cls=None):
    """A compressed tensor of `layout` from unique (block row, block column) pairs and their
    values (a Tensor, moved into the layout's order with index_select)."""
    xp = _xp(values)
    row = layout in ROW_LAYOUTS
    major, minor = (brow, bcol) if row else (bcol, brow)
    bs = tuple(values._array.shape[1:3]) if layout in BLOCK_LAYOUTS else (1, 1)
    n_major = shape[0] // bs[0] if row else shape[1] // bs[1]
    n_minor = shape[1] // bs[1] if row else shape[0] // bs[0]
    key = major * builtins.max(n_minor, 1) + minor
    # on a device, sorted every time: asking whether the keys are in order is a read
    if key.shape[0] > 1 and (xp is not np or bool((key[1:] < key[:-1]).any())):
        order = xp.argsort(key, kind="stable")
        major, minor = major[order], minor[order]
        values = values.index_select(0, make_tensor(order, values._device))
    cind = xp.searchsorted(major, xp.arange(n_major + 1, dtype=np.int64)).astype(np.int64)
    if node_cls is not None:
        values = _through(node_cls, values)
    return make_compressed(make_tensor(cind, values._device),
                           make_tensor(xp.ascontiguousarray(minor), values._device),
                           values, shape, layout)


def _group_into_blocks(rows, cols, values, shape, blocksize, layout, node_cls=None):
    """Element entries (unique rows, cols; 1-D values) gathered into the blocks that hold
    them (zeros elsewhere in a block): a BSR/BSC tensor."""
    xp = _xp(values)
    r, c = blocksize
    n_block_cols = shape[1] // c
    key = (rows // r) * n_block_cols + cols // c
    uniq, inverse = xp.unique(key, return_inverse=True)
    inverse = inverse.reshape(-1)
    slot = inverse * (r * c) + (rows % r) * c + cols % c
    from .creation import zeros
    flat = zeros(uniq.shape[0] * r * c, dtype=values.dtype, device=values._device)
    blocks = flat.index_add(0, make_tensor(slot, values._device), values)
    return _assemble(uniq // n_block_cols, uniq % n_block_cols,
                     blocks.reshape(uniq.shape[0], r, c), shape, layout, node_cls)


def to_coo(t):
    """`t`'s entries as a sparse COO tensor (element coordinates; gradients reach t's values).
    Like PyTorch, entries keep the storage order and only CSR's are marked coalesced."""
    brow, bcol = stored_pairs(t)
    values = t._val
    if t._layout in BLOCK_LAYOUTS:
        xp = _xp(t)
        r, c = blocksize_of(t)
        within_r = xp.repeat(xp.arange(r, dtype=np.int64), c)
        within_c = xp.tile(xp.arange(c, dtype=np.int64), r)
        brow = (brow[:, None] * r + within_r[None, :]).reshape(-1)
        bcol = (bcol[:, None] * c + within_c[None, :]).reshape(-1)
        values = values.reshape(-1)
    xp = _xp(t)
    indices = make_tensor(xp.stack([brow, bcol]), t._device)
    return make_sparse(indices, values, t._array.shape, t._layout is sparse_csr)


# ---- conversions ------------------------------------------------------------------------------------
def _check_blocksize(blocksize, layout, fname):
    if layout in BLOCK_LAYOUTS:
        if blocksize is None:
            return None
        blocksize = tuple(int(b) for b in blocksize)
        if len(blocksize) != 2:
            raise RuntimeError(f"{fname}: blocksize needs to be a tuple of size 2, but got "
                               f"{len(blocksize)}")
        return blocksize
    return (1, 1)


def _check_divisible(shape, blocksize, fname):
    if shape[0] % blocksize[0] or shape[1] % blocksize[1]:
        raise RuntimeError(f"{fname}: tensor sparse size ({shape[0]},{shape[1]}) must be "
                           f"divisible by given blocksize ({blocksize[0]},{blocksize[1]})")


def _matrix_only(input, fname):
    if input._array.ndim > 2:
        raise NotImplementedError(f"ember: {fname}: batch and dense dimensions of sparse "
                                  f"compressed tensors are not supported (input has "
                                  f"{input._array.ndim} dimensions)")
    if input._array.ndim < 2:
        raise RuntimeError(f"{fname}: expected a tensor of 2 dimensions, got "
                           f"{input._array.ndim}")


def _dense_to_compressed(input, layout, blocksize):
    name = layout.name[7:]
    fname = f"dense_to_sparse_{name}"
    _matrix_only(input, fname)
    shape = tuple(input._array.shape)
    xp = _xp(input)
    if layout not in BLOCK_LAYOUTS:
        rows, cols = (a.astype(np.int64) for a in xp.nonzero(input._array))
        values = input[make_tensor(rows, input._device), make_tensor(cols, input._device)]
        return _assemble(rows, cols, values, shape, layout, _TO_NODES[layout])
    _check_divisible(shape, blocksize, fname)
    r, c = blocksize
    blocks = input.reshape(shape[0] // r, r, shape[1] // c, c).permute(0, 2, 1, 3)
    kept = (input._array.reshape(shape[0] // r, r, shape[1] // c, c) != 0).any(axis=(1, 3))
    brow, bcol = (a.astype(np.int64) for a in xp.nonzero(kept))
    values = blocks[make_tensor(brow, input._device), make_tensor(bcol, input._device)]
    return _assemble(brow, bcol, values, shape, layout, _TO_NODES[layout])


def _coo_to_compressed(input, layout, blocksize):
    fname = f"sparse_coo_to_sparse_{layout.name[7:]}"
    if input.sparse_dim() != 2 or input.dense_dim() != 0:
        raise NotImplementedError(f"ember: {fname}: only a 2-D COO tensor with no dense "
                                  "dimensions converts to a compressed layout")
    s = coalesce(input)
    rows, cols = s._ind._array[0], s._ind._array[1]
    shape = tuple(input._array.shape)
    if layout not in BLOCK_LAYOUTS:
        return _assemble(rows, cols, s._val, shape, layout, _TO_NODES[layout])
    _check_divisible(shape, blocksize, fname)
    return _group_into_blocks(rows, cols, s._val, shape, blocksize, layout, _TO_NODES[layout])


def _compressed_to_compressed(input, layout, blocksize):
    fname = f"sparse_compressed_to_sparse_{layout.name[7:]}"
    source = input._layout
    if source is layout and (layout not in BLOCK_LAYOUTS or blocksize == blocksize_of(input)):
        return input
    shape = tuple(input._array.shape)
    if layout not in BLOCK_LAYOUTS:
        if source in BLOCK_LAYOUTS:
            raise RuntimeError(f"{fname}: expected SparseCsr or SparseCsc layout but got "
                               f"{LAYOUT_NAMES[source]}")
        brow, bcol = stored_pairs(input)
        return _assemble(brow, bcol, input._val, shape, layout, _TO_NODES[layout])
    if source in BLOCK_LAYOUTS:
        old = blocksize_of(input)
        if blocksize != old:
            raise RuntimeError(f"{fname}: conversion from {LAYOUT_NAMES[source]} to "
                               f"{LAYOUT_NAMES[layout]} with blocksize changed from "
                               f"{list(old)} to {list(blocksize)} is not supported")
        brow, bcol = stored_pairs(input)
        return _assemble(brow, bcol, input._val, shape, layout, _TO_NODES[layout])
    _check_divisible(shape, blocksize, fname)
    rows, cols = stored_pairs(input)
    return _group_into_blocks(rows, cols, input._val, shape, blocksize, layout,
                              _TO_NODES[layout])


def _conversion_prefix(input, target):
    """The name PyTorch's conversion errors from `input` to the `target` layout start with."""
    if input.layout is target:
        return "to_sparse"
    return "dense_to_sparse" if input.layout is strided else \
        "sparse_compressed_to_sparse" if input.layout in LAYOUT_NAMES else "sparse_coo_to_sparse"


def refuse_blocksize(input, layout, blocksize):
    """to_sparse takes a blocksize only for the block layouts (bsr, bsc), as in PyTorch."""
    if blocksize is not None and layout not in BLOCK_LAYOUTS:
        target = sparse_coo if layout is None else layout
        raise RuntimeError(f"{_conversion_prefix(input, target)}: conversion from "
                           f"{_layout_name(input.layout)} to {_layout_name(target)} with "
                           "blocksize argument given is not supported")


def to_compressed(input, layout, blocksize=None, dense_dim=None):
    """`input` (dense, COO or compressed) in a compressed `layout`."""
    fname = f"to_sparse_{layout.name[7:]}"
    refuse_blocksize(input, layout, blocksize)
    blocksize = _check_blocksize(blocksize, layout, fname)
    if blocksize is None:  # (even a block layout's own: PyTorch asks for it)
        raise RuntimeError(f"{_conversion_prefix(input, layout)}: conversion from "
                           f"{_layout_name(input.layout)} to {LAYOUT_NAMES[layout]} "
                           "without blocksize argument given is not supported")
    if dense_dim:
        raise NotImplementedError("ember: dense_dim of sparse compressed tensors is not "
                                  "supported")
    if isinstance(input, SparseCompressedTensor):
        return _compressed_to_compressed(input, layout, blocksize)
    if isinstance(input, SparseTensor):
        return _coo_to_compressed(input, layout, blocksize)
    return _dense_to_compressed(input, layout, blocksize)


def to_sparse_csr(input, dense_dim=None):
    return to_compressed(input, sparse_csr, None, dense_dim)


def to_sparse_csc(input, dense_dim=None):
    return to_compressed(input, sparse_csc, None, dense_dim)


def to_sparse_bsr(input, blocksize, dense_dim=None):
    return to_compressed(input, sparse_bsr, blocksize, dense_dim)


def to_sparse_bsc(input, blocksize, dense_dim=None):
    return to_compressed(input, sparse_bsc, blocksize, dense_dim)


# ---- the index accessors, and what a dense tensor answers to them ------------------------------
def crow_indices(input):
    _wrong_layout("crow_indices", input, True)


def col_indices(input):
    _wrong_layout("col_indices", input, True)


def ccol_indices(input):
    _wrong_layout("ccol_indices", input, False)


def row_indices(input):
    _wrong_layout("row_indices", input, False)


def crow_indices_copy(input, *, out=None):
    """`input.crow_indices()`, as a new tensor."""
    return _copy(input.crow_indices(), out)


def col_indices_copy(input, *, out=None):
    """`input.col_indices()`, as a new tensor."""
    return _copy(input.col_indices(), out)


def ccol_indices_copy(input, *, out=None):
    """`input.ccol_indices()`, as a new tensor."""
    return _copy(input.ccol_indices(), out)


def row_indices_copy(input, *, out=None):
    """`input.row_indices()`, as a new tensor."""
    return _copy(input.row_indices(), out)


def _copy(t, out):
    result = t.clone()
    if out is None:
        return result
    from ._writes import write_out
    return write_out(out, result, "copy")
