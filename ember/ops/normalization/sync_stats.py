"""The pieces of batch norm that SyncBatchNorm runs across processes: per-process statistics
(`batch_norm_stats`), their reduction to global ones (`batch_norm_gather_stats[_with_counts]`),
the normalisation with given statistics (`batch_norm_elemt`), the two halves of the backward
(`batch_norm_backward_reduce`, `batch_norm_backward_elemt`) and `batch_norm_update_stats`.

PyTorch runs all but the last on CUDA only; here they run on any device. Statistics are per
channel (dim 1), over every other dim; `invstd` is 1 / sqrt(biased variance + eps). They are
written with ember ops, so they differentiate like their formulas.
"""
from ... import dtypes as _dt
from .._graph import grad_disabled
from .._writes import write_out
from ..creation import full
from ..reduction import mean as _mean, sum as _sum
from ..unary import rsqrt

__all__ = ["batch_norm_stats", "batch_norm_elemt", "batch_norm_gather_stats",
           "batch_norm_gather_stats_with_counts", "batch_norm_backward_reduce",
           "batch_norm_backward_elemt", "batch_norm_update_stats"]


def _reduced_dims(input):
    return [0] + list(range(2, input.ndim))


def _channel_shape(input):
    """A per-channel vector's shape broadcast against the input: (1, C, 1, ...)."""
    return (1, input.shape[1]) + (1,) * (input.ndim - 2)


def _stats_dtype(input):
    # half-precision inputs keep float32 statistics (PyTorch's accumulate type)
    return input.dtype if input.dtype.itemsize >= 4 else _dt.float32


def _mean_var(input):
    x = input.to(_stats_dtype(input))
    dims = _reduced_dims(input)
    mean = _mean(x, dims)
    centred = x - mean.reshape(_channel_shape(input))
    return mean, _mean(centred * centred, dims)


def batch_norm_stats(input, eps):
    """(mean, invstd) per channel of this process's batch."""
    if input.ndim < 2:
        raise RuntimeError(f"batch_norm_stats: expected 2D or higher input, got {input.ndim}D")
    mean, var = _mean_var(input)
    return mean, rsqrt(var + eps)


def batch_norm_elemt(input, weight, bias, mean, invstd, eps, *, out=None):
    """(input - mean) * invstd * weight + bias with given statistics (eps is already in invstd)."""
    shape = _channel_shape(input)
    y = (input - mean.reshape(shape)) * invstd.reshape(shape)
    if weight is not None:
        y = y * weight.reshape(shape)
    if bias is not None:
        y = y + bias.reshape(shape)
    y = y.to(input.dtype)
    if out is not None:
        return write_out(out, y, "batch_norm_elemt")
    return y


def _update_running(running_mean, running_var, mean, unbiased_var, momentum):
    with grad_disabled():
        for buf, stat in ((running_mean, mean), (running_var, unbiased_var)):
            if buf is not None:
                buf.copy_(buf * (1 - momentum) + stat.to(buf.dtype) * momentum)


def batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var, momentum,
                                        eps, counts):
    """Global (mean, invstd) from each process's (mean, invstd) rows of `mean`/`invstd` and its
    element count per channel; updates the running buffers (unbiased variance) in place."""
    counts = counts.to(mean.dtype)
    total = _sum(counts)
    w = counts.reshape(-1, 1)
    global_mean = _sum(mean * w, 0) / total
    var_each = 1 / (invstd * invstd) - eps
    deviation = mean - global_mean
    var = _sum((var_each + deviation * deviation) * w, 0) / total
    _update_running(running_mean, running_var, global_mean, var * total / (total - 1),
                    momentum)
    return global_mean, rsqrt(var + eps)


def batch_norm_gather_stats(input, mean, invstd, running_mean, running_var, momentum, eps, count):
    """`batch_norm_gather_stats_with_counts` where every process counted `count` elements."""
    counts = full((mean.shape[0],), count, dtype=mean.dtype, device=mean.device)
    return batch_norm_gather_stats_with_counts(input, mean, invstd, running_mean, running_var,
                                               momentum, eps, counts)


def batch_norm_backward_reduce(grad_out, input, mean, invstd, weight, input_g, weight_g, bias_g):
    """(sum_dy, sum_dy_xmu, grad_weight, grad_bias) per channel; the first two only when
    `input_g`, grad_weight only with `weight_g`, grad_bias only with `bias_g` (else None)."""
    dims = _reduced_dims(input)
    shape = _channel_shape(input)
    sum_dy = _sum(grad_out, dims)
    sum_dy_xmu = _sum(grad_out * (input - mean.reshape(shape)), dims)
    grad_weight = sum_dy_xmu * invstd if weight_g else None
    if grad_weight is not None and weight is not None:
        grad_weight = grad_weight.to(weight.dtype)
    grad_bias = sum_dy if bias_g else None
    if grad_bias is not None and weight is not None:
        grad_bias = grad_bias.to(weight.dtype)
    if not input_g:
        sum_dy = sum_dy_xmu = None
    return sum_dy, sum_dy_xmu, grad_weight, grad_bias


def batch_norm_backward_elemt(grad_out, input, mean, invstd, weight, sum_dy, sum_dy_xmu, count):
    """grad_input from the globally reduced sum_dy and sum_dy_xmu; `count` holds each
    process's element count per channel."""
    shape = _channel_shape(input)
    n = _sum(count.to(mean.dtype))
    invstd_c = invstd.reshape(shape)
    scale = invstd_c if weight is None else invstd_c * weight.reshape(shape)
    centred = input - mean.reshape(shape)
    grad = (grad_out - (sum_dy / n).reshape(shape)
            - centred * invstd_c * invstd_c * (sum_dy_xmu / n).reshape(shape)) * scale
    return grad.to(input.dtype)


def batch_norm_update_stats(input, running_mean, running_var, momentum):
    """(mean, biased variance) per channel; the running buffers move toward (mean, unbiased
    variance) by `momentum`. PyTorch defines no derivative for it: its results are constants."""
    with grad_disabled():
        mean, var = _mean_var(input)
    n = input.numel() // max(input.shape[1], 1)
    _update_running(running_mean, running_var, mean, var * (n / max(n - 1, 1)), momentum)
    return mean, var
