"""The gamma family beyond lgamma / digamma / polygamma: the Hurwitz zeta function
(`torch.special.zeta`), the multivariate log-gamma (`torch.mvlgamma`,
`torch.special.multigammaln`) and the regularized incomplete gamma functions
(`torch.igamma` / `igammac`, `torch.special.gammainc` / `gammaincc`), with PyTorch's backward
nodes (and its "not implemented" errors where it has no derivative).

Incomplete gamma kernels, in float64: P(a, x) by its power series
P = x^a e^-x / Gamma(a+1) * sum_n x^n / ((a+1)...(a+n)) where x <= max(a, 1), and Q(a, x) by
Legendre's continued fraction (modified Lentz) elsewhere; the other one is the complement,
except Q for x <= 1.1 and a small, where 1 - P would cancel (a series of its own).
The factor x^a e^-x / Gamma(a) is taken, for a >= 10, as
exp(-a (u - log1p(u))) sqrt(a / 2 pi) / exp(stirling(a)) with u = (x - a) / a, which keeps
its relative precision where a log x - x - lgamma(a) would cancel. Both iterations stop per
element when the next term no longer changes the sum; near x = a they take O(sqrt(a)) steps.
"""
import builtins
import math

import numpy as np

from ..._select import select
from ... import dtypes as _dt
from ..._tensor import Tensor
from .._graph import Node, record
from .._writes import inplace, write_out
from ..pointwise import BinaryNode, binary
from ._common import _module, _need_tensor, _not_implemented, _promoted
from ._special_kernels import _coefficients, _horner, _hurwitz_zeta, _lgamma
from .special import digamma, lgamma

__all__ = ["mvlgamma", "igamma", "igammac"]
METHODS = ["mvlgamma_", "igamma_", "igammac_"]  # the others are bound at the end

_EPS = 1.1102230246251565e-16
_TINY = 1e-300


def _pair(x, y):
    """Two kernel operands as float64 arrays of one shape (a number takes the other's type)."""
    xp = _module(x, y)
    dt = x.dtype if hasattr(x, "dtype") else y.dtype
    x = x if hasattr(x, "dtype") else xp.asarray(x, dtype=dt)
    y = y if hasattr(y, "dtype") else xp.asarray(y, dtype=dt)
    xw, yw = xp.broadcast_arrays(x.astype(np.float64), y.astype(np.float64))
    return xp, dt, xp.ascontiguousarray(xw), xp.ascontiguousarray(yw)


def _binary_kernel(cupy_name, kernel):
    """A two-operand float64 kernel (on CUDA, cupyx.scipy.special's function of that name),
    its result rounded once to the operands' dtype."""
    def run(x, y):
        xp, dt, xw, yw = _pair(x, y)
        if xp.__name__ == "cupy":  # CuPy's kernels (meta arrays take NumPy's ufuncs)
            import cupyx.scipy.special as cs
            return getattr(cs, cupy_name)(xw, yw).astype(dt)
        res = kernel(xp, xw.reshape(-1), yw.reshape(-1))
        return res.reshape(xw.shape).astype(dt, copy=False)
    return run


# ==== zeta =========================================================================================
def _zeta(xp, s, q):
    """The Hurwitz zeta function sum_k (q + k)^-s, for s > 1."""
    bad = ~(s > 1.0)
    neg_q = q <= 0
    pole = neg_q & (q == xp.floor(q))
    # a negative q is defined for integer s only (q^-s)
    undefined = neg_q & ~pole & (s != xp.floor(s))
    safe_s = select(bad | undefined | xp.isnan(q), 2.0, s)
    res = _hurwitz_zeta(xp, safe_s, select(undefined | xp.isnan(q), 1.0, q))
    res = select(pole, np.inf, res)
    res = select(undefined | (s < 1.0) | xp.isnan(s) | xp.isnan(q), np.nan, res)
    return select(s == 1.0, np.inf, res)


_zeta_k = _binary_kernel("zeta", _zeta)


class SpecialZetaBackward0(BinaryNode):
    def backward(self, grad):
        s, q = self.saved_tensors
        if self._next[0][0] is not None:
            raise NotImplementedError("the derivative for 'zeta' is not implemented.")
        return None, grad * -s * zeta(s + 1.0, q)


class SpecialZetaBackward1(BinaryNode):
    """A number as self (the order), a tensor as other."""

    def backward(self, grad):
        (q,) = self.saved_tensors
        return grad * -self.scalar * zeta(self.scalar + 1.0, q)


class SpecialZetaBackward2(BinaryNode):
    """A tensor as self, a number as other: only self has an edge, and no derivative."""
    saves = False

    def backward(self, grad):
        raise NotImplementedError("the derivative for 'zeta' is not implemented.")


def zeta(input, other, *, out=None):
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(
            f"special_zeta() received an invalid combination of arguments - got "
            f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
            " * (Tensor input, Tensor other, *, Tensor out = None)\n"
            " * (Number self, Tensor other, *, Tensor out = None)\n"
            " * (Tensor input, Number other, *, Tensor out = None)\n")
    d = _promoted(input, other)
    if d.is_complex or d is _dt.float16 or d is _dt.bfloat16:
        raise _not_implemented("zeta_cpu", d)
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        cls = SpecialZetaBackward0
    else:
        cls = SpecialZetaBackward2 if isinstance(input, Tensor) else SpecialZetaBackward1
    return binary(input, other, _zeta_k, cls, "special_zeta", out, float_result=True)


# ==== incomplete gamma =============================================================================
def _a_u_minus_log1p_u(xp, a, x):
    """a (u - log1p(u)) with u = (x - a) / a: the series sum_k (-u)^k / k (k >= 2) near u = 0,
    else (x - a) - a log(x / a) (x / a, unlike 1 + u, keeps its relative precision)."""
    u = (x - a) / a
    small = xp.abs(u) < 0.25
    us = select(small, u, 0.0)
    total = xp.zeros_like(u)
    power = us * us
    for k in range(2, 30):
        total = total + (power / k if k % 2 == 0 else -power / k)
        power = power * us
    big = (x - a) - a * xp.log(select(small, 1.0, x / a))
    return select(small, a * total, big)


def _log_prefactor(xp, a, x):
    """log(x^a e^-x / Gamma(a)) for a, x > 0."""
    large = a >= 10.0
    al = select(large, a, 10.0)
    stirling = _horner(1.0 / (al * al), _coefficients()['STIRLING'][::-1]) / al
    big = -_a_u_minus_log1p_u(xp, al, x) + 0.5 * xp.log(al / (2.0 * math.pi)) - stirling
    asmall = select(large, 1.0, a)
    small = asmall * xp.log(x) - x - _lgamma(xp, asmall)
    return select(large, big, small)


def _series(xp, a, x):
    """sum_n x^n / ((a+1)...(a+n)), each element until its terms stop counting."""
    out = xp.empty_like(a)
    idx = xp.arange(a.size)
    term = xp.ones_like(a)
    total = xp.ones_like(a)
    n = 0
    while idx.size:
        n += 1
        term = term * x / (a + n)
        total = total + term
        done = term <= _EPS * total
        if done.any():
            out[idx[done]] = total[done]
            keep = ~done
            idx, a, x, term, total = idx[keep], a[keep], x[keep], term[keep], total[keep]
    return out


def _continued_fraction(xp, a, x):
    """Legendre's continued fraction of Gamma(a, x) e^x x^-a, by the modified Lentz method."""
    out = xp.empty_like(a)
    idx = xp.arange(a.size)
    b = x + 1.0 - a
    c = xp.full_like(a, 1.0 / _TINY)
    d = 1.0 / b
    h = d.copy()
    i = 0
    while idx.size:
        i += 1
        an = -i * (i - a)
        b = b + 2.0
        d = an * d + b
        d = select(xp.abs(d) < _TINY, _TINY, d)
        c = b + an / c
        c = select(xp.abs(c) < _TINY, _TINY, c)
        d = 1.0 / d
        delta = d * c
        h = h * delta
        done = xp.abs(delta - 1.0) <= _EPS
        if done.any():
            out[idx[done]] = h[done]
            keep = ~done
            idx, a, x, b, c, d, h = idx[keep], a[keep], x[keep], b[keep], c[keep], d[keep], h[keep]
    return out


def _lgamma1p(xp, a):
    """lgamma(1 + a) for a >= 0, without rounding 1 + a where a is small:
    lgamma(1 + a) = lgamma(2 + a) - log1p(a), the first by its Taylor series at 2."""
    small = a < 0.5
    z = select(small, a, 0.0)
    series = _coefficients()['LG2'][0]
    for c in _coefficients()['LG2'][1:]:
        series = series * z + c
    return select(small, series * z - xp.log1p(z), _lgamma(xp, select(small, 1.0, a) + 1.0))


def _upper_small_a(xp, a, x):
    """Q(a, x) for x <= 1.1 and a small, where 1 - P would cancel: with
    t = x^a / Gamma(a+1), P = t (1 + a sum_(n>=1) (-x)^n / (n! (a+n))), so
    Q = -expm1(log t) - t a sum(...)."""
    log_t = a * xp.log(x) - _lgamma1p(xp, a)
    total = xp.zeros_like(x)
    power = xp.ones_like(x)
    for n in range(1, 32):
        power = power * (-x) / n
        total = total + power / (a + n)
    return -xp.expm1(log_t) - xp.exp(log_t) * a * total


def _incomplete_gamma(xp, a, x, upper):
    """P(a, x) (upper False) or Q(a, x) (upper True) on flat float64 arrays."""
    res = xp.full(a.shape, np.nan)
    regular = (a > 0) & (x > 0) & xp.isfinite(a) & xp.isfinite(x)
    ar, xr = a[regular], x[regular]
    cf = (xr > 1.0) & (xr > ar)
    logf = _log_prefactor(xp, ar, xr)
    value = xp.empty_like(ar)
    sa, sx = ar[~cf], xr[~cf]
    p = xp.exp(logf[~cf] - xp.log(sa)) * _series(xp, sa, sx)
    value[~cf] = 1.0 - p if upper else p
    if upper:
        small_a = (xr <= 1.1) & select(xr <= 0.5, ar * -xp.log(xr) <= 0.4, ar <= 1.1 * xr)
        value[small_a] = _upper_small_a(xp, ar[small_a], xr[small_a])
    q = xp.exp(logf[cf]) * _continued_fraction(xp, ar[cf], xr[cf])
    value[cf] = q if upper else 1.0 - q
    res[regular] = value
    lo, hi = (1.0, 0.0) if upper else (0.0, 1.0)
    res = select((x == 0) & (a > 0), lo, res)                    # also a = inf
    res = select(xp.isinf(a) & (a > 0) & (x > 0) & xp.isfinite(x), lo, res)
    res = select(xp.isinf(x) & (x > 0) & (a > 0) & xp.isfinite(a), hi, res)
    res = select((a == 0) & (x > 0), hi, res)
    return select((x < 0) | (a < 0) | xp.isnan(a) | xp.isnan(x), np.nan, res)


_igamma_k = _binary_kernel("gammainc", lambda xp, a, x: _incomplete_gamma(xp, a, x, False))
_igammac_k = _binary_kernel("gammaincc", lambda xp, a, x: _incomplete_gamma(xp, a, x, True))


def _igamma_grad_other(grad, a, x):
    return grad * ((a - 1) * x.log() - x - lgamma(a)).exp()


class IgammaBackward0(BinaryNode):
    def backward(self, grad):
        a, x = self.saved_tensors
        if self._next[0][0] is not None:
            raise NotImplementedError("the derivative for 'igamma: input' is not implemented.")
        return None, _igamma_grad_other(grad, a, x)


class IgammacBackward0(BinaryNode):
    def backward(self, grad):
        a, x = self.saved_tensors
        if self._next[0][0] is not None:
            raise NotImplementedError("the derivative for 'igammac: input' is not implemented.")
        return None, -_igamma_grad_other(grad, a, x)


def _incomplete(fname, input, other, out, kernel, node_cls, kernel_name, position=1):
    _need_tensor(fname, input, "input", position)
    _need_tensor(fname, other, "other", position + 1)
    d = _promoted(input, other)
    if not d.is_floating_point:
        raise _not_implemented(kernel_name, d)
    return binary(input, other, kernel, node_cls, fname, out)


def igamma(input, other, *, out=None):
    return _incomplete("igamma", input, other, out, _igamma_k, IgammaBackward0, "igamma_cpu")


def igammac(input, other, *, out=None):
    return _incomplete("igammac", input, other, out, _igammac_k, IgammacBackward0, "igammac_cpu")


def gammainc(input, other, *, out=None):
    return _incomplete("special_gammainc", input, other, out, _igamma_k, IgammaBackward0,
                       "igamma_cpu")


def gammaincc(input, other, *, out=None):
    return _incomplete("special_gammaincc", input, other, out, _igammac_k, IgammacBackward0,
                       "igammac_cpu")


def _igamma_method(name, kernel, node_cls, kernel_name):
    def method(self, other):
        _need_tensor(name, other, "other", 1)
        return _incomplete(name, self, other, None, kernel, node_cls, kernel_name)

    def method_(self, other):
        _need_tensor(name + "_", other, "other", 1)
        d = _promoted(self, other)
        if not d.is_floating_point:
            raise _not_implemented(kernel_name, d)
        return inplace(self, lambda s: binary(s, other, kernel, node_cls, name), (other,))
    method.__name__ = method.__qualname__ = name
    method_.__name__ = method_.__qualname__ = name + "_"
    return method, method_


_igamma_m, igamma_ = _igamma_method("igamma", _igamma_k, IgammaBackward0, "igamma_cpu")
_igammac_m, igammac_ = _igamma_method("igammac", _igammac_k, IgammacBackward0, "igammac_cpu")


# ==== mvlgamma =====================================================================================
class MvlgammaBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * digamma(_mvl_arguments(t, self.p)).sum(-1)


def _mvl_arguments(t, p):
    """t[..., None] + [-(p-1)/2, ..., -1/2, 0] in t's floating dtype."""
    from ..ranges import arange
    d = t.dtype if t.dtype.is_floating_point else _dt.get_default_dtype()
    steps = arange(-p * 0.5 + 0.5, 0.5, 0.5, dtype=d, device=t.device)
    return steps + t.unsqueeze(-1)


def _check_p(fname, p, position):
    if isinstance(p, builtins.bool) or not isinstance(p, (builtins.int, np.integer)):
        raise TypeError(f"{fname}(): argument 'p' (position {position}) must be int, not "
                        f"{type(p).__name__}")
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")


def _mvlgamma(input, p, out, fname, position):
    _need_tensor(fname, input)
    _check_p(fname, p, position)
    p = builtins.int(p)
    d = input.dtype
    if d is _dt.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    if d.is_complex:
        raise _not_implemented("arange_cpu", d)
    res = lgamma(_mvl_arguments(input.detach(), p)).sum(-1) + \
        p * (p - 1) * math.log(math.pi) * 0.25
    if out is not None and res.dtype is not out.dtype and \
            res.dtype._category > out.dtype._category:
        raise RuntimeError(f"mvlgamma: result type {d._scalar_name} can't be cast to the "
                           f"desired output type {res.dtype._scalar_name}")
    node = record(MvlgammaBackward0, (input,), res)
    if node is not None:
        node.save_for_backward(input)
        node.p = p
    return res if out is None else write_out(out, res, fname)


def mvlgamma(input, p, *, out=None):
    return _mvlgamma(input, p, out, "mvlgamma", 2)


def multigammaln(input, p, *, out=None):
    return _mvlgamma(input, p, out, "special_multigammaln", 2)


def _mvlgamma_method(self, p):
    return _mvlgamma(self, p, None, "mvlgamma", 1)


def mvlgamma_(self, p):
    _check_p("mvlgamma_", p, 1)
    d = self.dtype
    if not (d.is_floating_point or d.is_complex or d is _dt.bool):
        raise RuntimeError(f"mvlgamma: result type {d._scalar_name} can't be cast to the desired "
                           f"output type {_dt.get_default_dtype()._scalar_name}")
    return inplace(self, lambda s: _mvlgamma(s, p, None, "mvlgamma", 1))


# Tensor.mvlgamma(p), Tensor.igamma(other): self first (their argument positions differ from
# the top-level functions')
Tensor.mvlgamma = _mvlgamma_method
Tensor.igamma = _igamma_m
Tensor.igammac = _igammac_m
