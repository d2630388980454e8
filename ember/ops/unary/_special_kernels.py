"""The float64 kernels of the special functions (ops/unary/special.py): erf and erfc (Cody's
rational forms), erfinv (a rational first guess refined by Halley steps), lgamma and digamma
(series and PyTorch's scheme), trigamma and the Hurwitz zeta function for polygamma. They
compute every branch for every element, in whatever float dtype they are given; the float32
kernels of _single_kernels.py take over where they apply."""
import builtins
import functools
import math

import numpy as np

from ..._select import select
from ._common import _PI

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


def _horner(s, coefficients, out=None):
    """sum_k coefficients[k] s^k by Horner's scheme, in place in `out` (or one new array). Cody's
    rational forms are two of these: the leading coefficient of a denominator is 1, and s * 1.0
    is exact."""
    if out is None:
        out = s * coefficients[-1]
    else:
        np.multiply(s, coefficients[-1], out=out)
    for c in coefficients[-2:0:-1]:
        out += c
        out *= s
    out += coefficients[0]
    return out


def _erf_near_zero(xp, x):
    """erf(x) for |x| <= 0.46875."""
    ysq = x * x
    num = _horner(ysq, _ERF_NEAR_NUM)
    num *= x
    num /= _horner(ysq, _ERF_NEAR_DEN)
    return num


def _erfcx_mid(y):
    num = _horner(y, _ERF_MID_NUM)
    num /= _horner(y, _ERF_MID_DEN)
    return num


def _erfcx_large(y):
    ysq = 1.0 / (y * y)
    num = _horner(ysq, _ERF_LARGE_NUM)
    num *= ysq
    num /= _horner(ysq, _ERF_LARGE_DEN)
    return (_SQRPI - num) / y


# Cody's coefficients as polynomials in increasing powers (his tables list each numerator's
# leading coefficient last)
_ERF_NEAR_NUM = (_ERF_A[3], _ERF_A[2], _ERF_A[1], _ERF_A[0], _ERF_A[4])
_ERF_NEAR_DEN = (_ERF_B[3], _ERF_B[2], _ERF_B[1], _ERF_B[0], 1.0)
_ERF_MID_NUM = (_ERF_C[7],) + _ERF_C[6::-1] + (_ERF_C[8],)
_ERF_MID_DEN = (_ERF_D[7],) + _ERF_D[6::-1] + (1.0,)
_ERF_LARGE_NUM = (_ERF_P[4],) + _ERF_P[3::-1] + (_ERF_P[5],)
_ERF_LARGE_DEN = (_ERF_Q[4],) + _ERF_Q[3::-1] + (1.0,)


def _erfcx_positive(xp, y):
    """exp(y^2) erfc(y) for y > 0.46875: Cody's rational forms before their exp(-y^2) factor
    (the form for y <= 4, else the asymptotic one)."""
    small = y <= 4.0
    if xp is np:
        return _on_branches(y, small, _erfcx_mid, _erfcx_large)
    return select(small, _erfcx_mid(select(small, y, 1.0)), _erfcx_large(select(small, 5.0, y)))


def _on_branches(x, first, f, g):
    """select(first, f(x), g(x)) of a NumPy array, each function computed on its own elements
    only: a branch's dozens of passes over elements that the other takes cost more than
    the gathering (float64 erf of 1M values: 156 ms with every branch everywhere)."""
    flat, out = x.reshape(-1), np.empty(x.size, x.dtype)
    first = first.reshape(-1)
    for branch, where in ((f, np.flatnonzero(first)), (g, np.flatnonzero(~first))):
        if where.size:
            out[where] = branch(flat[where])
    return out.reshape(x.shape)


def _exp_square(xp, y):
    """exp(y^2) for y >= 0, y^2 split into a part exact in float64 and a small rest (the
    rounding of y*y would otherwise be magnified by the exponential)."""
    head = xp.trunc(y * 16.0) / 16.0
    return xp.exp(head * head) * xp.exp((y - head) * (y + head))


def _erfc_positive(xp, y):
    """erfc(y) for y = |x| > 0.46875 (either rational form, then exp(-y^2) split for accuracy)."""
    r = _erfcx_positive(xp, y)
    yc = xp.minimum(y, _ERF_XBIG)
    head = xp.trunc(yc * 16.0) / 16.0
    tail = (yc - head) * (yc + head)
    r = xp.exp(-head * head) * xp.exp(-tail) * r
    return select(y >= _ERF_XBIG, 0.0, r)


def _erf(xp, x):
    y = xp.abs(x)
    near = y <= _ERF_THRESH
    if xp is np:
        return _on_branches(x, near, lambda v: _erf_near_zero(np, v), _erf_far)
    return select(near, _erf_near_zero(xp, select(near, x, 0.0)),
                  _erf_far(select(near, 1.0, x), xp))


def _erf_far(x, xp=np):
    far = (0.5 - _erfc_positive(xp, xp.abs(x))) + 0.5
    return select(x < 0, -far, far)


def _erfc(xp, x):
    y = xp.abs(x)
    near = y <= _ERF_THRESH
    if xp is np:
        return _on_branches(x, near, lambda v: 1.0 - _erf_near_zero(np, v), _erfc_far)
    return select(near, 1.0 - _erf_near_zero(xp, select(near, x, 0.0)),
                  _erfc_far(select(near, 1.0, x), xp))


def _erfc_far(x, xp=np):
    c = _erfc_positive(xp, xp.abs(x))
    return select(x < 0, 2.0 - c, c)


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
    t = xp.sqrt(-xp.log((1.0 - select(central | (ay >= 1), 0.5, ay)) / 2.0))
    num = ((_EI_C[3] * t + _EI_C[2]) * t + _EI_C[1]) * t + _EI_C[0]
    den = (_EI_D[1] * t + _EI_D[0]) * t + 1.0
    x = select(central, x_central, xp.copysign(num, y) / den)
    # Halley steps (erf'' = -2x erf'). In the tails the residual is taken on erfc, where
    # 1 - |y| is exact and erf(x) - y would cancel.
    tail = 1.0 - ay
    # The first guess is within 7e-5 (relative); Halley's cubic convergence takes that to
    # 1e-10 and then to the last bit of a float64 in two steps.
    for _ in range(2):
        resid = select(central, _erf(xp, x) - y, xp.copysign(tail - _erfc(xp, xp.abs(x)), y))
        q = resid / (_TWO_OVER_SQRTPI * xp.exp(-x * x))
        x = x - q / (1.0 + x * q)
    x = select(ay == 1.0, xp.copysign(np.inf, y), x)
    return select(ay > 1.0, np.nan, x)


def _bernoulli(n):
    """B_0 .. B_n as Fractions (Akiyama-Tanigawa)."""
    from fractions import Fraction
    a, out = [Fraction(0)] * (n + 1), []
    for m in range(n + 1):
        a[m] = Fraction(1, m + 1)
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        out.append(a[0])
    return out


_EULER = 0.57721566490153286061


def _zeta_minus_one(k, b):
    """zeta(k) - 1 for an integer k >= 2 to double precision (Euler-Maclaurin at N = 20);
    `b`: the Bernoulli numbers."""
    from fractions import Fraction
    n = 20
    terms = [m ** -float(k) for m in range(2, n)]
    terms += [n ** (1.0 - k) / (k - 1), 0.5 * n ** -float(k)]
    rising = Fraction(k)
    for j in range(1, 8):
        terms.append(float(b[2 * j] / math.factorial(2 * j) * rising) * n ** (-k - 2 * j + 1.0))
        rising *= (k + 2 * j - 1) * (k + 2 * j)
    return math.fsum(terms)


@functools.cache
def _coefficients():
    """The series coefficients, from exact Bernoulli numbers: made on first use, not at import
    (the Fraction arithmetic would cost every `import ember` some milliseconds)."""
    tables = {"B": _bernoulli(30)}  # B_1 = +1/2 here; only even indices are used
    b = tables["B"]
    # lgamma(2 + z) = (1 - gamma) z + sum_k (-1)^k (zeta(k) - 1) / k z^k, used for |z| <= 1/2.
    tables["LG2"] = [(-1) ** k * _zeta_minus_one(k, b) / k
                      for k in range(30, 1, -1)] + [1.0 - _EULER]
    tables["STIRLING"] = [float(b[2 * k] / (2 * k * (2 * k - 1))) for k in range(9, 0, -1)]
    tables["PSI_A"] = [float(b[2 * k] / (2 * k)) for k in range(7, 0, -1)]
    tables["ZETA_A"] = [float(math.factorial(2 * j) / b[2 * j]) for j in range(1, 13)]
    return tables


_HALF_LOG_2PI = 0.5 * math.log(2 * math.pi)


def _lgamma_positive(xp, x):
    """lgamma(x) for x > 0 (other values are masked to harmless ones by the caller)."""
    big = x >= 10.0
    # Stirling's series for x >= 10.
    xb = select(big, x, 10.0)
    s = _horner(1.0 / (xb * xb), _coefficients()['STIRLING'][::-1])
    stirling = (xb - 0.5) * xp.log(xb) - xb + _HALF_LOG_2PI + s / xb
    # Elsewhere: a shift by whole steps to t in [1.5, 2.5), then the series around 2.
    xs = select(big, 2.0, x)
    k = xp.floor(xs - 1.5)          # -2, -1, 0 .. 8
    z = xs - k - 2.0                # exact: no bits are lost in these ranges
    z = select(k < 0, xs - 1.0, z)
    z = select(k < -1, xs, z)
    series = _coefficients()['LG2'][0]
    for c in _coefficients()['LG2'][1:]:
        series = series * z + c
    series = series * z
    prod = xp.ones_like(xs)
    for j in range(1, 9):
        prod = prod * select(k >= j, xs - j, 1.0)
    small = series + xp.log(prod)
    small = select(k < 0, series - xp.log1p(z), small)      # lgamma(1+z) = lgamma(2+z) - log(1+z)
    small = select(k < -1, small - xp.log(xs), small)       # lgamma(x) = lgamma(1+x) - log x
    return select(big, stirling, small)


def _lgamma(xp, x):
    neg = x < 0
    pos = _lgamma_positive(xp, select(neg, 1.0 - x, select(x > 0, x, 1.0)))
    # Reflection: lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x), with sin(pi x) reduced.
    xr = select(neg & xp.isfinite(x), x, 0.5)
    sinpi = xp.abs(xp.sin(_PI * (xr - xp.round(xr))))
    refl = math.log(_PI) - xp.log(sinpi) - pos
    res = select(neg, refl, pos)
    res = select((x <= 0) & (x == xp.floor(x)), np.inf, res)   # poles, and -inf
    res = select(xp.isinf(x), np.inf, res)
    return select(xp.isnan(x), x, res)


# digamma: PyTorch's scheme (reflection for x < 0, steps up to x >= 10, asymptotic series).
_PSI_10 = 2.25175258906672110764


def _digamma(xp, x):
    neg = x < 0
    xr = select(neg, 1.0 - x, x)
    xr = select(xp.isnan(xr) | (xr == 0), 1.0, xr)
    acc = xp.zeros_like(xr)
    for _ in range(10):
        step = xr < 10.0
        acc = acc - select(step, 1.0 / xr, 0.0)
        xr = select(step, xr + 1.0, xr)
    zz = 1.0 / (xr * xr)
    poly = _coefficients()['PSI_A'][0]
    for c in _coefficients()['PSI_A'][1:]:
        poly = poly * zz + c
    y = select(xr < 1.0e17, zz * poly, 0.0)
    res = select(xr == 10.0, acc + _PSI_10, acc + xp.log(xr) - 0.5 / xr - y)
    frac = xp.fmod(select(neg, x, 0.0), 1.0)
    res = select(neg, res - _PI / xp.tan(_PI * frac), res)
    res = select(neg & (x == xp.trunc(x)), np.nan, res)
    res = select(x == 0, xp.copysign(np.inf, -x), res)
    return select(xp.isnan(x), x, res)


def _trigamma(xp, x):
    """PyTorch's trigamma: reflection below 1/2, six steps up, then the asymptotic series."""
    refl = x < 0.5
    s = xp.sin(_PI * x)
    acc = select(refl, -(_PI * _PI) / (s * s), 0.0)
    xr = select(refl, 1.0 - x, x)
    for _ in range(6):
        acc = acc + 1.0 / (xr * xr)
        xr = xr + 1.0
    ixx = 1.0 / (xr * xr)
    acc = acc + (1.0 + 1.0 / (2.0 * xr) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / xr
    return select(refl, -acc, acc)


_MACHEP = 1.11022302462515654042e-16


def _hurwitz_zeta(xp, s, q):
    """zeta(s, q) for an integer s >= 2 (Euler-Maclaurin after stepping q past 9)."""
    pole = (q <= 0) & (q == xp.floor(q))
    q = select(pole | xp.isnan(q), 1.0, q)
    total = q ** -s
    a = q
    b = xp.zeros_like(q)
    i = 0
    while True:
        go = (a <= 9.0) if i >= 9 else xp.ones(a.shape, dtype=bool)
        if i >= 9 and not builtins.bool(go.any()):
            break
        i += 1
        a = select(go, a + 1.0, a)
        b = select(go, a ** -s, b)
        total = select(go, total + b, total)
    w = a
    total = total + b * w / (s - 1.0) - 0.5 * b
    fac = 1.0
    k = 0.0
    for j in range(12):
        fac = fac * (s + k)
        b = b / w
        total = total + fac * b / _coefficients()['ZETA_A'][j]
        k += 1.0
        fac = fac * (s + k)
        b = b / w
        k += 1.0
    return select(pole, np.inf, total)


def _polygamma_kernel(n):
    def kernel(xp, x):
        if n == 0:
            return _digamma(xp, x)
        if n == 1:
            return _trigamma(xp, x)
        res = (1.0 if n % 2 else -1.0) * math.factorial(n) * _hurwitz_zeta(xp, float(n + 1), x)
        return select(xp.isnan(x), x, res)
    return kernel


# The kernels make dozens of whole-array float64 temporaries; on a large array each is a
# fresh allocation that misses the cache and faults in new pages, so they run block by block.
_BLOCK = 1 << 14


def _blockwise(kernel, xp, x):
    if x.size <= _BLOCK:
        return kernel(xp, x)
    flat = x.reshape(-1)
    first = kernel(xp, flat[:_BLOCK])
    out = xp.empty(flat.shape, first.dtype)
    out[:_BLOCK] = first
    for start in range(_BLOCK, flat.size, _BLOCK):
        out[start:start + _BLOCK] = kernel(xp, flat[start:start + _BLOCK])
    return out.reshape(x.shape)
