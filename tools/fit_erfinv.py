"""Fits the polynomials of ember's float32 erfinv (ember/ops/unary/_single_kernels.py,
_ERFINV32 and _ERFINV32_Q) and checks them: erfinv(x) = x P(v) with v = log((1 - x)(1 + x)), P a
polynomial on v in [-TAIL, 0] (|x| up to 0.99663), and beyond it sign(x) Q(sqrt(-v)) up to
the largest float32 below 1.

The fit is a minimax of P's relative error, found by iteratively reweighted least squares on
Chebyshev-scaled powers. ember computes v in float32 (NumPy's float32 log is 4x faster than
its float64 one) and P in float64; the check repeats that order of operations. It needs SciPy
(float64 erfinv).

    python tools/fit_erfinv.py       # prints the coefficients and the float32 errors in ulp
"""
import numpy as np
from scipy.special import erfinv

DEGREE, TAIL = 9, 5.0
TAIL_DEGREE = 7
# the tail's reach: v of the largest float32 below 1, (1 - x)(1 + x) = 2^-24 (2 - 2^-24)
S_END = np.sqrt(-np.log(2.0 ** -24 * (2 - 2.0 ** -24)))


def _minimax(t, f, degree):
    """Coefficients of a polynomial in t (in [-1, 1]) with the least worst relative error."""
    scaled = np.vander(t, degree + 1, increasing=True)
    weight = 1 / np.abs(f)
    for _ in range(60):
        c, *_ = np.linalg.lstsq(scaled * weight[:, None], f * weight, rcond=None)
        error = np.abs(scaled @ c - f) / np.abs(f)
        weight *= np.sqrt(error / error.max()) + 1e-30
    return c, error.max()


def fit():
    """P's coefficients (powers of v), its relative error, Q's (powers of s), its error."""
    v = np.linspace(-TAIL, 0, 60001)
    x = np.sqrt(-np.expm1(v))
    p = erfinv(np.maximum(x, 1e-300)) / np.maximum(x, 1e-300)
    p[x == 0] = np.sqrt(np.pi) / 2
    c, p_error = _minimax(v / (TAIL / 2) + 1, p, DEGREE)  # t = 1 + v / (TAIL / 2)
    p_coefficients = np.polynomial.Polynomial(c)(np.polynomial.Polynomial([1.0, 2 / TAIL])).coef
    s = np.linspace(np.sqrt(TAIL), S_END, 20001)
    mid, half = (S_END + np.sqrt(TAIL)) / 2, (S_END - np.sqrt(TAIL)) / 2
    c, q_error = _minimax((s - mid) / half, erfinv(np.sqrt(-np.expm1(-s * s))), TAIL_DEGREE)
    q_coefficients = np.polynomial.Polynomial(c)(
        np.polynomial.Polynomial([-mid / half, 1 / half])).coef
    return p_coefficients, p_error, q_coefficients, q_error


def float32_errors(coefficients, points=8_000_000, seed=0):
    """The worst error in ulp of ember's float32 evaluation against float64 erfinv."""
    x = np.concatenate([np.random.default_rng(seed).uniform(-1, 1, points),
                        np.linspace(-0.9966, 0.9966, 2_000_001)]).astype(np.float32)
    v = np.log((np.float32(1) - x) * (np.float32(1) + x))
    x, v = x[v >= -TAIL], v[v >= -TAIL].astype(np.float64)
    acc = v * coefficients[-1]
    for c in coefficients[-2:0:-1]:
        acc = (acc + c) * v
    got = ((acc + coefficients[0]) * x).astype(np.float32)
    exact = erfinv(x.astype(np.float64))
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    return (np.abs(got - exact) / ulp)[exact != 0].max()


def tail_errors(coefficients):
    """The worst error in ulp of the tail's float64 evaluation, over every float32 past the
    fit (there are about 2^17)."""
    start = np.float32(np.sqrt(-np.expm1(-TAIL)))
    x = np.arange(start.view(np.int32), np.float32(1).view(np.int32), dtype=np.int32)
    x = x.view(np.float32).astype(np.float64)
    s = np.sqrt(-np.log((1 - x) * (1 + x)))
    got = np.polynomial.polynomial.polyval(s, coefficients).astype(np.float32)
    exact = erfinv(x)
    return (np.abs(got - exact) / np.spacing(exact.astype(np.float32))).max()


if __name__ == "__main__":
    p_coefficients, p_error, q_coefficients, q_error = fit()
    print("P's relative error:", p_error)
    print("P (powers of v from 0):", [float(c) for c in p_coefficients])
    print("float32 erfinv, worst error in ulp:", float32_errors(p_coefficients))
    print("Q's relative error:", q_error)
    print("Q (powers of s from 0):", [float(c) for c in q_coefficients])
    print("tail, worst error in ulp:", tail_errors(q_coefficients))
