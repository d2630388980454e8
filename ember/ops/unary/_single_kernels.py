"""The float32 kernels of erf, erfc, erfinv, lgamma and digamma (ops/unary/special.py takes
them for float32 NumPy arrays): one form for every element, fitted polynomials evaluated in
float64 (tools/fit_erfc.py, tools/fit_erfinv.py) or a shift and an asymptotic series, in
place, block by block; rare elements past a form take the float64 kernels of
_special_kernels.py."""
import builtins
import math

import numpy as np

from ..._select import select
from ._special_kernels import _HALF_LOG_2PI, _coefficients, _digamma, _horner, _lgamma

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
        _horner(sb, _ERF32_P, out=nb)
        _horner(sb, _ERF32_Q, out=db)
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
        _horner(tb, _ERFCX32, out=gb)
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
        _horner(vd, _ERFINV32, out=y)
        y *= xb
        ob = out[start:start + _SINGLE_BLOCK]
        ob[...] = y
        tail = np.flatnonzero(~(vb >= _ERFINV32_FIT))
        if tail.size:
            t = xb[tail].astype(np.float64)
            with np.errstate(divide="ignore", invalid="ignore"):
                s = np.sqrt(-np.log((1.0 - t) * (1.0 + t)))  # inf at +-1, NaN past them
            yt = np.copysign(_horner(s, _ERFINV32_Q), t)
            ob[tail] = select(np.abs(t) == 1.0, np.copysign(np.inf, t), yt)
    return out.reshape(x.shape)


# lgamma and digamma of float32 NumPy arrays: for x > 0, a shift by eight whatever x (so
# no per-element step count, and no select), lgamma(x) = lgamma(x + 8) - log(x (x + 1) ...
# (x + 7)) and digamma(x) = digamma(x + 8) - sum_j 1 / (x + j), then eight terms of each
# asymptotic series at x + 8 >= 8 (the next: 8e-17 and 4e-16, absolute; lgamma's zeros at 1
# and 2 need that: its relative error beside them is the absolute one over |x - 1|). The
# product is t (t + 6)(t + 10)(t + 12) with t = x^2 + 7x (under 2e307 up to float32's
# largest), the sum its logarithmic derivative (2x + 7) P'(t) / P(t). All in float64, in
# place, block by block: lgamma ~40 and digamma ~35 passes against ~150 of the general
# kernels, which compute every branch for every element. Negative x reflect onto 1 - x (the
# general kernels' formulas); the general kernels take 0, the negative integers, infinities,
# NaN (and lgamma's exact zeros, x = 1 and 2, where this form leaves ~1e-16).
def _shifted_single(x, body, general, reflect, exact=()):
    """body(x64 block, y64 = x + 8, out) for float32 x > 0 (finite, not in `exact`), block
    by block; `reflect(x, positive)` for finite negative x off the integers, given
    `positive(z)`, the body's values at z > 0; the other elements (0, the negative integers,
    infinities, NaN, `exact`) from `general(np, float64 array)`."""
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
            xs = xb[other].astype(np.float64)
            values = np.empty(xs.shape)
            negative = (xs < 0) & (xs > -np.inf) & (xs != np.round(xs))
            values[negative] = reflect(xs[negative], lambda z: _body_at(body, z))
            values[~negative] = general(np, xs[~negative])
            ob[other] = values
    return out.reshape(x.shape)


def _body_at(body, z):
    out = np.empty_like(z)
    body(z, z + 8.0, out)
    return out


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
        series = _horner(t * t, series_coefficients)
        series *= t
        np.subtract(y, 0.5, out=out)
        np.log(y, out=t)
        out *= t
        out -= y
        out += series
        out += _HALF_LOG_2PI
        out -= p
    def reflect(x, positive):  # lgamma(x) = log(pi / |sin(pi x)|) - lgamma(1 - x)
        sine = np.abs(np.sin(np.pi * (x - np.round(x))))
        return (math.log(np.pi) - np.log(sine)) - positive(1.0 - x)
    return _shifted_single(x, body, _lgamma, reflect, exact=(1.0, 2.0))


def _digamma_single(xp, x):
    # log y - 1/(2y) - sum_k B_2k / (2k y^2k)
    series_coefficients = [-c for c in _coefficients()["PSI_A"][::-1]] + [3617 / 8160]

    def body(x, y, out):
        t, p = np.empty_like(x), np.empty_like(x)
        _rising8(x, t, p)
        # P'(t) = 4t^3 + 84t^2 + 504t + 720; the sum of 1 / (x + j) is (2x + 7) P'(t) / P(t)
        q = _horner(t, (720.0, 504.0, 84.0, 4.0))
        q /= p
        np.multiply(x, 2.0, out=t)
        t += 7.0
        q *= t
        np.reciprocal(y, out=t)
        r = t * t
        series = _horner(r, series_coefficients)
        series *= r
        np.log(y, out=out)
        t *= 0.5
        out -= t
        out += series
        out -= q
    def reflect(x, positive):  # digamma(x) = digamma(1 - x) - pi / tan(pi x)
        return positive(1.0 - x) - np.pi / np.tan(np.pi * np.fmod(x, 1.0))
    return _shifted_single(x, body, _digamma, reflect)
