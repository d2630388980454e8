"""Special functions: logit, erf, erfc, erfinv, lgamma, digamma (and polygamma, digamma's
derivative), each with its backward node, and the float64 kernels they run on.

The kernels live here beside their only users: NumPy has none of these functions and SciPy is
not a dependency, so they are computed from published rational approximations and series
(on CUDA, cupyx.scipy.special serves; on the CPU scipy.special serves erf, erfc, erfinv and
lgamma when importable, see USE_SCIPY). They compute in float64 whatever the input dtype,
except float32 erf, which has a float32-accurate rational form of its own.
"""
import builtins
import functools
import math

import numpy as np

from ..._select import select
from .._graph import Node, node_of
from ..pointwise import where
from ._common import _PI, _inplace, _need_tensor, _not_implemented, _unary

__all__ = [
    "logit", "erf", "erfc", "erfinv", "lgamma", "digamma", "logit_", "erf_", "erfc_",
    "erfinv_", "lgamma_", "digamma_", "polygamma",
]


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


def _erfcx_positive(xp, y):
    """exp(y^2) erfc(y) for y > 0.46875: Cody's rational forms before their exp(-y^2) factor."""
    small = y <= 4.0
    ym = select(small, y, 1.0)
    num, den = _ERF_C[8] * ym, ym
    for i in range(7):
        num = (num + _ERF_C[i]) * ym
        den = (den + _ERF_D[i]) * ym
    mid = (num + _ERF_C[7]) / (den + _ERF_D[7])
    yl = select(small, 5.0, y)
    ysq = 1.0 / (yl * yl)
    num, den = _ERF_P[5] * ysq, ysq
    for i in range(4):
        num = (num + _ERF_P[i]) * ysq
        den = (den + _ERF_Q[i]) * ysq
    large = (_SQRPI - ysq * (num + _ERF_P[4]) / (den + _ERF_Q[4])) / yl
    return select(small, mid, large)


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
    small = _erf_near_zero(xp, select(near, x, 0.0))
    c = _erfc_positive(xp, select(near, 1.0, y))
    far = (0.5 - c) + 0.5
    return select(near, small, select(x < 0, -far, far))


def _erfc(xp, x):
    y = xp.abs(x)
    near = y <= _ERF_THRESH
    small = 1.0 - _erf_near_zero(xp, select(near, x, 0.0))
    c = _erfc_positive(xp, select(near, 1.0, y))
    return select(near, small, select(x < 0, 2.0 - c, c))


# erf in single precision: one rational function x P(s) / Q(s) of s = (x / 4)^2 with x clamped
# to [-4, 4] (erf(4) = 1 - 1.5e-8 rounds to 1 in float32), its coefficients fitted for this
# module (least squares on the relative error, reweighted towards minimax): relative error
# 2e-9, so after the one rounding to float32 within 0.54 ulp. The arithmetic is float64:
# Horner's scheme in float32 loses ~6 ulp to cancellation near |x| = 3.7. No exp, no branch:
# about 30 in-place passes, block by block (the float64 temporaries stay in the cache).
_ERF32_CLAMP = 4.0
_ERF32_P = (1.128379169370582, 2.9632560494423505, 13.905122003353911, 15.768024438836912,
            24.87787399982641, 4.912260254194826, -0.2214897430390972)
_ERF32_Q = (1.0, 7.95945191813758, 29.173369412348315, 63.33270793271223, 85.69272759951787,
            66.1754512166317)


# elements a float32 kernel takes at a time: its float64 scratch (256 KB an array) stays in
# a core's L2 and is reused from block to block (allocated afresh each block, erfinv took 1.6x
# its time)
_SINGLE_BLOCK = 1 << 15


def _horner(xp, s, coefs):
    acc = s * coefs[-1]
    for c in coefs[-2:0:-1]:
        acc += c
        acc *= s
    acc += coefs[0]
    return acc


def _erf_single(xp, x):
    """erf of a float32 NumPy array, to float32 accuracy (NaN stays NaN through the clamp):
    in place, block by block, in float64 scratch reused from block to block."""
    flat = x.reshape(-1)
    out = np.empty(flat.shape, np.float32)
    n = min(flat.size, _SINGLE_BLOCK)
    z, s, num, den = (np.empty(n) for _ in range(4))
    for start in builtins.range(0, flat.size, _SINGLE_BLOCK):
        xb = flat[start:start + _SINGLE_BLOCK]
        zb, sb, nb, db = z[:xb.size], s[:xb.size], num[:xb.size], den[:xb.size]
        zb[...] = xb
        np.clip(zb, -_ERF32_CLAMP, _ERF32_CLAMP, out=zb)
        np.multiply(zb, zb, out=sb)
        sb *= 1.0 / (_ERF32_CLAMP * _ERF32_CLAMP)
        for acc, coefficients in ((nb, _ERF32_P), (db, _ERF32_Q)):
            np.multiply(sb, coefficients[-1], out=acc)
            for c in coefficients[-2:0:-1]:
                acc += c
                acc *= sb
            acc += coefficients[0]
        nb *= zb
        np.divide(nb, db, out=out[start:start + _SINGLE_BLOCK], casting="same_kind")
    return out.reshape(x.shape)


# erfc in single precision: exp(-a^2) erfcx(a) for a = |x| clamped at 10.1 (erfc(10.1) rounds
# to 0 in float32), erfcx a degree-10 polynomial in t = (a - 3) / (a + 3) fitted on [0, 10.1]
# by tools/fit_erfc.py (relative error 1.4e-9), and 2 - erfc(|x|) for x < 0; all in float64
# (a^2 of a float32 is exact there): within 0.53 ulp. One branch for every element, where the
# general kernel computes Cody's three.
_ERFCX32 = (0.17900115126010038, -0.32623356382021385, 0.2456037980662407,
            -0.15011578182691426, 0.07166585581344684, -0.02439423707153896,
            0.004268919742484863, 0.000715783423331731, -0.0005946283000500974,
            2.8760534517878814e-05, 5.5866044206292174e-05)
_ERFC32_CLAMP, _ERFC32_T = 10.1, 3.0


def _erfc_single(xp, x):
    """erfc of a float32 NumPy array, to float32 accuracy (NaN stays NaN through the clamp);
    in place, block by block."""
    flat = x.reshape(-1)
    out = np.empty(flat.shape, np.float32)
    n = min(flat.size, _SINGLE_BLOCK)
    a, t, g = (np.empty(n) for _ in range(3))
    for start in builtins.range(0, flat.size, _SINGLE_BLOCK):
        xb = flat[start:start + _SINGLE_BLOCK]
        ab, tb, gb = a[:xb.size], t[:xb.size], g[:xb.size]
        np.abs(xb, out=ab)
        np.minimum(ab, _ERFC32_CLAMP, out=ab)
        np.add(ab, _ERFC32_T, out=gb)
        np.subtract(ab, _ERFC32_T, out=tb)
        tb /= gb
        np.multiply(tb, _ERFCX32[-1], out=gb)
        for c in _ERFCX32[-2:0:-1]:
            gb += c
            gb *= tb
        gb += _ERFCX32[0]
        np.multiply(ab, ab, out=tb)
        np.negative(tb, out=tb)
        np.exp(tb, out=tb)
        gb *= tb                                   # erfc(|x|)
        ob = out[start:start + _SINGLE_BLOCK]
        ob[...] = gb
        negative = xb < 0
        if negative.any():
            np.subtract(2.0, gb, out=gb)
            ob[...] = select(negative, gb.astype(np.float32), ob)
    return out.reshape(x.shape)


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


# erfinv in single precision: x P(v) with v = log((1 - x)(1 + x)), P a degree-9 polynomial
# fitted on v in [-5, 0] (|x| <= 0.99663) by tools/fit_erfinv.py (relative error 5.6e-9). v is
# computed in float32 (NumPy's float32 log takes a quarter of its float64 one) and P in
# float64: within 1.15 ulp of the exact value (PyTorch's float32 kernel rounds correctly),
# where a float32 Horner's scheme lost 2.5 ulp. The few elements past the fit (0.3% of uniform
# draws) take sign(x) Q(sqrt(-v)), v in float64, Q of degree 7 (within 0.71 ulp up to the
# largest float32 below 1); the float64 kernel's hundreds of calls cost a 16K block 4x its time
# even for a handful of elements.
_ERFINV32 = (0.8862269204603288, -0.23201381832349677, 0.011548653356103115,
             0.002334296047765122, -0.00012748113707760814, -4.456464025911615e-05,
             3.983510931016102e-06, 1.9765285682503655e-06, 2.2103896669079532e-07,
             8.791445125429624e-09)
_ERFINV32_Q = (-0.01882206691855748, 0.9761773460948988, -0.14462788965182793,
               0.12255839963917264, -0.04570856474584302, 0.009214020785784,
               -0.0009831228973944774, 4.3781231486961306e-05)
_ERFINV32_FIT = np.float32(-5.0)


def _erfinv_single(xp, x):
    """erfinv of a float32 NumPy array, to float32 accuracy: in place, block by block."""
    flat, one = x.reshape(-1), np.float32(1.0)
    out = np.empty(flat.shape, np.float32)
    n = min(flat.size, _SINGLE_BLOCK)
    v, w, v64, acc = np.empty(n, np.float32), np.empty(n, np.float32), np.empty(n), np.empty(n)
    for start in builtins.range(0, flat.size, _SINGLE_BLOCK):
        xb = flat[start:start + _SINGLE_BLOCK]
        vb, wb, vd, y = v[:xb.size], w[:xb.size], v64[:xb.size], acc[:xb.size]
        np.subtract(one, xb, out=vb)
        np.add(one, xb, out=wb)
        vb *= wb
        with np.errstate(divide="ignore", invalid="ignore"):  # |x| >= 1: the tail's business
            np.log(vb, out=vb)
        vd[...] = vb
        np.multiply(vd, _ERFINV32[-1], out=y)
        for c in _ERFINV32[-2:0:-1]:
            y += c
            y *= vd
        y += _ERFINV32[0]
        y *= xb
        ob = out[start:start + _SINGLE_BLOCK]
        ob[...] = y
        tail = np.flatnonzero(~(vb >= _ERFINV32_FIT))
        if tail.size:
            t = xb[tail].astype(np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                s = np.sqrt(-np.log((1.0 - t) * (1.0 + t)))  # inf at +-1, NaN past them
            yt = np.copysign(_horner(np, s, _ERFINV32_Q), t)
            ob[tail] = select(np.abs(t) == 1.0, np.copysign(np.inf, t), yt)
    return out.reshape(x.shape)


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
    r = 1.0 / (xb * xb)
    s = _coefficients()['STIRLING'][0]
    for c in _coefficients()['STIRLING'][1:]:
        s = s * r + c
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


# lgamma and digamma of float32 NumPy arrays: for x > 0, a shift by eight whatever x (so
# no per-element step count, and no select), lgamma(x) = lgamma(x + 8) - log(x (x + 1) ...
# (x + 7)) and digamma(x) = digamma(x + 8) - sum_j 1 / (x + j), then eight terms of each
# asymptotic series at x + 8 >= 8 (the next: 8e-17 and 4e-16, absolute; lgamma's zeros at 1
# and 2 need that: its relative error beside them is the absolute one over |x - 1|). The
# product is t (t + 6)(t + 10)(t + 12) with t = x^2 + 7x (under 2e307 up to float32's
# largest), the sum its logarithmic derivative (2x + 7) P'(t) / P(t). All in float64, in
# place, block by block: lgamma ~40 and digamma ~35 passes against ~150 of the general
# kernels, which compute every branch for every element; those take x <= 0, infinities, NaN
# (and lgamma's exact zeros, x = 1 and 2, where this form leaves ~1e-16).
def _shifted_single(x, body, general, exact=()):
    """body(x64 block, y64 = x + 8, out) for float32 x > 0 (finite, not in `exact`), block
    by block; the other elements from `general(np, float64 array)`."""
    flat = x.reshape(-1)
    out = np.empty(flat.shape, np.float32)
    n = min(flat.size, _SINGLE_BLOCK)
    x64, y64, work = np.empty(n), np.empty(n), np.empty(n)
    for start in builtins.range(0, flat.size, _SINGLE_BLOCK):
        xb = flat[start:start + _SINGLE_BLOCK]
        xd, yd, wd = x64[:xb.size], y64[:xb.size], work[:xb.size]
        xd[...] = xb
        np.add(xd, 8.0, out=yd)
        body(xd, yd, wd)
        ob = out[start:start + _SINGLE_BLOCK]
        ob[...] = wd
        other = ~((xb > 0) & (xb < np.inf))
        for value in exact:
            other |= xb == value
        other = np.flatnonzero(other)
        if other.size:
            ob[other] = general(np, xb[other].astype(np.float64))
    return out.reshape(x.shape)


def _rising8(x, t, p):
    """t = x^2 + 7x and p = x (x + 1) ... (x + 7) = t (t + 6)(t + 10)(t + 12), in place."""
    np.add(x, 7.0, out=t)
    t *= x
    np.add(t, 6.0, out=p)
    p *= t
    for c in (10.0, 12.0):
        p *= t + c


def _lgamma_single(xp, x):
    series_coefficients = _coefficients()["STIRLING"][::-1][:8]  # of 1/y, 1/y^3, ...

    def body(x, y, out):
        t, p = np.empty_like(x), np.empty_like(x)
        _rising8(x, t, p)
        np.log(p, out=p)                          # log of the product
        np.reciprocal(y, out=t)                   # 1 / y
        series = _horner(np, t * t, series_coefficients)
        series *= t
        np.subtract(y, 0.5, out=out)
        np.log(y, out=t)
        out *= t
        out -= y
        out += series
        out += _HALF_LOG_2PI
        out -= p
    return _shifted_single(x, body, _lgamma, exact=(1.0, 2.0))


def _digamma_single(xp, x):
    # log y - 1/(2y) - sum_k B_2k / (2k y^2k)
    series_coefficients = [-c for c in _coefficients()["PSI_A"][::-1]] + [3617 / 8160]

    def body(x, y, out):
        t, p = np.empty_like(x), np.empty_like(x)
        _rising8(x, t, p)
        # P'(t) = 4t^3 + 84t^2 + 504t + 720; the sum of 1 / (x + j) is (2x + 7) P'(t) / P(t)
        q = _horner(np, t, (720.0, 504.0, 84.0, 4.0))
        q /= p
        np.multiply(x, 2.0, out=t)
        t += 7.0
        q *= t
        np.reciprocal(y, out=t)
        r = t * t
        series = _horner(np, r, series_coefficients)
        series *= r
        np.log(y, out=out)
        t *= 0.5
        out -= t
        out += series
        out -= q
    return _shifted_single(x, body, _digamma)


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


# SciPy, when importable, is an accelerator on the CPU (its compiled kernels are one pass
# each); never a requirement. Tests set USE_SCIPY = False to check the NumPy kernels alone.
USE_SCIPY = True
_SCIPY = []


def _scipy_special():
    if not USE_SCIPY:
        return None
    if not _SCIPY:
        try:
            import scipy.special as sc
        except ImportError:
            sc = None
        _SCIPY.append(sc)
    return _SCIPY[0]


def _special(name, kernel, *args, edges=None, single=None, scipy=False):
    """The kernel here; on CUDA, cupyx.scipy.special's version of the same function, then
    `edges(xp, x, y)` where SciPy's conventions (which CuPy copies) are not PyTorch's.
    `single(xp, x)`: a float32 kernel for float32 NumPy arrays (the op then passes
    wide=False, and other float32 input is widened here). `scipy`: scipy.special's `name`
    serves float64 on the CPU when importable."""
    def run(xp, x):
        if xp.__name__ == "cupy":  # CuPy's kernels (meta arrays take NumPy's ufuncs)
            import cupyx.scipy.special as cs
            if single is not None and x.dtype == np.float32:
                x = x.astype(np.float64)  # as the wide ops: float32 computed in float64
                return run(xp, x).astype(np.float32)
            # number arguments as device arrays: CuPy's polygamma compares `n == 0` and
            # hands that to cupy.where, which takes no Python bool
            y = getattr(cs, name)(*(xp.asarray(a) for a in args), x)
            return y if edges is None else edges(xp, x, y)
        if single is not None and x.dtype == np.float32 and xp is np:
            return single(xp, x)
        sc = _scipy_special() if scipy else None
        if sc is not None:
            y = getattr(sc, name)(*args, x)
            if isinstance(y, np.generic):  # a 0-d input gives a NumPy scalar
                y = np.asarray(y)
            return y if edges is None else edges(xp, x, y)
        return _blockwise(kernel, xp, x)
    return run


def _lgamma_edges(xp, x, y):
    # SciPy's (and CuPy's) gammaln(-inf) is -inf; PyTorch's lgamma is +inf at both infinities.
    # SciPy's gammaln of a subnormal overflows in 1/x: lgamma(x) = -log|x| there (the next
    # term, -gamma x, is below a double's precision).
    y = select(xp.isinf(x), np.inf, y)
    tiny = (xp.abs(x) < 1e-300) & (x != 0)
    return select(tiny, -xp.log(xp.abs(select(tiny, x, 1.0))), y)


def _erfinv_edges(xp, x, y):
    return select(x == 0, x, y)  # SciPy's erfinv(-0.0) is +0.0; PyTorch keeps the sign


_erf_k = _special("erf", _erf, single=_erf_single, scipy=True)
_erfc_k = _special("erfc", _erfc, single=_erfc_single)  # SciPy's loses 6e-14 far right
_erfinv_k = _special("erfinv", _erfinv, edges=_erfinv_edges, single=_erfinv_single,
                      scipy=True)
# (float64 keeps the general kernels: beside its zeros the shifted form's absolute error,
# ~2e-15, is 1e-8 of lgamma(1 + 1e-7), where the series around 2 stays accurate; and beside
# digamma's zero it missed PyTorch's float64 values, whose scheme the general kernel is, by 1e-14)
_lgamma_k = _special("gammaln", _lgamma, edges=_lgamma_edges, single=_lgamma_single,
                     scipy=True)
_digamma_k = _special("digamma", _digamma, single=_digamma_single)


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
            a = select(a < lo, lo, select(a > hi, hi, a))
        return xp.log(a / (1 - a))
    res = _unary(input, kernel, LogitBackward0, "input", out, "logit")
    if type(node_of(res)) is LogitBackward0:
        node_of(res).eps = eps
    return res


class ErfBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * (_TWO_OVER_SQRTPI * (-(t * t)).exp())


def erf(input, *, out=None):
    return _unary(input, _erf_k, ErfBackward0, "input", out, "erf",
                  complex_error="erf_vml_cpu")


class ErfcBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * (-_TWO_OVER_SQRTPI * (-(t * t)).exp())


def erfc(input, *, out=None):
    return _unary(input, _erfc_k, ErfcBackward0, "input", out, "erfc",
                  complex_error="erfc_vml_cpu")


class ErfinvBackward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return grad * (0.5 * math.sqrt(_PI) * (r * r).exp())


def erfinv(input, *, out=None):
    return _unary(input, _erfinv_k, ErfinvBackward0, "result", out, "erfinv",
                  complex_error="erfinv_vml_cpu")


class LgammaBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * digamma(t)


def lgamma(input, *, out=None):
    return _unary(input, _lgamma_k, LgammaBackward0, "input", out, "lgamma",
                  complex_error="lgamma_vml_cpu")


class DigammaBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * _polygamma(1, t)


def digamma(input, *, out=None):
    return _unary(input, _digamma_k, DigammaBackward0, "input", out, "digamma",
                  complex_error="digamma")


class PolygammaBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * _polygamma(self.n + 1, t)


def _polygamma(n, input):
    """polygamma(n, x): the derivatives of digamma (the backward of digamma and of itself)."""
    kernel = _special("polygamma", _polygamma_kernel(n), n)
    res = _unary(input, kernel, PolygammaBackward0, "input", None, "polygamma", wide=True)
    if type(node_of(res)) is PolygammaBackward0:
        node_of(res).n = n
    return res


erf_, erfc_, erfinv_, lgamma_, digamma_ = (_inplace(f) for f in (erf, erfc, erfinv, lgamma, digamma))
logit_ = _inplace(logit)


def polygamma(n, input, *, out=None, _fname="polygamma"):
    """The n-th derivative of digamma (n = 0: digamma itself, named PolygammaBackward0)."""
    if isinstance(n, builtins.bool) or not isinstance(n, (builtins.int, np.integer)):
        raise TypeError(f"{_fname}(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    _need_tensor("polygamma", input, position=2)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    n = builtins.int(n)
    kernel = _special("polygamma", _polygamma_kernel(n), n)
    res = _unary(input, kernel, PolygammaBackward0, "input", out, "polygamma", wide=True,
                 complex_error={0: "digamma", 1: "trigamma"}.get(n, "polygamma"))
    if type(node_of(res)) is PolygammaBackward0:
        node_of(res).n = n
    return res


def _polygamma_method(self, n):
    return polygamma(n, self)


def _polygamma_inplace(self, n):
    from .._graph import inplace
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{self.dtype._scalar_name}")
    def compute(x):
        res = polygamma(n, x)
        if type(node_of(res)) is PolygammaBackward0:
            node_of(res).__class__ = PolygammaBackward1
        return res
    return inplace(self, compute)


class PolygammaBackward1(PolygammaBackward0):
    """polygamma_ (PyTorch records the in-place form under its own name)."""


def special_polygamma(n, input, *, out=None):
    return polygamma(n, input, out=out, _fname="special_polygamma")


from ..._tensor import Tensor as _Tensor  # noqa: E402

_Tensor.polygamma = _polygamma_method
