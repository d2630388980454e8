"""`torch.distributed.nn.functional`: the collectives as differentiable functions. Each
returns new tensors (its input is left alone) and its backward is the collective that
carries the gradients back, as PyTorch defines them:

    broadcast       <->  reduce (SUM) to the source; other ranks' input gradient is zero
    reduce          <->  broadcast from the destination
    gather          <->  scatter from the destination
    scatter         <->  gather to the source
    all_gather      <->  the gradients' sum over ranks of this rank's part (reduce_scatter;
                         all_to_all then a sum, outside NCCL)
    reduce_scatter  <->  all_gather
    all_to_all(_single) <->  all_to_all(_single) the other way
    all_reduce      <->  all_reduce of the gradients with the same op

The functions PyTorch deprecates in favour of torch.distributed._functional_collectives warn
as it does; none runs under torch.compile."""
import warnings

from ... import compiler as _compiler
from ... import ops as _ops
from ..._memory_format import contiguous_format
from ...autograd import Function
from .. import distributed_c10d as dist
from ..distributed_c10d import ReduceOp, group

__all__ = ["broadcast", "gather", "scatter", "reduce", "reduce_scatter", "all_gather",
           "all_to_all", "all_to_all_single", "all_reduce"]


def _not_supported_under_compile(name, *, suggestion=None):
    message = f"torch.distributed.nn.functional.{name} is not supported under torch.compile."
    if suggestion:
        message += f" Use {suggestion} instead."
    raise RuntimeError(message)


def _check(name, suggestion=None, deprecated=True):
    if _compiler.is_compiling():
        _not_supported_under_compile(name, suggestion=suggestion)
    if deprecated:
        warnings.warn(f"torch.distributed.nn.functional.{name} is deprecated, use "
                      f"{suggestion} instead.", category=FutureWarning, stacklevel=3)


def broadcast(tensor, src, group=group.WORLD):
    """The tensor of rank `src`, on every rank of the group."""
    _check("broadcast", "torch.distributed._functional_collectives.broadcast")
    return _Broadcast.apply(src, group, tensor)


def gather(tensor, dst=0, group=group.WORLD):
    """A tuple of every rank's tensor, on rank `dst` (zeros elsewhere)."""
    _check("gather", deprecated=False)
    return _Gather.apply(dst, group, tensor)


def scatter(tensors, src=0, group=group.WORLD):
    """The `tensors` of rank `src`, one to each rank (the others pass None)."""
    _check("scatter", deprecated=False)
    return _Scatter.apply(src, group, *tensors)


def reduce(tensor, dst, op=ReduceOp.SUM, group=group.WORLD):
    """The reduction of every rank's tensor, on rank `dst`."""
    _check("reduce", deprecated=False)
    return _Reduce.apply(dst, op, group, tensor)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=group.WORLD):
    """Rank i gets the reduction of every rank's `input_list[i]` (written into `output`)."""
    _check("reduce_scatter", "torch.distributed._functional_collectives.reduce_scatter_single")
    return _Reduce_Scatter.apply(op, group, output, *input_list)


def all_gather(tensor, group=group.WORLD):
    """A tuple of every rank's tensor, on every rank."""
    _check("all_gather", "torch.distributed._functional_collectives.all_gather_single")
    return _AllGather.apply(group, tensor)


def _all_gather_base(output_tensor, input_tensor, group=group.WORLD):
    """Every rank's tensor, concatenated along dim 0 into `output_tensor`."""
    _check("_all_gather_base", deprecated=False)
    return _AllGatherBase.apply(output_tensor, input_tensor, group)


def all_to_all(output_tensor_list, input_tensor_list, group=group.WORLD):
    """Rank i sends `input_tensor_list[j]` to rank j, which gets it as its
    `output_tensor_list[i]`; returns the tuple of received tensors."""
    _check("all_to_all", deprecated=False)
    return _AlltoAll.apply(group, output_tensor_list, *input_tensor_list)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=group.WORLD):
    """all_to_all over the pieces of one tensor split along dim 0 (equally, or by the
    sizes given), gathered into `output`."""
    _check("all_to_all_single", "torch.distributed._functional_collectives.all_to_all_single")
    return _AlltoAllSingle.apply(group, output, output_split_sizes, input_split_sizes, input)


def all_reduce(tensor, op=ReduceOp.SUM, group=group.WORLD):
    """The reduction of every rank's tensor, on every rank (the same on all)."""
    _check("all_reduce", "torch.distributed._functional_collectives.all_reduce")
    return _AllReduce.apply(op, group, tensor)


def _is_nccl_like(group):
    return dist.get_backend(group=group) in ("nccl", "xccl")


class _Broadcast(Function):
    @staticmethod
    def forward(ctx, src, group, tensor):
        ctx.src, ctx.group = src, group
        ctx.rank = dist.get_rank(group=group)
        tensor = tensor.clone()
        dist.broadcast(tensor, src, group=group)
        return tensor

    @staticmethod
    def backward(ctx, grad_output):
        gx = _Reduce.apply(ctx.src, ReduceOp.SUM, ctx.group, grad_output)
        if ctx.src != ctx.rank:
            gx.zero_()  # only the source's tensor was sent
        return None, None, gx


class _Gather(Function):
    @staticmethod
    def forward(ctx, dst, group, tensor):
        ctx.dst, ctx.group = dst, group
        tensor_list = [_ops.zeros_like(tensor)
                       for _ in range(dist.get_world_size(group=group))]
        tensor = tensor.contiguous()
        if dist.get_rank(group=group) == dst:
            dist.gather(tensor, tensor_list, dst, group=group)
        else:
            dist.gather(tensor, None, dst, group=group)
        return tuple(tensor_list)

    @staticmethod
    def backward(ctx, *grad_outputs):
        return (None, None, _Scatter.apply(ctx.dst, ctx.group, *grad_outputs))


class _Scatter(Function):
    @staticmethod
    def forward(ctx, src, group, *tensors):
        ctx.src, ctx.group = src, group
        if not all(t.size() == tensors[0].size() for t in tensors):
            raise AssertionError
        output = _ops.zeros_like(tensors[0])
        if dist.get_rank(group=group) == src:
            dist.scatter(output, list(tensors), src, group=group)
        else:
            dist.scatter(output, None, src, group=group)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        return (None, None) + _Gather.apply(ctx.src, ctx.group, grad_output)


class _Reduce(Function):
    @staticmethod
    def forward(ctx, src, op, group, tensor):
        ctx.src, ctx.group = src, group
        tensor = tensor.clone()
        dist.reduce(tensor, src, op=op, group=group)
        return tensor

    @staticmethod
    def backward(ctx, grad_output):
        return (None, None, None, _Broadcast.apply(ctx.src, ctx.group, grad_output))


class _Reduce_Scatter(Function):
    @staticmethod
    def forward(ctx, op, group, tensor, *input_tensor_list):
        ctx.group = group
        tensor = tensor.contiguous()
        inputs = [t.contiguous() for t in input_tensor_list]
        dist.reduce_scatter(tensor, inputs, op=op, group=group)
        return tensor

    @staticmethod
    def backward(ctx, grad_output):
        return (None, None, None) + _AllGather.apply(ctx.group, grad_output)


class _AllGather(Function):
    @staticmethod
    def forward(ctx, group, tensor):
        tensor = tensor.contiguous()
        ctx.group = group
        out = [_ops.empty_like(tensor) for _ in range(dist.get_world_size(group=group))]
        dist.all_gather(out, tensor, group=group)
        return tuple(out)

    @staticmethod
    def backward(ctx, *grad_outputs):
        if _is_nccl_like(ctx.group):
            rank = dist.get_rank(group=ctx.group)
            gx = _ops.empty_like(grad_outputs[rank])
            gx = _Reduce_Scatter.apply(ReduceOp.SUM, ctx.group, gx, *grad_outputs)
        else:
            received = [_ops.empty_like(t) for t in grad_outputs]
            gxs = _AlltoAll.apply(ctx.group, received, *grad_outputs)
            gx = _ops.sum(_ops.stack(gxs), dim=0)
        return None, gx


class _AllGatherBase(Function):
    @staticmethod
    def forward(ctx, output_tensor, input_tensor, group):
        ctx.group = group
        dist.all_gather_into_tensor(output_tensor, input_tensor.contiguous(), group=group)
        return output_tensor

    @staticmethod
    def backward(ctx, grad_output):
        if not _is_nccl_like(ctx.group):
            raise RuntimeError("Backend not supported!")
        world = dist.get_world_size(group=ctx.group)
        size = list(grad_output.size())
        if size[0] % world != 0:
            raise RuntimeError(f"Tensor with dimensions: {size} does not have first dimension "
                               f"divisible by world_size: {world}")
        size[0] //= world
        gx = _ops.empty(size, device=grad_output.device, dtype=grad_output.dtype)
        dist.reduce_scatter_tensor(gx, grad_output, ReduceOp.SUM, ctx.group)
        return None, gx, None


class _AlltoAll(Function):
    @staticmethod
    def forward(ctx, group, out_tensor_list, *tensors):
        ctx.group = group
        world = dist.get_world_size(group=group)
        ctx.input_tensor_size_list = [tensors[i].size() for i in range(world)]
        tensors = [t.contiguous() for t in tensors]
        dist.all_to_all(out_tensor_list, tensors, group=group)
        return tuple(out_tensor_list)

    @staticmethod
    def backward(ctx, *grad_outputs):
        like = grad_outputs[0]
        received = [_ops.empty(size, device=like.device, dtype=like.dtype)
                    for size in ctx.input_tensor_size_list]
        return (None, None) + _AlltoAll.apply(ctx.group, received, *grad_outputs)


class _AlltoAllSingle(Function):
    @staticmethod
    def forward(ctx, group, output, output_split_sizes, input_split_sizes, input):
        ctx.group = group
        ctx.input_size = input.size()
        ctx.output_split_sizes, ctx.input_split_sizes = input_split_sizes, output_split_sizes
        dist.all_to_all_single(output, input, output_split_sizes=output_split_sizes,
                               input_split_sizes=input_split_sizes, group=group)
        return output

    @staticmethod
    def backward(ctx, grad_output):
        gx = _ops.empty(ctx.input_size, device=grad_output.device, dtype=grad_output.dtype)
        return (None, None, None, None, _AlltoAllSingle.apply(
            ctx.group, gx, ctx.output_split_sizes, ctx.input_split_sizes,
            grad_output.contiguous()))


class _AllReduce(Function):
    @staticmethod
    def forward(ctx, op, group, tensor):
        ctx.group, ctx.op = group, op
        tensor = tensor.clone(memory_format=contiguous_format)
        dist.all_reduce(tensor, op=op, group=group)
        return tensor

    @staticmethod
    def backward(ctx, grad_output):
        return (None, None, _AllReduce.apply(ctx.op, ctx.group, grad_output))
