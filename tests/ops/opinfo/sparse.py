"""Op-table entries for `ember/ops/sparse.py`: sparse COO construction and conversions,
checked through `to_dense` (gradients reach the values), and the sparse x dense products
(gradients reach the values and the dense operand)."""
import numpy as np

from . import OpInfo, Sample, randn, register

# (sparse_dim=2, nnz=5) coordinates into a 3 x 4 matrix, with a duplicate (1, 2)
_IND = np.array([[0, 1, 1, 2, 1], [3, 2, 0, 1, 2]], dtype=np.int64)
_IND_COALESCED = np.array([[0, 1, 2, 2], [1, 3, 0, 2]], dtype=np.int64)


def _construct(rng):
    return [Sample((_IND, randn(rng, 5))),
            Sample((_IND_COALESCED, randn(rng, 4))),
            Sample((_IND, randn(rng, 5, 2))),                      # hybrid: one dense dim
            Sample((_IND[:, :0], randn(rng, 0)), grad=()),         # nnz = 0
            Sample((_IND[0], randn(rng, 5)), raises=RuntimeError),  # 1-D indices
            Sample((_IND, randn(rng, 3)), raises=RuntimeError)]     # nnz mismatch


def _coo(lib, i, v):
    return lib.sparse_coo_tensor(i, v, (3, 4) + tuple(v.shape[1:]), check_invariants=True)


def _products(rng):
    return [Sample((_IND, randn(rng, 5), randn(rng, 4, 2))),
            Sample((_IND_COALESCED, randn(rng, 4), randn(rng, 4, 3))),
            Sample((_IND, randn(rng, 5), randn(rng, 4, 2)), grad=(2,)),
            Sample((_IND, randn(rng, 5), randn(rng, 4, 2)), grad=(1,)),
            Sample((_IND, randn(rng, 5), randn(rng, 5, 2)), raises=RuntimeError)]


def _dense(rng):
    x = randn(rng, 3, 4)
    x[0, 1] = x[2, 2] = 0.0   # zeros leave the pattern: finite differences there would differ
    return [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 2, 3, 2),)), Sample((x,), grad=())]


register(
    OpInfo("sparse_coo_tensor", lambda lib, i, v: _coo(lib, i, v).to_dense(), _construct,
           covers=("to_dense",)),
    OpInfo("sparse_coo_tensor", lambda lib, i, v: _coo(lib, i, v).coalesce().values(),
           lambda rng: _construct(rng)[:3], variant="coalesce_values"),
    OpInfo("mm", lambda lib, i, v, d: lib.mm(_coo(lib, i, v), d), _products, variant="sparse",
           needs=("scipy",)),
    OpInfo("spmm", lambda lib, i, v, d: lib.spmm(_coo(lib, i, v), d), _products,
           needs=("scipy",)),
    OpInfo("sparse.mm", lambda lib, i, v, d: lib.sparse.mm(_coo(lib, i, v), d), _products,
           variant="sparse", needs=("scipy",)),
    OpInfo("sparse.sum", lambda lib, i, v: lib.sparse.sum(_coo(lib, i, v)),
           lambda rng: _construct(rng)[:3]),
    OpInfo("sparse.sum", lambda lib, i, v: lib.sparse.sum(_coo(lib, i, v), 1).to_dense(),
           lambda rng: _construct(rng)[:3], variant="dim"),
    OpInfo("sparse.softmax", lambda lib, i, v: lib.sparse.softmax(_coo(lib, i, v), 1).to_dense(),
           lambda rng: _construct(rng)[:3]),
    OpInfo("sparse.softmax", lambda lib, i, v: lib.sparse.softmax(_coo(lib, i, v), 0).to_dense(),
           lambda rng: _construct(rng)[:3], variant="dim0"),
    # along a dense dimension PyTorch's backward is not the gradient (its own gradcheck fails
    # there: the rows of its result do not sum to 0): gradcheck runs, gradient parity not
    OpInfo("sparse.softmax", lambda lib, i, v: lib.sparse.softmax(_coo(lib, i, v), -1).to_dense(),
           lambda rng: _construct(rng)[2:3], variant="dense_dim", grad_parity=False),
    OpInfo("sparse.log_softmax",
           lambda lib, i, v: lib.sparse.log_softmax(_coo(lib, i, v), 1).to_dense(),
           lambda rng: _construct(rng)[:3]),
    OpInfo("sparse.log_softmax",
           lambda lib, i, v: lib.sparse.log_softmax(_coo(lib, i, v), -1).to_dense(),
           lambda rng: _construct(rng)[2:3], variant="dense_dim", grad_parity=False),
    OpInfo("to_sparse", lambda lib, x: x.to_sparse().to_dense(), _dense,
           covers=("to_sparse_coo",)),
    OpInfo("to_sparse", lambda lib, x: x.to_sparse(1).to_dense(), _dense, variant="sparse_dim"),
)


# ---- the sparse-tensor methods (and what a dense tensor answers to them) ------------------------
def _masked(rng):
    return [Sample((randn(rng, 3, 4), _IND)), Sample((randn(rng, 3, 4), _IND_COALESCED)),
            Sample((randn(rng, 3, 4, 2), _IND)),
            Sample((randn(rng, 3, 5), _IND), raises=RuntimeError)]   # sizes differ


def _mask(lib, x, i):
    mask = lib.sparse_coo_tensor(i, lib.ones(i.shape[1], *x.shape[2:], dtype=x.dtype),
                                 (3, 4) + tuple(x.shape[2:]), check_invariants=True)
    return x.sparse_mask(mask).to_dense()


def _layout_numbers(lib, i, v):
    s = _coo(lib, i, v)
    c = s.coalesce()
    return lib.tensor([s.sparse_dim(), s.dense_dim(), s._nnz(), int(s.is_coalesced()),
                       c._nnz(), int(c.is_coalesced()), v.sparse_dim(), v.dense_dim()])


def _dense_only(rng):
    return [Sample((randn(rng, 3, 4),), raises=RuntimeError)]


def _dense_no_kernel(rng):
    return [Sample((randn(rng, 3, 4),), raises=NotImplementedError)]


register(
    OpInfo("sparse_mask", _mask, _masked),
    OpInfo("sparse_dim", _layout_numbers, lambda rng: _construct(rng)[:4], grad=False,
           covers=("dense_dim", "_nnz", "is_coalesced", "coalesce")),
    OpInfo("_values", lambda lib, i, v: _coo(lib, i, v)._values() * 2,
           lambda rng: _construct(rng)[:3], grad=False),
    OpInfo("_indices", lambda lib, i, v: _coo(lib, i, v)._indices(),
           lambda rng: _construct(rng)[:3], grad=False),
    OpInfo("indices", lambda lib, i, v: _coo(lib, i, v).coalesce().indices(),
           lambda rng: _construct(rng)[:3], grad=False, covers=("values",)),
    OpInfo("indices", lambda lib, i, v: _coo(lib, i, v).indices(),
           lambda rng: [Sample((_IND, randn(rng, 5)), raises=RuntimeError)], grad=False,
           variant="uncoalesced"),
    OpInfo("values", lambda lib, i, v: _coo(lib, i, v).values(),
           lambda rng: [Sample((_IND, randn(rng, 5)), raises=RuntimeError)], grad=False,
           variant="uncoalesced"),
    OpInfo("coalesce", lambda lib, x: x.coalesce(), _dense_only, grad=False, variant="dense"),
    OpInfo("is_coalesced", lambda lib, x: x.is_coalesced(), _dense_only, grad=False,
           variant="dense"),
    OpInfo("indices", lambda lib, x: x.indices(), _dense_only, grad=False, variant="dense"),
    OpInfo("values", lambda lib, x: x.values(), _dense_only, grad=False, variant="dense"),
    # PyTorch's message goes on to list its dispatcher's registrations: the type is compared
    OpInfo("_values", lambda lib, x: x._values(), _dense_no_kernel, grad=False, variant="dense",
           covers=("_indices", "_nnz"), parity="none"),
)
