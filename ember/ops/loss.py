"""Loss functions, with every `reduction`. The losses PyTorch computes in one kernel have one
node each, as in PyTorch (`MseLossBackward0`, `NllLossBackward0`, binary cross-entropy with
and without logits, smooth L1, Huber; CTC and the margin losses in `ctc.py` and
`margin_loss.py`); the others are PyTorch's compositions of ops, recorded node for node
(its C++ composites' Scalar arithmetic included: `scalar_op`)."""
import math
import warnings

import numpy as np

from .. import dtypes as _dt
from .._dtype_casts import cast_if_needed
from .._memory_format import in_iterator_order
from .._select import select
from .._tensor import make_tensor, xp_of
from ..device import assert_on_device, backend_of, check_data, checks_on_host
from .._state import autocast as _autocast, grad as _grad_state
from ._autocast import fp32
from ._device_kernels import Kernel, trial_verdict, usable
from ._graph import Node, grad_disabled, record
from .creation import full_like, zeros_like
from .ctc import ctc_loss  # noqa: F401  (their own files; losses of this family)
from .margin_loss import (multi_margin_loss, multilabel_margin_loss,  # noqa: F401
                          not_differentiable, soft_margin_loss)
from .distance import pairwise_distance
from .pointwise import scalar_op
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
    diff = in_iterator_order(x - y, (x, y), dev)  # (reduction "none" gives PyTorch's layout)
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
    diff = xp.abs(in_iterator_order(x - y, (x, y), dev))
    if huber is None:
        loss = diff - 0.5 * beta if beta == 0 else \
            select(diff < beta, 0.5 * diff * diff / beta, diff - 0.5 * beta)
    else:
        loss = select(diff < huber, 0.5 * diff * diff, huber * (diff - 0.5 * huber))
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
    if beta == 0:  # PyTorch's kernel is then l1_loss's (its graph too)
        return l1_loss(input, target, reduction=reduction)
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
# sel[n, c] = values[n] at each row's target class `safe[n]`, 0 elsewhere
_NLL_SELECTOR = Kernel(
    "ember_nll_selector", "raw int64 safe, raw T values, int64 classes", "T sel",
    "sel = i % classes == safe[i / classes] ? values[i / classes] : T(0)",
    trial=lambda xp, dtype: _nll_selector_trial(xp, dtype))


def _nll_selector_trial(xp, dtype):
    """_NLL_SELECTOR on a small case against NumPy's; a difference fails the next read as a
    device-side assert does (see `_device_kernels.Kernel`)."""
    safe, values = np.array([2, 0, 3]), np.array([1.5, -2.0, 3.0], dtype)
    want = np.zeros((3, 4), dtype)
    want[np.arange(3), safe] = values
    got = _NLL_SELECTOR(xp, xp.asarray(safe), xp.asarray(values), 4, size=12).reshape(3, 4)
    trial_verdict(xp, got != xp.asarray(want), "ember_nll_selector", "the selector")


class NllLossBackward0(Node):
    """The loss is linear in the input: its gradient is grad times a constant selector,
    -weight (over the total weight for "mean") at each target's class, zero elsewhere.
    The forward keeps only the targets and their scales; the dense selector is made here."""

    def _selector(self, values):
        xp = self.xp
        values = cast_if_needed(values, self.dtype)
        if self.batched and len(self.picked_shape) == 2 and self.safe.dtype == np.int64 \
                and usable(xp, values):
            n, c = self.picked_shape  # a device: one kernel, where zeros and a put took 3
            return _NLL_SELECTOR(xp, self.safe, values, c, size=n * c).reshape(n, c)
        sel = xp.zeros(self.picked_shape, dtype=self.dtype)
        if self.batched and len(self.picked_shape) == 2:  # (N, C): one put, no moveaxis
            sel[xp.arange(self.picked_shape[0]), self.safe] = values
            return sel
        xp.put_along_axis(sel, self.safe[..., None],
                          cast_if_needed(values[..., None], self.dtype), axis=-1)
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
    # the input as (..., C), classes last: its shape, and the view where the general path
    # needs it (a call spared the rows' path)
    picked_shape = x.shape[:1] + x.shape[2:] + x.shape[1:2] if batched else (1,) + x.shape
    rows = None
    if weight is None and x.ndim == 2 and x.shape[1] and t.dtype == np.int64:
        if not checks_on_host(input._device) and usable(xp, x):
            rows = _nll_rows_on_device(xp, input._device, x, t, ignore_index, reduction)
        elif checks_on_host(input._device):
            rows = _nll_rows_on_host(xp, x, t, ignore_index, reduction)
    if rows is not None:
        out_arr, safe, scale = rows
    else:
        xc = xp.moveaxis(x, 1, -1) if batched else x[None]
        out_arr, safe, scale = _nll_arrays(xp, input, xc, t, weight, ignore_index, reduction,
                                           batched)
    # (NumPy's sums are scalars; a device's are 0-d arrays already)
    out = make_tensor(xp.asarray(out_arr, dtype=x.dtype) if xp is np else
                      cast_if_needed(out_arr, x.dtype), input._device)
    node = record(NllLoss2DBackward0 if x.ndim == 4 else NllLossBackward0, (input,), out)
    if node is not None:
        node.device, node.reduction, node.xp = input._device, reduction, xp
        node.safe, node.scale, node.batched = safe, cast_if_needed(scale, x.dtype), batched
        node.picked_shape, node.dtype = picked_shape, x.dtype
    return out


def _nll_arrays(xp, input, xc, t, weight, ignore_index, reduction, batched):
    """nll_loss's (output, each target's class made safe to index, each target's gradient
    scale) as arrays: the general path, any rank, class weights, and the CPU's target check."""
    x, C = input._array, xc.shape[-1]
    tt = t if batched else t.reshape(1)
    valid = tt != ignore_index
    safe = xp.where(valid, tt, 0)
    if not checks_on_host(input._device):
        assert_on_device(input._device, (safe < 0) | (safe >= C), _NLL_ASSERTION)
        safe = safe % C  # meanwhile in range, so the picks and the selector stay in bounds
    elif bool(((safe < 0) | (safe >= C)).any()):
        bad = int(tt[valid & ((tt < 0) | (tt >= C))].reshape(-1)[0])
        raise IndexError(f"Target {bad} is out of bounds.")
    # each target's weight, 0 where it is ignored (without class weights: `valid` as numbers)
    w = cast_if_needed(xp.where(valid, weight._array[safe], 0), x.dtype) if weight is not None \
        else valid.astype(x.dtype)
    picked = xp.take_along_axis(xc, safe[..., None], axis=-1)[..., 0]
    # an ignored target adds +0, as PyTorch skips it: not -0, nor NaN where the logit it
    # would have picked is inf or NaN
    losses = xp.where(valid, -picked * w, 0)
    total = w.sum()
    if reduction == "none":
        out_arr = losses if batched else losses[0]
        scale = xp.where(valid, -w, 0)  # (an ignored row's gradient +0, not -0)
    elif reduction == "sum":
        out_arr = losses.sum()
        scale = xp.where(valid, -w, 0)
    else:
        out_arr = losses.sum() / total  # nan when every target is ignored, as in PyTorch
        # an ignored target's gradient is 0 even then (PyTorch writes only the others'), not
        # 0 / 0: a batch of padding alone must not turn the parameters' gradients into NaN
        scale = xp.where(valid, -w / total, 0)
    return out_arr, safe, scale


def _nll_rows_on_host(xp, x, t, ignore_index, reduction):
    """_nll_arrays' results for (N, C) float32/float64 rows without class weights whose
    targets are all classes, none ignored (a classifier's batch), in a few calls where the
    general path takes ~15 (a tenth of a small model's step); None for any other batch,
    which the general path takes (and raises for). The same values: every target's weight
    is 1, so the total is N and each loss -picked."""
    n, c = x.shape
    if not 0 < n <= _EXACT_COUNT_MAX or x.dtype not in _EXACT_DTYPES or 0 <= ignore_index < c or \
            bool((t.view(np.uint64) >= c).any()):  # (as unsigned, a negative is beyond C)
        return None
    losses = xp.negative(x[xp.arange(n), t])
    if reduction == "none":
        return losses, t.copy(), xp.full(n, -1, x.dtype)
    if reduction == "sum":
        return losses.sum(), t.copy(), xp.full(n, -1, x.dtype)
    total = x.dtype.type(n)
    return losses.sum() / total, t.copy(), xp.full(n, x.dtype.type(-1) / total, x.dtype)


# where the general path's total weight, a sum of N ones, is N exactly (float16's stops at 2048)
_EXACT_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_EXACT_COUNT_MAX = 1 << 24

_NLL_ASSERTION = "nll_loss: Assertion `t >= 0 && t < n_classes`"

# nll_loss of (N, C) rows on a device without class weights: each row's loss, weight and
# gradient scale (-w, +0 where ignored), its class made safe to index and whether it is out of
# range, in one kernel (the general path
# takes ~15 array calls), with _nll_arrays' operations: -x * w, where w is 1 or 0
_NLL_ROWS = Kernel(
    "ember_nll_rows", "int64 t, raw T x, int64 classes, int64 ignore",
    "T loss, T w, T nw, int64 safe, bool bad",
    "bool valid = t != ignore; ptrdiff_t s = valid ? t : 0; bad = s < 0 || s >= classes; "
    "safe = (s % classes + classes) % classes; w = valid ? T(1) : T(0); "
    "nw = valid ? -w : T(0); loss = valid ? -x[i * classes + safe] * w : T(0)",
    trial=lambda xp, dtype: _nll_rows_trial(xp, dtype))
# the mean's gradient scale: -w / total, 0 for an ignored target
_NLL_MEAN_SCALE = Kernel("ember_nll_mean_scale", "T w, raw T total", "T scale",
                         "scale = w != T(0) ? -w / total[0] : T(0)")


def _nll_rows_trial(xp, dtype):
    """_NLL_ROWS on a small case (an ignored target, one past the classes, a negative one)
    against NumPy's values; a difference fails the next read as a device-side assert does."""
    t = np.array([2, -100, 4, -1, 0])
    x = np.arange(20, dtype=dtype).reshape(5, 4) - 7
    valid = t != -100
    s = np.where(valid, t, 0)
    safe = s % 4
    want = (np.where(valid, -x[np.arange(5), safe], 0), valid.astype(dtype),
            np.where(valid, -1, 0).astype(dtype), safe, (s < 0) | (s >= 4))
    got = _NLL_ROWS(xp, xp.asarray(t), xp.asarray(x), 4, -100)
    bad = None
    for g, w in zip(got, want):
        diff = g != xp.asarray(w)
        bad = diff if bad is None else bad | diff
    trial_verdict(xp, bad, "ember_nll_rows", "nll_loss's rows")


def _nll_rows_on_device(xp, dev, x, t, ignore_index, reduction):
    """_nll_arrays for (N, C) rows on a device without class weights, in a few kernels."""
    loss, w, nw, safe, bad = _NLL_ROWS(xp, t, x, x.shape[1], ignore_index)
    assert_on_device(dev, bad, _NLL_ASSERTION)
    if reduction == "none":
        return loss, safe, nw
    if reduction == "sum":
        return loss.sum(), safe, nw
    total = w.sum()
    return loss.sum() / total, safe, _NLL_MEAN_SCALE(xp, w, total)


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
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing:g}")
    shape = input._array.shape
    probabilities = target._array.shape == shape  # (PyTorch decides by the shapes)
    if probabilities and not target.is_floating_point():
        raise RuntimeError("Expected floating point type for target with class probabilities, "
                           f"got {target.dtype._scalar_name}")
    class_dim = 0 if len(shape) == 1 else 1
    n_classes = shape[class_dim]
    logp = log_softmax(input, class_dim)
    wshape = [1] * len(shape)
    wshape[class_dim] = n_classes
    if probabilities:  # class probabilities (PyTorch decides by the shapes;
        # other targets are class indices, whose checks name a float target's dtype)
        _check_class_weight(input, weight, "cross_entropy: ")
        if label_smoothing > 0:
            target = target * (1 - label_smoothing) + label_smoothing / n_classes
        terms = logp * target
        if weight is not None:
            terms = terms * weight.view(wshape)
        if reduction == "none":
            return -terms.sum(class_dim)
        total = -terms.sum()
        if reduction == "mean":  # over the samples: a division by an int (DivBackward1)
            return scalar_op("div", total, input.numel() // n_classes) if input.numel() \
                else total / 0
        return total
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
    # PyTorch's C++ scales with Scalars: MulBackward1 nodes
    return scalar_op("mul", nll, 1 - label_smoothing) + \
        scalar_op("mul", smooth, label_smoothing / n_classes)


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


class BinaryCrossEntropyWithLogitsBackward0(Node):
    """loss = (1 - y) x - (1 + (pw - 1) y) log sigmoid(x), times the weight: its gradient is
    (1 + (pw - 1) y) sigmoid(x) - pw y for the input (sigmoid(x) - y without pos_weight),
    log sigmoid(-x) - pw log sigmoid(x) for the target (-x without)."""

    def backward(self, grad):
        from .activation import logsigmoid
        input, target, weight, pos_weight = self.saved_tensors
        g = _reduce_grad(grad, self.shape, self.reduction)
        if weight is not None:
            g = g * weight
        gi = gt = None
        if self._next[0][0] is not None:
            if pos_weight is not None:
                scaled = pos_weight * target
                gi = ((scaled + 1 - target) * input.sigmoid() - scaled) * g
            else:
                gi = (input.sigmoid() - target) * g
        if self._next[1][0] is not None:
            if pos_weight is not None:
                gt = (logsigmoid(-input) - logsigmoid(input) * pos_weight) * g
            else:
                gt = -input * g
        return gi, gt


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """One node (PyTorch's), the loss computed stably on arrays: log sigmoid(x) is
    min(x, 0) - log1p(exp(-|x|))."""
    if _autocast.active:
        input, target, weight, pos_weight = fp32(input, target, weight, pos_weight)
    reduction = legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if target.shape != input.shape:
        raise ValueError(f"Target size ({target.shape}) must be the same as input size "
                         f"({input.shape})")
    not_differentiable("binary_cross_entropy_with_logits", weight=weight, pos_weight=pos_weight)
    # PyTorch's errors, in its order: (pos_weight - 1) * target, then loss *= weight in place
    for a, b in ((pos_weight, target), (input, weight)):
        if a is not None and b is not None:
            mismatch = broadcast_error(tuple(a.shape), tuple(b.shape))
            if mismatch is not None:
                raise mismatch
    x, y, d, dev = _pair(input, target, "binary_cross_entropy_with_logits")
    xp = backend_of(dev).xp
    log_sig = xp.minimum(x, 0) - xp.log1p(xp.exp(-xp.abs(x)))
    if pos_weight is not None:
        pw = pos_weight._array
        log_sig = _in_place_shape(log_sig * ((pw - 1) * y + 1), log_sig.shape)
    loss = (1 - y) * x - log_sig
    if weight is not None:
        loss = _in_place_shape(loss * weight._array, loss.shape)
    # PyTorch writes the loss into `1 - target` in place: the result has the target's dtype
    out_dtype = target.dtype if target.dtype.is_floating_point else d
    out = make_tensor(_reduce_array(loss, reduction).astype(out_dtype.np, copy=False), dev)
    node = record(BinaryCrossEntropyWithLogitsBackward0, (input, target), out)
    if node is not None:
        node.shape, node.reduction = x.shape, reduction
        node.save_for_backward(input, target, weight, pos_weight)
    return out


def _in_place_shape(arr, shape):
    """PyTorch's error where an in-place op's operand would grow the result."""
    if arr.shape != shape:
        raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast shape "
                           f"{list(arr.shape)}")
    return arr


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
    # `input + eps` is a Scalar add in PyTorch's C++ (AddBackward1)
    loss = input.exp() - target * input if log_input else \
        input - target * scalar_op("add", input, eps).log()
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
    return reduce_loss(scalar_op("add", -target * (input1 - input2), margin).clamp_min(0),
                       reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    if _autocast.active:
        input, target = fp32(input, target)
    from .pointwise import where
    reduction = legacy_reduction(size_average, reduce, reduction)
    # PyTorch's sum: the margin part where the target is not 1, plus the input where it is
    # not -1 (other target values get both); `margin - input` is a fill and sub_ in C++
    zeros = zeros_like(input)
    margin_part = (full_like(input, margin) - input).clamp_min(0)
    loss = where(target != 1, margin_part, zeros) + where(target != -1, input, zeros)
    return reduce_loss(loss, reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    from .activation import logsigmoid
    reduction = legacy_reduction(size_average, reduce, reduction)
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    loss = loss.sum(dim=input.dim() - 1) / input.size(-1)
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
    mag = scalar_op("add", (input1 * input1).sum(dim), eps) * \
        scalar_op("add", (input2 * input2).sum(dim), eps)
    cos = prod / mag.sqrt()
    zeros = zeros_like(cos)
    # `1 - cos` is a fill and sub_ in PyTorch's C++ (SubBackward0), `cos - margin` a Scalar
    pos = full_like(cos, 1) - cos
    neg = scalar_op("sub", cos, margin).clamp_min(0)
    loss = where(target == 1, pos, zeros) + where(target == -1, neg, zeros)
    return reduce_loss(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    if _autocast.active:
        anchor, positive, negative = fp32(anchor, positive, negative)
    reduction = legacy_reduction(size_average, reduce, reduction)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        from .pointwise import minimum
        d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return reduce_loss((scalar_op("add", d_pos, margin) - d_neg).clamp_min(0), reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    dist = distance_function or pairwise_distance
    d_pos, d_neg = dist(anchor, positive), dist(anchor, negative)
    if swap:
        from .pointwise import minimum
        d_neg = minimum(d_neg, dist(positive, negative))
    return reduce_loss((margin + d_pos - d_neg).clamp_min(0), reduction)
