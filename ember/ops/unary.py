"""Elementwise math beyond the core arithmetic: exp2, log1p, trig and hyperbolic functions, erf
and friends, rounding, and the other pointwise ops of PyTorch, with derivatives.

Layout: the special-function kernels on float64 arrays (erf, erfc, erfinv, lgamma, digamma,
polygamma: NumPy has none and SciPy is not a dependency), then the ops, each with its
backward node, then the in-place forms. Float16 and bfloat16 are computed in float32 and
rounded once, as PyTorch's CPU kernels do; the special functions compute in float64.
"""
import builtins
import math
from fractions import Fraction

import numpy as np

from .. import dtypes as _dt
from .._tensor import Tensor, make_tensor
from ._graph import Node, _type_name, inplace, record, write_out
from . import pointwise as _pw
from .pointwise import BinaryNode, binary, where, xp_of

__all__ = [
    "exp2", "expm1", "log2", "log10", "log1p", "rsqrt", "tan", "asin", "acos", "atan", "atan2",
    "arctan2", "sinh", "cosh", "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan",
    "arcsinh", "arccosh", "arctanh", "logit", "erf", "erfc", "erfinv", "lgamma", "digamma",
    "reciprocal", "square", "floor", "ceil", "round", "trunc", "fix", "frac", "fmod", "fmax",
    "fmin", "lerp", "addcmul", "addcdiv", "hypot", "xlogy", "copysign", "nan_to_num", "isnan",
    "isinf", "isfinite", "isposinf", "isneginf", "isreal", "isclose", "signbit", "deg2rad",
    "rad2deg", "sinc", "heaviside", "float_power", "positive", "angle",
    # PyTorch's top-level in-place forms
    "exp2_", "expm1_", "log2_", "log10_", "log1p_", "rsqrt_", "tan_", "asin_", "acos_", "atan_",
    "sinh_", "cosh_", "asinh_", "acosh_", "atanh_", "arcsin_", "arccos_", "arctan_",
    "arcsinh_", "arccosh_", "arctanh_", "logit_", "erf_", "erfc_", "reciprocal_", "square_",
    "floor_", "ceil_", "round_", "trunc_", "fix_", "frac_", "xlogy_", "nan_to_num_",
    "deg2rad_", "rad2deg_", "sinc_",
]
_INPLACE_METHODS = [
    "exp2_", "expm1_", "log2_", "log10_", "log1p_", "rsqrt_", "tan_", "asin_", "acos_", "atan_",
    "atan2_", "arctan2_", "sinh_", "cosh_", "asinh_", "acosh_", "atanh_", "arcsin_", "arccos_",
    "arctan_", "arcsinh_", "arccosh_", "arctanh_", "logit_", "erf_", "erfc_", "erfinv_",
    "lgamma_", "digamma_", "reciprocal_", "square_", "floor_", "ceil_", "round_", "trunc_",
    "fix_", "frac_", "fmod_", "lerp_", "addcmul_", "addcdiv_", "hypot_", "xlogy_", "copysign_",
    "nan_to_num_", "deg2rad_", "rad2deg_", "sinc_", "heaviside_", "float_power_"]
METHODS = [n for n in __all__ if not n.endswith("_")] + _INPLACE_METHODS

_HALF = (np.dtype(np.float16), _dt.bfloat16.np)
_PI = math.pi


# ==== helpers =====================================================================================
def _module(*arrays):
    """The array module of the first backend array among `arrays` (numbers are skipped)."""
    for a in arrays:
        if isinstance(a, np.ndarray):
            return np
        if type(a).__module__.split(".")[0] == "cupy":
            import cupy
            return cupy
    return np


def _compute(xp, arr, kernel, wide=False):
    """`kernel(xp, arr)` with half types (and float32 when `wide`) computed in a wider type."""
    dt = arr.dtype
    if dt in _HALF or (wide and dt == np.float32):
        return kernel(xp, arr.astype(np.float64 if wide else np.float32)).astype(dt)
    return kernel(xp, arr)


def _opmath(fn):
    """A binary array function computed in float32 for half types, rounded once. A Python
    number operand takes the array's dtype first (PyTorch's wrapped numbers)."""
    def run(x, y):
        dt = x.dtype if hasattr(x, "dtype") else y.dtype
        if not hasattr(x, "dtype"):
            x = _module(y).asarray(x, dtype=dt)
        elif not hasattr(y, "dtype"):
            y = _module(x).asarray(y, dtype=dt)
        if dt in _HALF:
            x = x.astype(np.float32) if hasattr(x, "astype") else x
            y = y.astype(np.float32) if hasattr(y, "astype") else y
            return fn(x, y).astype(dt)
        return fn(x, y)
    return run


def _need_tensor(fname, value, name="input", position=1):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{type(value).__name__}")


def _not_implemented(kernel, d):
    return NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(d)}\'')


def _zeros(like):
    return make_tensor(xp_of(like).zeros_like(like._array), like._device)


def _float_input(input):
    """The array of `input` in a floating dtype (integers and bools: the default dtype)."""
    arr = input._array
    if arr.dtype.kind in "biu":
        arr = arr.astype(_dt.get_default_dtype().np)
    return arr


def _unary(input, kernel, node_cls, save, out, fname, *, wide=False, complex_error=None):
    """A float-valued unary op: integer inputs give the default dtype; `save` says what the
    backward needs ('input', 'result' or None)."""
    _need_tensor(fname, input)
    if complex_error is not None and input._array.dtype.kind == "c":
        raise _not_implemented(complex_error, input.dtype)
    arr = _float_input(input)
    res = make_tensor(_compute(xp_of(input), arr, kernel, wide), input._device)
    if out is not None:
        return write_out(out, res, fname)
    if node_cls is not None:
        node = record(node_cls, (input,), res)
        if node is not None and save is not None:
            node.save_for_backward(input if save == "input" else res)
    return res


def _promoted(*values):
    return _dt.promote_operands([
        (v.dtype, v._array.ndim) if isinstance(v, Tensor) else (_dt.scalar_dtype(v), None)
        for v in values])


# ==== special-function kernels (float64 arrays) ====================================================
# erf / erfc: W. J. Cody, "Rational Chebyshev approximations for the error function",
# Math. Comp. 1969: three intervals, near-minimax rational functions (18 significant digits).
_ERF_A = (3.1611237438705656, 113.864154151050156, 377.485237685302021, 3209.37758913846947,
          0.185777706184603153)
_ERF_B = (23.6012909523441209, 244.024637934444173, 1282.61652607737228, 2844.23683343917062)
_ERF_C = (0.564188496988670089, 8.88314979438837594, 66.1191906371416295, 298.635138197400131,
          881.95222124176909, 1712.04761263407058, 2051.07837782607147, 1230.33935479799725,
          2.15311535474403846e-8)
_ERF_D = (15.7449261107098347, 117.693950891312499, 537.181101862009858, 1621.38957456669019,
          3290.79923573345963, 4362.61909014324716, 3439.36767414372164, 1230.33935480374942)
_ERF_P = (0.305326634961232344, 0.360344899949804439, 0.125781726111229246,
          0.0160837851487422766, 6.58749161529837803e-4, 0.0163153871373020978)
_ERF_Q = (2.56852019228982242, 1.87295284992346047, 0.527905102951428412,
          0.0605183413124413191, 0.00233520497626869185)
_SQRPI = 0.56418958354775628695  # 1 / sqrt(pi)
_ERF_THRESH, _ERF_XBIG = 0.46875, 27.3  # erfc underflows to 0 past XBIG


def _erf_near_zero(xp, x):
    """erf(x) for |x| <= 0.46875."""
    ysq = x * x
    num, den = _ERF_A[4] * ysq, ysq
    for i in range(3):
        num = (num + _ERF_A[i]) * ysq
        den = (den + _ERF_B[i]) * ysq
    return x * (num + _ERF_A[3]) / (den + _ERF_B[3])


def _erfc_positive(xp, y):
    """erfc(y) for y = |x| > 0.46875 (either rational form, then exp(-y^2) split for accuracy)."""
    small = y <= 4.0
    ym = xp.where(small, y, 1.0)
    num, den = _ERF_C[8] * ym, ym
    for i in range(7):
        num = (num + _ERF_C[i]) * ym
        den = (den + _ERF_D[i]) * ym
    mid = (num + _ERF_C[7]) / (den + _ERF_D[7])
    yl = xp.where(small, 5.0, y)
    ysq = 1.0 / (yl * yl)
    num, den = _ERF_P[5] * ysq, ysq
    for i in range(4):
        num = (num + _ERF_P[i]) * ysq
        den = (den + _ERF_Q[i]) * ysq
    large = (_SQRPI - ysq * (num + _ERF_P[4]) / (den + _ERF_Q[4])) / yl
    r = xp.where(small, mid, large)
    yc = xp.minimum(y, _ERF_XBIG)
    head = xp.trunc(yc * 16.0) / 16.0
    tail = (yc - head) * (yc + head)
    r = xp.exp(-head * head) * xp.exp(-tail) * r
    return xp.where(y >= _ERF_XBIG, 0.0, r)


def _erf(xp, x):
    y = xp.abs(x)
    near = y <= _ERF_THRESH
    small = _erf_near_zero(xp, xp.where(near, x, 0.0))
    c = _erfc_positive(xp, xp.where(near, 1.0, y))
    far = (0.5 - c) + 0.5
    return xp.where(near, small, xp.where(x < 0, -far, far))


def _erfc(xp, x):
    y = xp.abs(x)
    near = y <= _ERF_THRESH
    small = 1.0 - _erf_near_zero(xp, xp.where(near, x, 0.0))
    c = _erfc_positive(xp, xp.where(near, 1.0, y))
    return xp.where(near, small, xp.where(x < 0, 2.0 - c, c))


# erfinv: a rational first guess (central and tail forms) refined on erf / erfc.
_EI_A = (0.886226899, -1.645349621, 0.914624893, -0.140543331)
_EI_B = (-2.118377725, 1.442710462, -0.329097515, 0.012229801)
_EI_C = (-1.970840454, -1.624906493, 3.429567803, 1.641345311)
_EI_D = (3.543889200, 1.637067800)
_TWO_OVER_SQRTPI = 2.0 / math.sqrt(math.pi)


def _erfinv(xp, y):
    ay = xp.abs(y)
    central = ay <= 0.7
    z = y * y
    num = ((_EI_A[3] * z + _EI_A[2]) * z + _EI_A[1]) * z + _EI_A[0]
    den = (((_EI_B[3] * z + _EI_B[2]) * z + _EI_B[1]) * z + _EI_B[0]) * z + 1.0
    x_central = y * num / den
    t = xp.sqrt(-xp.log((1.0 - xp.where(central | (ay >= 1), 0.5, ay)) / 2.0))
    num = ((_EI_C[3] * t + _EI_C[2]) * t + _EI_C[1]) * t + _EI_C[0]
    den = (_EI_D[1] * t + _EI_D[0]) * t + 1.0
    x = xp.where(central, x_central, xp.copysign(num, y) / den)
    # Halley steps (erf'' = -2x erf'). In the tails the residual is taken on erfc, where
    # 1 - |y| is exact and erf(x) - y would cancel.
    tail = 1.0 - ay
    for _ in range(3):
        resid = xp.where(central, _erf(xp, x) - y, xp.copysign(tail - _erfc(xp, xp.abs(x)), y))
        q = resid / (_TWO_OVER_SQRTPI * xp.exp(-x * x))
        x = x - q / (1.0 + x * q)
    x = xp.where(ay == 1.0, xp.copysign(np.inf, y), x)
    return xp.where(ay > 1.0, np.nan, x)


def _bernoulli(n):
    """B_0 .. B_n as Fractions (Akiyama-Tanigawa)."""
    a, out = [Fraction(0)] * (n + 1), []
    for m in range(n + 1):
        a[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        out.append(a[0])
    return out


_B = _bernoulli(30)  # B_1 = +1/2 here; only even indices are used
_EULER = 0.57721566490153286061


def _zeta_minus_one(k):
    """zeta(k) - 1 for an integer k >= 2 to double precision (Euler-Maclaurin at N = 20)."""
    n = 20
    terms = [m ** -float(k) for m in range(2, n)]
    terms += [n ** (1.0 - k) / (k - 1), 0.5 * n ** -float(k)]
    rising = Fraction(k)
    for j in range(1, 8):
        terms.append(float(_B[2 * j] / math.factorial(2 * j) * rising) * n ** (-k - 2 * j + 1.0))
        rising *= (k + 2 * j - 1) * (k + 2 * j)
    return math.fsum(terms)


# lgamma(2 + z) = (1 - gamma) z + sum_k (-1)^k (zeta(k) - 1) / k z^k, used for |z| <= 1/2.
_LG2 = [(-1) ** k * _zeta_minus_one(k) / k for k in range(30, 1, -1)] + [1.0 - _EULER]
_STIRLING = [float(_B[2 * k] / (2 * k * (2 * k - 1))) for k in range(9, 0, -1)]
_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _lgamma_positive(xp, x):
    """lgamma(x) for x > 0 (other values are masked to harmless ones by the caller)."""
    big = x >= 10.0
    # Stirling's series for x >= 10.
    xb = xp.where(big, x, 10.0)
    r = 1.0 / (xb * xb)
    s = _STIRLING[0]
    for c in _STIRLING[1:]:
        s = s * r + c
    stirling = (xb - 0.5) * xp.log(xb) - xb + _HALF_LOG_2PI + s / xb
    # Elsewhere: a shift by whole steps to t in [1.5, 2.5), then the series around 2.
    xs = xp.where(big, 2.0, x)
    k = xp.floor(xs - 1.5)          # -2, -1, 0 .. 8
    z = xs - k - 2.0                # exact: no bits are lost in these ranges
    z = xp.where(k < 0, xs - 1.0, z)
    z = xp.where(k < -1, xs, z)
    series = _LG2[0]
    for c in _LG2[1:]:
        series = series * z + c
    series = series * z
    prod = xp.ones_like(xs)
    for j in range(1, 9):
        prod = prod * xp.where(k >= j, xs - j, 1.0)
    small = series + xp.log(prod)
    small = xp.where(k < 0, series - xp.log1p(z), small)      # lgamma(1+z) = lgamma(2+z) - log(1+z)
    small = xp.where(k < -1, small - xp.log(xs), small)       # lgamma(x) = lgamma(1+x) - log x
    return xp.where(big, stirling, small)


def _lgamma(xp, x):
    neg = x < 0
    pos = _lgamma_positive(xp, xp.where(neg, 1.0 - x, xp.where(x > 0, x, 1.0)))
    # Reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x), with sin(pi x) reduced.
    xr = xp.where(neg & xp.isfinite(x), x, 0.5)
    sinpi = xp.abs(xp.sin(_PI * (xr - xp.round(xr))))
    refl = math.log(_PI) - xp.log(sinpi) - pos
    res = xp.where(neg, refl, pos)
    res = xp.where((x <= 0) & (x == xp.floor(x)), np.inf, res)   # poles, and -inf
    res = xp.where(xp.isinf(x), np.inf, res)
    return xp.where(xp.isnan(x), x, res)


# digamma: PyTorch's scheme (reflection for x < 0, steps up to x >= 10, asymptotic series).
_PSI_10 = 2.25175258906672110764
_PSI_A = [float(_B[2 * k] / (2 * k)) for k in range(7, 0, -1)]


def _digamma(xp, x):
    neg = x < 0
    xr = xp.where(neg, 1.0 - x, x)
    xr = xp.where(xp.isnan(xr) | (xr == 0), 1.0, xr)
    acc = xp.zeros_like(xr)
    for _ in range(10):
        step = xr < 10.0
        acc = acc - xp.where(step, 1.0 / xr, 0.0)
        xr = xp.where(step, xr + 1.0, xr)
    zz = 1.0 / (xr * xr)
    poly = _PSI_A[0]
    for c in _PSI_A[1:]:
        poly = poly * zz + c
    y = xp.where(xr < 1.0e17, zz * poly, 0.0)
    res = xp.where(xr == 10.0, acc + _PSI_10, acc + xp.log(xr) - 0.5 / xr - y)
    frac = xp.fmod(xp.where(neg, x, 0.0), 1.0)
    res = xp.where(neg, res - _PI / xp.tan(_PI * frac), res)
    res = xp.where(neg & (x == xp.trunc(x)), np.nan, res)
    res = xp.where(x == 0, xp.copysign(np.inf, -x), res)
    return xp.where(xp.isnan(x), x, res)


def _trigamma(xp, x):
    """PyTorch's trigamma: reflection below 1/2, six steps up, then the asymptotic series."""
    refl = x < 0.5
    s = xp.sin(_PI * x)
    acc = xp.where(refl, -(_PI * _PI) / (s * s), 0.0)
    xr = xp.where(refl, 1.0 - x, x)
    for _ in range(6):
        acc = acc + 1.0 / (xr * xr)
        xr = xr + 1.0
    ixx = 1.0 / (xr * xr)
    acc = acc + (1.0 + 1.0 / (2.0 * xr) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / xr
    return xp.where(refl, -acc, acc)


_ZETA_A = [float(math.factorial(2 * j) / _B[2 * j]) for j in range(1, 13)]
_MACHEP = 1.11022302462515654042e-16


def _hurwitz_zeta(xp, s, q):
    """zeta(s, q) for an integer s >= 2 (Euler-Maclaurin after stepping q past 9)."""
    pole = (q <= 0) & (q == xp.floor(q))
    q = xp.where(pole | xp.isnan(q), 1.0, q)
    total = q ** -s
    a = q
    b = xp.zeros_like(q)
    i = 0
    while True:
        go = (a <= 9.0) if i >= 9 else xp.ones(a.shape, dtype=bool)
        if i >= 9 and not builtins.bool(go.any()):
            break
        i += 1
        a = xp.where(go, a + 1.0, a)
        b = xp.where(go, a ** -s, b)
        total = xp.where(go, total + b, total)
    w = a
    total = total + b * w / (s - 1.0) - 0.5 * b
    fac = 1.0
    k = 0.0
    for j in range(12):
        fac = fac * (s + k)
        b = b / w
        total = total + fac * b / _ZETA_A[j]
        k += 1.0
        fac = fac * (s + k)
        b = b / w
        k += 1.0
    return xp.where(pole, np.inf, total)


def _polygamma_kernel(n):
    def kernel(xp, x):
        if n == 0:
            return _digamma(xp, x)
        if n == 1:
            return _trigamma(xp, x)
        res = (1.0 if n % 2 else -1.0) * math.factorial(n) * _hurwitz_zeta(xp, float(n + 1), x)
        return xp.where(xp.isnan(x), x, res)
    return kernel


def _special(name, kernel, *args):
    """The kernel here; on CUDA, cupyx.scipy.special's version of the same function."""
    def run(xp, x):
        if xp is not np:
            import cupyx.scipy.special as cs
            return getattr(cs, name)(*args, x)
        return kernel(xp, x)
    return run


_erf_k = _special("erf", _erf)
_erfc_k = _special("erfc", _erfc)
_erfinv_k = _special("erfinv", _erfinv)
_lgamma_k = _special("gammaln", _lgamma)
_digamma_k = _special("digamma", _digamma)


# ==== exponentials and logarithms ==================================================================
_LN2, _LN10 = math.log(2.0), math.log(10.0)


class Exp2Backward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return grad * (r * _LN2).conj()


def exp2(input, *, out=None):
    return _unary(input, lambda xp, a: xp.exp2(a), Exp2Backward0, "result", out, "exp2")


class Expm1Backward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return grad * (r + 1).conj()


def expm1(input, *, out=None):
    return _unary(input, lambda xp, a: xp.expm1(a), Expm1Backward0, "result", out, "expm1")


class Log2Backward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad / (t * _LN2).conj()


def log2(input, *, out=None):
    return _unary(input, lambda xp, a: xp.log2(a), Log2Backward0, "input", out, "log2")


class Log10Backward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad / (t * _LN10).conj()


def log10(input, *, out=None):
    return _unary(input, lambda xp, a: xp.log10(a), Log10Backward0, "input", out, "log10")


class Log1PBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad / (t + 1).conj()


def log1p(input, *, out=None):
    return _unary(input, lambda xp, a: xp.log1p(a), Log1PBackward0, "input", out, "log1p")


class RsqrtBackward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return -0.5 * grad * (r * r * r).conj()


def rsqrt(input, *, out=None):
    return _unary(input, lambda xp, a: 1 / xp.sqrt(a), RsqrtBackward0, "result", out, "rsqrt")


class ReciprocalBackward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return -grad * (r * r).conj()


def reciprocal(input, *, out=None):
    return _unary(input, lambda xp, a: 1 / a, ReciprocalBackward0, "result", out, "reciprocal")


def square(input, *, out=None):
    _need_tensor("square", input)
    return _pw.pow(input, 2, out=out)


# ==== trigonometric and hyperbolic ==================================================================
class TanBackward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return grad * (1 + r * r).conj()


def tan(input, *, out=None):
    return _unary(input, lambda xp, a: xp.tan(a), TanBackward0, "result", out, "tan")


class AsinBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * rsqrt(1 - t * t).conj()


def asin(input, *, out=None):
    return _unary(input, lambda xp, a: xp.arcsin(a), AsinBackward0, "input", out, "asin")


class AcosBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * -rsqrt(1 - t * t).conj()


def acos(input, *, out=None):
    return _unary(input, lambda xp, a: xp.arccos(a), AcosBackward0, "input", out, "acos")


class AtanBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad / (t * t + 1).conj()


def atan(input, *, out=None):
    return _unary(input, lambda xp, a: xp.arctan(a), AtanBackward0, "input", out, "atan")


class SinhBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * cosh(t).conj()


def sinh(input, *, out=None):
    return _unary(input, lambda xp, a: xp.sinh(a), SinhBackward0, "input", out, "sinh")


class CoshBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * sinh(t).conj()


def cosh(input, *, out=None):
    return _unary(input, lambda xp, a: xp.cosh(a), CoshBackward0, "input", out, "cosh")


class AsinhBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * rsqrt(t * t + 1).conj()


def asinh(input, *, out=None):
    return _unary(input, lambda xp, a: xp.arcsinh(a), AsinhBackward0, "input", out, "asinh")


class AcoshBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * rsqrt(t * t - 1).conj()


def acosh(input, *, out=None):
    return _unary(input, lambda xp, a: xp.arccosh(a), AcoshBackward0, "input", out, "acosh")


class AtanhBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad / (1 - t * t).conj()


def atanh(input, *, out=None):
    return _unary(input, lambda xp, a: xp.arctanh(a), AtanhBackward0, "input", out, "atanh")


arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh


class Atan2Backward0(BinaryNode):
    def backward(self, grad):
        a, b = self.saved_tensors
        recip = 1 / (a * a + b * b)
        ga = grad * b * recip if self._next[0][0] is not None else None
        gb = grad * -a * recip if self._next[1][0] is not None else None
        return ga, gb


def _both_tensors(fname, input, other, other_name="other"):
    _need_tensor(fname, input)
    _need_tensor(fname, other, other_name, 2)


def atan2(input, other, *, out=None):
    _both_tensors("atan2", input, other)
    if input.dtype.is_complex or other.dtype.is_complex:
        raise _not_implemented("atan2_cpu", _promoted(input, other))
    return binary(input, other, _opmath(lambda x, y: _module(x, y).arctan2(x, y)),
                  Atan2Backward0, "atan2", out, float_result=True)


arctan2 = atan2


class Deg2RadBackward0(Node):
    def backward(self, grad):
        return grad * (_PI / 180)


class Rad2DegBackward0(Node):
    def backward(self, grad):
        return grad * (180 / _PI)


def _scale(factor):
    def kernel(xp, a):
        return a * a.dtype.type(factor)
    return kernel


def deg2rad(input, *, out=None):
    _need_tensor("deg2rad", input)
    if input.dtype.is_complex:
        raise RuntimeError("deg2rad is not supported for complex tensors.")
    return _unary(input, _scale(_PI / 180), Deg2RadBackward0, None, out, "deg2rad")


def rad2deg(input, *, out=None):
    _need_tensor("rad2deg", input)
    if input.dtype.is_complex:
        raise RuntimeError("rad2deg is not supported for complex tensors.")
    return _unary(input, _scale(180 / _PI), Rad2DegBackward0, None, out, "rad2deg")


class SincBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        pt = t * _PI
        d = (pt * pt.cos() - pt.sin()) / (pt * t)
        return grad * where(t == 0, 0.0, d).conj()


def _sinc(xp, a):
    p = a * a.dtype.type(_PI) if a.dtype.kind == "f" else a * _PI
    safe = xp.where(a == 0, 1, p)
    return xp.where(a == 0, 1, xp.sin(safe) / safe).astype(a.dtype, copy=False)


def sinc(input, *, out=None):
    return _unary(input, _sinc, SincBackward0, "input", out, "sinc")


# ==== logit, erf and the gamma family =============================================================
class LogitBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        g = grad / (t * (1 - t))
        if self.eps is None or self.eps < 0:
            return where((t < 0) | (t > 1), math.nan, g)
        return where((t < self.eps) | (t > 1 - self.eps), 0.0, g)


def logit(input, eps=None, *, out=None):
    _need_tensor("logit", input)
    if input.dtype.is_complex:
        raise _not_implemented("logit_cpu", input.dtype)

    def kernel(xp, a):
        if eps is not None and eps >= 0:
            lo, hi = a.dtype.type(eps), a.dtype.type(1 - eps)
            a = xp.where(a < lo, lo, xp.where(a > hi, hi, a))
        return xp.log(a / (1 - a))
    res = _unary(input, kernel, LogitBackward0, "input", out, "logit")
    if res._grad_fn is not None and type(res._grad_fn) is LogitBackward0:
        res._grad_fn.eps = eps
    return res


class ErfBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * (_TWO_OVER_SQRTPI * (-(t * t)).exp())


def erf(input, *, out=None):
    return _unary(input, _erf_k, ErfBackward0, "input", out, "erf", wide=True,
                  complex_error="erf_vml_cpu")


class ErfcBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * (-_TWO_OVER_SQRTPI * (-(t * t)).exp())


def erfc(input, *, out=None):
    return _unary(input, _erfc_k, ErfcBackward0, "input", out, "erfc", wide=True,
                  complex_error="erfc_vml_cpu")


class ErfinvBackward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return grad * (0.5 * math.sqrt(_PI) * (r * r).exp())


def erfinv(input, *, out=None):
    return _unary(input, _erfinv_k, ErfinvBackward0, "result", out, "erfinv", wide=True,
                  complex_error="erfinv_vml_cpu")


class LgammaBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * digamma(t)


def lgamma(input, *, out=None):
    return _unary(input, _lgamma_k, LgammaBackward0, "input", out, "lgamma", wide=True,
                  complex_error="lgamma_vml_cpu")


class DigammaBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * _polygamma(1, t)


def digamma(input, *, out=None):
    return _unary(input, _digamma_k, DigammaBackward0, "input", out, "digamma", wide=True,
                  complex_error="digamma")


class PolygammaBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * _polygamma(self.n + 1, t)


def _polygamma(n, input):
    """polygamma(n, x): the derivatives of digamma (the backward of digamma and of itself)."""
    kernel = _special("polygamma", _polygamma_kernel(n), n)
    res = _unary(input, kernel, PolygammaBackward0, "input", None, "polygamma", wide=True)
    if type(res._grad_fn) is PolygammaBackward0:
        res._grad_fn.n = n
    return res


# ==== rounding (zero gradient) =======================================================================
def _rounding(input, fname, kernel, node_cls, out, complex_message=None, vml=True):
    _need_tensor(fname, input)
    d = input.dtype
    if d is _dt.bool:
        raise _not_implemented(f"{fname}_vml_cpu" if vml else f"{fname}_cpu", d)
    if d.is_complex:
        if complex_message is not None:
            raise NotImplementedError(complex_message)
        raise _not_implemented(f"{fname}_vml_cpu" if vml else f"{fname}_cpu", d)
    arr = input._array
    if arr.dtype.kind in "iu":
        res = make_tensor(arr.copy(), input._device)
    else:
        res = make_tensor(_compute(xp_of(input), arr, kernel), input._device)
    if out is not None:
        return write_out(out, res, fname)
    record(node_cls, (input,), res)
    return res


class _ZeroGrad(Node):
    def backward(self, grad):
        return _zeros(grad)


class FloorBackward0(_ZeroGrad):
    pass


class CeilBackward0(_ZeroGrad):
    pass


class TruncBackward0(_ZeroGrad):
    pass


class RoundBackward0(_ZeroGrad):
    pass


class RoundBackward1(_ZeroGrad):
    pass


def floor(input, *, out=None):
    return _rounding(input, "floor", lambda xp, a: xp.floor(a), FloorBackward0, out,
                     "floor is not supported for complex inputs")


def ceil(input, *, out=None):
    return _rounding(input, "ceil", lambda xp, a: xp.ceil(a), CeilBackward0, out,
                     "ceil is not supported for complex inputs")


def trunc(input, *, out=None):
    return _rounding(input, "trunc", lambda xp, a: xp.trunc(a), TruncBackward0, out,
                     "trunc is not supported for complex inputs")


fix = trunc


def round(input, *, decimals=0, out=None):
    if decimals == 0:
        return _rounding(input, "round", lambda xp, a: xp.rint(a), RoundBackward0, out)
    _need_tensor("round", input)
    if not input.dtype.is_floating_point:
        raise _not_implemented("round_cpu", input.dtype)
    neg = decimals < 0
    power = 10.0 ** builtins.abs(decimals)

    def kernel(xp, a):
        p = a.dtype.type(power)
        return xp.rint(a / p) * p if neg else xp.rint(a * p) / p
    return _rounding(input, "round", kernel, RoundBackward1, out)


class FracBackward0(Node):
    def backward(self, grad):
        return grad


def frac(input, *, out=None):
    _need_tensor("frac", input)
    if not input.dtype.is_floating_point:
        raise _not_implemented("frac_cpu", input.dtype)
    return _rounding(input, "frac", lambda xp, a: a - xp.trunc(a), FracBackward0, out)


# ==== fmod, fmax, fmin, hypot, copysign, xlogy, heaviside ============================================
class FmodBackward0(BinaryNode):
    saves = False

    def backward(self, grad):
        return grad


class FmodBackward1(BinaryNode):
    saves = True

    def backward(self, grad):
        a, b = self.saved_tensors
        gb = None
        if self._next[1][0] is not None:
            gb = -grad * _pw.div(a, b, rounding_mode="trunc")
        return grad, gb


def _fmod_arrays(x, y):
    if _pw._is_int(x) and _pw._is_int(y) and _pw._has_zero(y):
        raise RuntimeError("ZeroDivisionError")
    return _module(x, y).fmod(x, y)


def fmod(input, other, *, out=None):
    if not isinstance(input, Tensor):
        raise TypeError(
            f"fmod() received an invalid combination of arguments - got "
            f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
            " * (Tensor input, Tensor other, *, Tensor out = None)\n"
            " * (Tensor input, Number other, *, Tensor out = None)\n")
    d = _promoted(input, other)
    if d is _dt.bool or d.is_complex:
        raise _not_implemented("fmod_cpu", d)
    cls = FmodBackward1 if isinstance(other, Tensor) else FmodBackward0
    return binary(input, other, _opmath(_fmod_arrays), cls, "fmod", out)


class FmaxBackward0(BinaryNode):
    def backward(self, grad):
        a, b = self.saved_tensors
        keep_a = (a >= b) | b.isnan() if self.is_max else (a <= b) | b.isnan()
        ga = where(keep_a, grad, 0.0) if self._next[0][0] is not None else None
        gb = where(keep_a, 0.0, grad) if self._next[1][0] is not None else None
        return ga, gb


class FminBackward0(FmaxBackward0):
    pass


def _fmaxmin(input, other, out, fname, cls, fn):
    _both_tensors(fname, input, other)
    if input.dtype.is_complex or other.dtype.is_complex:
        raise RuntimeError(f"{fname} not implemented for complex tensors.")
    res = binary(input, other, lambda x, y: fn(_module(x, y), x, y), cls, fname, out)
    if type(res._grad_fn) is cls:
        res._grad_fn.is_max = cls is FmaxBackward0
    return res


def fmax(input, other, *, out=None):
    return _fmaxmin(input, other, out, "fmax", FmaxBackward0, lambda xp, x, y: xp.fmax(x, y))


def fmin(input, other, *, out=None):
    return _fmaxmin(input, other, out, "fmin", FminBackward0, lambda xp, x, y: xp.fmin(x, y))


class HypotBackward0(BinaryNode):
    saves = False

    def backward(self, grad):
        a, b, r = self.saved_tensors
        ga = grad * a / r if self._next[0][0] is not None else None
        gb = grad * b / r if self._next[1][0] is not None else None
        return ga, gb


def hypot(input, other, *, out=None):
    _both_tensors("hypot", input, other)
    d = _promoted(input, other)
    if not d.is_floating_point:
        raise _not_implemented("hypot_cpu", d)
    res = binary(input, other, _opmath(lambda x, y: _module(x, y).hypot(x, y)), HypotBackward0,
                 "hypot", out)
    if type(res._grad_fn) is HypotBackward0:
        res._grad_fn.save_for_backward(input, other, res)
    return res


class CopysignBackward0(BinaryNode):
    saves = False

    def backward(self, grad):
        a, r = self.saved_tensors
        ga = grad * where(a == 0, 0.0, r / a)
        if len(self._next) == 1:
            return ga
        gb = _zeros(grad) if self._next[1][0] is not None else None
        return ga, gb


class CopysignBackward1(CopysignBackward0):
    pass


def copysign(input, other, *, out=None):
    if not isinstance(input, Tensor):
        raise TypeError(
            f"copysign() received an invalid combination of arguments - got "
            f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
            " * (Tensor input, Tensor other, *, Tensor out = None)\n"
            " * (Tensor input, Number other, *, Tensor out = None)\n")
    d = _promoted(input, other)
    if d.is_complex:
        raise _not_implemented("copysign_cpu", d)
    cls = CopysignBackward0 if isinstance(other, Tensor) else CopysignBackward1
    res = binary(input, other, _opmath(lambda x, y: _module(x, y).copysign(x, y)), cls,
                 "copysign", out, float_result=True)
    if type(res._grad_fn) is cls:
        res._grad_fn.save_for_backward(input, res)
    return res


class XlogyBackward0(BinaryNode):
    def backward(self, grad):
        a, b = self.saved_tensors
        ga = grad * xlogy(a != 0, b) if self._next[0][0] is not None else None
        gb = grad * a / b if self._next[1][0] is not None else None
        return ga, gb


class XlogyBackward1(BinaryNode):
    """scalar self, tensor other."""

    def backward(self, grad):
        (b,) = self.saved_tensors
        return grad * self.scalar / b


class XlogyBackward2(BinaryNode):
    """tensor self, scalar other."""

    def backward(self, grad):
        (a,) = self.saved_tensors
        return grad * xlogy(a != 0, self.scalar)


def _xlogy_arrays(x, y):
    xp = _module(x, y)
    dt = x.dtype if hasattr(x, "dtype") else y.dtype
    x = x if hasattr(x, "dtype") else xp.asarray(x, dtype=dt)
    y = y if hasattr(y, "dtype") else xp.asarray(y, dtype=dt)
    if dt in _HALF:  # PyTorch rounds log(y) to the half type before the product
        logy = xp.log(y.astype(np.float32)).astype(dt).astype(np.float32)
        return _xlogy_finish(xp, x.astype(np.float32), y, x.astype(np.float32) * logy).astype(dt)
    return _xlogy_finish(xp, x, y, x * xp.log(y))


def _xlogy_finish(xp, x, y, res):
    res = xp.where(x == 0, 0, res)
    return xp.where(xp.isnan(y), np.nan, res).astype(res.dtype, copy=False)


def xlogy(input, other, *, out=None):
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(
            f"xlogy() received an invalid combination of arguments - got "
            f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
            " * (Tensor self, Tensor other, *, Tensor out = None)\n"
            " * (Number self, Tensor other, *, Tensor out = None)\n"
            " * (Tensor self, Number other, *, Tensor out = None)\n")
    d = _promoted(input, other)
    if d.is_complex:
        raise _not_implemented("xlogy_cpu", d)
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        cls = XlogyBackward0
    else:
        cls = XlogyBackward2 if isinstance(input, Tensor) else XlogyBackward1
    return binary(input, other, _xlogy_arrays, cls, "xlogy", out, float_result=True)


class _HeavisideBackward(BinaryNode):
    saves = False

    def backward(self, grad):
        raise RuntimeError("derivative for aten::heaviside is not implemented")


_HeavisideBackward.__name__ = _HeavisideBackward.__qualname__ = "NotImplemented"


def heaviside(input, values, *, out=None):
    _both_tensors("heaviside", input, values, "values")
    if input.dtype.is_complex or values.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")

    def fn(x, y):
        xp = _module(x, y)
        return xp.where(x == 0, y, (x > 0)).astype(x.dtype, copy=False)
    return binary(input, values, fn, _HeavisideBackward, "heaviside", out)


# ==== lerp, addcmul, addcdiv =========================================================================
_CPP_NAMES = {"float32": "float", "float64": "double", "float16": "c10::Half",
              "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
              "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
              "bool": "bool", "complex64": "c10::complex<float>",
              "complex128": "c10::complex<double>"}


def _broadcast_shape(*tensors):
    """The broadcast shape of the tensors, with PyTorch's error naming the first clash."""
    shape = ()
    for t in tensors:
        s = t._array.shape
        if len(s) > len(shape):
            shape = (1,) * (len(s) - len(shape)) + tuple(shape)
        s = (1,) * (len(shape) - len(s)) + tuple(s)
        new = []
        for i, (a, b) in enumerate(zip(shape, s)):
            if a != b and a != 1 and b != 1:
                raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b "
                                   f"({b}) at non-singleton dimension {i}")
            new.append(b if a == 1 else a)
        shape = tuple(new)
    return shape


def _device_arrays(tensors, np_dtype):
    """The tensors' arrays as `np_dtype` on their common device (0-dim CPU tensors may join
    tensors on another device, as in PyTorch), and that device."""
    dev = tensors[0]._device
    for t in tensors[1:]:
        if dev.type == "cpu" and t._device.type != "cpu":
            dev = t._device
    arrays = []
    for t in tensors:
        a = t._array.astype(np_dtype, copy=False)
        if t._device != dev:
            if t._device.type != "cpu" or a.ndim != 0:
                raise RuntimeError("Expected all tensors to be on the same device, but found "
                                   f"at least two devices, {dev} and {t._device}!")
            a = _pw._on(a, dev, t._device)
        arrays.append(a)
    return arrays, dev


def _check_scalar_fits(value, d):
    if isinstance(value, builtins.complex) and not d.is_complex:
        raise RuntimeError(f"value cannot be converted to type {_CPP_NAMES[d.name]} without "
                           "overflow")


class LerpBackward0(Node):
    """Scalar weight."""

    def backward(self, grad):
        w = self.weight
        ga = grad * (1 - w) if self._next[0][0] is not None else None
        gb = grad * w if self._next[1][0] is not None else None
        return ga, gb


class LerpBackward1(Node):
    """Tensor weight."""

    def backward(self, grad):
        a, b, w = self.saved_tensors
        ga = grad * (1 - w).conj() if self._next[0][0] is not None else None
        gb = grad * w.conj() if self._next[1][0] is not None else None
        gw = grad * (b - a).conj() if self._next[2][0] is not None else None
        return ga, gb, gw


def _lerp_arrays(xp, a, b, w):
    diff = b - a
    small = xp.abs(w) < 0.5
    return xp.where(small, a + w * diff, b - diff * (1 - w))


def lerp(input, end, weight, *, out=None):
    _need_tensor("lerp", input)
    _need_tensor("lerp", end, "end", 2)
    d = input.dtype
    if end.dtype is not d:
        raise RuntimeError(f"expected dtype {_CPP_NAMES[d.name]} for `end` but got dtype "
                           f"{_CPP_NAMES[end.dtype.name]}")
    w_tensor = isinstance(weight, Tensor)
    if w_tensor and weight.dtype is not d and weight._array.ndim > 0:
        raise RuntimeError(f"expected dtype {_CPP_NAMES[d.name]} for `weight` but got dtype "
                           f"{_CPP_NAMES[weight.dtype.name]}")
    if not (d.is_floating_point or d.is_complex):
        raise _not_implemented("lerp_kernel_tensor" if w_tensor else "lerp_kernel_scalar", d)
    if not w_tensor:
        _check_scalar_fits(_pw._as_scalar(weight, "lerp"), d)
    tensors = (input, end, weight) if w_tensor else (input, end)
    _broadcast_shape(*tensors)
    work = np.float32 if d.np in _HALF else d.np
    arrays, dev = _device_arrays(tensors, work)
    a, b = arrays[0], arrays[1]
    w = arrays[2] if w_tensor else weight
    xp = _module(a)
    res = make_tensor(xp.asarray(_lerp_arrays(xp, a, b, w)).astype(d.np, copy=False), dev)
    if out is not None:
        return write_out(out, res, "lerp")
    node = record(LerpBackward1 if w_tensor else LerpBackward0, tensors, res)
    if node is not None:
        if w_tensor:
            node.save_for_backward(input, end, weight)
        else:
            node.weight = weight
    return res


def _ternary_operands(fname, input, tensor1, tensor2, value):
    _need_tensor(fname, input)
    _need_tensor(fname, tensor1, "tensor1", 2)
    _need_tensor(fname, tensor2, "tensor2", 3)
    d = _promoted(input, tensor1, tensor2)
    _check_scalar_fits(value, d)
    _broadcast_shape(input, tensor1, tensor2)
    arrays, dev = _device_arrays((input, tensor1, tensor2),
                                 np.float32 if d.np in _HALF else d.np)
    if not (d.is_floating_point or d.is_complex):
        value = builtins.int(value)
    return d, dev, arrays, value


class AddcmulBackward0(Node):
    def backward(self, grad):
        t1, t2 = self.saved_tensors
        v = self.value
        g1 = grad * (t2 * v).conj() if self._next[1][0] is not None else None
        g2 = grad * (t1 * v).conj() if self._next[2][0] is not None else None
        return grad, g1, g2


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    d, dev, (a, b, c), v = _ternary_operands("addcmul", input, tensor1, tensor2, value)
    if d is _dt.bool:
        raise _not_implemented("addcmul_cpu_out", d)
    res = make_tensor(_module(a).asarray(a + v * b * c).astype(d.np, copy=False), dev)
    if out is not None:
        return write_out(out, res, "addcmul")
    node = record(AddcmulBackward0, (input, tensor1, tensor2), res)
    if node is not None:
        node.value = value
        node.save_for_backward(tensor1, tensor2)
    return res


_ADDCDIV_INT = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes.")


class AddcdivBackward0(Node):
    def backward(self, grad):
        t1, t2 = self.saved_tensors
        v = self.value
        g1 = grad * (v / t2).conj() if self._next[1][0] is not None else None
        g2 = (-grad * (v * t1 / (t2 * t2)).conj()) if self._next[2][0] is not None else None
        return grad, g1, g2


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    for t in (tensor1, tensor2):
        if isinstance(t, Tensor) and not (t.dtype.is_floating_point or t.dtype.is_complex):
            continue
        break
    else:
        if isinstance(tensor1, Tensor) and isinstance(tensor2, Tensor):
            raise RuntimeError(_ADDCDIV_INT)
    d, dev, (a, b, c), v = _ternary_operands("addcdiv", input, tensor1, tensor2, value)
    res = make_tensor(_module(a).asarray(a + v * b / c).astype(d.np, copy=False), dev)
    if out is not None:
        return write_out(out, res, "addcdiv")
    node = record(AddcdivBackward0, (input, tensor1, tensor2), res)
    if node is not None:
        node.value = value
        node.save_for_backward(tensor1, tensor2)
    return res


# ==== classification (no gradient) ====================================================================
def _predicate(input, fname, fn, *, integer_value=False, complex_error=None):
    """A bool-valued test; integer and bool inputs give `integer_value` everywhere."""
    _need_tensor(fname, input)
    arr = input._array
    xp = xp_of(input)
    if arr.dtype.kind in "biu":
        res = xp.full(arr.shape, integer_value, dtype=bool)
    else:
        if complex_error is not None and arr.dtype.kind == "c":
            raise complex_error
        if arr.dtype in _HALF:
            arr = arr.astype(np.float32)
        res = xp.asarray(fn(xp, arr))
    return make_tensor(res, input._device)


def isnan(input):
    return _predicate(input, "isnan", lambda xp, a: xp.isnan(a))


def isinf(input):
    return _predicate(input, "isinf", lambda xp, a: xp.isinf(a))


def isfinite(input):
    return _predicate(input, "isfinite", lambda xp, a: xp.isfinite(a), integer_value=True)


def isposinf(input, *, out=None):
    res = _predicate(input, "isposinf", lambda xp, a: a == np.inf,
                     complex_error=RuntimeError("isposinf does not support complex inputs."))
    return write_out(out, res, "isposinf") if out is not None else res


def isneginf(input, *, out=None):
    res = _predicate(input, "isneginf", lambda xp, a: a == -np.inf,
                     complex_error=RuntimeError("isneginf does not support complex inputs."))
    return write_out(out, res, "isneginf") if out is not None else res


def isreal(input):
    _need_tensor("isreal", input)
    if input._array.dtype.kind == "c":
        return make_tensor(xp_of(input).asarray(input._array.imag == 0), input._device)
    return make_tensor(xp_of(input).ones(input._array.shape, dtype=bool), input._device)


def signbit(input, *, out=None):
    _need_tensor("signbit", input)
    arr = input._array
    if arr.dtype.kind == "c":
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    xp = xp_of(input)
    if arr.dtype.kind == "i":
        res = arr < 0
    elif arr.dtype.kind in "bu":
        res = xp.zeros(arr.shape, dtype=bool)
    else:
        res = xp.signbit(arr.astype(np.float32) if arr.dtype in _HALF else arr)
    res = make_tensor(xp.asarray(res), input._device)
    return write_out(out, res, "signbit") if out is not None else res


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _both_tensors("isclose", input, other)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{_type_name(input.dtype)} did not match {_type_name(other.dtype)}")
    if input.dtype.is_complex and equal_nan:
        raise RuntimeError("isclose with equal_nan=True is not supported for complex inputs.")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    xp = xp_of(input)
    a, b = input._array, other._array
    if other._device != input._device:
        _pw.common_device(input, other)
    close = a == b
    if equal_nan and input.dtype.is_floating_point:
        close = close | (xp.isnan(a) & xp.isnan(b))
    if rtol == 0 and atol == 0:
        return make_tensor(xp.asarray(close), input._device)
    d = input.dtype
    if d.is_floating_point or d.is_complex:
        work = d.np
        allowed = (xp.abs(b * b.dtype.type(rtol)) + b.dtype.type(atol)) if d.is_floating_point \
            else xp.abs(b * rtol) + atol
        actual = xp.abs(a - b)
        if d.is_complex:
            allowed = allowed.real.astype(actual.dtype, copy=False)
    else:
        work = _dt.get_default_dtype().np
        fa = a.astype(work) if d is _dt.bool else a
        fb = b.astype(work) if d is _dt.bool else b
        allowed = xp.abs(fb.astype(work) * work.type(rtol)) + work.type(atol)
        diff = fa - fb
        actual = xp.abs(diff).astype(work) if d is not _dt.bool else xp.abs(diff)
    with np.errstate(invalid="ignore"):
        close = close | (xp.isfinite(actual) & (actual <= allowed))
    return make_tensor(xp.asarray(close), input._device)


# ==== nan_to_num, angle, positive, float_power ============================================================
class NanToNumBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * isfinite(t)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    _need_tensor("nan_to_num", input)
    arr = input._array
    xp = xp_of(input)
    if arr.dtype.kind in "biu":
        res = make_tensor(arr.copy(), input._device)
        return write_out(out, res, "nan_to_num") if out is not None else res

    def fix(a):
        info = _dt.finfo(_dt.FROM_NUMPY[a.dtype])
        hi = info.max if posinf is None else posinf
        lo = info.min if neginf is None else neginf
        t = a.dtype.type
        a = xp.where(xp.isnan(a), t(nan), a)
        a = xp.where(a == np.inf, t(hi), a)
        return xp.where(a == -np.inf, t(lo), a).astype(a.dtype, copy=False)
    if arr.dtype.kind == "c":
        value = fix(arr.real) + 1j * fix(arr.imag)
        value = value.astype(arr.dtype)
    else:
        value = fix(arr)
    res = make_tensor(xp.asarray(value), input._device)
    if out is not None:
        return write_out(out, res, "nan_to_num")
    node = record(NanToNumBackward0, (input,), res)
    if node is not None:
        node.save_for_backward(input)
    return res


class AngleBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        if not t.dtype.is_complex:
            return _zeros(t)
        g = grad * t / (t.abs() ** 2) * 1j
        return where(t == 0, 0.0, g)


def _angle(xp, a):
    if a.dtype.kind == "c":
        return xp.angle(a)
    return xp.where(xp.isnan(a), a, xp.where(a < 0, a.dtype.type(_PI), a.dtype.type(0)))


def angle(input, *, out=None):
    return _unary(input, _angle, AngleBackward0, "input", out, "angle")


def positive(input):
    _need_tensor("positive", input)
    if input.dtype is _dt.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


def _is_complex_operand(x):
    return x.dtype.is_complex if isinstance(x, Tensor) else isinstance(x, builtins.complex)


def float_power(input, exponent, *, out=None):
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError(
            f"float_power() received an invalid combination of arguments - got "
            f"({type(input).__name__}, {type(exponent).__name__}), but expected one of:\n"
            " * (Tensor input, Tensor exponent, *, Tensor out = None)\n"
            " * (Number self, Tensor exponent, *, Tensor out = None)\n"
            " * (Tensor input, Number exponent, *, Tensor out = None)\n")
    d = _dt.complex128 if (_is_complex_operand(input) or _is_complex_operand(exponent)) \
        else _dt.float64
    if out is not None and isinstance(out, Tensor) and out.dtype is not d:
        raise RuntimeError(f"the output given to float_power has dtype {_type_name(out.dtype)} "
                           f"but the operation's result requires dtype {_type_name(d)}")
    a = input.to(d) if isinstance(input, Tensor) else input
    b = exponent.to(d) if isinstance(exponent, Tensor) else exponent
    if not isinstance(a, Tensor):
        a = builtins.complex(a) if d.is_complex else builtins.float(a)
    if not isinstance(b, Tensor):
        b = builtins.complex(b) if d.is_complex else builtins.float(b)
    return _pw.pow(a, b, out=out)


# ==== in-place forms ==================================================================================
_inplace = _pw._inplace_unary
exp2_, expm1_, log2_, log10_, log1p_, rsqrt_, reciprocal_ = (
    _inplace(f) for f in (exp2, expm1, log2, log10, log1p, rsqrt, reciprocal))
tan_, asin_, acos_, atan_, sinh_, cosh_ = (_inplace(f) for f in (tan, asin, acos, atan, sinh, cosh))


def _no_inplace_derivative(name, fn):
    """PyTorch records asinh_/acosh_/atanh_ with a node whose backward is not implemented."""
    def backward(self, grad):
        raise NotImplementedError(f"the derivative for 'inplace version of {name}' is not "
                                  "implemented.")
    node_cls = type(name.capitalize() + "Backward1", (Node,), {"backward": backward})

    def method(self):
        def compute(s):
            res = fn(s)
            if res._grad_fn is not None:
                res._grad_fn = None
                record(node_cls, (s,), res)
            return res
        return inplace(self, compute)
    method.__name__ = name + "_"
    return node_cls, method


AsinhBackward1, asinh_ = _no_inplace_derivative("asinh", asinh)
AcoshBackward1, acosh_ = _no_inplace_derivative("acosh", acosh)
AtanhBackward1, atanh_ = _no_inplace_derivative("atanh", atanh)
arcsin_, arccos_, arctan_, arcsinh_, arccosh_, arctanh_ = asin_, acos_, atan_, asinh_, acosh_, atanh_
atan2_ = _inplace(atan2)
arctan2_ = atan2_
deg2rad_, rad2deg_, sinc_, logit_ = (_inplace(f) for f in (deg2rad, rad2deg, sinc, logit))
erf_, erfc_, erfinv_, lgamma_, digamma_ = (_inplace(f) for f in (erf, erfc, erfinv, lgamma, digamma))
floor_, ceil_, trunc_, frac_, round_ = (_inplace(f) for f in (floor, ceil, trunc, frac, round))
fix_ = trunc_
fmod_, hypot_, xlogy_, copysign_, heaviside_ = (
    _inplace(f) for f in (fmod, hypot, xlogy, copysign, heaviside))
lerp_, addcmul_, addcdiv_, nan_to_num_ = (_inplace(f) for f in (lerp, addcmul, addcdiv, nan_to_num))


def square_(self):
    return _pw.pow_(self, 2)


def float_power_(self, exponent):
    d = _dt.complex128 if (self.dtype.is_complex or _is_complex_operand(exponent)) else _dt.float64
    if self.dtype is not d:
        raise RuntimeError(f"the base given to float_power_ has dtype {_type_name(self.dtype)} "
                           f"but the operation's result requires dtype {_type_name(d)}")
    return inplace(self, lambda s: float_power(s, exponent),
                   (exponent,) if isinstance(exponent, Tensor) else ())
