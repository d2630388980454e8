"""Connectionist temporal classification: `ctc_loss` as PyTorch records it, one
CtcLossBackward0 node (its `_ctc_loss`) under the reduction's ops.

The forward (alpha) and backward (beta) recursions run in log space on arrays, vectorised
over the batch and the extended label sequence (blanks between and around the labels), with
one Python step per time step. The gradient is PyTorch's: for log_probs lp at a frame t and
class c, exp(lp) - exp(log(sum of alpha * beta over the positions labelled c) + nll - lp),
the gradient through a log_softmax that PyTorch's kernel folds in (its sum over the classes
is 0 for normalised log_probs); zero after a sequence's input length, NaN for an infinite
loss unless zero_infinity, which makes it 0. It is not differentiable again and has no
forward-mode derivative, as PyTorch's.
"""
import math

import numpy as np

from .._tensor import Tensor, make_tensor, xp_of
from ._dual import refuse_tangent
from ._graph import Node, record
from ._accumulate import bincount_sized

__all__ = ["ctc_loss"]


def _lengths(lengths):
    """CTC's lengths as Python ints: PyTorch copies length tensors to the host too (its CUDA
    kernels size their grids from them), so a device tensor costs one read each."""
    return [int(v) for v in (lengths.tolist() if isinstance(lengths, Tensor) else lengths)]


def _extended(xp, targets, tl, blank, device):
    """(N, S) extended label sequences (blank, l1, blank, l2, ..., blank; blank-padded to the
    longest), and which positions are real (S = 2 * max target length + 1)."""
    n = len(tl)
    longest = max(tl) if tl else 0
    tgt = targets.to(device)._array if isinstance(targets, Tensor) else \
        xp.asarray(np.asarray(targets))
    labels = xp.full((n, longest), blank, dtype=np.int64)
    offset = 0
    for b in range(n):  # padded (N, S_max) or concatenated 1-d targets
        row = tgt[b, :tl[b]] if tgt.ndim == 2 else tgt[offset:offset + tl[b]]
        offset += tl[b]
        labels[b, :tl[b]] = row
    ext = xp.full((n, 2 * longest + 1), blank, dtype=np.int64)
    ext[:, 1::2] = labels
    real = xp.arange(2 * longest + 1)[None, :] < (2 * xp.asarray(tl, dtype=np.int64) + 1)[:, None]
    return ext, real


def _shift(xp, a, k, fill):
    """a shifted right by k along the last axis, `fill` coming in."""
    out = xp.full(a.shape, fill, dtype=a.dtype)
    out[..., k:] = a[..., :a.shape[-1] - k]
    return out


def _shift_left(xp, a, k, fill):
    out = xp.full(a.shape, fill, dtype=a.dtype)
    out[..., :a.shape[-1] - k] = a[..., k:]
    return out


class CtcLossBackward0(Node):
    def backward(self, grad):
        xp, lp, emit, alpha = self.xp, self.lp, self.emit, self.alpha
        ext, real, skip, il, tl, nll = self.ext, self.real, self.skip, self.il, self.tl, self.nll
        T, N, C = lp.shape
        S = ext.shape[1]
        ninf = -np.inf
        # beta: from each sequence's last frame (its last label or the blank after it) back
        t_last = xp.asarray(il, dtype=np.int64) - 1
        ends = xp.zeros((N, S), dtype=bool)
        tl_a = xp.asarray(tl, dtype=np.int64)
        ends[xp.arange(N), 2 * tl_a] = True
        ends[xp.arange(N), xp.maximum(2 * tl_a - 1, 0)] |= tl_a > 0
        skip_next = _shift_left(xp, skip, 2, False)  # s + 2 may be reached from s
        beta = xp.full((T, N, S), ninf, dtype=lp.dtype)
        nxt = xp.full((N, S), ninf, dtype=lp.dtype)
        with np.errstate(invalid="ignore", over="ignore"):
            for t in range(T - 1, -1, -1):
                b1 = _shift_left(xp, nxt, 1, ninf)
                b2 = xp.where(skip_next, _shift_left(xp, nxt, 2, ninf), ninf)
                cur = xp.logaddexp(xp.logaddexp(nxt, b1), b2) + emit[t]
                cur = xp.where((t == t_last)[:, None], xp.where(ends, emit[t], ninf), cur)
                cur = xp.where((t > t_last)[:, None] | ~real, ninf, cur)
                beta[t] = nxt = cur
            # the posterior of class c at frame t, over lp's probability: summed per class
            # (padding positions add nothing)
            q = xp.where(real[None], xp.exp(alpha + beta + nll[None, :, None] - emit), 0)
            rows = (xp.arange(T)[:, None, None] * N + xp.arange(N)[None, :, None]) * C
            flat = (rows + ext[None, :, :]).reshape(-1)
            posterior = bincount_sized(xp, flat, q.reshape(-1), T * N * C).reshape(T, N, C)
            g = xp.exp(lp) - posterior.astype(lp.dtype, copy=False)
            # an infinite loss: every class's log(sum alpha * beta) is -inf, and -inf + inf NaN
            g = xp.where(xp.isinf(nll)[None, :, None], np.nan, g)
        g = xp.where((xp.arange(T)[:, None] >= xp.asarray(il)[None, :])[:, :, None], 0, g)
        if self.zero_infinity:
            g = xp.where(xp.isinf(nll)[None, :, None], 0, g)
        g = g * grad._array.reshape(1, N, 1).astype(lp.dtype, copy=False)
        return make_tensor(g.astype(lp.dtype, copy=False), self.device)


def _ctc(log_probs, ext, real, il, tl, blank, zero_infinity):
    """PyTorch's _ctc_loss: each sequence's negative log likelihood, (N,)."""
    refuse_tangent(log_probs, "_ctc_loss")  # PyTorch has no forward formula
    xp = xp_of(log_probs)
    lp = log_probs._array
    T, N, C = lp.shape
    S = ext.shape[1]
    ninf = -np.inf
    emit = xp.take_along_axis(lp, xp.broadcast_to(ext[None], (T, N, S)), axis=2)
    emit = xp.where(real[None], emit, ninf)
    skip = (ext != blank) & (ext != _shift(xp, ext, 2, blank))
    skip[:, :2] = False
    alpha = xp.full((T, N, S), ninf, dtype=lp.dtype)
    first = xp.full((N, S), ninf, dtype=lp.dtype)
    first[:, 0] = emit[0, :, 0]
    if S > 1:
        first[:, 1] = emit[0, :, 1]
    alpha[0] = cur = first
    with np.errstate(invalid="ignore"):
        for t in range(1, T):
            a1 = _shift(xp, cur, 1, ninf)
            a2 = xp.where(skip, _shift(xp, cur, 2, ninf), ninf)
            alpha[t] = cur = xp.logaddexp(xp.logaddexp(cur, a1), a2) + emit[t]
        # the likelihood at each sequence's last frame: ending on the last label or the blank
        last = alpha[xp.asarray(il, dtype=np.int64) - 1, xp.arange(N)]  # (N, S)
        tl_a = xp.asarray(tl, dtype=np.int64)
        end_blank = xp.take_along_axis(last, (2 * tl_a)[:, None], 1)[:, 0]
        end_label = xp.take_along_axis(last, xp.maximum(2 * tl_a - 1, 0)[:, None], 1)[:, 0]
        end_label = xp.where(tl_a > 0, end_label, ninf)
        nll = -xp.logaddexp(end_blank, end_label)
    res = make_tensor(nll.astype(lp.dtype, copy=False), log_probs._device)
    node = record(CtcLossBackward0, (log_probs,), res)
    if node is not None:
        node.xp, node.device, node.lp, node.emit, node.alpha = xp, log_probs._device, lp, emit, alpha
        node.ext, node.real, node.skip, node.il, node.tl = ext, real, skip, il, tl
        node.nll, node.zero_infinity = nll, zero_infinity
    return res


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    from .creation import zeros_like
    from .loss import _check_reduction
    from .pointwise import where
    _check_reduction(reduction)
    if log_probs.numel() == 0:
        raise RuntimeError("log_probs tensor must not be empty")
    # (T, C) and one length each: a batch of one, whose (S,) target is the concatenated form
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        input_lengths, target_lengths = (v.reshape(1) if isinstance(v, Tensor) else v
                                         for v in (input_lengths, target_lengths))
    T, N, C = log_probs.shape
    if not 0 <= blank < C:
        raise RuntimeError("blank must be in label range")
    il, tl = _lengths(input_lengths), _lengths(target_lengths)
    if len(il) != N:
        raise RuntimeError("input_lengths must be of size batch_size")
    if len(tl) != N:
        raise RuntimeError("target_lengths must be of size batch_size")
    for name, values in (("input_lengths", il), ("target_lengths", tl)):
        for v in values:
            if v < 0:
                raise RuntimeError(f"Expected {name} to have value at least 0, but got value {v} "
                                   "(while checking arguments for ctc_loss_allocate_outputs)")
    padded_length = None if not isinstance(targets, Tensor) or targets.dim() != 2 else \
        targets.shape[1]
    if padded_length is not None and max(tl, default=0) > padded_length:
        raise RuntimeError(f"Expected tensor to have size at least {max(tl)} at dimension 1, but "
                           f"got size {padded_length} for argument #2 'targets' (while checking "
                           "arguments for ctc_loss_allocate_outputs)")
    for v in il:
        if v > T:
            raise RuntimeError(f"Expected input_lengths to have value at most {T}, but got "
                               f"value {v} (while checking arguments for ctc_loss_cpu)")
    concatenated = targets.dim() == 1 if isinstance(targets, Tensor) else np.ndim(targets) == 1
    if concatenated and len(targets) != sum(tl):
        raise RuntimeError(f"Expected tensor to have size {sum(tl)} at dimension 0, but got size "
                           f"{len(targets)} for argument #2 'targets' (while checking arguments "
                           "for ctc_loss_allocate_outputs)")
    xp = xp_of(log_probs)
    ext, real = _extended(xp, targets, tl, blank, log_probs._device)
    res = _ctc(log_probs, ext, real, il, tl, blank, zero_infinity)
    if zero_infinity:
        res = where(res == math.inf, zeros_like(res), res)
    if reduction == "mean":
        lengths = np.maximum(np.asarray(tl, dtype=np.float64), 1).astype(log_probs._array.dtype)
        return (res / make_tensor(xp.asarray(lengths), log_probs._device)).mean()
    if reduction == "sum":
        return res.sum()
    return res.squeeze(0) if unbatched else res
