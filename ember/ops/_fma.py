"""a * b + c with one rounding, as the fused multiply-adds compiled into PyTorch's CPU kernels
(linspace's steps, the uniform sampler's scaling): NumPy has no FMA, and two roundings
differ from it in the last place for a large share of values."""
import numpy as np


def fused_multiply_add(a, b, c):
    """a * b + c rounded once, in the type of `a` (float32 or float64)."""
    if a.dtype == np.float32:  # the float32 product is exact in float64; one rounding after
        return (a.astype(np.float64) * b + np.float64(c)).astype(np.float32)
    # float64: the product's rounding error and the sum's, exactly (Dekker, Knuth), added back
    p = a * b
    ah, al = _halves(a)
    bh, bl = _halves(b)
    p_err = ((ah * bh - p) + ah * bl + al * bh) + al * bl
    s = p + c
    v = s - p
    s_err = (p - (s - v)) + (c - v)
    fused = s + (s_err + p_err)
    # near the float64 limit the split overflows: there the plain sum is the value
    return np.where(np.isfinite(fused), fused, s)


def _halves(x):
    """x = hi + lo, each half of the float64 mantissa (so their products are exact)."""
    t = 134217729.0 * x  # 2**27 + 1
    hi = t - (t - x)
    return hi, x - hi
