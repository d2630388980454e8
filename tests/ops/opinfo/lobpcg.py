"""Op-table entry for `lobpcg`. Its start is random (a different draw in each library), so the
eigenvalues, which do not depend on it, are compared; eigenvector and gradient parity (up to
the solver's tolerance, too loose for finite differences) are in tests/ops/test_lobpcg.py."""
import numpy as np

from . import OpInfo, Sample, register


def _spd(rng, m, spectrum=None):
    q, _ = np.linalg.qr(rng.standard_normal((m, m)))
    values = np.arange(1.0, m + 1) if spectrum is None else spectrum
    return (q * values) @ q.T


def _samples(rng):
    a = _spd(rng, 12)
    return [Sample((a,), {"k": 2}, grad=()), Sample((a,), {"k": 3, "largest": False}, grad=()),
            Sample((a,), {"k": 2, "method": "basic"}, grad=()),
            Sample((a,), {"k": 1, "B": np.eye(12) * 2.0}, grad=()),
            Sample((np.stack([a, 3 * a]),), {"k": 2}, grad=()),
            Sample((a,), {"X": rng.standard_normal((12, 3))}, grad=()),
            Sample((a,), {"k": 5}, raises=ValueError, grad=()),
            Sample((np.zeros((4, 5)),), raises=AssertionError, grad=())]


register(OpInfo("lobpcg", lambda lib, a, **k: lib.lobpcg(a, **k)[0], _samples, grad=False,
                atol=1e-4, rtol=1e-4))  # float32 stops at a residual of sqrt(eps)
