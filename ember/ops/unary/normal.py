"""The error function's relatives of `torch.special`: erfcx (the scaled complementary error
function), ndtr (the standard normal CDF), ndtri (its inverse) and log_ndtr, with PyTorch's
backward nodes.

Kernels, in float64 on Cody's rational forms (`special.py`): erfcx(x) = exp(x^2) erfc(x) is
Cody's rational function itself for x > 0.46875 (erfc before its exp(-x^2) factor), and
2 exp(x^2) - erfcx(-x) below zero. ndtri inverts erf in the middle (1 - 2p is exact there)
and, in the lower tail, solves log(erfc(y)) = log(2p) by Newton's method written on erfcx,
which keeps full relative precision down to the smallest subnormal p. ndtr is PyTorch's
composite (1 + erf(x / sqrt 2)) / 2, graph included.
"""
import math

import numpy as np

from ..._select import select
from ... import dtypes as _dt
from .._graph import Node, record
from .._writes import write_out
from .. import pointwise as _pw
from ._common import _need_tensor, _not_implemented, _unary
from ._special_kernels import (_EI_C, _EI_D, _SQRPI, _blockwise, _erf_near_zero, _erfc,
                               _erfcx_positive, _erfinv, _exp_square)
from .special import erf

__all__ = []  # torch.special only: re-exported by ember/special.py

_SQRT2 = math.sqrt(2.0)
_SQRT1_2 = math.sqrt(0.5)
_SQRT_PI = math.sqrt(math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_EXP_SQUARE_MAX = 26.7   # exp(x^2) overflows past it
_ERFCX_HUGE = 1e8        # erfcx(x) = 1 / (sqrt(pi) x) to double precision past it


def _erfcx(xp, x):
    y = xp.abs(x)
    near = y <= 0.46875
    xn = select(near, x, 0.0)
    small = xp.exp(xn * xn) * (1.0 - _erf_near_zero(xp, xn))
    yr = select(near | (y >= _ERFCX_HUGE) | xp.isnan(y), 1.0, y)
    pos = _erfcx_positive(xp, yr)
    pos = select(y >= _ERFCX_HUGE, _SQRPI / select(near, 1.0, y), pos)
    neg = 2.0 * _exp_square(xp, xp.minimum(yr, _EXP_SQUARE_MAX)) - pos
    neg = select(y > _EXP_SQUARE_MAX, np.inf, neg)
    res = select(near, small, select(x < 0, neg, pos))
    return select(xp.isnan(x), x, res)


def _erfcinv_tail(xp, q):
    """y > 0 with erfc(y) = q, for 0 < q < 1/2: a rational first guess in t = sqrt(-log(q/2)),
    then Newton on h(y) = log erfcx(y) - y^2 - log q, whose derivative is
    -2 / (sqrt(pi) erfcx(y)). h is concave and decreasing, so the steps converge from the
    guess; its residual stays accurate where erfc(y) itself would underflow."""
    t = xp.sqrt(-xp.log(0.5 * q))
    num = ((_EI_C[3] * t + _EI_C[2]) * t + _EI_C[1]) * t + _EI_C[0]
    den = (_EI_D[1] * t + _EI_D[0]) * t + 1.0
    y = num / den
    logq = xp.log(q)
    for _ in range(4):
        e = _erfcx(xp, y)
        y = y + (xp.log(e) - y * y - logq) * (0.5 * _SQRT_PI) * e
    return y


def _ndtri(xp, p):
    central = p >= 0.25
    mid = _SQRT2 * _erfinv(xp, select(central, 2.0 * p - 1.0, 0.0))
    tail = -_SQRT2 * _erfcinv_tail(xp, select(central | ~(p > 0), 0.25, 2.0 * p))
    res = select(central, mid, tail)
    res = select(p == 0, -np.inf, res)
    return select(p < 0, np.nan, select(xp.isnan(p), p, res))


def _log_ndtr(xp, x):
    t = x * _SQRT1_2
    low = x < -1.0
    tl = select(low, t, -1.0)
    lower = xp.log(_erfcx(xp, -tl) * 0.5) - tl * tl
    upper = xp.log1p(-0.5 * _erfc(xp, select(low, 0.0, t)))
    return select(low, lower, upper)


def _kernel(name, kernel):
    """The kernel here; on CUDA, cupyx.scipy.special's version of the same function."""
    def run(xp, x):
        if xp.__name__ == "cupy":  # CuPy's kernels (meta arrays take NumPy's ufuncs)
            import cupyx.scipy.special as cs
            return getattr(cs, name)(x)
        return _blockwise(kernel, xp, x)
    return run


def _no_half(fname, input, kernel):
    _need_tensor(fname, input)
    d = input.dtype
    if d.is_complex or d is _dt.float16 or d is _dt.bfloat16:
        raise _not_implemented(kernel, d)


# ==== erfcx ========================================================================================
class SpecialErfcxBackward0(Node):
    def backward(self, grad):
        t, r = self.saved_tensors
        return (2.0 * t * r - 2.0 / _SQRT_PI) * grad


def erfcx(input, *, out=None):
    _no_half("special_erfcx", input, "erfcx_cpu")
    res = _unary(input, _kernel("erfcx", _erfcx), None, None, out, "special_erfcx")
    if out is None:
        node = record(SpecialErfcxBackward0, (input,), res)
        if node is not None:
            node.save_for_backward(input, res)
    return res


# ==== ndtr: PyTorch's composite, with the nodes of its internal Scalar overloads ==================
def ndtr(input, *, out=None):
    _need_tensor("special_ndtr", input)
    scaled = _pw.scalar_op("mul", input, _SQRT1_2)
    shifted = _pw.scalar_op("add", erf(scaled), 1)
    res = _pw.scalar_op("mul", shifted, 0.5)
    return res if out is None else write_out(out, res, "special_ndtr")


# ==== ndtri, log_ndtr ==============================================================================
class SpecialNdtriBackward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return grad * (_SQRT_2PI * (r * r * 0.5).exp())


def ndtri(input, *, out=None):
    _no_half("special_ndtri", input, "ndtri_cpu")
    return _unary(input, _kernel("ndtri", _ndtri), SpecialNdtriBackward0, "result", out,
                  "special_ndtri")


class SpecialLogNdtrBackward0(Node):
    def backward(self, grad):
        t, r = self.saved_tensors
        return grad / _SQRT_2PI * (-(r + t.pow(2) / 2)).exp()


def log_ndtr(input, *, out=None):
    _no_half("special_log_ndtr", input, "log_ndtr_cpu")
    res = _unary(input, _kernel("log_ndtr", _log_ndtr), None, None, out, "special_log_ndtr")
    if out is None:
        node = record(SpecialLogNdtrBackward0, (input,), res)
        if node is not None:
            node.save_for_backward(input, res)
    return res
