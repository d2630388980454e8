"""`torch.special`'s further Bessel-family functions, none of which PyTorch differentiates:
bessel_y0, bessel_y1 (second kind), modified_bessel_i0/i1/k0/k1, scaled_modified_bessel_k0/k1,
spherical_bessel_j0 and airy_ai.

Kernels in float64 (float32 inputs are computed in float64 and rounded once), each range with a
method accurate to double precision there:
- Y0, Y1: the power series for x < 2 (terms below one: little cancellation); for 2 <= x < 25
  Neumann's series Y0 = (2/pi) ((ln(x/2) + gamma) J0 - 2 sum_k (-1)^k J_2k / k) and its
  derivative for Y1, over the J_k of Miller's backward recurrence; Hankel's expansion beyond.
- K0, K1: the power series for x <= 2; beyond it Temme's continued fraction (Steed's
  algorithm), which gives e^x K_mu(x) for any order |mu| <= 1/2, and K1 from K0 through it.
- Ai: Maclaurin's series for -7 <= x < 2.1, Ai(x) = sqrt(x/3) K_1/3(2/3 x^1.5) / pi beyond
  (by the same continued fraction), and the oscillating asymptotic expansion below -7.
PyTorch's values at the edges are kept: Y of a negative number and K of a negative number are
NaN, Y(0) = -inf, K(0) = inf, modified_bessel_i0/i1(+-inf) and Ai(+-inf) are NaN, Ai is 0 past
x = 103.892, spherical_bessel_j0(+-inf) = 0.
"""
import math

import numpy as np

from ..._select import select
from ... import dtypes as _dt
from ._common import _need_tensor, _not_implemented, _unary
from .bessel import _bessel, _hankel

__all__ = []

_EULER_GAMMA = 0.57721566490153286061
_TWO_OVER_PI = 2.0 / math.pi
_SERIES_END = 2.0
_HANKEL_START = 25.0
_MILLER_START = 100


def _special_unary(fname, kernel, arg_name="input", float32_overflow=None):
    """The public op: a tensor in, the default dtype for integers, no half types or complex,
    no derivative (PyTorch defines none for these). `arg_name`: PyTorch's name of the argument
    (its schemas say `x` for some of these, and it takes only that keyword). `float32_overflow`:
    the |x| past which PyTorch's float32 kernel overflows to +-inf (its e^|x| factor does before
    the division)."""
    def compute(value, out):
        _need_tensor("special_" + fname, value, arg_name)
        d = value.dtype
        if d.is_complex or d is _dt.float16 or d is _dt.bfloat16:
            raise _not_implemented(fname + "_cpu", d)
        run = kernel
        if float32_overflow is not None and d is _dt.float32:
            def run(xp, x):
                res = kernel(xp, x)
                return select(xp.abs(x) > float32_overflow, res * np.inf, res)
        return _unary(value, run, None, None, out, "special_" + fname, wide=True)

    if arg_name == "x":
        def op(x, *, out=None):
            return compute(x, out)
    else:
        def op(input, *, out=None):
            return compute(input, out)
    op.__name__ = op.__qualname__ = fname
    return op


def _in_range(xp, x, low, high, fill=None):
    """`x` where low <= x < high, elsewhere `fill` (default `low`), a harmless point of that
    range: every branch is computed on finite, in-range arrays and picked by `where` after."""
    return select((x >= low) & (x < high), x, low if fill is None else fill)


# ---- Bessel functions of the second kind ----------------------------------------------------

def _y_series(xp, x, order):
    """Y_order(x) for 0 < x < 2 from the power series of J with the digamma-weighted sum."""
    h = x * 0.5
    q = -(h * h)
    log_half = xp.log(h)
    if order == 0:
        term = xp.ones_like(x)            # (-x^2/4)^k / (k!)^2
        j = term.copy()
        weighted = term * (-_EULER_GAMMA)  # psi(k+1) times the term
        psi = -_EULER_GAMMA
        for k in range(1, 30):
            term = term * q / (k * k)
            psi += 1.0 / k
            j = j + term
            weighted = weighted + psi * term
        return _TWO_OVER_PI * (log_half * j - weighted)
    term = h.copy()                       # (x/2) (-x^2/4)^k / (k! (k+1)!)
    j = term.copy()
    psi_pair = -2.0 * _EULER_GAMMA + 1.0  # psi(k+1) + psi(k+2)
    weighted = psi_pair * term
    for k in range(1, 30):
        term = term * q / (k * (k + 1))
        psi_pair += 1.0 / k + 1.0 / (k + 1)
        j = j + term
        weighted = weighted + psi_pair * term
    return -_TWO_OVER_PI / x + _TWO_OVER_PI * log_half * j - weighted / math.pi


def _y_neumann(xp, x):
    """(Y0(x), Y1(x)) for 2 <= x < 25, from the J_k of Miller's backward recurrence."""
    nxt = xp.zeros_like(x)
    cur = xp.full_like(x, 1e-30)          # J_MILLER_START, unnormalized
    norm = xp.zeros_like(x)               # 2 (J_2 + J_4 + ...), then + J_0
    even_sum = xp.zeros_like(x)           # sum_k (-1)^k J_2k / k
    odd_sum = xp.zeros_like(x)            # sum_k (-1)^k (J_(2k-1) - J_(2k+1)) / k
    j1 = None
    for m in range(_MILLER_START, -1, -1):
        if m < _MILLER_START:
            prev = (2.0 * (m + 1) / x) * cur - nxt
            nxt, cur = cur, prev
        if m % 2 == 0 and m > 0:
            k = m // 2
            norm = norm + 2.0 * cur
            even_sum = even_sum + ((-1) ** k / k) * cur
        elif m % 2 == 1:
            k_up, k_down = (m + 1) // 2, (m - 1) // 2   # J_m is J_(2k-1) of k_up, J_(2k+1) of k_down
            weight = (-1) ** k_up / k_up - ((-1) ** k_down / k_down if k_down else 0.0)
            odd_sum = odd_sum + weight * cur
        if m == 1:
            j1 = cur
    norm = norm + cur
    j0, j1 = cur / norm, j1 / norm
    even_sum, odd_sum = even_sum / norm, odd_sum / norm
    log_term = xp.log(x * 0.5) + _EULER_GAMMA
    y0 = _TWO_OVER_PI * (log_term * j0 - 2.0 * even_sum)
    y1 = _TWO_OVER_PI * (log_term * j1 - j0 / x + odd_sum)
    return y0, y1


def _bessel_y(order):
    def kernel(xp, x):
        low = select((x > 0) & (x < _SERIES_END), x, 1.0)
        mid = _in_range(xp, x, _SERIES_END, _HANKEL_START)
        high = _in_range(xp, x, _HANKEL_START, np.inf)
        amplitude, p, q, cos_chi, sin_chi = _hankel(xp, high, order)
        out = select(x < _SERIES_END, _y_series(xp, low, order),
                       select(x < _HANKEL_START, _y_neumann(xp, mid)[order],
                                amplitude * (p * sin_chi + q * cos_chi)))
        out = select(x == 0, -np.inf, out)
        # NaN for negative x, NaN and +-inf (PyTorch's phase x - pi/4 is NaN at inf)
        return select((x < 0) | xp.isnan(x) | xp.isinf(x), np.nan, out)
    return kernel


# ---- modified Bessel functions of the second kind --------------------------------------------

def _k_series(xp, x, order):
    """K_order(x) for 0 < x <= 2 (Abramowitz and Stegun 9.6.11)."""
    h = x * 0.5
    q = h * h
    log_half = xp.log(h)
    if order == 0:
        term = xp.ones_like(x)            # (x^2/4)^k / (k!)^2
        i0 = term.copy()
        weighted = term * (-_EULER_GAMMA)
        psi = -_EULER_GAMMA
        for k in range(1, 30):
            term = term * q / (k * k)
            psi += 1.0 / k
            i0 = i0 + term
            weighted = weighted + psi * term
        return weighted - log_half * i0
    term = h.copy()                       # (x/2) (x^2/4)^k / (k! (k+1)!)
    i1 = term.copy()
    psi_pair = -2.0 * _EULER_GAMMA + 1.0
    weighted = psi_pair * term
    for k in range(1, 30):
        term = term * q / (k * (k + 1))
        psi_pair += 1.0 / k + 1.0 / (k + 1)
        i1 = i1 + term
        weighted = weighted + psi_pair * term
    return 1.0 / x + log_half * i1 - 0.5 * weighted


def _k_scaled_fraction(xp, x, mu):
    """(e^x K_mu(x), e^x K_(mu+1)(x)) for x >= 2 and |mu| <= 1/2: Temme's continued fraction
    for K_(mu+1)/K_mu evaluated by Steed's algorithm, with the normalizing sum that yields
    K_mu itself."""
    a1 = 0.25 - mu * mu
    b = 2.0 * (1.0 + x)
    d = 1.0 / b
    h = d.copy()
    delh = d.copy()
    q1 = xp.zeros_like(x)
    q2 = xp.ones_like(x)
    q = xp.full_like(x, a1)
    c = a1
    a = -a1
    s = 1.0 + q * delh
    for i in range(2, 80):
        a -= 2 * (i - 1)
        c = -a * c / i
        qnew = (q1 - b * q2) / a
        q1, q2 = q2, qnew
        q = q + c * qnew
        b = b + 2.0
        d = 1.0 / (b + a * d)
        delh = (b * d - 1.0) * delh
        h = h + delh
        s = s + q * delh
    h = a1 * h
    k_mu = xp.sqrt(math.pi / (2.0 * x)) / s
    return k_mu, k_mu * (mu + x + 0.5 - h) / x


def _bessel_k(order, scaled):
    def kernel(xp, x):
        low = select((x > 0) & (x <= _SERIES_END), x, 1.0)
        high = _in_range(xp, x, _SERIES_END, np.inf)
        series = _k_series(xp, low, order)
        if scaled:
            series = series * xp.exp(low)
        fraction = _k_scaled_fraction(xp, high, 0.0)[order]
        if not scaled:
            fraction = fraction * xp.exp(-high)
        out = select(x <= _SERIES_END, series, fraction)
        out = select(x == np.inf, 0.0, out)
        out = select(x == 0, np.inf, out)
        return select((x < 0) | xp.isnan(x), np.nan, out)
    return kernel


# ---- modified Bessel functions of the first kind, spherical j0 -------------------------------

def _modified_i(order):
    finite = _bessel(order, scaled=False)

    def kernel(xp, x):
        # PyTorch's e^|x| (series) / sqrt(|x|) is inf / inf at +-inf
        return select(xp.isinf(x), np.nan, finite(xp, select(xp.isinf(x), 0.0, x)))
    return kernel


def _spherical_j0(xp, x):
    small = xp.abs(x) < 0.5
    safe = select(small | xp.isinf(x), 1.0, x)
    z = x * x
    # Taylor series of sin(x)/x up to x^12: exact to double precision for |x| < 0.5
    taylor = 1.0
    for k in range(6, 0, -1):
        taylor = 1.0 + taylor * (-z / ((2 * k) * (2 * k + 1)))
    out = select(small, taylor, xp.sin(safe) / safe)
    return select(xp.isinf(x), 0.0, out)


# ---- Airy's Ai -------------------------------------------------------------------------------

_AI_0 = 0.355028053887817239260      # Ai(0)
_AI_PRIME_0 = 0.258819403792806798405  # -Ai'(0)
_AIRY_SERIES = (-7.0, 2.1)
_AIRY_ZERO_PAST = 103.892           # PyTorch's Ai is exactly 0 from here on


def _airy_series(xp, x):
    cube = x * x * x
    f_term = xp.ones_like(x)
    g_term = x.copy()
    f, g = f_term.copy(), g_term.copy()
    for k in range(1, 70):
        f_term = f_term * cube / ((3 * k - 1) * (3 * k))
        g_term = g_term * cube / ((3 * k) * (3 * k + 1))
        f = f + f_term
        g = g + g_term
    return _AI_0 * f - _AI_PRIME_0 * g


def _airy_oscillating(xp, x):
    """Ai(x) for x <= -7 (DLMF 9.7.9), with zeta = 2/3 |x|^1.5."""
    ax = -x
    zeta = 2.0 / 3.0 * ax * xp.sqrt(ax)
    even, odd = xp.ones_like(x), xp.zeros_like(x)
    u = 1.0
    power = xp.ones_like(x)
    for k in range(1, 24):
        u = u * (6 * k - 5) * (6 * k - 3) * (6 * k - 1) / ((2 * k - 1) * 216.0 * k)
        power = power / zeta
        sign = 1.0 if (k // 2) % 2 == 0 else -1.0
        if k % 2:
            odd = odd + sign * u * power
        else:
            even = even + sign * u * power
    phase = zeta - math.pi / 4
    return (xp.cos(phase) * even + xp.sin(phase) * odd) / (math.sqrt(math.pi) * xp.sqrt(xp.sqrt(ax)))


def _airy_decaying(xp, x):
    """Ai(x) for x >= 2.1: sqrt(x/3) K_1/3(zeta) / pi."""
    zeta = 2.0 / 3.0 * x * xp.sqrt(x)
    scaled_k = _k_scaled_fraction(xp, zeta, 1.0 / 3.0)[0]
    return xp.sqrt(x / 3.0) * scaled_k * xp.exp(-zeta) / math.pi


def _airy_ai(xp, x):
    lo, hi = _AIRY_SERIES
    out = select(x < lo, _airy_oscillating(xp, _in_range(xp, x, -np.inf, lo, fill=lo - 1.0)),
                   select(x < hi, _airy_series(xp, _in_range(xp, x, lo, hi)),
                            _airy_decaying(xp, _in_range(xp, x, hi, _AIRY_ZERO_PAST))))
    out = select(x > _AIRY_ZERO_PAST, 0.0, out)
    return select(xp.isinf(x) | xp.isnan(x), np.nan, out)


bessel_y0 = _special_unary("bessel_y0", _bessel_y(0))
bessel_y1 = _special_unary("bessel_y1", _bessel_y(1))
_FLOAT32_EXP_OVERFLOW = float(np.log(np.finfo(np.float32).max))
modified_bessel_i0 = _special_unary("modified_bessel_i0", _modified_i(0),
                                    float32_overflow=_FLOAT32_EXP_OVERFLOW)
modified_bessel_i1 = _special_unary("modified_bessel_i1", _modified_i(1),
                                    float32_overflow=_FLOAT32_EXP_OVERFLOW)
modified_bessel_k0 = _special_unary("modified_bessel_k0", _bessel_k(0, scaled=False))
modified_bessel_k1 = _special_unary("modified_bessel_k1", _bessel_k(1, scaled=False))
scaled_modified_bessel_k0 = _special_unary("scaled_modified_bessel_k0", _bessel_k(0, scaled=True), "x")
scaled_modified_bessel_k1 = _special_unary("scaled_modified_bessel_k1", _bessel_k(1, scaled=True), "x")
spherical_bessel_j0 = _special_unary("spherical_bessel_j0", _spherical_j0, "x")
airy_ai = _special_unary("airy_ai", _airy_ai, "x")
