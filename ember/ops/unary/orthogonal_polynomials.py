"""`torch.special`'s classical orthogonal polynomials of degree n at x: Chebyshev T, U, V, W (and
their shifted forms on [0, 1]), Hermite H and He, Laguerre L, Legendre P. PyTorch defines no
derivative for any of them.

Both operands broadcast; x or n may be a Python number (not both); the result takes the
promoted floating dtype, and the degree is that dtype's value truncated to an integer (2.7 is
degree 2; NaN, +-inf and negative degrees give 0). Computed in the result dtype, as PyTorch
does, by the three-term recurrence of each family, with PyTorch's shortcuts kept because they
decide its values: the closed forms at the ends of the interval, the trigonometric forms of
Chebyshev polynomials inside it for larger n, and NaN for Hermite degrees past 128 (float32)
or 512 (float64).
"""
import numpy as np

from ..._meta.array import ndarray as MetaArray
from ..._tensor import Tensor
from ..pointwise import binary
from ._common import _HALF, _module, _not_implemented, _promoted

__all__ = []

_HERMITE_LIMIT = {np.dtype(np.float32): 128, np.dtype(np.float64): 512}


def _degrees(xp, n, dtype):
    """The integer degree of each element: n (already in the result dtype) truncated; NaN,
    +-inf and values past int64 become -1 (degree "below zero")."""
    n = n.astype(dtype, copy=False)
    ok = xp.isfinite(n) & (xp.abs(n) < 2.0 ** 63)
    return xp.where(ok, xp.trunc(xp.where(ok, n, -1.0)), -1.0).astype(np.int64)


def _recurrence(xp, n, p, q, step):
    """Runs `(p, q) <- (q, step(j, p, q))` for j = 1, ..., n - 1 in each element (degree n
    from degree 1); returns q."""
    count = n - 1
    if isinstance(count, MetaArray):  # no degrees to run to: the result keeps its shape
        return q
    top = int(count.max()) if count.size else 0
    for j in range(1, top + 1):
        active = count >= j
        if not active.any():
            break
        r = step(j, p, q)
        p, q = xp.where(active, q, p), xp.where(active, r, q)
        if j % 64 == 0 and not (active & ~xp.isnan(q)).any():
            break  # every running element is NaN already: it stays NaN
    return q


def _fused(a, b, c):
    """a * b + c rounded once, as the fused multiply-add PyTorch's compiled recurrences use:
    for float32 the float64 product is exact, so one float64 sum and the final rounding give
    the float32 fused result (up to a rare double rounding); float64 is left unfused."""
    if a.dtype == np.float32:
        return (a.astype(np.float64) * b.astype(np.float64) + c.astype(np.float64)).astype(a.dtype)
    return a * b + c


def _signed(n, even, odd):
    return np.where(n % 2 == 0, even, odd)


def _chebyshev(kind, shifted):
    """Chebyshev polynomials T, U, V, W of the first to fourth kind, of x or of 2x - 1."""
    trig_from = {("t", False): 6, ("u", False): 8, ("v", False): 8, ("w", False): 8,
                 ("t", True): 6, ("u", True): 6, ("v", True): 6, ("w", True): 4}[kind, shifted]

    def kernel(xp, x, n):
        one = x.dtype.type(1.0)
        y = (x + x - one) if shifted else x
        two_y = y + y
        nf = n.astype(x.dtype)
        first = {"t": y, "u": two_y, "v": two_y - one, "w": two_y + one}[kind]
        rec = _recurrence(xp, n, xp.ones_like(y), first, lambda j, p, q: _fused(two_y, q, -p))
        out = xp.where(n == 0, one, xp.where(n == 1, first, rec))
        # the trigonometric forms inside (-1, 1), theta = acos(y)
        inside = (n > trig_from) & (xp.abs(y) < one)
        theta = xp.arccos(xp.where(inside, y, 0.0).astype(x.dtype))
        half = theta / x.dtype.type(2.0)
        odd_sign = _signed(n, one, -one).astype(x.dtype)
        if kind == "t":
            trig = xp.cos(nf * theta)
        elif kind == "u":
            sin_theta = xp.sin(theta)
            plain = xp.sin((nf + one) * theta) / xp.where(sin_theta != 0, sin_theta, one)
            trig = xp.where(sin_theta != 0, plain,
                            (nf + one) * xp.cos((nf + one) * theta) / xp.where(y != 0, y, one))
        elif kind == "v":
            at_end = xp.sin(half) == one
            plain = xp.cos((nf + x.dtype.type(0.5)) * theta) / xp.where(at_end, one, xp.cos(half))
            trig = xp.where(at_end, odd_sign * (nf + nf + one), plain)
        else:
            at_end = xp.cos(half) == one
            plain = xp.sin((nf + x.dtype.type(0.5)) * theta) / xp.where(at_end, one, xp.sin(half))
            # PyTorch's value where cos(theta / 2) rounds to 1: W's value at the upper end
            # (2n + 1) unshifted when x > 0, else +-1
            end = xp.where(y > 0, nf + nf + one, odd_sign) if not shifted else odd_sign
            trig = xp.where(at_end, end, plain)
        out = xp.where(inside, trig, out)
        # the ends of the interval: y = 1 and y = -1 (x = 1 and x = 0 when shifted)
        upper = (x == one) if shifted else (y == one)
        lower = (x == 0) if shifted else (y == -one)
        at_upper = {"t": one, "u": nf + one, "v": one, "w": nf + nf + one}[kind]
        at_lower = {"t": odd_sign, "u": odd_sign * (nf + one), "v": odd_sign * (nf + nf + one),
                    "w": odd_sign}[kind]
        out = xp.where(upper, at_upper, xp.where(lower, at_lower, out))
        return xp.where(n < 0, x.dtype.type(0.0), out)
    return kernel


def _below_limit(xp, n, dtype):
    """The degrees the Hermite recurrence runs for (those past the limit are NaN anyway)."""
    return xp.where(n > _HERMITE_LIMIT[dtype], 0, n)


def _hermite_h(xp, x, n):
    two_x = x + x
    rec = _recurrence(xp, _below_limit(xp, n, x.dtype), xp.ones_like(x), two_x,
                      lambda j, p, q: _fused(two_x, q, -(x.dtype.type(2 * j) * p)))
    out = xp.where(n == 0, 1.0, xp.where(n == 1, two_x, rec))
    out = xp.where(n > _HERMITE_LIMIT[x.dtype], np.nan, out)
    return xp.where(n < 0, 0.0, out).astype(x.dtype, copy=False)


def _hermite_he(xp, x, n):
    rec = _recurrence(xp, _below_limit(xp, n, x.dtype), xp.ones_like(x), x,
                      lambda j, p, q: _fused(x, q, -(x.dtype.type(j) * p)))
    out = xp.where(n == 0, 1.0, xp.where(n == 1, x, rec))
    out = xp.where(n > _HERMITE_LIMIT[x.dtype], np.nan, out)
    return xp.where(n < 0, 0.0, out).astype(x.dtype, copy=False)


def _laguerre_l(xp, x, n):
    one = x.dtype.type(1.0)
    first = one - x

    def step(k, p, q):
        t = x.dtype.type
        return _fused(t(k + k) + first, q, -(t(k) * p)) / t(k + 1)
    rec = _recurrence(xp, n, xp.ones_like(x), first, step)
    out = xp.where(n == 0, one, xp.where(n == 1, first, rec))
    out = xp.where(x == 0, one, out)
    return xp.where(n < 0, 0.0, out).astype(x.dtype, copy=False)


def _legendre_p(xp, x, n):
    one = x.dtype.type(1.0)

    def step(k, p, q):
        t = x.dtype.type
        return _fused(t(k + k + 1) * x, q, -(t(k) * p)) / t(k + 1)
    rec = _recurrence(xp, n, xp.ones_like(x), x, step)
    out = xp.where(n == 0, one, xp.where(n == 1, x, rec))
    odd_sign = _signed(n, one, -one).astype(x.dtype)
    out = xp.where(x == one, one, xp.where(x == -one, odd_sign, out))
    return xp.where(n < 0, 0.0, out).astype(x.dtype, copy=False)


def _polynomial_op(fname, kernel):
    def op(x, n, *, out=None):
        x_tensor, n_tensor = isinstance(x, Tensor), isinstance(n, Tensor)
        if not (x_tensor or n_tensor):
            raise TypeError(
                f"special_{fname}() received an invalid combination of arguments - got "
                f"({type(x).__name__}, {type(n).__name__}), but expected one of:\n"
                " * (Tensor x, Tensor n, *, Tensor out = None)\n"
                " * (Number x, Tensor n, *, Tensor out = None)\n"
                " * (Tensor x, Number n, *, Tensor out = None)\n")
        d = _promoted(x, n)
        if d.is_complex or d.np in _HALF:
            raise _not_implemented(fname + "_cpu", d)

        def arrays(points, degree):
            xp = _module(points, degree)
            dt = points.dtype if hasattr(points, "dtype") else degree.dtype
            points, degree = xp.broadcast_arrays(xp.asarray(points, dtype=dt),
                                                 xp.asarray(degree, dtype=dt))
            with np.errstate(all="ignore"):
                res = kernel(xp, points.copy(), _degrees(xp, degree, dt))
            return xp.asarray(res, dtype=dt)
        return binary(x, n, arrays, None, "special_" + fname, out, float_result=True)
    op.__name__ = op.__qualname__ = fname
    return op


def _register():
    ops = {}
    for kind in "tuvw":
        ops[f"chebyshev_polynomial_{kind}"] = _chebyshev(kind, shifted=False)
        ops[f"shifted_chebyshev_polynomial_{kind}"] = _chebyshev(kind, shifted=True)
    ops.update(hermite_polynomial_h=_hermite_h, hermite_polynomial_he=_hermite_he,
               laguerre_polynomial_l=_laguerre_l, legendre_polynomial_p=_legendre_p)
    for name, kernel in ops.items():
        globals()[name] = _polynomial_op(name, kernel)
        __all__.append(name)


_register()
