"""SyncBatchNorm's training step across processes, as an autograd Function: forward
all-gathers each process's per-channel (mean, invstd, count) and normalises with the global
statistics (updating the running ones); backward all-reduces the per-channel sums the input
gradient needs. Both collectives are `process_group`'s, so every rank of it must run the
layer in step, as with PyTorch's."""
from ... import dtypes as _dt
from ... import ops as _ops
from ...autograd.function import Function

__all__ = ["SyncBatchNormFunction"]


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
