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
        small_x = xp.where(big, 0.0, x)
        series = _series(xp, small_x, order)
        if scaled:
            series = series * xp.exp(-xp.abs(small_x))
        big_x = xp.where(big, ax, _SWITCH + 1.0)
        asym = _asymptotic_scaled(xp, big_x, order)
        if not scaled:
            asym = asym * xp.exp(big_x)
        if order == 1:
            asym = xp.where(x < 0, -asym, asym)
        res = xp.where(big, asym, series)
        return xp.where(xp.isnan(x), x, res)
    return kernel


def _gpu_or(name, kernel):
    def run(xp, x):
        if xp is not np:
            import cupyx.scipy.special as cs
            return getattr(cs, name)(x)
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
