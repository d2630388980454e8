"""Op-table entries for the LU family (`ember/ops/decompositions/lu.py`): linalg.lu_factor(_ex),
linalg.lu, linalg.lu_solve, linalg.solve_ex, the deprecated lu / lu_solve, and lu_unpack.

Random matrices have well separated pivots, so the pivot order (and with it every output)
is the same in both libraries and stable under gradcheck's perturbations. Solves are
composed with the factorisation, so gradients flow through both backwards.
"""
import numpy as np

from . import OpInfo, Sample, integers, randn, register
from .linalg_extra import _DECOMP, _plain_errors, _quiet


def _factor_samples(rng):
    return [Sample((randn(rng, 3, 3),)), Sample((randn(rng, 2, 4, 4),)),
            Sample((randn(rng, 3, 5),)), Sample((randn(rng, 5, 3),)),
            Sample((randn(rng, 2, 1, 2, 3),)), Sample((randn(rng, 3, 3),), noncontig=(0,))]


def _factor_errors(rng):
    return [Sample((randn(rng, 3),), raises=RuntimeError),
            Sample((integers(rng, 3, 3),), raises=NotImplementedError),
            Sample((randn(rng, 3, 3),), {"pivot": False}, raises=RuntimeError)]


def _singular():
    return np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 1.0, 1.0]])


def _lu_solve(lib, a, b, **kw):
    return lib.linalg.lu_solve(*lib.linalg.lu_factor(a), b, **kw)


def _lu_solve_samples(rng):
    return [Sample((randn(rng, 3, 3), randn(rng, 3, 2))),
            Sample((randn(rng, 3, 3), randn(rng, 3, 2)), {"adjoint": True}),
            Sample((randn(rng, 3, 3), randn(rng, 2, 3)), {"left": False}),
            Sample((randn(rng, 3, 3), randn(rng, 2, 3)), {"left": False, "adjoint": True}),
            Sample((randn(rng, 2, 3, 3), randn(rng, 3, 1))),
            Sample((randn(rng, 3, 3), randn(rng, 2, 3, 2)), noncontig=(1,)),
            Sample((randn(rng, 3, 3), randn(rng, 4, 2)), raises=RuntimeError),
            Sample((randn(rng, 3, 3), randn(rng, 3, 2)), {"left": False}, raises=RuntimeError),
            Sample((randn(rng, 3, 3), randn(rng, 3)), raises=RuntimeError)]


def _lu_solve_raw_errors(rng):
    piv = np.array([1, 2, 3], np.int32)
    return [Sample((randn(rng, 3, 4), piv, randn(rng, 3, 2)), raises=RuntimeError),
            Sample((randn(rng, 3), piv, randn(rng, 3, 2)), raises=RuntimeError),
            Sample((randn(rng, 3, 3), piv.astype(np.int64), randn(rng, 3, 2)),
                   raises=RuntimeError),
            Sample((randn(rng, 3, 3), piv[:2], randn(rng, 3, 2)), raises=RuntimeError)]


def _solve_ex_samples(rng):
    return [Sample((randn(rng, 3, 3), randn(rng, 3, 2))),
            Sample((randn(rng, 2, 3, 3), randn(rng, 2, 3))),
            Sample((randn(rng, 3, 3), randn(rng, 2, 3)), {"left": False}),
            Sample((np.zeros((3, 3)), np.ones(3)), grad=()),
            Sample((np.zeros((3, 3)), np.ones(3)), {"check_errors": True}, raises=RuntimeError),
            Sample((np.zeros((2, 3, 3)), np.ones((3, 1))), {"check_errors": True},
                   raises=RuntimeError),
            Sample((randn(rng, 3, 3), randn(rng, 2)), raises=RuntimeError)]


register(
    OpInfo("linalg.lu_factor", lambda lib, a, **k: tuple(lib.linalg.lu_factor(a, **k)),
           _factor_samples, **_DECOMP),
    OpInfo("linalg.lu_factor", _plain_errors(lambda lib, a, **k: lib.linalg.lu_factor(a, **k)),
           lambda rng: _factor_errors(rng) + [
               Sample((_singular(),), raises=RuntimeError),
               Sample((np.zeros((2, 3, 3)),), raises=RuntimeError)],
           variant="errors", grad=False),
    OpInfo("linalg.lu_factor_ex", lambda lib, a: tuple(lib.linalg.lu_factor_ex(a)),
           _factor_samples, **_DECOMP),
    OpInfo("linalg.lu_factor_ex", lambda lib, a, **k: tuple(lib.linalg.lu_factor_ex(a, **k)),
           lambda rng: [Sample((_singular(),)), Sample((np.zeros((2, 3, 3)),)),
                        Sample((_singular() + 0j,)),
                        Sample((np.zeros((2, 3, 3)),), {"check_errors": True},
                               raises=RuntimeError)],
           variant="singular", grad=False),
    OpInfo("linalg.lu", lambda lib, a: tuple(lib.linalg.lu(a)), _factor_samples, **_DECOMP),
    OpInfo("linalg.lu", lambda lib, a: lib.linalg.lu(a).U, _factor_samples, variant="U",
           **_DECOMP),
    OpInfo("linalg.lu", lambda lib, a: lib.linalg.lu(a).L, _factor_samples, variant="L",
           **_DECOMP),
    OpInfo("linalg.lu", lambda lib, a, **k: tuple(lib.linalg.lu(a, **k)),
           lambda rng: _factor_errors(rng) + [Sample((_singular(),))], variant="errors",
           grad=False),
    OpInfo("linalg.lu_solve", _lu_solve, _lu_solve_samples, **_DECOMP),
    OpInfo("linalg.lu_solve", lambda lib, lu, piv, b: lib.linalg.lu_solve(lu, piv, b),
           _lu_solve_raw_errors, variant="errors", grad=False),
    OpInfo("linalg.solve_ex", _plain_errors(lambda lib, a, b, **k: tuple(lib.linalg.solve_ex(a, b, **k))),
           _solve_ex_samples, **_DECOMP),
    OpInfo("lu", _quiet(lambda lib, a, **k: tuple(lib.lu(a, **k))),
           lambda rng: _factor_samples(rng)[:4] + [Sample((randn(rng, 3, 3),), {"get_infos": True}),
                                                   Sample((_singular(),), {"get_infos": True}, grad=()),
                                                   Sample((_singular(),), grad=())],
           **_DECOMP),
    OpInfo("lu", _quiet(lambda lib, a, **k: tuple(a.lu(**k))),
           lambda rng: [Sample((randn(rng, 3, 3),)), Sample((randn(rng, 3),), raises=RuntimeError)],
           variant="method", **_DECOMP),
    OpInfo("lu_solve", _quiet(lambda lib, a, b: lib.lu_solve(b, *lib.linalg.lu_factor(a))),
           lambda rng: [_lu_solve_samples(rng)[i] for i in (0, 4, 6)], **_DECOMP),
    OpInfo("lu_solve", _quiet(lambda lib, a, b: b.lu_solve(*lib.lu(a))),
           lambda rng: [Sample((randn(rng, 3, 3), randn(rng, 3, 2)))], variant="method",
           **_DECOMP),
    OpInfo("lu_unpack", lambda lib, a, **k: tuple(lib.lu_unpack(*lib.linalg.lu_factor(a), **k)),
           lambda rng: _factor_samples(rng) + [Sample((randn(rng, 3, 3),), {"unpack_pivots": False})],
           **_DECOMP),
    # (L and U are empty: PyTorch's backward of them fails, so they are compared detached)
    OpInfo("lu_unpack", lambda lib, a: tuple(t.detach() for t in lib.lu_unpack(
               *lib.linalg.lu_factor(a), unpack_data=False)),
           lambda rng: [Sample((randn(rng, 3, 3),))], variant="no_data", grad=False),
    OpInfo("lu_unpack", lambda lib, lu, piv: tuple(lib.lu_unpack(lu, piv)),
           lambda rng: [Sample((randn(rng, 3, 3), np.array([1, 2, 3], np.int64)),
                               raises=RuntimeError),
                        Sample((randn(rng, 3), np.array([1, 2, 3], np.int32)), raises=IndexError)],
           variant="errors", grad=False),
)


# ---- householder_product, tensorinv, tensorsolve -----------------------------------------------
def _householder_samples(rng):
    return [Sample((randn(rng, 4, 3), randn(rng, 2))), Sample((randn(rng, 3, 3), randn(rng, 3))),
            Sample((randn(rng, 2, 5, 3), randn(rng, 2, 3))),
            Sample((randn(rng, 4, 3), randn(rng, 2)), noncontig=(0,)),
            Sample((randn(rng, 3, 4), randn(rng, 2)), raises=RuntimeError),
            Sample((randn(rng, 4, 3), randn(rng, 4)), raises=RuntimeError),
            Sample((randn(rng, 4, 3), randn(rng, 2, 2)), raises=RuntimeError),
            Sample((randn(rng, 3), randn(rng, 2)), raises=RuntimeError),
            Sample((integers(rng, 4, 3), integers(rng, 2)), raises=NotImplementedError)]


def _tensorinv_samples(rng):
    return [Sample((randn(rng, 6, 2, 3) + np.eye(6).reshape(6, 2, 3) * 3,), {"ind": 1}),
            Sample((randn(rng, 2, 2, 4) + np.eye(4).reshape(2, 2, 4) * 3,)),
            Sample((randn(rng, 4, 6),), {"ind": 1}, raises=RuntimeError),
            Sample((randn(rng, 4, 4),), {"ind": 0}, raises=RuntimeError),
            Sample((np.zeros((2, 2, 4)),), raises=RuntimeError)]


def _tensorsolve_samples(rng):
    well = randn(rng, 2, 3, 6) + np.eye(6).reshape(2, 3, 6) * 3
    return [Sample((well, randn(rng, 2, 3))),
            Sample((np.moveaxis(well, -1, 0).copy(), randn(rng, 2, 3)), {"dims": (0,)}),
            Sample((randn(rng, 2, 3, 6), randn(rng, 2, 4)), raises=RuntimeError)]


register(
    OpInfo("linalg.householder_product",
           lambda lib, a, t: lib.linalg.householder_product(a, t), _householder_samples,
           **_DECOMP),
    OpInfo("orgqr", lambda lib, a, t: lib.orgqr(a, t), lambda rng: _householder_samples(rng)[:3],
           **_DECOMP),
    OpInfo("orgqr", lambda lib, a, t: a.orgqr(t), lambda rng: _householder_samples(rng)[:1],
           variant="method", **_DECOMP),
    OpInfo("linalg.tensorinv", _plain_errors(lambda lib, a, **k: lib.linalg.tensorinv(a, **k)),
           _tensorinv_samples, **_DECOMP),
    OpInfo("linalg.tensorsolve", lambda lib, a, b, **k: lib.linalg.tensorsolve(a, b, **k),
           _tensorsolve_samples, **_DECOMP),
)
