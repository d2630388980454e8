"""Helpers shared by the distributions: broadcasting parameters, probs <-> logits, lazily
computed parameters, and the sampling primitives that draw from ember's generators."""
from numbers import Number

import numpy as np

from .. import random as _random
from .._tensor import Tensor
from ..dtypes import finfo, get_default_dtype
from ..ops import broadcast_tensors, empty, log, log1p, sigmoid, tensor as _tensor
from ..autograd import enable_grad
from ..autograd.function import Function
from ..nn import functional as F
from ..ops import _torch_stream as _ts
from ..ops.random_ops import LOOPED_DRAWS_MAX

__all__ = ["broadcast_all", "logits_to_probs", "probs_to_logits", "clamp_probs",
           "lazy_property", "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060


def broadcast_all(*values):
    """Numbers become tensors of the first tensor's dtype and device (else the default
    dtype); everything is broadcast together."""
    if not all(isinstance(v, (Tensor, Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, "
                         "torch.Tensor or objects implementing __torch_function__.")
    if not all(isinstance(v, Tensor) for v in values):
        options = dict(dtype=get_default_dtype())
        for value in values:
            if isinstance(value, Tensor):
                options = dict(dtype=value.dtype, device=value.device)
                break
        values = [v if isinstance(v, Tensor) else _tensor(v, **options) for v in values]
    return broadcast_tensors(*values)


def _standard_normal(shape, dtype, device):
    return empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    """Sums the `dim` rightmost dimensions."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:value.dim() - dim]) + (-1,)).sum(-1)


def clamp_probs(probs):
    eps = finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def logits_to_probs(logits, is_binary=False):
    if is_binary:
        return sigmoid(logits)
    return F.softmax(logits, dim=-1)


def probs_to_logits(probs, is_binary=False):
    ps_clamped = clamp_probs(probs)
    if is_binary:
        return log(ps_clamped) - log1p(-ps_clamped)
    return log(ps_clamped)


class lazy_property:
    """Computed on first access (with grad enabled, so it joins the graph), then stored in
    the instance's __dict__, where it shadows this descriptor."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        self.__doc__ = wrapped.__doc__

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    """What a lazy property looks like on the class: still a lazy_property (so validation
    skips it), and a property (so documentation tools see one)."""

    def __init__(self, wrapped):
        property.__init__(self, wrapped)


def tril_matrix_to_vec(mat, diag=0):
    n = mat.shape[-1]
    if not (-n <= diag < n):
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    from ..ops import arange
    idx = arange(n, device=mat.device)
    tril_mask = idx < idx.view(-1, 1) + (diag + 1)
    return mat[..., tril_mask]


def vec_to_tril_matrix(vec, diag=0):
    from ..ops import arange, zeros
    n = (-(1 + 2 * diag) + ((1 + 2 * diag) ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1))
         ** 0.5) / 2
    eps = finfo(vec.dtype).eps
    if not (round(n) - n < eps):
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         f"expressed as the lower triangular part of a square D x D matrix.")
    n = round(n.item()) if isinstance(n, Tensor) else round(n)
    mat = zeros(tuple(vec.shape[:-1]) + (n, n), dtype=vec.dtype, device=vec.device)
    arange_ = arange(n, device=vec.device)
    tril_mask = arange_ < arange_.view(-1, 1) + (diag + 1)
    mat[..., tril_mask] = vec
    return mat


# ---- draws without a reparameterised gradient ------------------------------------------
def _draw(device, fn):
    """Runs `fn(rng, xp)` on the device's generator and wraps the array it returns."""
    from ..device import backend_of
    rng = _random.generator_for(device).rng
    return Tensor._wrap(fn(rng, backend_of(device).xp), device)


_LAGUERRE = None


def _laguerre(dtype, device):
    """64-point Gauss-Laguerre nodes and weights (integrals against exp(-s) on [0, inf))."""
    global _LAGUERRE
    if _LAGUERRE is None:
        import numpy as np
        _LAGUERRE = np.polynomial.laguerre.laggauss(64)
    return (_tensor(_LAGUERRE[0], dtype=dtype, device=device),
            _tensor(_LAGUERRE[1], dtype=dtype, device=device))


def _gamma_sample_shape_grad(alpha, x):
    """d x / d alpha for x ~ Gamma(alpha, 1) by implicit reparameterisation: x moves so
    that its CDF value P(alpha, x) stays fixed, dx/da = -(dP/da) / density(x).

    In the body and lower tail, dP/da comes from P's series sum_n exp(-x) x^(alpha+n) /
    Gamma(alpha+n+1) differentiated term by term, each term already divided by the
    density (so nothing underflows); the terms form a Poisson-like bump in alpha+n around
    x, so n up to x - alpha + 12 sqrt(x) + 30 loses nothing in float64. Far in the upper
    tail that sum cancels to almost nothing, so there the derivative of the upper tail
    Q = 1 - P is used instead: with t = x + u, Q / density = int (1 + u/x)^(alpha-1) e^-u du,
    taken by Gauss-Laguerre after rescaling u so the integrand's decay matches the rule."""
    from ..ops import digamma, log1p, where, zeros_like
    log_x = x.log()
    tail = x > alpha + 3 * alpha.sqrt() + 3
    # series (body and lower tail)
    body_x = where(tail, alpha, x)  # tail elements get a harmless stand-in
    log_bx = body_x.log()
    log_ratio = log_bx - alpha.log()
    psi = digamma(alpha + 1)
    total = zeros_like(x)
    n_terms = int(float((body_x - alpha + 12 * body_x.sqrt()).max())) + 30 if x.numel() else 0
    for n in range(n_terms):
        total = total + log_ratio.exp() * (log_bx - psi)
        step = alpha + (n + 1)
        log_ratio = log_ratio + log_bx - step.log()
        psi = psi + 1 / step
    series = -total
    if not bool(tail.any()):
        return series
    # upper tail: dx/da = dQ/da / density = I (log x - digamma(a)) + J
    nodes, weights = _laguerre(x.dtype, x.device)
    c = (alpha - 1).clamp(min=0) / x
    beta = (1 - c).unsqueeze(-1)
    u = nodes / beta
    L = log1p(u / x.unsqueeze(-1))
    h = ((alpha.unsqueeze(-1) - 1) * L - c.unsqueeze(-1) * u).exp() / beta
    integral = (weights * h).sum(-1)
    j_term = (weights * L * h).sum(-1)
    upper = integral * (log_x - digamma(alpha)) + j_term
    return where(tail, upper, series)


class _StandardGammaGrad(Function):
    """d sample / d concentration of a Gamma(concentration, 1) draw, by implicit
    reparameterisation: the sample keeps its CDF value fixed, so
    dx/da = -(dP(a, x)/da) / density(x). Itself not differentiable, as in PyTorch."""

    @staticmethod
    def forward(ctx, alpha, x):
        return _gamma_sample_shape_grad(alpha.double(), x.double()).to(x.dtype)

    @staticmethod
    def backward(ctx, grad):
        raise NotImplementedError("the derivative for '_standard_gamma_grad' is not "
                                  "implemented.")


class _StandardGamma(Function):
    """Gamma(concentration, 1) draws from ember's generator, differentiable in the
    concentration by implicit reparameterisation (as PyTorch's _standard_gamma)."""

    @staticmethod
    def forward(ctx, concentration):
        arr = concentration._array
        out = _draw(concentration.device, lambda rng, xp: _gamma_draws(rng, arr))
        ctx.save_for_backward(concentration, out)
        return out

    @staticmethod
    def backward(ctx, grad):
        concentration, out = ctx.saved_tensors
        return grad * _StandardGammaGrad.apply(concentration, out)


def _gamma_draws(rng, alphas, wide=False):
    """Gamma(alpha, 1) draws in alphas' dtype (float64 when `wide`, alpha then held in double
    as Dirichlet's kernel holds it): PyTorch's own on a CPU generator (float32 and float64, up
    to LOOPED_DRAWS_MAX values: a Python loop), floored at the dtype's smallest normal as its
    kernels floor them; else NumPy's sampler."""
    dtype = np.dtype(np.float64) if wide else alphas.dtype
    if _ts.stream(rng) is not None and alphas.dtype in (np.float32, np.float64) and \
            alphas.size <= LOOPED_DRAWS_MAX:
        drawn = _ts.standard_gamma(rng, alphas, alphas.dtype == np.float32 and not wide)
        drawn = drawn.astype(dtype)
        tiny = np.finfo(dtype).tiny
        return np.where(tiny < drawn, drawn, tiny)  # std::max(tiny, x): NaN gives tiny too
    return rng.standard_gamma(alphas.astype("float64")).astype(dtype)


class _DirichletSample(Function):
    """Dirichlet(concentration) draws as PyTorch's _sample_dirichlet makes them: Gamma draws
    with alpha held in double (PyTorch's own on a CPU generator), normalised in double, then
    cast and kept inside (0, 1) of the dtype. Differentiable in the concentration through the
    gamma draws' implicit reparameterisation: x = g / sum(g), so
    d alpha_j = (grad_j - sum_i grad_i x_i) / sum(g) * dg_j / d alpha_j."""

    @staticmethod
    def forward(ctx, concentration):
        arr = concentration._array
        gammas = _draw(concentration.device, lambda rng, xp: _gamma_draws(rng, arr, wide=True))
        total = gammas.sum(-1, keepdim=True)
        d = concentration.dtype
        x = (gammas / total).to(d).clamp(finfo(d).tiny, 1 - finfo(d).eps / 2)
        ctx.save_for_backward(concentration, gammas, total, x)
        return x

    @staticmethod
    def backward(ctx, grad):
        concentration, gammas, total, x = ctx.saved_tensors
        inner = (grad * x).sum(-1, keepdim=True)
        dg = _StandardGammaGrad.apply(concentration, gammas.to(concentration.dtype))
        return (grad - inner) / total.to(grad.dtype) * dg


def _sample_dirichlet(concentration):
    return _DirichletSample.apply(concentration)


def _standard_gamma(concentration):
    return _StandardGamma.apply(concentration)


def _binomial(count, prob):
    c, p = count._array, prob._array
    return _draw(count.device, lambda rng, xp: rng.binomial(
        c.astype("int64"), p.astype("float64")).astype(p.dtype))
