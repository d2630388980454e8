"""Op-table entries for the rest of the products in `ember/ops/linalg/` (addmv, addr,
baddbmm, addbmm and their in-place forms, outer, einsum, tensordot, kron, cross, multi_dot,
chain_matmul, vecdot) and for `ember/ops/decompositions/` (`torch.linalg` and its top-level
aliases).

Decompositions read only part of their input (cholesky and eigh a triangle) or give
factors that are unique only up to signs (svd, eigh): their entries compose the op with a
map that makes the input valid (A A^T + n I, A + A^T) and return gauge-invariant values
(U Vh, |V|), as PyTorch's own tests do.
"""
import warnings

import numpy as np

from . import OpInfo, Sample, integers, randn, register, top


def _quiet(fn):
    """Calls of deprecated functions: PyTorch warns once per process, so the warning is
    checked in tests/ops/test_linalg.py rather than by parity."""
    def call(lib, *args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(lib, *args, **kwargs)
    return call


def _plain_errors(fn):
    """torch.linalg.LinAlgError is a class of PyTorch's C extension: both libraries' errors
    are raised as RuntimeError with the same message, so parity compares the messages."""
    def call(lib, *args, **kwargs):
        try:
            return fn(lib, *args, **kwargs)
        except lib.linalg.LinAlgError as e:
            raise RuntimeError(str(e)) from None
    return call


def _well(rng, *shape):
    """Well-conditioned square matrices: random plus n on the diagonal."""
    n = shape[-1]
    return rng.standard_normal(shape) + n * np.eye(n)


def _spd(lib, a):
    return a @ a.mT + a.shape[-1] * lib.eye(a.shape[-1], dtype=a.dtype)


def _sym(a):
    return a + a.mT


_DECOMP = dict(atol=1e-4, rtol=1e-4)


def _raw_factor_samples(rng):
    """A well-conditioned factor with values off its triangle too, and wrong calls."""
    def factor(*batch):
        return randn(rng, *batch, 3, 3) + 3 * np.eye(3)
    return [Sample((factor(), randn(rng, 3, 2))),
            Sample((factor(), randn(rng, 3, 2)), dict(upper=True)),
            Sample((factor(2), randn(rng, 3, 1))),
            Sample((randn(rng, 3, 4), randn(rng, 3, 2)), raises=RuntimeError),
            Sample((integers(rng, 3, 3), integers(rng, 3, 2)), raises=NotImplementedError),
            Sample((factor(), randn(rng, 4, 2)), raises=RuntimeError)]


# ---- products ---------------------------------------------------------------------------------
def _addmv_samples(rng):
    return [Sample((randn(rng, 3), randn(rng, 3, 4), randn(rng, 4))),
            Sample((randn(rng), randn(rng, 3, 4), randn(rng, 4)), {"beta": 0.5, "alpha": 2}),
            Sample((randn(rng, 1), randn(rng, 3, 4), randn(rng, 4)), noncontig=(1, 2)),
            Sample((np.full(3, np.nan), randn(rng, 3, 4), randn(rng, 4)), {"beta": 0}, grad=(1, 2)),
            Sample((integers(rng, 3), integers(rng, 3, 4), integers(rng, 4)), {"alpha": 2}),
            Sample((randn(rng, 4), randn(rng, 3, 2), randn(rng, 2)), raises=RuntimeError),
            Sample((randn(rng, 3), randn(rng, 3, 2, 1), randn(rng, 2)), raises=RuntimeError)]


def _addr_samples(rng):
    return [Sample((randn(rng, 3, 4), randn(rng, 3), randn(rng, 4))),
            Sample((randn(rng, 4), randn(rng, 3), randn(rng, 4)), {"beta": 2, "alpha": 0.5}),
            Sample((integers(rng, 3, 4), integers(rng, 3), integers(rng, 4))),
            Sample((randn(rng, 3, 3), randn(rng, 3, 1), randn(rng, 3)), raises=RuntimeError),
            Sample((randn(rng, 3, 3), randn(rng, 3), randn(rng, 2)), raises=RuntimeError)]


def _baddbmm_samples(rng):
    return [Sample((randn(rng, 2, 3, 5), randn(rng, 2, 3, 4), randn(rng, 2, 4, 5))),
            Sample((randn(rng, 3, 1), randn(rng, 2, 3, 4), randn(rng, 2, 4, 5)),
                   {"beta": 0.5, "alpha": -1}),
            Sample((randn(rng, 2, 3, 5), randn(rng, 2, 3, 4), randn(rng, 2, 4, 5)), noncontig=(1, 2)),
            Sample((randn(rng, 2, 3, 3), randn(rng, 2, 3, 4), randn(rng, 2, 3, 3)), raises=RuntimeError)]


def _addbmm_samples(rng):
    return [Sample((randn(rng, 3, 5), randn(rng, 2, 3, 4), randn(rng, 2, 4, 5))),
            Sample((randn(rng, 5), randn(rng, 2, 3, 4), randn(rng, 2, 4, 5)), {"beta": 2, "alpha": 3}),
            Sample((randn(rng, 3, 3), randn(rng, 2, 3, 4), randn(rng, 3, 4, 3)), raises=RuntimeError),
            Sample((randn(rng, 3, 3), randn(rng, 2, 3, 4), randn(rng, 2, 3, 3)), raises=RuntimeError)]


def _outer_samples(rng):
    return [Sample((randn(rng, 3), randn(rng, 4))),
            Sample((integers(rng, 3), integers(rng, 2))),
            Sample((randn(rng, 3), randn(rng, 4)), noncontig=(0, 1)),
            Sample((randn(rng, 3, 2), randn(rng, 3)), raises=RuntimeError),
            Sample((randn(rng, 3), randn(rng, 3, 2)), raises=RuntimeError)]


def _einsum_samples(rng):
    return [Sample(("ij,jk->ik", randn(rng, 3, 4), randn(rng, 4, 5))),
            Sample(("ii->", randn(rng, 3, 3))),
            Sample(("ii->i", randn(rng, 3, 3))),
            Sample(("iij->j", randn(rng, 3, 3, 2))),
            Sample(("ij->ji", randn(rng, 3, 4))),
            Sample(("bij,bjk->bik", randn(rng, 2, 3, 4), randn(rng, 2, 4, 5))),
            Sample(("...ij,...jk", randn(rng, 2, 3, 4), randn(rng, 4, 5))),
            Sample(("i,j", randn(rng, 3), randn(rng, 4))),
            Sample(("ijk->", randn(rng, 2, 3, 4))),
            Sample(("ij,ij->i", randn(rng, 3, 4), randn(rng, 1, 4))),        # size-1 broadcast
            Sample(("ab,bc,cd->ad", randn(rng, 2, 3), randn(rng, 3, 4), randn(rng, 4, 5))),
            Sample(("i j , j -> i", randn(rng, 3, 4), randn(rng, 4))),
            Sample(("ij,jk", integers(rng, 3, 4), integers(rng, 4, 2))),
            Sample(("ij,jk->ii", randn(rng, 3, 2), randn(rng, 2, 2)), raises=RuntimeError),
            Sample(("ij,jk->iz", randn(rng, 3, 2), randn(rng, 2, 2)), raises=RuntimeError),
            Sample(("ijk,jk->i", randn(rng, 3, 2), randn(rng, 2, 2)), raises=RuntimeError),
            Sample(("ij,jk->ik", randn(rng, 3, 2), randn(rng, 3, 2)), raises=RuntimeError),
            Sample(("ij,jk", randn(rng, 3, 2)), raises=RuntimeError)]


def _tensordot_samples(rng):
    return [Sample((randn(rng, 3, 2, 4), randn(rng, 2, 4, 3))),
            Sample((randn(rng, 3, 4), randn(rng, 4, 5)), {"dims": 1}),
            Sample((randn(rng, 3, 2, 4), randn(rng, 2, 5, 3)), {"dims": ([1, 0], [0, 2])}),
            Sample((randn(rng, 3), randn(rng, 4)), {"dims": 0}),
            Sample((randn(rng, 3, 2), randn(rng, 3)), {"dims": 1}, raises=RuntimeError),
            Sample((randn(rng, 3, 2), randn(rng, 3)), {"dims": -1}, raises=RuntimeError),
            Sample((randn(rng, 3, 2), randn(rng, 3, 2)), {"dims": ([0, 1], [0])}, raises=RuntimeError)]


def _kron_samples(rng):
    return [Sample((randn(rng, 2, 3), randn(rng, 3, 2))),
            Sample((randn(rng, 2, 3), randn(rng, 4, 2, 2))),
            Sample((randn(rng, 3), randn(rng, 2))),
            Sample((integers(rng, 2, 2), integers(rng, 2, 3)))]


def _cross_samples(rng):
    return [Sample((randn(rng, 3, 4), randn(rng, 3, 4)), {"dim": 0}),
            Sample((randn(rng, 2, 3), randn(rng, 1, 3)), {"dim": -1}),
            Sample((integers(rng, 4, 3), integers(rng, 4, 3)), {"dim": 1}),
            Sample((randn(rng, 4, 3), randn(rng, 3, 4)), {"dim": 1}, raises=RuntimeError)]


def _linalg_cross_samples(rng):
    return [Sample((randn(rng, 4, 3), randn(rng, 4, 3))),
            Sample((randn(rng, 2, 3), randn(rng, 1, 3))),
            Sample((randn(rng, 3, 4), randn(rng, 3, 4)), {"dim": 0}),
            Sample((randn(rng, 3, 4), randn(rng, 3, 4)), raises=RuntimeError)]


def _multi_dot_samples(rng):
    return [Sample(([randn(rng, 3, 4), randn(rng, 4, 2)],)),
            Sample(([randn(rng, 3), randn(rng, 3, 4), randn(rng, 4, 2), randn(rng, 2)],)),
            Sample(([randn(rng, 5, 3), randn(rng, 3, 4), randn(rng, 4, 1), randn(rng, 1, 6)],)),
            Sample(([randn(rng, 3)],), raises=RuntimeError),
            Sample(([randn(rng, 3, 3), randn(rng, 4, 3)],), raises=RuntimeError),
            Sample(([randn(rng, 3, 3, 3), randn(rng, 3, 3)],), raises=RuntimeError),
            Sample(([randn(rng, 3, 3), randn(rng, 3, 3, 3), randn(rng, 3)],), raises=RuntimeError)]


def _chain_samples(rng):
    return [Sample((randn(rng, 2, 3), randn(rng, 3, 4), randn(rng, 4, 5))),
            Sample((randn(rng, 2, 3), randn(rng, 3, 4))),
            Sample((randn(rng, 3, 3), randn(rng, 3)), raises=RuntimeError)]


def _vecdot_samples(rng):
    return [Sample((randn(rng, 3, 4), randn(rng, 3, 4))),
            Sample((randn(rng, 3, 4), randn(rng, 4)), {"dim": -1}),
            Sample((randn(rng, 3, 4), randn(rng, 3, 1)), {"dim": 0}),
            Sample((randn(rng, 3), randn(rng, 4)), raises=RuntimeError)]


register(
    OpInfo("addmv", lambda lib, c, a, b, **k: lib.addmv(c, a, b, **k), _addmv_samples),
    OpInfo("addmv", lambda lib, c, a, b, **k: c.addmv(a, b, **k), lambda rng: _addmv_samples(rng)[:2],
           variant="method"),
    OpInfo("addmv_", lambda lib, c, a, b, **k: c.clone().addmv_(a, b, **k),
           lambda rng: [Sample((randn(rng, 3), randn(rng, 3, 4), randn(rng, 4)),
                               {"beta": 0.5, "alpha": 2})]),
    OpInfo("addr", lambda lib, c, a, b, **k: lib.addr(c, a, b, **k), _addr_samples),
    OpInfo("addr_", lambda lib, c, a, b, **k: c.clone().addr_(a, b, **k),
           lambda rng: _addr_samples(rng)[:1]),
    OpInfo("baddbmm", lambda lib, c, a, b, **k: lib.baddbmm(c, a, b, **k), _baddbmm_samples),
    OpInfo("baddbmm_", lambda lib, c, a, b, **k: c.clone().baddbmm_(a, b, **k),
           lambda rng: _baddbmm_samples(rng)[:1]),
    OpInfo("addbmm", lambda lib, c, a, b, **k: lib.addbmm(c, a, b, **k), _addbmm_samples),
    OpInfo("addbmm_", lambda lib, c, a, b, **k: c.clone().addbmm_(a, b, **k),
           lambda rng: _addbmm_samples(rng)[:1]),
    OpInfo("addmm_", lambda lib, c, a, b, **k: c.clone().addmm_(a, b, **k),
           lambda rng: [Sample((randn(rng, 3, 2), randn(rng, 3, 4), randn(rng, 4, 2)),
                               {"beta": 0.5, "alpha": 2})]),
    OpInfo("outer", lambda lib, a, b: lib.outer(a, b), _outer_samples, covers=("ger",)),
    OpInfo("outer", lambda lib, a, b: a.ger(b), lambda rng: _outer_samples(rng)[:1], variant="ger"),
    OpInfo("einsum", lambda lib, eq, *ops: lib.einsum(eq, *ops), _einsum_samples),
    OpInfo("einsum", lambda lib, eq, *ops: lib.einsum(eq, list(ops)),
           lambda rng: _einsum_samples(rng)[:1], variant="list"),
    OpInfo("tensordot", lambda lib, a, b, **k: lib.tensordot(a, b, **k), _tensordot_samples),
    OpInfo("kron", lambda lib, a, b: lib.kron(a, b), _kron_samples),
    OpInfo("cross", lambda lib, a, b, **k: lib.cross(a, b, **k), _cross_samples),
    OpInfo("cross", _quiet(lambda lib, a, b: lib.cross(a, b)),
           lambda rng: [Sample((randn(rng, 3, 4), randn(rng, 3, 4)))], variant="nodim"),
    OpInfo("linalg.cross", lambda lib, a, b, **k: lib.linalg.cross(a, b, **k), _linalg_cross_samples),
    OpInfo("linalg.multi_dot", lambda lib, ts: lib.linalg.multi_dot(ts), _multi_dot_samples),
    OpInfo("chain_matmul", _quiet(lambda lib, *ms: lib.chain_matmul(*ms)), _chain_samples),
    OpInfo("linalg.vecdot", lambda lib, a, b, **k: lib.linalg.vecdot(a, b, **k), _vecdot_samples),
)


# ---- decompositions --------------------------------------------------------------------------
def _square_errors(rng):
    return [Sample((randn(rng, 3, 4),), raises=RuntimeError),
            Sample((randn(rng, 3),), raises=RuntimeError),
            Sample((integers(rng, 3, 3),), raises=RuntimeError)]


def _singular():
    return np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])


def _inv_samples(rng):
    return [Sample((_well(rng, 3, 3),)), Sample((_well(rng, 2, 3, 3),)),
            Sample((_well(rng, 3, 3),), noncontig=(0,)),
            Sample((_singular(),), raises=RuntimeError),
            Sample((np.stack([np.eye(3), _singular()]),), raises=RuntimeError)] + _square_errors(rng)


def _det_samples(rng):
    return [Sample((randn(rng, 3, 3),)), Sample((randn(rng, 2, 4, 4),)),
            Sample((randn(rng, 1, 1),))] + _square_errors(rng)


def _logdet_samples(rng):
    return [Sample((randn(rng, 3, 3),)), Sample((randn(rng, 2, 3, 3),))]


def _solve_samples(rng):
    return [Sample((_well(rng, 3, 3), randn(rng, 3, 2))),
            Sample((_well(rng, 3, 3), randn(rng, 3))),
            Sample((_well(rng, 2, 3, 3), randn(rng, 2, 3))),
            Sample((_well(rng, 2, 3, 3), randn(rng, 3, 2))),
            Sample((_well(rng, 3, 3), randn(rng, 2, 3)), {"left": False}),
            Sample((_singular(), randn(rng, 3)), raises=RuntimeError),
            Sample((_well(rng, 3, 3), randn(rng, 4)), raises=RuntimeError),
            Sample((_well(rng, 3, 3), randn(rng, 3, 2)), {"left": False}, raises=RuntimeError),
            Sample((_well(rng, 3, 3), randn(rng, 3).astype(np.float32)), grad=(),
                   raises=RuntimeError)]


def _solve_tri_samples(rng):
    return [Sample((_well(rng, 3, 3), randn(rng, 3, 2)), {"upper": True}),
            Sample((_well(rng, 3, 3), randn(rng, 3, 2)), {"upper": False, "unitriangular": True}),
            Sample((_well(rng, 3, 3), randn(rng, 2, 3)), {"upper": False, "left": False}),
            Sample((_well(rng, 2, 3, 3), randn(rng, 3, 4)), {"upper": True})]


def _spd_samples(rng):
    return [Sample((randn(rng, 3, 3),)), Sample((randn(rng, 2, 4, 4),))]


def _cholesky_errors(rng):
    return [Sample((-np.eye(3),), raises=RuntimeError),
            Sample((np.diag([1.0, -1, 2]),), raises=RuntimeError),
            Sample((np.stack([np.eye(2), -np.eye(2)]),), raises=RuntimeError)] + _square_errors(rng)


def _rect_samples(rng):
    return [Sample((randn(rng, 4, 3),)), Sample((randn(rng, 3, 3),)), Sample((randn(rng, 3, 5),)),
            Sample((randn(rng, 2, 4, 3),))]


def _qr(lib, a, **k):
    return lib.linalg.qr(a, **k)


def _svd_invariant(lib, a, full_matrices=True):
    U, S, Vh = lib.linalg.svd(a, full_matrices=full_matrices)
    k = S.shape[-1]
    return U[..., :k] @ Vh[..., :k, :], S, U[..., :k].abs(), Vh[..., :k, :].abs()


def _torch_svd_invariant(lib, a, **k):
    U, S, V = lib.svd(a, **k)
    n = S.shape[-1]
    return U[..., :n] @ V[..., :n].mT, S


def _eigh_invariant(lib, a, **k):
    w, v = lib.linalg.eigh(_sym(a), **k)
    return w, v.abs()


def _eig_invariant(lib, a):
    """|L|, |V| (free of each eigenvector's phase) and V diag(L) V^-1 (A again, through both
    factors), all real for the gradient checks."""
    L, V = lib.linalg.eig(a)
    return L.abs(), V.abs(), ((V * L.unsqueeze(-2)) @ lib.linalg.inv(V)).abs()


# Sample 1 has complex eigenvectors, so its second derivative runs the backward of complex sgn
# (which ember's zero gradient got wrong until the closed form went in), matmul and broadcast add.


def _eig_samples(rng):
    """Real matrices with well-separated eigenvalues (complex pairs among them): E_ij = L_j - L_i
    divides the gradient."""
    return [Sample((0.3 * randn(rng, 3, 3) + np.diag([3.0, 0.5, -2.0]),)),
            Sample((np.array([[1.0, -2.0, 0.5], [2.0, 1.0, 0.3], [0.1, 0.2, -2.0]]),)),
            Sample((0.3 * randn(rng, 2, 4, 4) + np.diag([4.0, 1.5, -1.5, -4.0]),))]


def _lstsq(lib, a, b, **k):
    res = lib.linalg.lstsq(a, b, **k)
    return res.solution, res.residuals, res.rank, res.singular_values


def _lstsq_samples(rng):
    return [Sample((randn(rng, 5, 3), randn(rng, 5, 2))),
            Sample((randn(rng, 5, 3), randn(rng, 5, 2)), {"driver": "gelsd"}),
            Sample((randn(rng, 5, 3), randn(rng, 5)), {"driver": "gelss"}),
            Sample((randn(rng, 3, 3), randn(rng, 3, 2))),
            Sample((randn(rng, 2, 5, 3), randn(rng, 2, 5, 2)), {"driver": "gelsd"}),
            Sample((randn(rng, 5, 3), randn(rng, 4, 2)), raises=RuntimeError)]


def _rank_samples(rng):
    low = randn(rng, 5, 2) @ randn(rng, 2, 4)
    return [Sample((randn(rng, 5, 3),)), Sample((low,)), Sample((randn(rng, 2, 3, 4),)),
            Sample((low,), {"atol": 1.0}), Sample((low,), {"rtol": 0.5}),
            Sample((low @ low.T,), {"hermitian": True}),
            Sample((randn(rng, 3),), raises=RuntimeError)]


def _power_samples(rng):
    return [Sample((randn(rng, 3, 3), 0)), Sample((randn(rng, 3, 3), 1)),
            Sample((randn(rng, 3, 3), 2)), Sample((randn(rng, 2, 3, 3), 5)),
            Sample((_well(rng, 3, 3), -2)), Sample((integers(rng, 3, 3), 3)),
            Sample((randn(rng, 3, 4), 2), raises=RuntimeError),
            Sample((_singular(), -1), raises=RuntimeError)]


def _exp_samples(rng):
    return [Sample((randn(rng, 3, 3),)), Sample((randn(rng, 2, 3, 3) * 0.1,)),
            Sample((3 * randn(rng, 4, 4),)), Sample((np.zeros((2, 2)),)),
            Sample((randn(rng, 1, 1),))] + _square_errors(rng)


_ORDS = ["fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf]


def _matrix_norm_samples(rng):
    return [Sample((randn(rng, 3, 4),), {"ord": o}) for o in _ORDS] + [
        Sample((randn(rng, 2, 3, 4),), {"ord": 1, "dim": (0, 2), "keepdim": True}),
        Sample((randn(rng, 2, 3, 4),), {"ord": "nuc", "keepdim": True}),
        Sample((randn(rng, 3, 3),), {"ord": 3}, raises=RuntimeError),
        Sample((randn(rng, 3),), raises=RuntimeError)]


def _norm_samples(rng):
    return [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 3, 4),), {"ord": 2}),
            Sample((randn(rng, 3, 4),), {"ord": "fro"}), Sample((randn(rng, 4),), {"ord": 3}),
            Sample((randn(rng, 3, 4),), {"ord": 3, "dim": 1}),
            Sample((randn(rng, 2, 3, 4),), {"ord": -1, "dim": (2, 0)}),
            Sample((randn(rng, 2, 3, 4),), {"dim": (1, 2), "keepdim": True}),
            Sample((randn(rng, 2, 2, 2),), {"ord": 2}, raises=RuntimeError)]


def _quiet_spd(fn):
    return _quiet(lambda lib, a, *r, **k: fn(lib, _spd(lib, a), *r, **k))


register(
    OpInfo("linalg.inv", _plain_errors(lambda lib, a: lib.linalg.inv(a)), _inv_samples, **_DECOMP),
    OpInfo("inverse", _plain_errors(lambda lib, a: lib.inverse(a)), lambda rng: _inv_samples(rng)[:4],
           **_DECOMP),
    OpInfo("inverse", lambda lib, a: a.inverse(), lambda rng: _inv_samples(rng)[:1],
           variant="method", **_DECOMP),
    OpInfo("linalg.inv_ex", lambda lib, a: tuple(lib.linalg.inv_ex(a)),
           lambda rng: _inv_samples(rng)[:2], **_DECOMP),
    OpInfo("linalg.inv_ex", lambda lib, a: lib.linalg.inv_ex(a).info,
           lambda rng: [Sample((_singular(),), grad=())], variant="info", grad=False),
    OpInfo("linalg.det", lambda lib, a: lib.linalg.det(a), _det_samples, **_DECOMP),
    OpInfo("det", lambda lib, a: lib.det(a), lambda rng: _det_samples(rng)[:2], **_DECOMP),
    OpInfo("det", lambda lib, a: a.det(), lambda rng: _det_samples(rng)[:1], variant="method",
           **_DECOMP),
    OpInfo("linalg.slogdet", lambda lib, a: lib.linalg.slogdet(a), _det_samples, **_DECOMP),
    OpInfo("slogdet", lambda lib, a: lib.slogdet(a), lambda rng: _det_samples(rng)[:2], **_DECOMP),
    OpInfo("slogdet", lambda lib, a: a.slogdet(), lambda rng: _det_samples(rng)[:1],
           variant="method", **_DECOMP),
    OpInfo("logdet", lambda lib, a: lib.logdet(_spd(lib, a)), _logdet_samples, **_DECOMP),
    OpInfo("logdet", lambda lib, a: a.logdet(), lambda rng: _logdet_samples(rng)[:1],
           variant="signs", grad=False, **_DECOMP),
    OpInfo("linalg.solve", _plain_errors(lambda lib, a, b, **k: lib.linalg.solve(a, b, **k)),
           _solve_samples, **_DECOMP),
    OpInfo("linalg.solve_triangular",
           lambda lib, a, b, **k: lib.linalg.solve_triangular(a, b, **k), _solve_tri_samples,
           **_DECOMP),
    OpInfo("linalg.cholesky", lambda lib, a, **k: lib.linalg.cholesky(_spd(lib, a), **k),
           _spd_samples, **_DECOMP),
    OpInfo("linalg.cholesky", lambda lib, a: lib.linalg.cholesky(_spd(lib, a), upper=True),
           _spd_samples, variant="upper", **_DECOMP),
    OpInfo("linalg.cholesky", _plain_errors(lambda lib, a: lib.linalg.cholesky(a)),
           _cholesky_errors, variant="errors", grad=False),
    OpInfo("linalg.cholesky_ex", lambda lib, a: tuple(lib.linalg.cholesky_ex(_spd(lib, a))),
           _spd_samples, **_DECOMP),
    OpInfo("linalg.cholesky_ex", lambda lib, a: lib.linalg.cholesky_ex(a).info,
           lambda rng: [Sample((s.args[0],)) for s in _cholesky_errors(rng)[:3]], variant="info",
           grad=False),
    OpInfo("cholesky", _quiet_spd(lambda lib, a, **k: lib.cholesky(a, **k)), _spd_samples,
           **_DECOMP),
    OpInfo("cholesky", _quiet_spd(lambda lib, a: a.cholesky(upper=True)), _spd_samples,
           variant="method", **_DECOMP),
    OpInfo("cholesky", _quiet(_plain_errors(lambda lib, a: lib.cholesky(a))),
           lambda rng: _cholesky_errors(rng)[:1], variant="errors", grad=False),
    OpInfo("cholesky_solve",
           lambda lib, a, b: lib.cholesky_solve(b, lib.linalg.cholesky(_spd(lib, a))),
           lambda rng: [Sample((randn(rng, 3, 3), randn(rng, 3, 2))),
                        Sample((randn(rng, 2, 3, 3), randn(rng, 2, 3, 1)))], **_DECOMP),
    OpInfo("cholesky_solve",
           lambda lib, a, b: b.cholesky_solve(lib.linalg.cholesky(_spd(lib, a), upper=True),
                                              upper=True),
           lambda rng: [Sample((randn(rng, 3, 3), randn(rng, 3, 2)))], variant="upper", **_DECOMP),
    OpInfo("cholesky_inverse", lambda lib, a: lib.cholesky_inverse(lib.linalg.cholesky(_spd(lib, a))),
           _spd_samples, **_DECOMP),
    OpInfo("cholesky_inverse",
           lambda lib, a: lib.linalg.cholesky(_spd(lib, a), upper=True).cholesky_inverse(upper=True),
           _spd_samples, variant="method", **_DECOMP),
    # straight on a factor with values off its triangle: the forward reads one triangle but
    # PyTorch's gradient is its formula's whole matrix (not the true one: no gradcheck)
    OpInfo("cholesky_solve", lambda lib, l, b, **kw: lib.cholesky_solve(b, l, **kw),
           _raw_factor_samples, variant="raw", grad=False, gradgrad=False, **_DECOMP),
    OpInfo("cholesky_inverse", lambda lib, l, **kw: lib.cholesky_inverse(l, **kw),
           lambda rng: [Sample((s.args[0],), s.kwargs, raises=s.raises)
                        for s in _raw_factor_samples(rng) if len(s.args[1]) == 3],
           variant="raw", grad=False, gradgrad=False, **_DECOMP),
    OpInfo("linalg.qr", _qr, _rect_samples, **_DECOMP),
    OpInfo("linalg.qr", lambda lib, a: _qr(lib, a, mode="complete"),
           lambda rng: _rect_samples(rng)[1:3], variant="complete", **_DECOMP),
    OpInfo("linalg.qr", lambda lib, a: _qr(lib, a, mode="r"), _rect_samples, variant="r",
           grad=False, parity="none", **_DECOMP),
    OpInfo("linalg.qr", lambda lib, a: _qr(lib, a, mode="x"),
           lambda rng: [Sample((randn(rng, 3, 3),), raises=RuntimeError),
                        Sample((randn(rng, 3),), raises=RuntimeError)], variant="errors",
           grad=False),
    OpInfo("qr", _quiet(lambda lib, a, **k: lib.qr(a, **k)), _rect_samples, **_DECOMP),
    OpInfo("qr", _quiet(lambda lib, a: a.qr(some=False)), lambda rng: _rect_samples(rng)[1:3],
           variant="method", **_DECOMP),
    OpInfo("linalg.svd", lambda lib, a: _svd_invariant(lib, a, False), _rect_samples, **_DECOMP),
    OpInfo("linalg.svd", _svd_invariant, lambda rng: [Sample((randn(rng, 3, 3),))],
           variant="full", **_DECOMP),
    OpInfo("linalg.svd", lambda lib, a: tuple(t.shape for t in lib.linalg.svd(a)),
           _rect_samples, variant="shapes", grad=False),
    OpInfo("linalg.svdvals", lambda lib, a: lib.linalg.svdvals(a), _rect_samples, **_DECOMP),
    OpInfo("svd", _torch_svd_invariant, _rect_samples, **_DECOMP),
    OpInfo("svd", lambda lib, a: tuple(t.shape for t in a.svd(some=False)), _rect_samples,
           variant="shapes", grad=False),
    OpInfo("svd", lambda lib, a: a.svd(compute_uv=False)[1], lambda rng: _rect_samples(rng)[:2],
           variant="no_uv", **_DECOMP),
    OpInfo("linalg.eigh", _eigh_invariant, _spd_samples, **_DECOMP),
    OpInfo("linalg.eigh", lambda lib, a: _eigh_invariant(lib, a, UPLO="U"), _spd_samples,
           variant="upper", **_DECOMP),
    OpInfo("linalg.eigh", lambda lib, a, **k: lib.linalg.eigh(a, **k),
           lambda rng: _square_errors(rng)[:2] + [Sample((randn(rng, 3, 3),), {"UPLO": "X"},
                                                         raises=RuntimeError)],
           variant="errors", grad=False),
    OpInfo("linalg.eigvalsh", lambda lib, a: lib.linalg.eigvalsh(_sym(a)), _spd_samples, **_DECOMP),
    OpInfo("linalg.eigvals", lambda lib, a: lib.linalg.eigvals(_sym(a) + 0.5 * a),
           lambda rng: [Sample((randn(rng, 3, 3),), grad=())], grad=False, **_DECOMP),
    OpInfo("linalg.eigvals", lambda lib, a: lib.linalg.eigvals(a).abs(), _eig_samples,
           variant="abs", **_DECOMP),
    OpInfo("linalg.eig", _eig_invariant, _eig_samples, **_DECOMP),
    OpInfo("linalg.eig", lambda lib, a: lib.linalg.eig(a),
           _square_errors, variant="errors", grad=False),
    OpInfo("linalg.pinv", lambda lib, a, **k: lib.linalg.pinv(a, **k), lambda rng: _rect_samples(rng) + [
        Sample((randn(rng, 3),), raises=RuntimeError)], **_DECOMP),
    OpInfo("linalg.pinv", lambda lib, a: lib.linalg.pinv(_sym(a), hermitian=True),
           lambda rng: [Sample((randn(rng, 3, 3),))], variant="hermitian", **_DECOMP),
    OpInfo("pinverse", lambda lib, a: lib.pinverse(a), lambda rng: _rect_samples(rng)[:2],
           **_DECOMP),
    OpInfo("pinverse", lambda lib, a: a.pinverse(), lambda rng: _rect_samples(rng)[:1],
           variant="method", **_DECOMP),
    OpInfo("linalg.lstsq", _lstsq, _lstsq_samples, grad=False, **_DECOMP),
    OpInfo("linalg.lstsq", lambda lib, a, b, **k: tuple(lib.linalg.lstsq(a, b, **k)[:2]),
           _lstsq_samples, variant="differentiable", parity="none", **_DECOMP),
    OpInfo("linalg.matrix_rank", lambda lib, a, **k: lib.linalg.matrix_rank(a, **k), _rank_samples,
           grad=False),
    OpInfo("linalg.matrix_power", _plain_errors(lambda lib, a, n: lib.linalg.matrix_power(a, n)),
           _power_samples, **_DECOMP),
    OpInfo("matrix_power", lambda lib, a, n: lib.matrix_power(a, n),
           lambda rng: _power_samples(rng)[:5], **_DECOMP),
    OpInfo("matrix_power", lambda lib, a, n: a.matrix_power(n), lambda rng: _power_samples(rng)[2:3],
           variant="method", **_DECOMP),
    OpInfo("linalg.matrix_exp", lambda lib, a: lib.linalg.matrix_exp(a), _exp_samples, **_DECOMP),
    OpInfo("matrix_exp", lambda lib, a: lib.matrix_exp(a), lambda rng: _exp_samples(rng)[:2],
           **_DECOMP),
    OpInfo("matrix_exp", lambda lib, a: a.matrix_exp(), lambda rng: _exp_samples(rng)[:1],
           variant="method", **_DECOMP),
    OpInfo("linalg.matrix_norm", lambda lib, a, **k: lib.linalg.matrix_norm(a, **k),
           _matrix_norm_samples, **_DECOMP),
    OpInfo("linalg.norm", lambda lib, a, **k: lib.linalg.norm(a, **k), _norm_samples, **_DECOMP),
    OpInfo("linalg.vector_norm", lambda lib, a, **k: lib.linalg.vector_norm(a, **k),
           lambda rng: [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 3, 4),), {"ord": 3, "dim": 0}),
                        Sample((randn(rng, 3),), {"ord": "fro"}, raises=TypeError)], **_DECOMP),
    OpInfo("linalg.cond", lambda lib, a, **k: lib.linalg.cond(a, **k),
           lambda rng: [Sample((_well(rng, 3, 3),)),
                        # PyTorch's backward of these fails (it saves inv(A), then writes it)
                        Sample((_well(rng, 3, 3),), {"p": "fro"}, grad=()),
                        Sample((_well(rng, 2, 3, 3),), {"p": 1}, grad=())], **_DECOMP),
    OpInfo("linalg.diagonal", lambda lib, a, **k: lib.linalg.diagonal(a, **k),
           lambda rng: [Sample((randn(rng, 2, 3, 4),)), Sample((randn(rng, 3, 4),), {"offset": 1}),
                        Sample((randn(rng, 3, 4, 2),), {"dim1": 0, "dim2": 1})]),
)


def _upper(rng, *shape):
    return np.triu(randn(rng, *shape)) + 3 * np.eye(shape[-1])


def _triangular_solve(rng):
    return [Sample((randn(rng, 3, 2), _upper(rng, 3, 3))),
            Sample((randn(rng, 3, 2), _upper(rng, 3, 3).T), {"upper": False}),
            Sample((randn(rng, 3, 2), _upper(rng, 3, 3)), {"transpose": True}),
            Sample((randn(rng, 2, 3, 1), _upper(rng, 3, 3)), {"unitriangular": True}),
            Sample((randn(rng, 3), _upper(rng, 3, 3)), raises=RuntimeError),
            Sample((randn(rng, 2, 1), _upper(rng, 3, 3)), raises=RuntimeError)]


def _quietly(call):
    """Its deprecation warning is PyTorch's warn-once: which call gives it depends on what ran
    before in the process, so it is checked on its own (tests/ops/test_deprecated_ops.py)."""
    def run(lib, *args, **kwargs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call(lib, *args, **kwargs)
    return run


register(
    OpInfo("triangular_solve",
           _quietly(lambda lib, b, A, **k: tuple(lib.triangular_solve(b, A, **k))),
           _triangular_solve),
    OpInfo("triangular_solve", _quietly(lambda lib, b, A, **k: tuple(b.triangular_solve(A, **k))),
           _triangular_solve, variant="method"),
)


# ---- geqrf / ormqr -------------------------------------------------------------------------------
register(
    OpInfo("geqrf", lambda lib, a: lib.geqrf(a), lambda rng: [
        Sample((randn(rng, 5, 3),), grad=()), Sample((randn(rng, 2, 4),), grad=()),
        Sample((randn(rng, 2, 4, 3),), grad=()), Sample((randn(rng, 0, 3),), grad=()),
        Sample((randn(rng, 3),), raises=RuntimeError)],
        grad=False, covers=("Tensor.geqrf",)),
)


def _reflectors(rng, *shape):
    """(a, tau) of geqrf for a random matrix (NumPy's raw QR is LAPACK's geqrf, transposed)."""
    a = randn(rng, *shape)
    flat = a.reshape((-1,) + shape[-2:])
    pairs = [np.linalg.qr(m, mode="raw") for m in flat]
    k = min(shape[-2:])
    h = np.stack([p[0].T for p in pairs]).reshape(shape)
    tau = np.stack([p[1][:k] for p in pairs]).reshape(shape[:-2] + (k,))
    return h, tau


register(
    OpInfo("ormqr", top("ormqr"), lambda rng: [
        Sample((*_reflectors(rng, 5, 3), randn(rng, 5, 2))),
        Sample((*_reflectors(rng, 5, 3), randn(rng, 2, 5), False)),
        Sample((*_reflectors(rng, 5, 3), randn(rng, 5, 2)), {"transpose": True}),
        Sample((*_reflectors(rng, 2, 4, 4), randn(rng, 2, 3, 4)),
               {"left": False, "transpose": True}),
        Sample((*_reflectors(rng, 3, 5), randn(rng, 3, 2))),
        Sample((*_reflectors(rng, 5, 3), randn(rng, 4, 2)), raises=RuntimeError),
        Sample((*_reflectors(rng, 5, 3), randn(rng, 5)), raises=RuntimeError)],
        covers=("Tensor.ormqr",)),
)
