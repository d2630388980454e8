"""Op-table entries for `linalg.ldl_factor`, `linalg.ldl_factor_ex` and `linalg.ldl_solve`
(symmetric and Hermitian indefinite matrices; PyTorch differentiates neither op)."""
import numpy as np

from . import OpInfo, Sample, register


def _symmetric(rng, *shape, complex_=False, hermitian=False):
    a = rng.standard_normal(shape)
    if complex_:
        a = a + 1j * rng.standard_normal(shape)
    return (a + (np.conj(np.swapaxes(a, -1, -2)) if hermitian else np.swapaxes(a, -1, -2))) / 2


def _needs_2x2(rng):
    """A zero diagonal forces Bunch-Kaufman's 2x2 pivots and interchanges."""
    a = _symmetric(rng, 5, 5)
    np.fill_diagonal(a, 0.0)
    return a


def _factor_samples(rng):
    return [Sample((_symmetric(rng, 4, 4),)), Sample((_symmetric(rng, 3, 5, 5),)),
            Sample((_needs_2x2(rng),)), Sample((_symmetric(rng, 1, 1),)),
            Sample((np.zeros((2, 0, 0)),)),
            Sample((_symmetric(rng, 4, 4, complex_=True),)),
            Sample((_symmetric(rng, 4, 4, complex_=True, hermitian=True),), {"hermitian": True}),
            Sample((_needs_2x2(rng) + 0j,), {"hermitian": True}),
            Sample((_symmetric(rng, 4, 4),), {"hermitian": True}),
            Sample((rng.standard_normal((2, 3)),), raises=RuntimeError),
            Sample((rng.standard_normal(3),), raises=RuntimeError),
            Sample((np.arange(9).reshape(3, 3),), raises=RuntimeError),
            Sample((_symmetric(rng, 3, 3).astype(np.float16),), raises=NotImplementedError)]


def _singular_samples(rng):
    a = _symmetric(rng, 4, 4)
    a[1, :] = a[:, 1] = 0.0
    return [Sample((np.zeros((3, 3)),)), Sample((a,)), Sample((np.zeros((2, 3, 3)),))]


def _solve(lib, a, b, **kwargs):
    LD, pivots = lib.linalg.ldl_factor(a, **kwargs)
    return lib.linalg.ldl_solve(LD, pivots, b, **kwargs)


def _solve_errors(lib, a, b, pivots_len=None, ld_cols=None):
    LD, pivots = lib.linalg.ldl_factor(a)
    if pivots_len is not None:
        pivots = pivots[..., :pivots_len]
    if ld_cols is not None:
        LD = LD[..., :ld_cols, :]
    return lib.linalg.ldl_solve(LD, pivots, b)


def _solve_samples(rng):
    return [Sample((_symmetric(rng, 4, 4), rng.standard_normal((4, 2)))),
            Sample((_needs_2x2(rng), rng.standard_normal((5, 3)))),
            Sample((_symmetric(rng, 2, 3, 3), rng.standard_normal((3, 1)))),
            Sample((_symmetric(rng, 3, 3), rng.standard_normal((2, 3, 2)))),
            Sample((_symmetric(rng, 4, 4, complex_=True), rng.standard_normal((4, 2)) + 0.5j)),
            Sample((_symmetric(rng, 4, 4, complex_=True, hermitian=True),
                    rng.standard_normal((4, 2)) - 1j), {"hermitian": True}),
            Sample((_needs_2x2(rng) + 0j, rng.standard_normal((5, 2)) + 1j),
                   {"hermitian": True})]


def _solve_error_samples(rng):
    a = _symmetric(rng, 3, 3)
    return [Sample((a, rng.standard_normal(3)), raises=IndexError),
            Sample((a, rng.standard_normal((4, 2))), raises=RuntimeError),
            Sample((a, rng.standard_normal((3, 2)).astype(np.float32)), raises=RuntimeError),
            Sample((a, rng.standard_normal((3, 2))), {"pivots_len": 2}, raises=RuntimeError),
            Sample((a, rng.standard_normal((3, 2))), {"ld_cols": 2}, raises=RuntimeError)]


def _no_grad(samples):
    """No input requires grad: the op table's gradient parity would call backward, which
    PyTorch refuses for these ops (tests/ops/test_ldl.py checks that refusal)."""
    def run(rng):
        out = samples(rng)
        for s in out:
            s.grad = ()
        return out
    return run


_factor_samples, _singular_samples = _no_grad(_factor_samples), _no_grad(_singular_samples)
_solve_samples, _solve_error_samples = _no_grad(_solve_samples), _no_grad(_solve_error_samples)

register(
    OpInfo("linalg.ldl_factor", lambda lib, a, **k: tuple(lib.linalg.ldl_factor(a, **k)),
           _factor_samples, grad=False, atol=1e-4, rtol=1e-4),
    OpInfo("linalg.ldl_factor_ex", lambda lib, a, **k: tuple(lib.linalg.ldl_factor_ex(a, **k)),
           _factor_samples, grad=False, atol=1e-4, rtol=1e-4),
    OpInfo("linalg.ldl_factor_ex", lambda lib, a: tuple(lib.linalg.ldl_factor_ex(a)),
           _singular_samples, grad=False, variant="singular"),
    OpInfo("linalg.ldl_solve", _solve, _solve_samples, grad=False, atol=1e-4, rtol=1e-4),
    OpInfo("linalg.ldl_solve", _solve_errors, _solve_error_samples, grad=False,
           variant="errors"),
)
