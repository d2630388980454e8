"""Fits the polynomial of ember's float32 erfc (ember/ops/unary/_single_kernels.py,
_ERFCX32) and checks it: erfc(a) = exp(-a^2) erfcx(a) for a = |x| (clamped at CLAMP, where
float32's erfc has rounded to 0), erfcx a polynomial in t = (a - 3) / (a + 3), and
erfc(x) = 2 - erfc(-x) for x < 0. ember evaluates it in float64; the check does the same.
Needs SciPy (erfcx, erfc).

    python tools/fit_erfc.py        # prints the coefficients and the float32 errors in ulp
"""
import numpy as np
from scipy.special import erfc, erfcx

from fit_erfinv import _minimax

DEGREE, CLAMP, K = 10, 10.1, 3.0


def fit():
    a = np.linspace(0, CLAMP, 200001)
    return _minimax((a - K) / (a + K), erfcx(a), DEGREE)


def float32_errors(coefficients, points=4_000_000, seed=0):
    x = np.concatenate([np.random.default_rng(seed).uniform(-11, 11, points),
                        np.linspace(-CLAMP, CLAMP, 2_000_001)]).astype(np.float32)
    a = np.minimum(np.abs(x.astype(np.float64)), CLAMP)
    r = np.exp(-a * a) * np.polynomial.polynomial.polyval((a - K) / (a + K), coefficients)
    got = np.where(x < 0, 2 - r, r).astype(np.float32)
    exact = erfc(x.astype(np.float64))
    ulp = np.spacing(np.abs(exact.astype(np.float32))).astype(np.float64)
    return (np.abs(got - exact) / ulp).max()


if __name__ == "__main__":
    coefficients, relative = fit()
    print("erfcx's relative error:", relative)
    print("coefficients (powers of t from 0):", [float(c) for c in coefficients])
    print("float32 erfc, worst error in ulp:", float32_errors(coefficients))
