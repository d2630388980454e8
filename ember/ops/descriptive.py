"""Descriptive statistics: aminmax, dist, renorm, quantile and nanquantile, cov and corrcoef.

quantile, cov and corrcoef are compositions in PyTorch (sort, gather, lerp; mean-centred
matrix products): here too, built from ember ops in PyTorch's order, so values, grad_fns
and derivatives of every order follow from those ops.
"""
import builtins
import warnings

import numpy as np

from .. import dtypes as _dt
from .._memory_format import c_ordered
from .._tensor import _wrap_dim, make_tensor, Tensor, xp_of
from ._graph import Node, needs_grad, record
from ._writes import inplace, write_out
from .pointwise import _promoted_dtype, where
from .reduction import (_check_not_complex, const, dims_of, keep_dims,
                        return_type, tie_weights)
from .statistics import norm_grad, vector_norm

__all__ = ["aminmax", "dist", "renorm", "quantile", "nanquantile", "cov", "corrcoef"]
METHODS = ["aminmax", "dist", "renorm", "renorm_", "quantile", "nanquantile", "cov", "corrcoef"]

aminmax_result = return_type("aminmax", ("min", "max"))
aminmax_out_result = return_type("aminmax_out", ("min", "max"))


# ---- aminmax ---------------------------------------------------------------------------------
class AminmaxBackward0(Node):
    """Each of min and max shares its gradient evenly among its tied elements."""

    def backward(self, gmin, gmax):
        x, lo, hi = self.saved_tensors
        shape, xp = x._array.shape, xp_of(x)
        total = None
        for g, r in ((gmin, lo), (gmax, hi)):
            ra = keep_dims(r, shape, self.axes, self.keepdim)._array
            w = tie_weights(xp, x._array, ra, self.axes, nan_ties=False)
            term = keep_dims(g, shape, self.axes, self.keepdim) * const(w, g)
            total = term if total is None else total + term
        return total


def aminmax(input, *, dim=None, keepdim=False, out=None):
    arr = input._array
    _check_not_complex(input, "aminmax_cpu")
    if dim is None:
        if not arr.size:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as the "
                               "operation has no identity.")
        axes = tuple(builtins.range(arr.ndim))
    else:
        axes = dims_of(dim, arr.ndim)
        if arr.ndim:
            a = axes[0]
            if arr.shape[a] == 0:
                raise IndexError(f"aminmax: Expected reduction dim {a} to have non-zero size.")
    keep = keepdim
    xp = xp_of(input)
    lo = const(xp.asarray(arr.min(axis=axes, keepdims=keep)), input)
    hi = const(xp.asarray(arr.max(axis=axes, keepdims=keep)), input)
    if out is not None:
        write_out(out[0], lo, "aminmax")
        write_out(out[1], hi, "aminmax")
        return aminmax_out_result(out[0], out[1])
    node = record(AminmaxBackward0, (input,), lo, hi)
    if node is not None:
        node.axes, node.keepdim = axes, keep
        node._out_meta = tuple((t._array.shape, t.dtype, t._device) for t in (lo, hi))
        node.save_for_backward(input, lo, hi)
    return aminmax_result(lo, hi)


# ---- dist and renorm ----------------------------------------------------------------------------
class DistBackward0(Node):
    def backward(self, grad):
        a, b, res = self.saved_tensors
        diff = a - b
        g = norm_grad(grad, diff, res, tuple(builtins.range(diff.ndim)), False, self.p)
        ga = g if self._next[0][0] is not None else None
        gb = -g if self._next[1][0] is not None else None
        return ga, gb


def dist(input, other, p=2):
    if not isinstance(other, Tensor):
        raise TypeError(f"dist(): argument 'other' (position 2) must be Tensor, not "
                        f"{type(other).__name__}")
    d = _promoted_dtype(input, other, "dist")
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. Got "
                           f"{d._scalar_name} instead.")
    res = vector_norm(input.detach() - other.detach(), p)
    node = record(DistBackward0, (input, other), res)
    if node is not None:
        node.p = builtins.float(p)
        node.save_for_backward(input, other, res)
    return res


_RENORM_EPS = 1e-7


class RenormBackward0(Node):
    """d(x * f(|x|_p)) with f = maxnorm / (norm + 1e-7) on slices whose norm exceeds maxnorm."""

    def backward(self, grad):
        (x,) = self.saved_tensors
        axes, m = self.axes, self.maxnorm
        n = vector_norm(x, self.p, axes, True)
        over = n > m
        factor = where(over, m / (n + _RENORM_EPS), 1.0)
        # the factor's own derivative, through the norm, where it is not constant
        inner = (grad * x).sum(axes, keepdim=True)
        dfactor = where(over, -m / (n + _RENORM_EPS) ** 2, 0.0) * inner
        return grad * factor + norm_grad(dfactor, x, n, axes, True, self.p)


def _renorm_checks(input, p, dim, maxnorm):
    if isinstance(p, builtins.complex):
        raise RuntimeError("renorm: p must be real-valued")
    if not builtins.float(p) > 0.0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if isinstance(maxnorm, builtins.complex):
        raise RuntimeError("renorm: maxnorm must be real-valued")
    if not builtins.float(maxnorm) >= 0.0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {builtins.float(maxnorm):g}")
    ndim = input._array.ndim
    if ndim <= 1:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {ndim} dimensions")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f'"renorm_out" not implemented for '
                                  f'\'{input.dtype._scalar_name}\'')
    axis = _wrap_dim(dim, ndim)
    return tuple(a for a in builtins.range(ndim) if a != axis)


def renorm(input, p, dim, maxnorm, *, out=None):
    axes = _renorm_checks(input, p, dim, maxnorm)
    p, m = builtins.float(p), builtins.float(maxnorm)
    arr = c_ordered(input._array)  # a contiguous result, as PyTorch's
    n = vector_norm(input.detach(), p, axes, True)._array
    xp = xp_of(input)
    over = n > m
    factor = xp.where(over, m / (n + arr.dtype.type(_RENORM_EPS)), 1).astype(n.dtype)
    res = make_tensor((arr * factor).astype(arr.dtype, copy=False), input._device)
    if out is not None:
        return write_out(out, res, "renorm")
    node = record(RenormBackward0, (input,), res)
    if node is not None:
        node.axes, node.p, node.maxnorm = axes, p, m
        node.save_for_backward(input)
    return res


def renorm_(self, p, dim, maxnorm):
    _renorm_checks(self, p, dim, maxnorm)
    return inplace(self, lambda s: renorm(s, p, dim, maxnorm))


# ---- quantile and nanquantile ---------------------------------------------------------------------
_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


class SqueezeBackward4(Node):
    """PyTorch's quantile ends with an in-place squeeze_(-1) of its gathered values."""

    def backward(self, grad):
        return grad.unsqueeze(-1)


def _quantile(input, q, dim, keepdim, interpolation, out, ignore_nan, fname):
    q, q_scalar = _checked_q(input, q, interpolation, fname)
    arr = input._array
    xp = xp_of(input)
    qa = xp.asarray(q._array if isinstance(q, Tensor) else q, dtype=arr.dtype).reshape(-1)
    s = _sorted_rows(input, dim, keepdim)
    ranks = _ranks(xp, s._array, qa, arr.dtype, ignore_nan, interpolation)
    values = _interpolated(input, s, ranks, q, interpolation, ignore_nan)
    if not q_scalar:
        values = values.unsqueeze(0).transpose(0, -1)
    res = make_tensor(values._array.squeeze(-1), input._device)
    if out is not None:
        return write_out(out, res, fname)
    record(SqueezeBackward4, (values,), res)
    return res


def _checked_q(input, q, interpolation, fname):
    """PyTorch's argument checks, in its order; returns q (a float or a tensor) and whether
    it is a scalar."""
    # (nanquantile's messages name quantile too, as PyTorch's shared checks do)
    if not isinstance(q, Tensor):
        q = builtins.float(q)
        if not 0 <= q <= 1:
            raise RuntimeError(f"{fname}() q must be in the range [0, 1] but got {q:g}")
    if interpolation not in _INTERPOLATIONS:
        raise RuntimeError(f"{fname}() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    arr = input._array
    if not arr.size:
        raise RuntimeError(f"{fname}() input tensor must be non-empty")
    if isinstance(q, Tensor) and q._array.ndim > 1:
        raise RuntimeError(f"{fname}() q must be a scalar or 1D tensor")
    if input.dtype not in (_dt.float32, _dt.float64):
        raise RuntimeError(f"{fname}() input tensor must be either float or double dtype")
    if isinstance(q, Tensor):
        if q.dtype is not input.dtype:
            raise RuntimeError(f"{fname}() q tensor must be same dtype as the input tensor")
        if q._device != input._device:
            raise RuntimeError(f"{fname}() q tensor must be on the same device as the input "
                               f"tensor")
        qa = q._array
        if qa.size and not bool(((qa >= 0) & (qa <= 1)).all()):
            raise RuntimeError(f"{fname}() q values must be in the range [0, 1]")
        q_scalar = qa.ndim == 0
    else:
        q_scalar = True
    return q, q_scalar


def _sorted_rows(input, dim, keepdim):
    """The values sorted along a last dimension, the others shaped as the output is without
    q's dimension."""
    arr = input._array
    if dim is not None and arr.ndim > 0:
        axis = _wrap_dim(dim, arr.ndim)
        out_shape = list(arr.shape)
        if keepdim:
            out_shape[axis] = 1
        else:
            del out_shape[axis]
        if axis == arr.ndim - 1:
            s = input.sort(-1).values
        else:
            s = input.unsqueeze(-1).transpose(axis, -1).sort(-1).values
    else:
        if dim is not None:
            _wrap_dim(dim, arr.ndim)
        out_shape = [1] * arr.ndim if keepdim else []
        s = input.flatten().sort().values
    n = s.shape[-1]
    return s.reshape(out_shape + [n])


def _ranks(xp, sa, qa, dtype, ignore_nan, interpolation):
    """The fractional rank of each q in each sorted row, rounded as `interpolation` asks: a
    row holding NaN ranks at its end (its quantiles are NaN), unless NaNs are ignored."""
    n = sa.shape[-1]
    if ignore_nan:
        count = (~xp.isnan(sa)).sum(-1, keepdims=True).astype(dtype)
        ranks = qa * (count - 1)
        ranks = xp.where(ranks < 0, dtype.type(0), ranks)
    else:
        last = n - 1
        ranks = xp.broadcast_to(qa * dtype.type(last), sa.shape[:-1] + (qa.shape[0],))
        ranks = xp.where(xp.isnan(sa).any(-1, keepdims=True), dtype.type(last), ranks)
    if interpolation == "lower":
        ranks = xp.floor(ranks)
    elif interpolation == "higher":
        ranks = xp.ceil(ranks)
    elif interpolation == "nearest":
        ranks = xp.round(ranks)
    return ranks.astype(dtype, copy=False)


def _interpolated(input, s, ranks, q, interpolation, ignore_nan):
    """The sorted values at the ranks: the one below, moved towards the one above for linear
    and midpoint interpolation (ops on tensors, so the gradient reaches input and q)."""
    arr = input._array
    xp = xp_of(input)
    below = ranks.astype(np.int64)
    dev = input._device
    values = s.gather(-1, make_tensor(below, dev))
    if interpolation in ("linear", "midpoint"):
        if interpolation == "midpoint":
            weights = make_tensor(xp.full_like(ranks, 0.5), dev)
        elif isinstance(q, Tensor) and needs_grad(q):
            # PyTorch's ranks are ops on q: linear weights carry q's gradient
            weights = _ranks_of(q, s._array, ignore_nan) - make_tensor(below.astype(arr.dtype),
                                                                       dev)
        else:
            weights = make_tensor((ranks - below).astype(arr.dtype, copy=False), dev)
        above = make_tensor(xp.ceil(ranks).astype(np.int64), dev)
        values = values.lerp(s.gather(-1, above), weights)
    return values


def _ranks_of(q, sa, ignore_nan):
    """The fractional ranks of `q` in the sorted values `sa`, as ops on q."""
    xp = xp_of(q)
    qr = q.reshape(-1)
    if ignore_nan:
        count = (~xp.isnan(sa)).sum(-1, keepdims=True).astype(sa.dtype)
        r = qr * const(count - 1, q)
        return where(const(r._array < 0, q), 0.0, r)
    last = sa.shape[-1] - 1
    return where(const(xp.isnan(sa).any(-1, keepdims=True), q), float(last), qr * last)


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _quantile(input, q, dim, keepdim, interpolation, out, False, "quantile")


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear", out=None):
    return _quantile(input, q, dim, keepdim, interpolation, out, True, "quantile")


# ---- cov and corrcoef ------------------------------------------------------------------------------
def _check_weights(w, name, n, integral):
    if w._array.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got {name} "
                           f"with {w._array.ndim} dimensions")
    d = w.dtype
    if integral and (d.is_floating_point or d.is_complex or d is _dt.bool):
        raise RuntimeError(f"cov(): expected fweights to have integral dtype but got fweights with "
                           f"{d._scalar_name} dtype")
    if not integral and not d.is_floating_point:
        raise RuntimeError(f"cov(): expected aweights to have floating point dtype but got "
                           f"aweights with {d._scalar_name} dtype")
    if w._array.size != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w._array.size} != {n}")
    if n and not bool((w._array >= 0).all()):
        raise RuntimeError(f"cov(): {name} cannot be negative")


def cov(input, *, correction=1, fweights=None, aweights=None):
    from .creation import tensor as _tensor
    from .linalg import mm
    if input._array.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input._array.ndim} dimensions")
    if input.dtype is _dt.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    x = input.view(1, -1) if input._array.ndim < 2 else input
    n = x.shape[1]
    w = None
    if fweights is not None:
        _check_weights(fweights, "fweights", n, True)
        w = fweights
    if aweights is not None:
        _check_weights(aweights, "aweights", n, False)
        w = aweights if w is None else w * aweights
    w_sum = w.sum() if w is not None else _tensor(n, dtype=_dt.int64, device=input.device)
    if w is not None and not bool(w_sum._array != 0):
        raise RuntimeError("cov(): weights sum to zero, can't be normalized")
    avg = (x * w if w is not None else x).sum(1) / w_sum
    if w is not None and correction != 0 and aweights is not None:
        norm_factor = w_sum - correction * (w * aweights).sum() / w_sum
    else:
        norm_factor = w_sum - correction
    if bool(norm_factor._array <= 0):
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less than "
                      "the number of observations.", UserWarning, stacklevel=2)
        norm_factor = norm_factor * 0
    x = x - avg.unsqueeze(1)
    c = mm(x, (x * w if w is not None else x).t().conj())
    return (c / norm_factor).squeeze()


def corrcoef(input):
    if input._array.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but got an "
                           f"input with {input._array.ndim} dimensions")
    c = cov(input)
    if c._array.ndim == 0:
        return c / c
    d = c.diagonal()
    std = (d.real if d.dtype.is_complex else d).sqrt()
    c = c / std.view(-1, 1)
    c = c / std.view(1, -1)
    if c.dtype.is_complex:
        return c.real.clip(-1, 1) + 1j * c.imag.clip(-1, 1)
    return c.clip(-1, 1)
