"""Modified Bessel functions of the first kind: i0 (top level and `torch.special.i0`), and the
`torch.special`-only i0e, i1, i1e (exponentially scaled forms and order one), with their
backward nodes.

Kernels, in float64: the power series I_v(x) = sum_k (x/2)^(2k+v) / (k! (k+v)!) for
|x| <= 30 (positive terms: no cancellation), and past it Hankel's asymptotic expansion
I_v(x) ~ e^x / sqrt(2 pi x) * sum_k (-1)^k a_k(v) / x^k, whose smallest term near k = 2x is
far below double precision. The scaled forms use the expansion without the e^x factor.
"""
import math

import numpy as np

from ..._select import select
from .._graph import Node
from ._common import _inplace, _unary

__all__ = ["i0", "i0_"]

_SWITCH = 30.0
_SERIES_TERMS = 90
_ASYMPTOTIC_TERMS = 40


def _series(xp, x, order):
    h = x * 0.5
    q = h * h
    term = xp.ones_like(x) if order == 0 else h.copy()
    total = term.copy()
    for k in range(1, _SERIES_TERMS):
        term = term * q / (k * (k + order))
        total = total + term
    return total


def _asymptotic_scaled(xp, ax, order):
    """e^-|x| I_order(|x|) for |x| >= 30."""
    mu = 4.0 * order * order
    term = xp.ones_like(ax)
    total = term.copy()
    for k in range(1, _ASYMPTOTIC_TERMS):
        term = -term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * ax)
        total = total + term
    return total / xp.sqrt(2.0 * math.pi * ax)


def _bessel(order, scaled):
    def kernel(xp, x):
        ax = xp.abs(x)
        big = ax > _SWITCH
        small_x = select(big, 0.0, x)
        series = _series(xp, small_x, order)
        if scaled:
            series = series * xp.exp(-xp.abs(small_x))
        big_x = select(big, ax, _SWITCH + 1.0)
        asym = _asymptotic_scaled(xp, big_x, order)
        if not scaled:
            asym = asym * xp.exp(big_x)
        if order == 1:
            asym = select(x < 0, -asym, asym)
        res = select(big, asym, series)
        return select(xp.isnan(x), x, res)
    return kernel


def _gpu_or(name, kernel):
    """`kernel` here; on CUDA, cupyx.scipy.special's function of that name, with this
    kernel's values at the infinities (PyTorch's: i0(inf) and j0(inf) are nan there, SciPy's
    are inf and 0)."""
    at_inf = []

    def run(xp, x):
        if xp.__name__ == "cupy":  # CuPy's kernels (meta arrays take NumPy's ufuncs)
            import cupyx.scipy.special as cs
            if not at_inf:
                at_inf.extend(kernel(np, np.array([np.inf, -np.inf])).tolist())
            y = getattr(cs, name)(x)
            return select(x == np.inf, at_inf[0], select(x == -np.inf, at_inf[1], y))
        return kernel(xp, x)
    return run


_i0_k = _gpu_or("i0", _bessel(0, False))
_i0e_k = _gpu_or("i0e", _bessel(0, True))
_i1_k = _gpu_or("i1", _bessel(1, False))
_i1e_k = _gpu_or("i1e", _bessel(1, True))


class I0Backward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * i1(t)


def i0(input, *, out=None):
    return _unary(input, _i0_k, I0Backward0, "input", out, "i0", wide=True,
                  complex_error="i0_vml_cpu")


i0_ = _inplace(i0)


class SpecialI0EBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * (i1e(t) - t.sgn() * i0e(t))


def i0e(input, *, out=None):
    return _unary(input, _i0e_k, SpecialI0EBackward0, "input", out, "special_i0e", wide=True,
                  complex_error="i0e_cpu")


class SpecialI1Backward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        from ..pointwise import where
        zero = t == 0
        safe = where(zero, 1.0, t)
        return grad * where(zero, 0.5, i0(t) - i1(t) / safe)


def i1(input, *, out=None):
    return _unary(input, _i1_k, SpecialI1Backward0, "input", out, "special_i1", wide=True,
                  complex_error="i1_cpu")


class SpecialI1EBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        from ..pointwise import where
        zero = t == 0
        safe = where(zero, 1.0, t)
        return grad * where(zero, 0.5, i0e(t) - i1e(t) * (t.sgn() + 1.0 / safe))


def i1e(input, *, out=None):
    return _unary(input, _i1e_k, SpecialI1EBackward0, "input", out, "special_i1e", wide=True,
                  complex_error="i1e_cpu")


# ==== Bessel functions of the first kind J0, J1 (torch.special only, no derivative) ===============
# Three ranges, each where its method is accurate to double precision in absolute terms:
# |x| < 2: the power series sum_k (-1)^k (x/2)^(2k+v) / (k! (k+v)!) (terms below 1: little
# cancellation); 2 <= |x| < 25: Miller's backward recurrence J_(k-1) = (2k/x) J_k - J_(k+1)
# from k = 100, normalized by J_0 + 2 (J_2 + J_4 + ...) = 1; |x| >= 25: Hankel's expansion
# J_v(x) = sqrt(2 / (pi x)) (P cos(x - (2v+1) pi/4) - Q sin(x - (2v+1) pi/4)), whose smallest
# term there is about e^(-2x).
_J_SERIES_END = 2.0
_J_HANKEL_START = 25.0
_J_HUGE = 1e300
_MILLER_START = 100


def _j_series(xp, x, order):
    h = x * 0.5
    q = -(h * h)
    term = xp.ones_like(x) if order == 0 else h.copy()
    total = term.copy()
    for k in range(1, 30):
        term = term * q / (k * (k + order))
        total = total + term
    return total


def _j_miller(xp, x):
    """(J0(x), J1(x)) for 2 <= x < 25."""
    nxt = xp.zeros_like(x)
    cur = xp.full_like(x, 1e-30)
    norm = xp.zeros_like(x)
    j1 = None
    for k in range(_MILLER_START, 0, -1):
        prev = (2.0 * k / x) * cur - nxt   # J_(k-1), unnormalized
        nxt, cur = cur, prev
        if k - 1 == 1:
            j1 = cur
        if (k - 1) % 2 == 0 and k - 1 > 0:
            norm = norm + 2.0 * cur
    norm = norm + cur
    return cur / norm, j1 / norm


def _hankel(xp, x, order):
    """Hankel's expansion for x >= 25: (amplitude, P, Q, cos chi, sin chi) with
    chi = x - (2 order + 1) pi / 4, so that J = amplitude (P cos chi - Q sin chi) and
    Y = amplitude (P sin chi + Q cos chi) (the Bessel functions of the second kind use it too).
    cos chi and sin chi come from cos x and sin x, not from a rounded x - pi/4."""
    mu = 4.0 * order * order
    p = xp.ones_like(x)
    q = xp.zeros_like(x)
    term = xp.ones_like(x)
    for k in range(1, 40):
        term = term * (mu - (2 * k - 1) ** 2) / (k * 8.0 * x)
        if k % 2:
            q = q + (term if (k // 2) % 2 == 0 else -term)
        else:
            p = p + (term if (k // 2) % 2 == 0 else -term)
    c, s = xp.cos(x), xp.sin(x)
    if order == 0:   # x - pi/4, times sqrt(2)
        cos_chi, sin_chi = (c + s), (s - c)
    else:            # x - 3 pi/4, times sqrt(2)
        cos_chi, sin_chi = (s - c), -(s + c)
    return xp.sqrt(1.0 / (math.pi * x)), p, q, cos_chi, sin_chi


def _j_hankel(xp, x, order):
    """J_order(x) for x >= 25."""
    amplitude, p, q, cos_chi, sin_chi = _hankel(xp, x, order)
    return amplitude * (p * cos_chi - q * sin_chi)


def _bessel_j(order):
    def kernel(xp, x):
        ax = xp.abs(x)
        out = xp.empty_like(x)
        low = ax < _J_SERIES_END
        high = ax >= _J_HANKEL_START
        mid = ~(low | high)
        out[low] = _j_series(xp, ax[low], order)
        if mid.any():
            out[mid] = _j_miller(xp, ax[mid])[order]
        if high.any():
            out[high] = _j_hankel(xp, select(xp.isinf(ax[high]), _J_HUGE, ax[high]), order)
        if order == 1:
            out = select(x < 0, -out, out)
        # PyTorch gives NaN at +-inf (its phase x - pi/4 is NaN there)
        return select(xp.isnan(x) | xp.isinf(x), np.nan, out)
    return kernel


_j0_k = _gpu_or("j0", _bessel_j(0))
_j1_k = _gpu_or("j1", _bessel_j(1))


def _bessel_j_op(fname, kernel):
    def op(input, *, out=None):
        from ... import dtypes as _dt
        from ._common import _need_tensor, _not_implemented
        _need_tensor("special_" + fname, input)
        d = input.dtype
        if d.is_complex or d is _dt.float16 or d is _dt.bfloat16:
            raise _not_implemented(fname + "_cpu", d)
        return _unary(input, kernel, None, None, out, "special_" + fname, wide=True)
    op.__name__ = fname
    return op


bessel_j0 = _bessel_j_op("bessel_j0", _j0_k)
bessel_j1 = _bessel_j_op("bessel_j1", _j1_k)
