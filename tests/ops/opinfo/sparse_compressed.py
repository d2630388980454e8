"""Op-table entries for `ember/ops/sparse_compressed.py`: the CSR/CSC/BSR/BSC constructors
(checked through `to_dense`; gradients reach the values, where PyTorch has no derivative, so
gradient parity is off for them), the index accessors and their `_copy` functions, and the
conversions from dense tensors, also as the left operand of `mm` (gradients reach the dense
tensor through the conversion in both libraries)."""
import numpy as np

from . import OpInfo, Sample, randn, register

_I = np.int64
# a 3 x 4 matrix: rows [0, 2], [1], [0, 3]
_CROW, _COL = np.array([0, 2, 3, 5], _I), np.array([0, 2, 1, 0, 3], _I)
# a 3 x 4 matrix by columns: [0, 2], [1], [0], [2]
_CCOL, _ROW = np.array([0, 2, 3, 4, 5], _I), np.array([0, 2, 1, 0, 2], _I)
# 2 x 4 in 1 x 2 blocks (BSR) and 4 x 2 in 2 x 1 blocks (BSC)
_BCROW, _BCOL = np.array([0, 1, 2], _I), np.array([1, 0], _I)


def _csr_samples(rng):
    return [Sample((_CROW, _COL, randn(rng, 5))),
            Sample((np.array([0, 0, 0, 0], _I), _COL[:0], randn(rng, 0)), grad=()),
            Sample((_CROW, _COL, randn(rng, 4)), raises=RuntimeError),          # nnz differs
            Sample((np.array([0, 2, 3, 4], _I), _COL, randn(rng, 5)), raises=RuntimeError),
            Sample((_CROW, np.array([0, 4, 1, 0, 3], _I), randn(rng, 5)),       # col >= ncols
                   raises=RuntimeError),
            Sample((_CROW, np.array([2, 0, 1, 0, 3], _I), randn(rng, 5)),       # unsorted
                   raises=RuntimeError)]


def _csc_samples(rng):
    return [Sample((_CCOL, _ROW, randn(rng, 5))),
            Sample((np.array([0, 2, 3, 4], _I), _ROW, randn(rng, 5)), raises=RuntimeError)]


def _bsr_samples(rng):
    return [Sample((_BCROW, _BCOL, randn(rng, 2, 1, 2))),
            Sample((_BCROW, np.array([1, 2], _I), randn(rng, 2, 1, 2)), raises=RuntimeError)]


def _bsc_samples(rng):
    return [Sample((_BCROW, _BCOL, randn(rng, 2, 2, 1)))]


def _made(lib, name, size, *args, **kwargs):
    return getattr(lib, name)(*args, size, check_invariants=True, **kwargs)


register(
    OpInfo("sparse_csr_tensor",
           lambda lib, c, p, v: _made(lib, "sparse_csr_tensor", (3, 4), c, p, v).to_dense(),
           _csr_samples, grad_parity=False),
    OpInfo("sparse_csc_tensor",
           lambda lib, c, p, v: _made(lib, "sparse_csc_tensor", (3, 4), c, p, v).to_dense(),
           _csc_samples, grad_parity=False),
    OpInfo("sparse_bsr_tensor",
           lambda lib, c, p, v: _made(lib, "sparse_bsr_tensor", (2, 4), c, p, v).to_dense(),
           _bsr_samples, grad_parity=False),
    OpInfo("sparse_bsc_tensor",
           lambda lib, c, p, v: _made(lib, "sparse_bsc_tensor", (4, 2), c, p, v).to_dense(),
           _bsc_samples, grad_parity=False),
    OpInfo("sparse_compressed_tensor",
           lambda lib, c, p, v: _made(lib, "sparse_compressed_tensor", (3, 4), c, p, v,
                                      layout=lib.sparse_csc).to_dense(),
           _csc_samples, grad_parity=False),
)


# ---- accessors and their copies -------------------------------------------------------------------
def _row_parts(lib, c, p, v):
    s = _made(lib, "sparse_csr_tensor", (3, 4), c, p, v)
    return (s.crow_indices(), s.col_indices(), lib.crow_indices_copy(s),
            lib.col_indices_copy(s), s.values())


def _column_parts(lib, c, p, v):
    s = _made(lib, "sparse_csc_tensor", (3, 4), c, p, v)
    return (s.ccol_indices(), s.row_indices(), lib.ccol_indices_copy(s),
            lib.row_indices_copy(s))


def _dense_only(rng):
    return [Sample((randn(rng, 3, 4),), raises=RuntimeError)]


register(
    OpInfo("crow_indices", _row_parts, lambda rng: _csr_samples(rng)[:2], grad=False,
           covers=("col_indices", "crow_indices_copy", "col_indices_copy")),
    OpInfo("ccol_indices", _column_parts, lambda rng: _csc_samples(rng)[:1], grad=False,
           covers=("row_indices", "ccol_indices_copy", "row_indices_copy")),
    OpInfo("crow_indices", lambda lib, x: x.crow_indices(), _dense_only, grad=False,
           variant="dense"),
    OpInfo("col_indices", lambda lib, x: x.col_indices(), _dense_only, grad=False,
           variant="dense"),
    OpInfo("ccol_indices", lambda lib, x: x.ccol_indices(), _dense_only, grad=False,
           variant="dense"),
    OpInfo("row_indices", lambda lib, x: x.row_indices(), _dense_only, grad=False,
           variant="dense"),
    OpInfo("crow_indices_copy", lambda lib, x: lib.crow_indices_copy(x), _dense_only,
           grad=False, variant="dense"),
)


# ---- conversions from dense --------------------------------------------------------------------
def _dense(rng):
    x = randn(rng, 4, 6)
    x[0, 1] = x[2, 2] = x[3, 0] = 0.0   # zeros leave the pattern: no finite differences there
    # (PyTorch's error for a 1-D tensor is an internal IndexError: no error sample)
    return [Sample((randn(rng, 4, 6),)), Sample((x,), grad=())]


def _blocked(rng):
    x = randn(rng, 4, 6)
    x[0:2, 0:2] = 0.0                   # one whole block left out
    return [Sample((randn(rng, 4, 6),)), Sample((x,), grad=()),
            Sample((randn(rng, 5, 6),), raises=RuntimeError)]  # 5 rows in blocks of 2


def _product(rng):
    return [Sample((randn(rng, 4, 6), randn(rng, 6, 3)))]


register(
    OpInfo("to_sparse_csr", lambda lib, x: x.to_sparse_csr().values(), _dense),
    OpInfo("to_sparse_csr", lambda lib, x: x.to_sparse_csr().to_dense(), _dense,
           variant="to_dense"),
    OpInfo("to_sparse_csc", lambda lib, x: x.to_sparse_csc().values(), _dense),
    OpInfo("to_sparse_csc", lambda lib, x: x.to_sparse_csc().to_dense(), _dense,
           variant="to_dense"),
    OpInfo("to_sparse_bsr", lambda lib, x: x.to_sparse_bsr((2, 3)).values(), _blocked),
    OpInfo("to_sparse_bsc", lambda lib, x: x.to_sparse_bsc((2, 2)).values(), _blocked),
    OpInfo("to_sparse", lambda lib, x: x.to_sparse(layout=lib.sparse_csr).to_dense(),
           _dense, variant="layout_csr"),
    OpInfo("mm", lambda lib, x, d: lib.mm(x.to_sparse_csr(), d), _product,
           variant="sparse_csr"),
    OpInfo("addmm", lambda lib, x, d: lib.addmm(d[:4, :3], x.to_sparse_csr(), d, alpha=2.0),
           lambda rng: [Sample((randn(rng, 4, 6), randn(rng, 6, 3)))], variant="sparse_csr"),
)
