"""Distances: cosine_similarity, pairwise_distance, cdist, pdist.

cdist and pdist compute on arrays and have their own nodes (PyTorch's CdistBackward0 and
PdistBackward0) whose backward is written with ember ops; the others are compositions of
differentiable ember ops, as PyTorch composes them, so their gradients follow.
"""
import builtins
import math

import numpy as np

from .. import dtypes as _dt
from .._tensor import make_tensor, Tensor, xp_of
from .._state import autocast as _autocast
from ._autocast import fp32
from ._graph import Node, grad_disabled, record
from .pointwise import scalar_op
from .pointwise._common import broadcast_error

__all__ = ["cosine_similarity", "pairwise_distance", "cdist", "pdist"]
METHODS = []
FUNCTIONAL = ["cosine_similarity", "pairwise_distance", "pdist"]


def _check_tensor(t, fname, what, pos):
    if not isinstance(t, Tensor):
        raise TypeError(f"{fname}(): argument '{what}' (position {pos}) must be Tensor, not "
                        f"{type(t).__name__}")


def _common(a, b):
    return _dt.promote_operands([(a.dtype, a.ndim > 0), (b.dtype, b.ndim > 0)])


# ---- cosine similarity, pairwise distance ------------------------------------------------------
def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    _check_tensor(x1, "cosine_similarity", "x1", 1)
    _check_tensor(x2, "cosine_similarity", "x2", 2)
    d = _common(x1, x2)
    if not d.is_floating_point:
        raise RuntimeError("expected common dtype to be floating point, yet common dtype is "
                           f"{d._scalar_name}")
    mismatch = broadcast_error(tuple(x1.shape), tuple(x2.shape))
    if mismatch is not None:
        raise mismatch
    shape = tuple(np.broadcast_shapes(tuple(x1.shape), tuple(x2.shape)))
    a, b = x1.to(d), x2.to(d)
    if a.shape != b.shape:  # as PyTorch's expand_outplace: equal shapes are not expanded
        a, b = a.expand(shape), b.expand(shape)
    from .statistics import norm
    # Divide each by its norm first (the result stays within [-1, 1]); the norms are
    # clamped in place without autograd, so the gradient is the unclamped norm's.
    na = norm(a, 2, dim, keepdim=True).clone()
    nb = norm(b, 2, dim, keepdim=True).clone()
    with grad_disabled():
        na.clamp_min_(eps)
        nb.clamp_min_(eps)
    return ((a / na) * (b / nb)).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    _check_tensor(x1, "pairwise_distance", "x1", 1)
    _check_tensor(x2, "pairwise_distance", "x2", 2)
    from .statistics import aten_norm
    innermost = builtins.max(x1.ndim, x2.ndim) - 1
    # at::norm(x1 - x2 + eps, ...) in C++: the eps is a Scalar (AddBackward1), the norm
    # at::norm's (NormBackward1)
    return aten_norm(scalar_op("add", x1 - x2, eps), p, innermost, keepdim)


# ---- cdist / pdist -----------------------------------------------------------------------------
def _dist_array(xp, diff, p):
    """p-norm over the last axis of an array of differences."""
    a = xp.abs(diff)
    if p == 0:
        return (a != 0).sum(-1).astype(diff.dtype)
    if p == 1:
        return a.sum(-1)
    if p == 2:
        return xp.sqrt((a * a).sum(-1))
    if p == math.inf:
        return a.max(-1) if a.shape[-1] else xp.zeros(a.shape[:-1], a.dtype)
    return (a ** p).sum(-1) ** (1.0 / p)


def _dist_terms(diff, dist, grad, p):
    """d(sum grad * dist)/d(diff), per difference (ember ops: differentiable again)."""
    dist = dist.unsqueeze(-1)
    grad = grad.unsqueeze(-1)
    if p == 0:
        return diff * 0
    if p == 1:
        return diff.sign() * grad
    if p == math.inf:
        return grad * diff.sign() * (diff.abs() == dist).to(diff.dtype)
    zero = (dist == 0)
    safe = dist.masked_fill(zero, 1)
    if p == 2:
        return (grad * diff / safe).masked_fill(zero, 0)
    # |diff| ** (p - k) is not differentiable at 0, where the term is 0 anyway: a zero
    # difference reads 1 there so that double backward stays finite.
    adiff = diff.abs().masked_fill(diff == 0, 1)
    if p < 2:
        t = diff.sign() * adiff.pow(p - 1) * grad / safe.pow(p - 1)
    else:
        t = diff * adiff.pow(p - 2) * grad / safe.pow(p - 1)
    return t.masked_fill(zero, 0)


class CdistBackward0(Node):
    def backward(self, grad):
        x1, x2, dist = self.saved_tensors
        t = _dist_terms(x1.unsqueeze(-2) - x2.unsqueeze(-3), dist, grad, self.p)
        g1 = t.sum(-2) if self._next[0][0] is not None else None
        g2 = -t.sum(-3) if self._next[1][0] is not None else None
        return g1, g2


class PdistBackward0(Node):
    def backward(self, grad):
        x, dist = self.saved_tensors
        n = x.shape[0]
        idx = make_tensor(self.flat, x._device)
        zeros = make_tensor(xp_of(x).zeros(n * n, x._array.dtype), x._device)
        g = zeros.scatter_add(0, idx, grad).reshape(n, n)
        d = zeros.scatter_add(0, idx, dist).reshape(n, n)
        t = _dist_terms(x.unsqueeze(1) - x.unsqueeze(0), d, g, self.p)
        return t.sum(1) - t.sum(0)


def _check_p(p, fname):
    p = builtins.float(p)
    if p < 0:
        raise RuntimeError(f"{fname} only supports non-negative p values")
    return p


_MODES = {"use_mm_for_euclid_dist_if_necessary": 0, "use_mm_for_euclid_dist": 1,
          "donot_use_mm_for_euclid_dist": 2}


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """Distances between each row of x1 (*B, R1, M) and each row of x2 (*B, R2, M)."""
    if _autocast.active:
        x1, x2 = fp32(x1, x2)
    if compute_mode not in _MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    _check_tensor(x1, "cdist", "x1", 1)
    _check_tensor(x2, "cdist", "x2", 2)
    if x1.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X1 got: {x1.ndim}D")
    if x2.ndim < 2:
        raise RuntimeError(f"cdist only supports at least 2D tensors, X2 got: {x2.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: {x1.shape[-1]} "
                           f"X2: {x2.shape[-1]}")
    for name, t in (("X1", x1), ("X2", x2)):
        if not t.is_floating_point():
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{t.dtype._scalar_name}")
    p = _check_p(p, "cdist")
    mode = _MODES[compute_mode]
    r1, r2 = x1.shape[-2], x2.shape[-2]
    if x1.numel() and x2.numel() and p == 2 and (mode == 1 or (mode == 0 and (r1 > 25 or
                                                                             r2 > 25))):
        return _euclidean_mm(x1, x2)
    xp = xp_of(x1)
    a, b = x1._array, x2._array
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    diff = a[..., :, None, :] - b[..., None, :, :]
    out = _dist_array(xp, diff, p)
    out = xp.ascontiguousarray(xp.broadcast_to(out, tuple(batch) + (r1, r2)))
    res = make_tensor(out.astype(a.dtype, copy=False), x1._device)
    node = record(CdistBackward0, (x1, x2), res)
    if node is not None:
        node.save_for_backward(x1, x2, res)
        node.p = p
    return res


def _euclidean_mm(x1, x2):
    """PyTorch's matmul form of euclidean distances: |a|^2 - 2 a.b + |b|^2."""
    from .shape import cat
    n1 = x1.pow(2).sum(-1, keepdim=True)
    n2 = x2.pow(2).sum(-1, keepdim=True)
    a = cat([x1.mul(-2), n1, n1.detach() * 0 + 1], -1)
    b = cat([x2, n2.detach() * 0 + 1, n2], -1)
    return a.matmul(b.transpose(-2, -1)).clamp_min(0).sqrt()


def pdist(input, p=2):
    """Distances between every pair of rows i < j of a 2-D input, row-major."""
    _check_tensor(input, "pdist", "input", 1)
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.is_floating_point():
        raise RuntimeError("pdist only supports floating-point dtypes")
    p = _check_p(p, "pdist")
    xp = xp_of(input)
    a = input._array
    n = a.shape[0]
    i, j = np.triu_indices(n, 1)
    if xp is not np:
        i, j = xp.asarray(i), xp.asarray(j)
    out = _dist_array(xp, a[i] - a[j], p).astype(a.dtype, copy=False)
    res = make_tensor(xp.ascontiguousarray(out), input._device)
    node = record(PdistBackward0, (input,), res)
    if node is not None:
        node.save_for_backward(input, res)
        node.p = p
        node.flat = i * n + j
    return res
