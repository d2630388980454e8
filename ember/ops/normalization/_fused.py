"""Array kernels of the batch / layer / group norm core: the forward and the first-order
backward each as a few passes over the input with in-place ufuncs, and the reductions as
einsum sums of products (one read of the operands, no product temporary; float32 sums
stay within PyTorch's tolerances as einsum accumulates in blocks).

An array `xs` here is the input viewed as its "group view": the statistics run over
`axes` of it, and `stats_shape` is its shape with those axes kept as 1.
"""
import math

_LETTERS = "abcdefgh"


def _subscripts(ndim, axes):
    full = _LETTERS[:ndim]
    return full, "".join(c for i, c in enumerate(full) if i not in axes)


def sum_over(xp, axes, a, b=None):
    """sum(a) or sum(a * b) over `axes`, keeping them as 1s."""
    full, kept = _subscripts(a.ndim, axes)
    stats_shape = tuple(1 if i in axes else s for i, s in enumerate(a.shape))
    if b is None:
        return xp.einsum(f"{full}->{kept}", a).reshape(stats_shape)
    return xp.einsum(f"{full},{full}->{kept}", a, b).reshape(stats_shape)


def count_over(shape, axes):
    return math.prod(shape[i] for i in axes)


def normalize_batch_stats(xp, xs, axes, eps, scale=None, shift=None):
    """(y, mean, invstd, var): y = (xs - mean) * invstd [* scale + shift] in a fresh
    buffer, the biased variance from the centred values (two passes, as PyTorch's
    float32 kernels: no sum-of-squares cancellation). `scale` and `shift` have the
    statistics' shape (batch norm's per-channel weight and bias)."""
    m = count_over(xs.shape, axes)
    mean = sum_over(xp, axes, xs) / m
    y = xp.subtract(xs, mean)
    var = sum_over(xp, axes, y, y) / m
    invstd = (1.0 / xp.sqrt(var + eps)).astype(xs.dtype, copy=False)
    xp.multiply(y, invstd if scale is None else invstd * scale, out=y)
    if shift is not None:
        xp.add(y, shift, out=y)
    return y, mean, invstd, var


def normalize_given_stats(xp, xs, mean, invstd, scale=None, shift=None):
    """y = (xs - mean) * invstd [* scale + shift] as one multiply and one add: the
    statistics (running ones) are constants."""
    mult = invstd if scale is None else invstd * scale
    y = xp.multiply(xs, mult)
    offset = -mean * mult
    if shift is not None:
        offset = offset + shift
    xp.add(y, offset.astype(y.dtype, copy=False), out=y)
    return y


def normalize_backward(xp, g_group, xhat, axes, invstd, train, gw=None, scale=None):
    """d(input) in the group view, written into `xhat`'s buffer (a fresh array the caller
    owns). `gw` is the gradient times an elementwise weight (layer/group norm) when
    there is one; `scale` a per-group weight (batch norm) folded into the last multiply.
    Batch statistics give the closed form
        dx = invstd * (gw - mean(gw) - xhat * mean(gw * xhat));
    given (running) statistics are constants: dx = invstd * gw."""
    coef = invstd if scale is None else invstd * scale
    gw = g_group if gw is None else gw
    if not train:
        return xp.multiply(gw, coef, out=xhat)
    m = count_over(xhat.shape, axes)
    dot = sum_over(xp, axes, gw, xhat)
    total = sum_over(xp, axes, gw)
    xp.multiply(xhat, -dot / m, out=xhat)
    xp.add(xhat, gw, out=xhat)
    xp.subtract(xhat, total / m, out=xhat)
    xp.multiply(xhat, coef, out=xhat)
    return xhat
