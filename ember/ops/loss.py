"""Loss functions, with every `reduction`. The losses tutorials print (`MseLossBackward0`,
`NllLossBackward0`, binary cross-entropy, smooth L1, Huber) have their own nodes; the others
are compositions of differentiable ops, as they are in PyTorch."""
import math
import warnings

import numpy as np

from .. import dtypes as _dt
from .._tensor import make_tensor, Tensor, xp_of
from ..device import assert_on_device, backend_of, check_data, checks_on_host
from .._state import autocast as _autocast, grad as _grad_state
from ._autocast import fp32
from ._graph import Node, grad_disabled, record
from .pointwise._common import broadcast_error

__all__ = ["binary_cross_entropy_with_logits", "kl_div", "hinge_embedding_loss",
           "margin_ranking_loss", "poisson_nll_loss", "cosine_embedding_loss",
           "triplet_margin_loss", "ctc_loss"]
METHODS = []
FUNCTIONAL = ["cross_entropy", "nll_loss", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
              "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
              "poisson_nll_loss", "gaussian_nll_loss", "margin_ranking_loss",
              "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
              "multilabel_margin_loss", "multi_margin_loss", "cosine_embedding_loss",
              "triplet_margin_loss", "triplet_margin_with_distance_loss", "ctc_loss"]


# ---- reduction ------------------------------------------------------------------------------
def legacy_reduction(size_average, reduce, reduction):
    """PyTorch's translation of the deprecated size_average/reduce flags."""
    if size_average is None and reduce is None:
        return reduction
    warnings.warn("size_average and reduce args will be deprecated, please use reduction='mean' "
                  "instead." if (size_average is None or size_average) and reduce is not False
                  else "size_average and reduce args will be deprecated, please use "
                  "reduction='sum' instead." if reduce is not False else
                  "size_average and reduce args will be deprecated, please use reduction='none' "
                  "instead.", UserWarning, stacklevel=3)
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if not reduce:
        return "none"
    return "mean" if size_average else "sum"


def _check_reduction(reduction):
    if reduction not in ("none", "mean", "sum"):
        raise ValueError(f"{reduction} is not a valid value for reduction")


def reduce(loss, reduction):
    _check_reduction(reduction)
    if reduction == "mean":
        return loss.mean()
    if reduction == "sum":
        return loss.sum()
    return loss


def _reduce_array(arr, reduction):
    # keepdims then reshape: a 0-d array on every backend (NumPy's plain mean is a scalar)
    if reduction == "mean":
        return arr.mean(keepdims=True).reshape(())
    if reduction == "sum":
        return arr.sum(keepdims=True).reshape(())
    return arr


def _reduce_grad(grad, shape, reduction):
    """The gradient of a reduced loss, spread back over the elementwise losses."""
    if reduction == "none":
        return grad
    n = math.prod(shape) if reduction == "mean" else 1
    return grad.expand(shape) / n if n != 1 else grad.expand(shape)


def _warn_size(input, target):
    if target.shape != input.shape:
        warnings.warn(f"Using a target size ({target.shape}) that is different to the input size "
                      f"({input.shape}). This will likely lead to incorrect results due to "
                      "broadcasting. Please ensure they have the same size.", UserWarning,
                      stacklevel=3)


def _pair(input, target, fname):
    """input and target broadcast together, arrays in their promoted dtype."""
    from .pointwise import operands
    x, y, d, dev = operands(input, target, fname)
    mismatch = broadcast_error(x.shape, y.shape)
    if mismatch is not None:
        raise mismatch
    x, y = backend_of(dev).xp.broadcast_arrays(x, y)
    return x, y, d, dev


# ---- regression losses with their own nodes --------------------------------------------------
class MseLossBackward0(Node):
    def backward(self, grad):
        input, target = self.saved_tensors
        g = _reduce_grad(grad, self.shape, self.reduction) * 2 * (input - target)
        return g, -g


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if _autocast.active:
        input, target, weight = fp32(input, target, weight)
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_size(input, target)
    x, y, d, dev = _pair(input, target, "mse_loss")
    diff = x - y
    out = make_tensor(_reduce_array(diff * diff, reduction), dev)
    if weight is not None:
        return _weighted(((input - target) ** 2), weight, reduction)
    node = record(MseLossBackward0, (input, target), out)
    if node is not None:
        node.shape, node.reduction = diff.shape, reduction
        node.save_for_backward(input, target)
    return out


def _weighted(loss, weight, reduction):
    return reduce_loss(loss * weight, reduction)


def reduce_loss(loss, reduction):
    return reduce(loss, reduction)


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    if _autocast.active:
        input, target, weight = fp32(input, target, weight)
    reduction = legacy_reduction(size_average, reduce, reduction)
    _warn_size(input, target)
    loss = (input - target).abs()
    return reduce_loss(loss * weight if weight is not None else loss, reduction)


class SmoothL1LossBackward0(Node):
    def backward(self, grad):
        input, target = self.saved_tensors
        diff = input - target
        beta = self.beta
        if beta == 0:
            local = diff.sign()
        else:
            local = (diff / beta).clamp(-1, 1) if self.huber is None else \
                (diff).clamp(-self.huber, self.huber)
        g = _reduce_grad(grad, self.shape, self.reduction) * local
        return g, -g


class HuberLossBackward0(SmoothL1LossBackward0):
    pass


def _smooth(input, target, reduction, beta, huber, fname, cls):
    _check_reduction(reduction)
    _warn_size(input, target)
    x, y, d, dev = _pair(input, target, fname)
    xp = backend_of(dev).xp
    diff = xp.abs(x - y)
    if huber is None:
        loss = diff - 0.5 * beta if beta == 0 else \
            xp.where(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta)
    else:
        loss = xp.where(diff < huber, 0.5 * diff * diff, huber * (diff - 0.5 * huber))
    out = make_tensor(_reduce_array(loss.astype(d.np, copy=False), reduction), dev)
    node = record(cls, (input, target), out)
    if node is not None:
        node.shape, node.reduction, node.beta, node.huber = diff.shape, reduction, beta, huber
        node.save_for_backward(input, target)
    return out


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean", beta=1.0):
    if _autocast.active:
        input, target = fp32(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    return _smooth(input, target, reduction, beta, None, "smooth_l1_loss", SmoothL1LossBackward0)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    if _autocast.active:
        input, target, weight = fp32(input, target, weight)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    if weight is not None:
        diff = (input - target).abs()
        loss = (diff < delta) * 0.5 * diff * diff + (diff >= delta) * delta * (diff - 0.5 * delta)
        return reduce_loss(loss * weight, reduction)
    return _smooth(input, target, reduction, 1.0, delta, "huber_loss", HuberLossBackward0)


# ---- classification losses --------------------------------------------------------------------
class NllLossBackward0(Node):
    """The loss is linear in the input: its gradient is grad times a constant selector,
    -weight (over the total weight for "mean") at each target's class, zero elsewhere.
    The forward keeps only the targets and their scales; the dense selector is made here."""

    def _selector(self, values):
        xp = self.xp
        sel = xp.zeros(self.picked_shape, dtype=self.dtype)
        xp.put_along_axis(sel, self.safe[..., None], values[..., None].astype(self.dtype),
                          axis=-1)
        return xp.moveaxis(sel, -1, 1) if self.batched else sel[0]

    def backward(self, grad):
        if not _grad_state.enabled:  # first order: grad's values put at the targets directly
            g = grad._array
            if self.reduction == "none" and not self.batched:
                g = g.reshape(1)
            return make_tensor(self._selector(self.scale * g), self.device)
        sel = make_tensor(self._selector(self.scale), self.device)
        if self.reduction == "none":
            g = grad.unsqueeze(1) if sel.dim() > 1 else grad
        else:
            g = grad
        return g * sel


class NllLoss2DBackward0(NllLossBackward0):
    pass


def _check_nll_shapes(x, t):
    """PyTorch's shape checks of nll_loss, in its order (before the target's dtype): the
    batch, then 1-d targets for 2-d input, spatial targets for 4-d (nll_loss2d's words) and
    any other rank."""
    if len(x) < 1:
        raise ValueError(f"Expected 1 or more dimensions (got {len(x)})")
    if len(x) > 1 and (len(t) == 0 or t[0] != x[0]):
        raise ValueError(f"Expected input batch_size ({x[0]}) to match target batch_size "
                         f"({t[0] if t else 1}).")
    if len(x) <= 2:
        if len(t) > 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    elif len(x) == 4:
        if len(t) != 3:
            raise RuntimeError("only batches of spatial targets supported (3D tensors) but got "
                               f"targets of dimension: {len(t)}")
        if t[1:] != x[2:]:
            raise RuntimeError(f"size mismatch (got input: {list(x)} , target: {list(t)}")
    elif tuple(t) != (x[0],) + tuple(x[2:]):
        raise RuntimeError(f"Expected target size {[x[0]] + list(x[2:])}, got {list(t)}")


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    if _autocast.active:
        input, weight = fp32(input, weight)
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    x = input._array
    t = target._array
    _check_nll_shapes(x.shape, t.shape)
    if target.dtype not in (_dt.int64, _dt.uint8):
        raise RuntimeError("expected target dtype to be Long or Byte, but got "
                           f"{target.dtype._scalar_name}")
    _check_class_weight(input, weight, "")
    batched = x.ndim > 1
    xp = xp_of(input)
    C = x.shape[1] if batched else x.shape[0]
    xc = xp.moveaxis(x, 1, -1) if batched else x[None]  # (..., C)
    tt = t if batched else t.reshape(1)
    valid = tt != ignore_index
    safe = xp.where(valid, tt, 0)
    if not checks_on_host(input._device):
        assert_on_device(input._device, (safe < 0) | (safe >= C),
                         "nll_loss: Assertion `t >= 0 && t < n_classes`")
        safe = safe % C  # meanwhile in range, so the picks and the selector stay in bounds
    elif bool(((safe < 0) | (safe >= C)).any()):
        bad = int(tt[valid & ((tt < 0) | (tt >= C))].reshape(-1)[0])
        raise IndexError(f"Target {bad} is out of bounds.")
    w = weight._array[safe] if weight is not None else xp.ones(safe.shape, dtype=x.dtype)
    w = xp.where(valid, w, 0).astype(x.dtype)
    picked = xp.take_along_axis(xc, safe[..., None], axis=-1)[..., 0]
    losses = -picked * w
    total = w.sum()
    if reduction == "none":
        out_arr = losses if batched else losses[0]
        scale = -w
    elif reduction == "sum":
        out_arr = losses.sum()
        scale = -w
    else:
        out_arr = losses.sum() / total  # nan when every target is ignored, as in PyTorch
        # an ignored target's gradient is 0 even then (PyTorch writes only the others'), not
        # 0 / 0: a batch of padding alone must not turn the parameters' gradients into NaN
        scale = xp.where(valid, -w / total, 0)
    out = make_tensor(xp.asarray(out_arr, dtype=x.dtype), input._device)
    node = record(NllLoss2DBackward0 if x.ndim == 4 else NllLossBackward0, (input,), out)
    if node is not None:
        node.device, node.reduction, node.xp = input._device, reduction, xp
        node.safe, node.scale, node.batched = safe, scale.astype(x.dtype), batched
        node.picked_shape, node.dtype = xc.shape, x.dtype
    return out


def _check_class_weight(input, weight, prefix):
    """PyTorch's errors for a class weight that is not one value per class of `input`."""
    if weight is None:
        return
    n_classes = input.shape[1] if input.dim() > 1 else input.shape[0] if input.dim() else 1
    if weight.dim() != 1 or weight.numel() != n_classes:
        raise RuntimeError(f"{prefix}weight tensor should be defined either for all {n_classes} "
                           f"classes or no classes but got weight tensor of shape: "
                           f"{list(weight.shape)}")
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype._scalar_name} but found "
                           f"{weight.dtype._scalar_name}")


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    if _autocast.active:
        input, target, weight = fp32(input, target, weight)
    from .softmax_family import log_softmax
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if not 0.0 <= label_smoothing <= 1.0:
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: {label_smoothing}")
    if input.shape == target.shape and not target.is_floating_point():
        # same shapes mean class probabilities, as PyTorch decides it
        raise RuntimeError("Expected floating point type for target with class probabilities, "
                           f"got {target.dtype._scalar_name}")
    class_dim = 0 if input.dim() == 1 else 1
    n_classes = input.shape[class_dim]
    logp = log_softmax(input, class_dim)
    wshape = [1] * input.dim()
    wshape[class_dim] = n_classes
    if target.shape == input.shape:  # class probabilities (PyTorch decides by the shapes;
        # other targets are class indices, whose checks name a float target's dtype)
        _check_class_weight(input, weight, "cross_entropy: ")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        terms = logp * target
        if weight is not None:
            terms = terms * weight.view(wshape)
        loss = -terms.sum(class_dim)
        if reduction == "mean":
            return loss.sum() / (input.numel() / n_classes) if input.numel() else loss.sum() / 0
        return reduce_loss(loss, reduction)
    nll = nll_loss(logp, target, weight, None, ignore_index, None, reduction)
    if label_smoothing == 0:
        return nll
    ignore = target == ignore_index
    smooth = -(logp * weight.view(wshape)).sum(class_dim) if weight is not None \
        else -logp.sum(class_dim)
    smooth = smooth.masked_fill(ignore, 0.0)
    if reduction == "mean":
        if weight is not None:
            # the weights of the kept targets, summed without selecting them (a meta tensor
            # has no count of them): ignored ones gather class 0 and count as 0
            picked = weight.gather(0, target.masked_fill(ignore, 0).flatten())
            smooth = smooth.sum() / picked.masked_fill(ignore.flatten(), 0).sum()
        else:
            smooth = smooth.sum() / (~ignore).sum()
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - label_smoothing) * nll + smooth * (label_smoothing / n_classes)


class BinaryCrossEntropyBackward0(Node):
    def backward(self, grad):
        input, target, weight = self.saved_tensors
        eps = 1e-12
        local = (input - target) / ((1 - input) * input).clamp(min=eps)
        if weight is not None:
            local = local * weight
        g = _reduce_grad(grad, self.shape, self.reduction) * local
        gt = None
        if self._next[1][0] is not None:
            gt = _reduce_grad(grad, self.shape, self.reduction) * \
                ((1 - input).clamp(min=eps).log() - input.clamp(min=eps).log())
            if weight is not None:
                gt = gt * weight
        return g, gt


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    if _autocast.active:
        input, target, weight = fp32(input, target, weight)
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Using a target size ({target.shape}) that is different to the input "
                         f"size ({input.shape}) is deprecated. Please ensure they have the same "
                         "size.")
    for other in (target, weight):
        if other is not None and other.dtype is not input.dtype:
            raise RuntimeError(f"Found dtype {other.dtype._scalar_name} but expected "
                               f"{input.dtype._scalar_name}")
    if weight is not None and broadcast_error(weight.shape, input.shape) is not None:
        wshape, shape = tuple(weight.shape), tuple(input.shape)
        bad = next(i for i in range(1, len(wshape) + 1)
                   if wshape[-i] != 1 and (i > len(shape) or wshape[-i] != shape[-i]))
        raise RuntimeError(f"Attempting to broadcast a dimension of length {wshape[-bad]} at "
                           f"-{bad}! Mismatching argument at index 1 had torch.Size({list(wshape)})"
                           f"; but expected shape should be broadcastable to {list(shape)}")
    x, y = input._array, target._array.astype(input._array.dtype, copy=False)
    xp = xp_of(input)
    check_data(input._device, (x < 0) | (x > 1),
               RuntimeError("all elements of input should be between 0 and 1"),
               "binary_cross_entropy: Assertion `input_val >= zero && input_val <= one`")
    # PyTorch clamps each log at -100 so a saturated probability gives a finite loss
    loss = -(y * xp.maximum(xp.log(x), -100) + (1 - y) * xp.maximum(xp.log1p(-x), -100))
    if weight is not None:
        loss = loss * weight._array
    out = make_tensor(_reduce_array(loss.astype(x.dtype, copy=False), reduction), input._device)
    node = record(BinaryCrossEntropyBackward0, (input, target), out)
    if node is not None:
        node.shape, node.reduction = x.shape, reduction
        node.save_for_backward(input, target, weight)
    return out


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    if _autocast.active:
        input, target, weight, pos_weight = fp32(input, target, weight, pos_weight)
    from .activation import logsigmoid
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    # log(sigmoid(x)) and log(1 - sigmoid(x)) = log(sigmoid(-x)), both stable
    if pos_weight is not None:
        loss = -(pos_weight * target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    else:
        loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return reduce_loss(loss, reduction)


def kl_div(input, target, size_average=None, reduce=None, reduction="mean", log_target=False):
    if _autocast.active:
        input, target = fp32(input, target)
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and the "
                      "support size.'batchmean' divides only by the batch size, and aligns with "
                      "the KL div math definition.'mean' will be changed to behave the same as "
                      "'batchmean' in the next major release.", UserWarning, stacklevel=2)
    if reduction == "batchmean":
        red = "sum"
    else:
        red = legacy_reduction(size_average, reduce, reduction)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        from .unary import xlogy
        loss = xlogy(target, target) - target * input
    out = reduce_loss(loss, red)
    if reduction == "batchmean" and input.dim() != 0:
        out = out / input.shape[0]
    return out


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    if _autocast.active:
        input, target = fp32(input, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    loss = input.exp() - target * input if log_input else input - target * (input + eps).log()
    if full:
        stirling = target * target.log() - target + 0.5 * (2 * math.pi * target).log()
        loss = loss + stirling.masked_fill(target <= 1, 0)
    return reduce_loss(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    _check_reduction(reduction)
    if var.shape != input.shape:
        if input.shape[:-1] == var.shape:
            var = var.unsqueeze(-1)
        elif not (input.shape[:-1] == var.shape[:-1] and var.shape[-1] == 1):
            raise ValueError("var is of incorrect size")
    if bool((var < 0).any()):
        raise ValueError("var has negative entry/entries")
    var = var.clone()
    with grad_disabled():
        var.clamp_(min=eps)
    loss = 0.5 * (var.log() + (input - target) ** 2 / var)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return reduce_loss(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    if _autocast.active:
        input1, input2, target = fp32(input1, input2, target)
    reduction = legacy_reduction(size_average, reduce, reduction)
    return reduce_loss((-target * (input1 - input2) + margin).clamp(min=0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    if _autocast.active:
        input, target = fp32(input, target)
    from .pointwise import where
    reduction = legacy_reduction(size_average, reduce, reduction)
    margin_part = (margin - input).clamp(min=0)
    loss = where(target == 1, input, 0.0) + where(target == -1, margin_part, 0.0)
    return reduce_loss(loss, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    if _autocast.active:
        input, target = fp32(input, target)
    from .activation import softplus
    reduction = legacy_reduction(size_average, reduce, reduction)
    return reduce_loss(softplus(-target * input), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    from .activation import logsigmoid
    reduction = legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(dim=input.dim() - 1) / input.size(-1)
    return reduce_loss(loss, reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    if _autocast.active:
        input, weight = fp32(input, weight)
    from .pointwise import where
    reduction = legacy_reduction(size_average, reduce, reduction)
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
    t = target._array.reshape(-1)
    C = x.shape[1]
    check_data(input._device, (t < 0) | (t >= C), RuntimeError("target out of range"),
               "multi_margin_loss: Assertion `target_k >= 0 && target_k < dim`")
    xp = xp_of(input)
    # the target class as a one-hot mask: no gather, so no index check asking the device
    is_target = make_tensor(t[:, None] == xp.arange(C), input._device)
    picked = where(is_target, x, 0.0).sum(1, keepdim=True)
    terms = (margin - picked + x).clamp(min=0)
    if p == 2:
        terms = terms * terms
    if weight is not None:
        w = xp.take(weight._array, t.astype(np.int64, copy=False))
        terms = terms * make_tensor(w[:, None], input._device)
    loss = where(is_target, 0.0, terms).sum(1) / C
    if input.dim() <= 1:
        loss = loss.squeeze(0)
    return reduce_loss(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Per sample, the hinge 1 - (x[j] - x[i]) over each listed target j (the entries before
    the first -1) and each class i that is not a target, over the class count; computed with
    masks on the input's device (no per-row host loop)."""
    if _autocast.active:
        input, = fp32(input)
    from .pointwise import where
    reduction = legacy_reduction(size_average, reduce, reduction)
    x = input if input.dim() > 1 else input.unsqueeze(0)
    tt = (target if target.dim() > 1 else target.unsqueeze(0))._array
    C = x.shape[1]
    check_data(input._device, (tt < -1) | (tt >= C),
               RuntimeError("argument #2 'target' is out of range"),
               "multilabel_margin_loss: Assertion `target_idx >= 0 && target_idx < dim`")
    xp = xp_of(input)
    listed = xp.cumsum(tt < 0, axis=1) == 0  # (N, K): before the row's first -1
    hit = (tt[:, :, None] == xp.arange(C)) & listed[:, :, None]  # (N, K, C): entry k is class c
    others = ~hit.any(axis=1)  # (N, C): classes that are no target
    dev = input._device
    picked = where(make_tensor(hit, dev), x.unsqueeze(1), 0.0).sum(2, keepdim=True)  # x[j]
    terms = (1 - picked + x.unsqueeze(1)).clamp(min=0)  # (N, K, C)
    pairs = make_tensor(listed[:, :, None] & others[:, None, :], dev)
    loss = where(pairs, terms, 0.0).sum((1, 2)) / C
    if input.dim() == 1:
        loss = loss.squeeze(0)
    return reduce_loss(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    if _autocast.active:
        input1, input2, target = fp32(input1, input2, target)
    from .pointwise import where
    reduction = legacy_reduction(size_average, reduce, reduction)
    eps = 1e-12
    dim = input1.dim() - 1
    prod = (input1 * input2).sum(dim)
    mag = ((input1 * input1).sum(dim) + eps) * ((input2 * input2).sum(dim) + eps)
    cos = prod / mag.sqrt()
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, (cos - margin).clamp(min=0), 0.0)
    return reduce_loss(loss, reduction)


def _pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    diff = x1 - x2 + eps
    return diff.norm(p, dim=-1, keepdim=keepdim)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    if _autocast.active:
        anchor, positive, negative = fp32(anchor, positive, negative)
    reduction = legacy_reduction(size_average, reduce, reduction)
    d_pos = _pairwise_distance(anchor, positive, p, eps)
    d_neg = _pairwise_distance(anchor, negative, p, eps)
    if swap:
        from .pointwise import minimum
        d_neg = minimum(d_neg, _pairwise_distance(positive, negative, p, eps))
    return reduce_loss((margin + d_pos - d_neg).clamp(min=0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    dist = distance_function or (lambda a, b: _pairwise_distance(a, b))
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        from .pointwise import minimum
        d_neg = minimum(d_neg, dist(positive, negative))
    return reduce_loss((margin + d_pos - d_neg).clamp(min=0), reduction)


def _lengths(lengths):
    """CTC's lengths as Python ints: PyTorch copies length tensors to the host too (its CUDA
    kernels size their grids from them), so a device tensor costs one read each."""
    return [int(v) for v in (lengths.tolist() if isinstance(lengths, Tensor) else lengths)]


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """Connectionist temporal classification: the forward (alpha) recursion in log space,
    vectorised over the batch and the extended label sequence; differentiable through ops.
    The labels stay where they are (on the device): only the lengths are read."""
    from .statistics import logsumexp
    from .shape import stack
    from .pointwise import where
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    T, N, C = log_probs.shape
    il, tl = _lengths(input_lengths), _lengths(target_lengths)
    if len(il) != N:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tl) != N:
        raise RuntimeError("target_lengths must be of size batch_size")
    dev, xp = log_probs._device, xp_of(log_probs)
    if isinstance(targets, Tensor):
        tgt = targets.to(dev)._array
    else:
        tgt = xp.asarray(np.asarray(targets))
    losses = []
    offset = 0
    # "impossible" is a huge finite log value, not -inf: logsumexp over all -inf has a NaN
    # gradient, while exp(-1e30 - x) vanishes exactly beside any real path
    impossible = -1e30
    for b in range(N):  # sequences differ in length; each is vectorised over its labels
        lab = tgt[b, :tl[b]] if tgt.ndim == 2 else tgt[offset:offset + tl[b]]
        offset += tl[b]
        S = 2 * tl[b] + 1
        ext = xp.full(S, blank, dtype=np.int64)
        ext[1::2] = lab
        skip = xp.zeros(S, dtype=bool)
        skip[2:] = (ext[2:] != blank) & (ext[2:] != ext[:-2])
        lp = log_probs[:, b, :]
        idx = make_tensor(ext, dev)
        positions = xp.arange(S)
        alpha = lp[0][idx].masked_fill(make_tensor(positions >= 2, dev), impossible)
        no_skip = make_tensor(~skip, dev)
        first_col = make_tensor(positions == 0, dev)
        for t in range(1, il[b]):
            shifted1 = alpha.roll(1).masked_fill(first_col, impossible)
            shifted2 = alpha.roll(2).masked_fill(no_skip, impossible)
            alpha = logsumexp(stack([alpha, shifted1, shifted2]), 0) + lp[t][idx]
        tail = alpha[-2:] if S > 1 else alpha[-1:]
        nll = -logsumexp(tail, 0)
        # no alignment fits (too few frames for the labels and their repeats): PyTorch's
        # infinite loss; decided on the device, as the repeats are
        repeats = (lab[1:] == lab[:-1]).sum() if tl[b] > 1 else xp.zeros((), np.int64)
        unfit = make_tensor(il[b] < tl[b] + repeats, dev)
        nll = where(unfit, 0.0 if zero_infinity else math.inf, nll)
        losses.append(nll)
    loss = stack(losses)
    if reduction == "mean":
        lengths = xp.asarray(np.maximum(np.asarray(tl, dtype=np.float64), 1).astype(
            log_probs._array.dtype))
        return (loss / make_tensor(lengths, dev)).mean()
    return reduce_loss(loss, reduction)
