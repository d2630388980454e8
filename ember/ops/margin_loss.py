"""The margin losses PyTorch computes in one kernel each, so one node each:
soft_margin_loss (SoftMarginLossBackward0), multi_margin_loss (MultiMarginLossBackward0) and
multilabel_margin_loss (MultilabelMarginLossBackward0). Each forward is the loss's formula in
ops run without a graph; each backward is its closed form, written with ops."""
import numpy as np

from .. import dtypes as _dt
from .._tensor import make_tensor, xp_of
from ..device import check_data
from .._state import autocast as _autocast, grad as _grad_state
from ._autocast import fp32
from ._graph import Node, grad_disabled, record
from .pointwise import where

__all__ = ["soft_margin_loss", "multi_margin_loss", "multilabel_margin_loss"]


def not_differentiable(fname, **operands):
    """PyTorch's error for an operand its kernel has no gradient for."""
    for name, t in operands.items():
        if t is not None and t._requires_grad and _grad_state.enabled:
            raise RuntimeError(f"The function '{fname}' is not differentiable with respect to "
                               f"argument '{name}'. This input cannot have requires_grad True.")


def _per_sample_grad(grad, shape, reduction):
    from .loss import _reduce_grad
    return _reduce_grad(grad, shape, reduction)


# ---- soft margin ------------------------------------------------------------------------------
class SoftMarginLossBackward0(Node):
    def backward(self, grad):
        input, target = self.saved_tensors
        z = (-target * input).exp()
        return _per_sample_grad(grad, self.shape, self.reduction) * (-target * z / (1 + z))


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + exp(-y x)), as PyTorch computes it (inf where exp overflows)."""
    from .loss import _check_reduction, legacy_reduction, reduce_loss
    if _autocast.active:
        input, target = fp32(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    not_differentiable("soft_margin_loss", target=target)
    with grad_disabled():
        elementwise = (-target * input).exp().log1p()
        out = reduce_loss(elementwise, reduction).to(input.dtype)
    node = record(SoftMarginLossBackward0, (input,), out)
    if node is not None:
        node.shape, node.reduction = tuple(elementwise.shape), reduction
        node.save_for_backward(input, target)
    return out


# ---- multi-class margin -------------------------------------------------------------------------
class MultiMarginLossBackward0(Node):
    """Each class i other than the target y whose hinge z = margin - x[y] + x[i] is positive
    gets g (p=1) or 2 z g (p=2), g = grad * weight[y] / C; the target class minus their sum."""

    def backward(self, grad):
        (input,) = self.saved_tensors
        x = input if input.dim() > 1 else input.reshape(1, -1)
        is_target, scale = self.is_target, self.scale
        g = _per_sample_grad(grad, self.shape, self.reduction).reshape(-1, 1) * scale
        z = self.margin - where(is_target, x, 0.0).sum(1, keepdim=True) + x
        active = where(is_target, False, z > 0)
        h = where(active, g if self.p == 1 else 2 * z * g, 0.0)
        return (h - where(is_target, h.sum(1, keepdim=True), 0.0)).reshape(input.shape)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    from .loss import _check_reduction, legacy_reduction, reduce_loss
    if _autocast.active:
        input, weight = fp32(input, weight)
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    x = input if input.dim() > 1 else input.reshape(1, -1)  # (a 0-dim input: one class)
    if target.dtype is not _dt.int64:
        raise RuntimeError(f"expected scalar type Long but found {target.dtype._scalar_name}")
    if input.dim() > 1 and list(target.shape) != [x.shape[0]]:
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to the "
                           f"number of input samples (batch size). Expected target size "
                           f"[{x.shape[0]}], but got {list(target.shape)}. Input has shape "
                           f"{list(input.shape)}.")
    if weight is not None and weight.numel() != x.shape[1]:
        raise RuntimeError(f"inconsistent weight size, expected {x.shape[1]} but got "
                           f"{list(weight.shape)}")
    not_differentiable("multi_margin_loss", weight=weight)
    t = target._array.reshape(-1)
    C = x.shape[1]
    check_data(input._device, (t < 0) | (t >= C), RuntimeError("target out of range"),
               "multi_margin_loss: Assertion `target_k >= 0 && target_k < dim`")
    xp = xp_of(input)
    dev = input._device
    # the target class as a one-hot mask: no gather, so no index check asking the device
    is_target = make_tensor(t[:, None] == xp.arange(C), dev)
    # each sample's factor: its target's weight over the class count
    w = xp.take(weight._array, t.astype(np.int64, copy=False)) if weight is not None else \
        xp.ones(t.shape, x._array.dtype)
    scale = make_tensor((w / C).astype(x._array.dtype, copy=False)[:, None], dev)
    with grad_disabled():
        picked = where(is_target, x, 0.0).sum(1, keepdim=True)
        terms = (margin - picked + x).clamp(min=0)
        if p == 2:
            terms = terms * terms
        if weight is not None:
            terms = terms * make_tensor(w[:, None], dev)
        loss = where(is_target, 0.0, terms).sum(1) / C
        if input.dim() <= 1:
            loss = loss.squeeze(0)
        out = reduce_loss(loss, reduction)
    node = record(MultiMarginLossBackward0, (input,), out)
    if node is not None:
        node.shape, node.reduction, node.p, node.margin = tuple(loss.shape), reduction, p, margin
        node.is_target, node.scale = is_target, scale
        node.save_for_backward(input)
    return out


# ---- multi-label margin -------------------------------------------------------------------------
class MultilabelMarginLossBackward0(Node):
    """Each (target j, non-target i) pair whose hinge 1 - x[j] + x[i] is positive adds
    grad / C to class i and takes it from class j: a constant pattern times grad."""

    def backward(self, grad):
        g = _per_sample_grad(grad, self.shape, self.reduction).reshape(-1, 1)
        return (g * self.pattern).reshape(self.input_shape)


def _check_multilabel_shapes(input, target):
    """multilabel_margin_loss's operands: a non-empty vector or matrix, and a target of its
    shape."""
    n = input.dim()
    if not ((n == 2 and input.shape[1]) or (n == 1 and input.shape[0]) or n == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {list(input.shape)}")
    fits = target.dim() <= 1 and target.numel() == input.numel() if n <= 1 else \
        tuple(target.shape) == tuple(input.shape)
    if not fits:
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of size: "
                           f"{list(input.shape)}")


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Per sample, the hinge 1 - (x[j] - x[i]) over each listed target j (the entries before
    the first -1) and each class i that is not a target, over the class count; computed with
    masks on the input's device (no per-row host loop)."""
    from .loss import _check_reduction, legacy_reduction, reduce_loss
    if _autocast.active:
        input, = fp32(input)
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_multilabel_shapes(input, target)
    x = input if input.dim() > 1 else input.reshape(1, -1)  # a vector (or a 0-dim: 1 class)
    tt = (target if target.dim() > 1 else target.reshape(1, -1))._array
    C = x.shape[1]
    check_data(input._device, (tt < -1) | (tt >= C),
               RuntimeError("argument #2 'target' is out of range"),
               "multilabel_margin_loss: Assertion `target_idx >= 0 && target_idx < dim`")
    xp = xp_of(input)
    listed = xp.cumsum(tt < 0, axis=1) == 0  # (N, K): before the row's first -1
    hit = (tt[:, :, None] == xp.arange(C)) & listed[:, :, None]  # (N, K, C): entry k is class c
    others = ~hit.any(axis=1)  # (N, C): classes that are no target
    dev = input._device
    with grad_disabled():
        picked = where(make_tensor(hit, dev), x.unsqueeze(1), 0.0).sum(2, keepdim=True)  # x[j]
        hinge = 1 - picked + x.unsqueeze(1)  # (N, K, C)
        pairs = listed[:, :, None] & others[:, None, :]
        loss = where(make_tensor(pairs, dev), hinge.clamp(min=0), 0.0).sum((1, 2)) / C
        if input.dim() <= 1:
            loss = loss.squeeze(0)
        out = reduce_loss(loss, reduction)
    node = record(MultilabelMarginLossBackward0, (input,), out)
    if node is not None:
        active = (pairs & (hinge._array > 0)).astype(x._array.dtype)
        # + at each non-target class i, - at each target j, per active pair, over C
        pattern = (active.sum(1) - (hit * active.sum(2)[:, :, None]).sum(1)) / C
        node.shape, node.reduction, node.input_shape = tuple(loss.shape), reduction, input.shape
        node.pattern = make_tensor(pattern.astype(x._array.dtype, copy=False), dev)
    return out
