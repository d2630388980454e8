"""Fits the polynomial of ember's float32 normal CDF (ember/ops/activation.py, _CDF32_H) and
checks it: Phi(x) = (1 + tanh(x h(x^2))) / 2 = 1 / (1 + exp(-2 x h(x^2))), with
h(u) = atanh(2 Phi(sqrt u) - 1) / sqrt u (ember evaluates the logistic form).

The fit is a weighted minimax on u in [0, CLAMP^2], found by iteratively reweighted least
squares: the weight of a point is how much an error in h moves Phi there,
d Phi / d h = x sech^2(x h) / 2 = 2 x Phi(x) Phi(-x). It needs SciPy (float64 ndtr).

    python tools/fit_normal_cdf.py       # prints the coefficients and their float32 errors
"""
import numpy as np
from scipy.special import ndtr

DEGREE, CLAMP = 6, 5.5


def fit():
    x = np.linspace(1e-4, CLAMP, 40001)
    h = 0.5 * np.log(ndtr(x) / ndtr(-x)) / x            # atanh(2 Phi - 1) / x
    sensitivity = 2 * x * ndtr(x) * ndtr(-x) + 1e-12
    scaled = np.vander((x / CLAMP) ** 2, DEGREE + 1, increasing=True)  # well conditioned
    weight = sensitivity.copy()
    for _ in range(100):
        c, *_ = np.linalg.lstsq(scaled * weight[:, None], h * weight, rcond=None)
        error = np.abs((scaled @ c - h) * sensitivity)
        weight *= np.sqrt(error / error.max()) + 1e-30  # lean on the worst points
    return c / CLAMP ** (2 * np.arange(DEGREE + 1))


def float32_errors(coefficients, points=20_000_000, seed=0):
    """Worst errors of the float32 evaluation (in ember's order of operations) against
    float64: Phi in ulp for x > 0, Phi absolute anywhere, gelu = x Phi in ulp for x > 0."""
    h = [np.float32(-2.0) * np.float32(c) for c in coefficients]
    x = np.random.default_rng(seed).uniform(-7, 7, points).astype(np.float32)
    u = np.minimum(x * x, np.float32(CLAMP ** 2))
    phi = u * h[-1]
    for c in h[-2:0:-1]:
        phi = (phi + c) * u
    with np.errstate(over="ignore"):
        phi = np.float32(1) / (np.exp((phi + h[0]) * x) + np.float32(1))
    exact = ndtr(x.astype(np.float64))
    error = np.abs(phi - exact)
    positive = x > 0
    ulp = np.spacing(exact.astype(np.float32)).astype(np.float64)
    gelu_exact = x * exact
    gelu_ulp = np.spacing(np.abs(gelu_exact).astype(np.float32)).astype(np.float64)
    return ((error / ulp)[positive].max(), error.max(),
            (np.abs(x * phi.astype(np.float64) - gelu_exact) / gelu_ulp)[positive].max())


if __name__ == "__main__":
    coefficients = fit()
    print("_CDF32_H =", tuple(float(c) for c in coefficients))
    phi_ulp, phi_abs, gelu_ulp = float32_errors(coefficients)
    print(f"Phi: {phi_ulp:.2f} ulp (x > 0), {phi_abs:.2e} absolute; gelu: {gelu_ulp:.2f} ulp (x > 0)")
