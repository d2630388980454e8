"""Array kernels of the batch / layer / group norm core: the forward and the first-order
backward each as a few passes over the input with in-place ufuncs, and the reductions as
einsum sums of products (one read of the operands, no product temporary; float32 sums
stay within PyTorch's tolerances as einsum accumulates in blocks), on a device one reduction
kernel each.

An array `xs` here is the input viewed as its "group view": the statistics run over
`axes` of it, and `stats_shape` is its shape with those axes kept as 1.
"""
import functools

import numpy as np

from ..._dtype_casts import cast_if_needed
from ..._parallel import map_parts, thread_cuts
from .._device_kernels import device_centred_sum, device_mean, device_sum
from .._planes import spread
from . import _device_fused as device_fused
# count_over and shaped are defined beside the device kernels (a module below this one); the
# norms read them as fused.count_over and fused.shaped
from ._device_fused import count_over, shaped  # noqa: F401

_LETTERS = "abcdefgh"
MAX_DIMS = len(_LETTERS)  # the most dims these einsums spell out


@functools.lru_cache(maxsize=256)
def _spec(shape, axes, operands):
    """The einsum subscripts summing `operands` arrays of `shape` over `axes`, and the
    shape of the result with those axes kept as 1 (cached: the hot path is called with a
    model's few shapes, every step)."""
    full = _LETTERS[:len(shape)]
    kept = "".join(c for i, c in enumerate(full) if i not in axes)
    return ",".join([full] * operands) + "->" + kept, \
        tuple(1 if i in axes else s for i, s in enumerate(shape))


def sum_over(xp, axes, a, b=None, keepdims=True):
    """sum(a) or sum(a * b) over `axes`, keeping them as 1s (or, not `keepdims`, dropping
    them: a weight's gradient has that shape, and a reshape is a call of its own on a
    device)."""
    total = device_sum(xp, axes, a, b, keepdims)
    if total is not None:
        return total
    subscripts, stats_shape = _spec(a.shape, axes, 1 if b is None else 2)
    total = xp.einsum(subscripts, a) if b is None else xp.einsum(subscripts, a, b)
    return total.reshape(stats_shape) if keepdims else total


def mean_over(xp, axes, a, b=None, keepdims=True):
    """mean(a) or mean(a * b) over `axes`, keeping them as 1s (or dropping them)."""
    count = count_over(a.shape, axes)
    if b is None:
        mean = device_mean(xp, axes, a, count, keepdims)
        if mean is not None:
            return mean
    return sum_over(xp, axes, a, b, keepdims) / count


_as = cast_if_needed  # (no call at all when `a` has the dtype already)


def broadcastable(a, shape):
    """`a` made to broadcast as an array of `shape` (whose other dims are 1s): no call at all
    when only leading 1s are missing (layer norm's weight), which broadcasting supplies."""
    lead = len(shape) - a.ndim
    if lead >= 0 and a.shape == shape[lead:] and all(s == 1 for s in shape[:lead]):
        return a
    return a.reshape(shape)


# The statistics are per index of the kept axes, so a large input is cut along its first kept
# axis (batch norm's channels), one part per intra-op thread, each part's passes and sums its
# own (the same bits as one thread). Measured batch norm forward and backward alone at 2
# threads against 1 (`/work/notes/s13/bn_thr.py`): 2 MB inputs 0.68 of the time, 3-6 MB
# 0.56-0.61, ResNet-18's 25 MB stem 0.46. But inside a whole step at 2 threads, once its
# passes had become faster (`_planes`), threading CIFAR ResNet's 2 MB layers made the step
# 1.05-1.09x slower, and ResNet-18's from 2 MB rather than 8 MB was even (1.007), while none
# at all was 1.06x slower (`/work/notes/s22/toggle_ab.py`): so from 8 MB on threads of the
# pool's own. On OpenMP's team (`_parallel._Team`), parts start at once: from 1.5 MB rather
# than 8, ResNet-18's step at 2 threads took 0.92-0.94x its time and CIFAR ResNet's
# 0.97-0.98x, while parts of 0.5-1 MB were slower than whole (`/work/notes/s32/ab_step.py`,
# `bn_thr.py`).
THREADED_MIN_BYTES = 1536 << 10


def kept_cuts(xp, xs, axes):
    """Index tuples cutting xs along its first kept axis into one part per intra-op thread,
    or None: on a device, or for `thread_cuts`'s reasons (under THREADED_MIN_BYTES ...)."""
    k = next((i for i in range(xs.ndim) if i not in axes), None)
    if xp is not np or k is None:
        return None
    cuts = thread_cuts(xs.shape[k], xs.nbytes, THREADED_MIN_BYTES)
    return None if cuts is None else [(slice(None),) * k + (s,) for s in cuts]


def at_or_none(a, at):
    return None if a is None else a[at]


def normalize_batch_stats(xp, xs, axes, eps, scale=None, shift=None, feature=None):
    """(y, mean, invstd, (flat_mean, flat_var, flat_invstd)): y = (xs - mean) * invstd
    [* scale + shift] in a fresh buffer, the biased variance from the centred values (two
    passes, as PyTorch's float32 kernels: no sum-of-squares cancellation). `scale` and
    `shift` have the statistics' shape (batch norm's per-channel weight and bias); so have
    mean and invstd, while the flat statistics drop the reduced dims (batch norm's running
    statistics and weight gradient take them without a reshape; on a device they keep them:
    the running update reads them by channel). `feature`: a (weight, bias
    or None) along the last axis (layer norm's), applied after, y * weight + bias."""
    cuts = kept_cuts(xp, xs, axes)
    if cuts is None:
        return _normalize_batch_stats(xp, xs, axes, eps, scale, shift, feature=feature)
    y = xp.empty(xs.shape, xs.dtype)
    parts = map_parts(lambda at: _normalize_batch_stats(
        xp, xs[at], axes, eps, at_or_none(scale, at), at_or_none(shift, at), y[at],
        feature), cuts)
    k = len(cuts[0]) - 1  # the cut axis; the first of the flat statistics' axes
    return (y, xp.concatenate([part[1] for part in parts], axis=k),
            xp.concatenate([part[2] for part in parts], axis=k),
            tuple(xp.concatenate([part[3][i] for part in parts]) for i in range(3)))


def _normalize_batch_stats(xp, xs, axes, eps, scale, shift, out=None, feature=None):
    """normalize_batch_stats on one thread, y into `out` when given."""
    if out is None and device_fused.usable(xp, xs, *(a for a in (scale, shift) if a is not None)):
        # the squares' sum and the normalising pass subtract the mean themselves (the CPU's
        # roundings: the sum is einsum's of the centred values on the stand-in); every
        # statistic in the statistics' shape, the "flat" ones too (a reshape is a call on a
        # device: their one user, batch norm's running update, reads them by channel)
        mean = mean_over(xp, axes, xs)
        squares = device_centred_sum(xp, axes, xs, mean)
        var, invstd, multiplier = device_fused.statistics_tail(
            xp, squares, count_over(xs.shape, axes), eps, scale)
        y = device_fused.normalize(xp, xs, mean, multiplier, shift, feature)
        return y, mean, invstd, (mean, var, invstd)
    stats_shape = _spec(xs.shape, axes, 1)[1]
    flat_mean = mean_over(xp, axes, xs, keepdims=False)
    mean = flat_mean.reshape(stats_shape)
    y = xp.subtract(xs, spread(xp, mean, xs), out=out)
    flat_var = mean_over(xp, axes, y, y, keepdims=False)
    flat_invstd = _as(1.0 / xp.sqrt(flat_var + eps), xs.dtype)
    invstd = flat_invstd.reshape(stats_shape)
    xp.multiply(y, spread(xp, invstd if scale is None else invstd * scale, y), out=y)
    if shift is not None:
        xp.add(y, spread(xp, shift, y), out=y)
    if feature is not None:
        xp.multiply(y, feature[0], out=y)
        if feature[1] is not None:
            xp.add(y, feature[1], out=y)
    return y, mean, invstd, (flat_mean, flat_var, flat_invstd)


def normalize_given_stats(xp, xs, mean, invstd, scale=None, shift=None):
    """y = (xs - mean) * invstd [* scale + shift] as one multiply and one add: the
    statistics (running ones) are constants."""
    mult = invstd if scale is None else invstd * scale
    y = xp.multiply(xs, spread(xp, mult, xs))
    offset = -mean * mult
    if shift is not None:
        offset = offset + shift
    xp.add(y, spread(xp, _as(offset, y.dtype), y), out=y)
    return y


def normalize_backward(xp, gw, xn, axes, invstd, train, scale=None, dot=None, total=None,
                       xn_scaled=True):
    """d(input) in the group view, written into `xn`'s buffer (a fresh array the caller owns,
    or None in eval mode). `gw` is the incoming gradient (times an elementwise weight for
    layer/group norm); `scale` a per-group weight (batch norm) folded into the last
    multiply. `xn` is xhat = (x - mean) * invstd, or only x - mean when not `xn_scaled`
    (invstd then folds into the coefficients, sparing a pass). `dot` = sum(gw * xn) and
    `total` = sum(gw) over `axes` when the caller has them. Batch statistics give
        dx = invstd * (gw - mean(gw) - xhat * mean(gw * xhat));
    given (running) statistics are constants: dx = invstd * gw."""
    coef = invstd if scale is None else invstd * scale
    if not train:
        return xp.multiply(gw, spread(xp, coef, gw), out=xn)
    m = count_over(xn.shape, axes)
    dot = sum_over(xp, axes, gw, xn) if dot is None else dot
    total = sum_over(xp, axes, gw) if total is None else total
    if xn_scaled and scale is None and device_fused.usable(xp, gw, xn, invstd, dot, total):
        a, mean_g = device_fused.centred_coefficients(xp, dot, total, m)
        device_fused.input_grad_(xp, xn, gw, a, mean_g, invstd)
        return xn
    # dot / -m is -dot / m to the bit (division rounds symmetrically), in one call, not two
    xp.multiply(xn, spread(xp, (dot / -m) if xn_scaled else (dot / -m) * invstd * invstd, xn),
                out=xn)
    xp.add(xn, gw, out=xn)
    xp.subtract(xn, spread(xp, total / m, xn), out=xn)
    xp.multiply(xn, spread(xp, coef, xn), out=xn)
    return xn
