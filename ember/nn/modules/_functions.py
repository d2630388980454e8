"""Autograd Functions behind some modules (as torch.nn.modules._functions): the legacy
CrossMapLRN2d, and SyncBatchNorm's training step across processes: forward all-gathers each
process's per-channel (mean, invstd, count) and normalises with the global statistics
(updating the running ones); backward all-reduces the per-channel sums the input gradient
needs. Both collectives are `process_group`'s, so every rank of it must run the layer in
step, as with PyTorch's."""
from ... import dtypes as _dt
from ... import ops as _ops
from ...autograd.function import Function
from ...ops.creation import zeros
from ...ops.shape import cat

__all__ = ["CrossMapLRN2d", "SyncBatchNormFunction"]


def _window_sums(t, lo, hi):
    """sum over channels lo[c]..hi[c] (inclusive) of t (N, C', H, W), for each c."""
    n, _, h, w = t.shape
    csum = cat([zeros(n, 1, h, w, dtype=t.dtype, device=t.device), t.cumsum(1)], dim=1)
    return csum[:, [i + 1 for i in hi]] - csum[:, lo]


class CrossMapLRN2d(Function):
    """Local response normalisation across channels of a 4-D input, with Lua Torch's
    running-window recurrence and hand-written backward exactly as PyTorch keeps them (the
    first channel's square stays in every later window once the window has slid past it,
    and the backward's window is offset by one: neither is the textbook formula)."""

    @staticmethod
    def forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
        if input.dim() != 4:
            raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                             "instead.")
        ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
        channels = input.size(1)
        pre_pad = int((size - 1) / 2 + 1)
        square = input * input
        # unrolled recurrence: channel c sums squares lo..hi, hi = c + pre_pad - 1 clipped;
        # the window's low end only moves from c = pre_pad + 1 on, and then from channel 1,
        # so channel 0's square stays in
        hi = [min(c + pre_pad - 1, channels - 1) for c in range(channels)]
        lo = [0 if c <= pre_pad else c - pre_pad + 1 for c in range(channels)]
        scale = _window_sums(square, lo, hi)
        if channels > pre_pad + 1:
            stuck = zeros(channels, dtype=input.dtype, device=input.device)
            stuck[pre_pad + 1:] = 1
            scale = scale + square[:, :1] * stuck.view(1, -1, 1, 1)
        ctx.scale = scale.mul(alpha / size).add(k)
        output = ctx.scale.pow(-beta).mul(input)
        ctx.save_for_backward(input, output)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        input, output = ctx.saved_tensors
        size, channels = ctx.size, input.size(1)
        n, _, h, w = input.shape
        cache_ratio_value = 2 * ctx.alpha * ctx.beta / size
        inverse_pre_pad = int(size - (size - 1) / 2)
        if inverse_pre_pad > size - 1:  # size 1: PyTorch's narrow of the band fails
            raise RuntimeError(f"start ({inverse_pre_pad}) + length ({channels}) exceeds "
                               f"dimension size ({channels + size - 1}).")
        ratio = grad_output * output / ctx.scale
        # the ratios sit at offset inverse_pre_pad of a zero band of channels + size - 1;
        # channel c accumulates band entries c .. c + size - 1
        before = zeros(n, inverse_pre_pad, h, w, dtype=input.dtype, device=input.device)
        after = zeros(n, size - 1 - inverse_pre_pad, h, w, dtype=input.dtype,
                      device=input.device)
        band = cat([before, ratio, after], dim=1)
        accum = _window_sums(band, list(range(channels)),
                             [c + size - 1 for c in range(channels)])
        grad_input = ctx.scale.pow(-ctx.beta) * grad_output - cache_ratio_value * input * accum
        return grad_input, None, None, None, None


def running_dtype(input):
    """The statistics' dtype: float32 for half-precision inputs, as batch_norm_stats's."""
    return input.dtype if input.dtype.itemsize >= 4 else _dt.float32


class SyncBatchNormFunction(Function):
    @staticmethod
    def forward(ctx, input, weight, bias, running_mean, running_var, eps, momentum,
                process_group, world_size):
        from ... import distributed as dist
        input = input.contiguous()
        channels = input.shape[1]
        if input.numel():
            mean, invstd = _ops.batch_norm_stats(input, eps)
        else:  # an empty batch counts 0 and weighs nothing in the global statistics
            mean = invstd = _ops.zeros(channels, dtype=running_dtype(input), device=input.device)
        count = _ops.full((1,), input.numel() // channels, dtype=mean.dtype,
                          device=input.device)
        mine = _ops.cat([mean, invstd, count])
        everyone = _ops.empty(world_size * mine.numel(), dtype=mine.dtype, device=input.device)
        dist.all_gather_into_tensor(everyone, mine, group=process_group)  # (gloo: concatenated)
        means, invstds, counts = _ops.split(everyone.view(world_size, -1),
                                            [channels, channels, 1], dim=1)
        mean, invstd = _ops.batch_norm_gather_stats_with_counts(
            input, means, invstds, running_mean, running_var, momentum, eps, counts.reshape(-1))
        ctx.save_for_backward(input, weight, mean, invstd, counts.reshape(-1).to(_dt.int32))
        ctx.process_group = process_group
        return _ops.batch_norm_elemt(input, weight, bias, mean, invstd, eps)

    @staticmethod
    def backward(ctx, grad_output):
        from ... import distributed as dist
        grad_output = grad_output.contiguous()
        input, weight, mean, invstd, counts = ctx.saved_tensors
        need_input, need_weight, need_bias = ctx.needs_input_grad[:3]
        sum_dy, sum_dy_xmu, grad_weight, grad_bias = _ops.batch_norm_backward_reduce(
            grad_output, input, mean, invstd, weight, need_input, need_weight, need_bias)
        grad_input = None
        if need_input:
            channels = input.shape[1]
            sums = _ops.cat([sum_dy, sum_dy_xmu])
            dist.all_reduce(sums, group=ctx.process_group)
            sum_dy, sum_dy_xmu = _ops.split(sums, channels)
            grad_input = _ops.batch_norm_backward_elemt(grad_output, input, mean, invstd, weight,
                                                        sum_dy, sum_dy_xmu, counts)
        if weight is None or not need_weight:
            grad_weight = None
        if weight is None or not need_bias:
            grad_bias = None
        return grad_input, grad_weight, grad_bias, None, None, None, None, None, None
