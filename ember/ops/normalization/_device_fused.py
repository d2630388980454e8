"""The norms' per-statistic arithmetic and last passes on a device, as CuPy elementwise kernels.

Batch norm issued about 20 array calls forward and 13 backward on a device, most of them on
per-channel vectors (layer and group norm likewise on their per-row statistics), where a step
is bound by the host issuing them (`_device_kernels`). These kernels do the same arithmetic in
1 call where there were 2 to 7: the statistics' tail, the affine pass, the running statistics'
update, xhat, and the backward's coefficients and pass. Batch statistics' passes read the
input and its mean and subtract themselves, so the centred input is never stored.

Each kernel's expression is the CPU path's operations in the CPU path's order, every constant
a parameter of the array's type, so each operation rounds as the CPU's float32 (or float64)
ufunc does (a GPU may contract a multiply and an add into one rounding: within tolerance). They
apply to float32 and float64 arrays (`usable`); other dtypes keep the general path.
"""
import math

from .._device_kernels import (Kernel, device_centred_sum, device_mean, device_normalized_dot,
                               device_product_sum, device_sum, usable)

__all__ = ["usable", "statistics_tail", "layer_norm_backward", "scale_shift_", "running_update_",
           "centred_coefficients", "input_grad_", "normalized", "normalize", "batch_normalize",
           "batch_norm_backward"]


def shaped(a, shape):
    """`a` reshaped to `shape`, with no call (a view's, on a device) when it has it already."""
    return a if a.shape == shape else a.reshape(shape)


def count_over(shape, axes):
    return math.prod([shape[i] for i in axes])  # (a list: one frame, a generator one a dim)


_STATS = Kernel("ember_norm_stats", "T s, T n, T eps, T one", "T var, T invstd",
                "var = s / n; invstd = one / sqrt(var + eps)")
_STATS_SCALED = Kernel("ember_norm_stats_scaled", "T s, T n, T eps, T one, T w",
                       "T var, T invstd, T k",
                       "var = s / n; invstd = one / sqrt(var + eps); k = invstd * w")
_SCALE = Kernel("ember_norm_scale", "T k", "T y", "y = y * k")
_SCALE_SHIFT = Kernel("ember_norm_scale_shift", "T k, T b", "T y", "y = y * k + b")
# (the batch statistics read by channel: any contiguous shape of C values)
_RUNNING = Kernel("ember_norm_running", "raw T mean, raw T var, T c, T m, T om", "T rm, T rv",
                  "rm = rm * om + mean[i] * m; rv = rv * om + var[i] * c * m")
_CENTRED = Kernel("ember_norm_centred_coefs", "T dot, T total, T mneg, T n", "T a, T t",
                  "a = dot / mneg; t = total / n")
_NORMALIZED = Kernel("ember_norm_normalized", "T x, T m, T k", "T y", "y = (x - m) * k")
_INPUT_GRAD = Kernel("ember_norm_input_grad", "T g, T a, T t, T coef", "T xc",
                     "xc = (xc * a + g - t) * coef")
# batch statistics from the input itself, the centred input never stored (its sums are
# `_device_kernels.device_centred_sum`): the forward's normalising pass, and the backward's
# coefficients (with the weight's gradient dot * invstd) and input pass
_NORMALIZED_SHIFTED = Kernel("ember_norm_normalized_shifted", "T x, T m, T k, T b", "T y",
                             "y = (x - m) * k + b")
# layer norm's: the statistics' multiplier, then the weight and bias along the features
_NORMALIZED_AFFINE = Kernel("ember_norm_normalized_affine", "T x, T m, T k, T w, T b", "T y",
                            "y = (x - m) * k * w + b")
_NORMALIZED_SCALED = Kernel("ember_norm_normalized_scaled", "T x, T m, T k, T w", "T y",
                            "y = (x - m) * k * w")
# batch norm's per-channel kernels run over the statistics' shape (1, C, 1 ...), which
# broadcasts against the input, and read the (C,) vectors (weight, bias, the backward's sums)
# by channel: no reshape on the way (a call each on a device)
_BATCH_STATS = Kernel("ember_norm_batch_stats", "T s, T n, T eps, T one, raw T w, raw T b",
                      "T var, T invstd, T k, T shift",
                      "var = s / n; invstd = one / sqrt(var + eps); k = invstd * w[i];"
                      "shift = b[i]")
_BATCH_BACK = Kernel("ember_norm_batch_back", "raw T dot, raw T total, T invstd, T mneg, T n",
                     "T a, T t, T dw",
                     "a = dot[i] / mneg * invstd * invstd; t = total[i] / n; dw = dot[i] * invstd")
_BATCH_BACK_SCALED = Kernel(
    "ember_norm_batch_back_scaled", "raw T dot, raw T total, T invstd, T mneg, T n, raw T w",
    "T a, T t, T coef, T dw",
    "a = dot[i] / mneg * invstd * invstd; t = total[i] / n; coef = invstd * w[i];"
    "dw = dot[i] * invstd")
_CENTRED_INPUT_GRAD = Kernel("ember_norm_centred_input_grad", "T x, T m, T g, T a, T t, T coef",
                             "T dx", "dx = ((x - m) * a + g - t) * coef")


def statistics_tail(xp, squares, count, eps, scale):
    """(var, invstd, multiplier) per statistic from the sums of squared deviations: var =
    squares / count, invstd = 1 / sqrt(var + eps), multiplier = invstd * scale (invstd
    itself without a scale)."""
    t = squares.dtype.type
    if scale is None:
        var, invstd = _STATS(xp, squares, t(count), t(eps), t(1))
        return var, invstd, invstd
    return _STATS_SCALED(xp, squares, t(count), t(eps), t(1), scale)


def scale_shift_(xp, y, multiplier, shift):
    """y <- y * multiplier [+ shift], in place (per-channel multiplier and shift broadcast)."""
    if shift is None:
        _SCALE(xp, multiplier, y)
    else:
        _SCALE_SHIFT(xp, multiplier, shift, y)


def running_update_(xp, running_mean, running_var, mean, var, correction, momentum):
    """running <- running * (1 - momentum) + stat * momentum for the mean and for the variance
    made unbiased (var * correction), in place, with the CPU path's roundings: stat * momentum,
    running * (1 - momentum), then their sum. `mean` and `var` are contiguous, of any shape
    with the running statistics' size."""
    t = mean.dtype.type
    _RUNNING(xp, mean, var, t(correction), t(momentum), t(1 - momentum), running_mean,
             running_var)


# layer norm's input gradient with xhat = (x - m) * k and g * w computed on the way, and the
# row coefficients a = dot / -count and t = total / count too (`centred_coefficients` and
# `input_grad_` in one pass, their operations in their order)
_AFFINE_INPUT_GRAD = Kernel(
    "ember_norm_affine_input_grad", "T x, T m, T k, T g, T w, T dot, T total, T mneg, T n",
    "T dx", "dx = ((x - m) * k * (dot / mneg) + g * w - total / n) * k")


def layer_norm_backward(xp, g, x, xs, mean, invstd, w, feature_axes, reduce_axes, need_x,
                        need_w, need_b):
    """(dx in the group view, dw, db) of layer norm's y = xhat * w + b on a device, with
    w along the last axis: 5 kernels (xhat and g * w never stored; the CPU path's values).
    `g` and `x` come in x's shape, `xs` is x's group view, `mean` and `invstd` its
    statistics; dw and db sum over `reduce_axes` of x's shape (as the CPU's), the rows over
    `feature_axes` of the group view."""
    stats_x = x.shape[:-1] + (1,)
    m_x, k_x = shaped(mean, stats_x), shaped(invstd, stats_x)
    dw = device_normalized_dot(xp, reduce_axes, g, x, m_x, k_x, keepdims=False) \
        if need_w else None
    db = device_sum(xp, reduce_axes, g, keepdims=False) if need_b else None
    dx = None
    if need_x:
        gs = shaped(g, xs.shape)
        wf = shaped(w, xs.shape[-1:])
        dot = device_normalized_dot(xp, feature_axes, gs, xs, mean, invstd, wf)
        total = device_product_sum(xp, feature_axes, gs, wf)
        t = dot.dtype.type
        count = xs.size // max(1, dot.size)
        dx = _AFFINE_INPUT_GRAD(xp, xs, mean, invstd, gs, wf, dot, total, t(-count), t(count))
    return dx, dw, db


def centred_coefficients(xp, dot, total, count):
    """(a, t) from dot = sum(g * xhat) and total = sum(g) over a normalised input xhat:
    a = dot / -count and t = total / count."""
    t = dot.dtype.type
    return _CENTRED(xp, dot, total, t(-count), t(count))


def input_grad_(xp, xc, g, a, mean_g, coef):
    """xc <- ((xc * a + g) - mean_g) * coef, in place: the input's gradient of batch
    statistics from the centred input (per-channel a, mean_g and coef broadcast)."""
    _INPUT_GRAD(xp, g, a, mean_g, coef, xc)


def normalized(xp, xs, mean, invstd):
    """xhat = (xs - mean) * invstd, in one kernel on a device (in two ufunc calls elsewhere,
    with the same roundings)."""
    if usable(xp, xs, mean, invstd):
        return _NORMALIZED(xp, xs, mean, invstd)
    xhat = xp.subtract(xs, mean)
    xp.multiply(xhat, invstd, out=xhat)
    return xhat


def normalize(xp, xs, mean, multiplier, shift, feature=None):
    """(xs - mean) * multiplier [+ shift] into a fresh array, one kernel (the CPU's subtract,
    multiply and add, with their roundings); `feature` (weight, bias or None), layer norm's,
    then multiplies and adds in the same pass (shift is None with it)."""
    if feature is not None:
        w, b = feature
        if b is None:
            return _NORMALIZED_SCALED(xp, xs, mean, multiplier, w)
        return _NORMALIZED_AFFINE(xp, xs, mean, multiplier, w, b)
    if shift is None:
        return _NORMALIZED(xp, xs, mean, multiplier)
    return _NORMALIZED_SHIFTED(xp, xs, mean, multiplier, shift)


def batch_normalize(xp, xs, axes, eps, w, b):
    """(y, mean, invstd, biased var) of batch norm's training forward on a device, in 4
    kernels and no reshape: the statistics over `axes` of xs (the group view) in its
    statistics' shape, y = (xs - mean) * (invstd * w) + b with w and b the (C,) weight and bias
    (or both None). The CPU path's operations in its order (`_fused.normalize_batch_stats`)."""
    count = count_over(xs.shape, axes)
    mean = device_mean(xp, axes, xs, count)
    squares = device_centred_sum(xp, axes, xs, mean)
    t = squares.dtype.type
    if w is None:
        var, invstd = _STATS(xp, squares, t(count), t(eps), t(1))
        return _NORMALIZED(xp, xs, mean, invstd), mean, invstd, var
    var, invstd, k, shift = _BATCH_STATS(xp, squares, t(count), t(eps), t(1), w, b)
    return _NORMALIZED_SHIFTED(xp, xs, mean, k, shift), mean, invstd, var


def batch_norm_backward(xp, g, xs, mean, invstd, w, axes, need_w, need_b):
    """(dx, dw, db) of batch norm with batch statistics on a device, in 4 kernels: the sums
    dot = sum(g * (xs - mean)) and total = sum(g) per channel, the coefficients a = dot /
    -count * invstd^2, t = total / count, coef = invstd [* w] (with dw = dot * invstd), and
    dx = ((xs - mean) * a + g - t) * coef, the centred input never stored. `mean` and `invstd`
    in the statistics' shape, w (C,) or None; dw and db fresh (C,) arrays (None where not
    needed)."""
    count = count_over(xs.shape, axes)
    dot = device_centred_sum(xp, axes, xs, mean, g, keepdims=False)
    total = device_sum(xp, axes, g, keepdims=False)
    t = dot.dtype.type
    if w is None:
        a, mean_g, dw = _BATCH_BACK(xp, dot, total, invstd, t(-count), t(count))
        coef = invstd
    else:
        a, mean_g, coef, dw = _BATCH_BACK_SCALED(xp, dot, total, invstd, t(-count), t(count), w)
    dx = _CENTRED_INPUT_GRAD(xp, xs, mean, g, a, mean_g, coef)
    return dx, dw.reshape(dot.shape) if need_w else None, total if need_b else None
