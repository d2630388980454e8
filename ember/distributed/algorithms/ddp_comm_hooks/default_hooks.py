"""PyTorch's default DDP communication hooks. A hook takes (state, bucket) and returns a
`torch.futures.Future` of the bucket's reduced flat gradient; `state` here is the process
group (None: the default group)."""
import functools

from ... import distributed_c10d as dist
from .... import dtypes as _dt

__all__ = ["allreduce_hook", "fp16_compress_hook", "bf16_compress_hook",
           "fp16_compress_wrapper", "bf16_compress_wrapper"]


def _allreduce_fut(process_group, tensor):
    """A future of `tensor` averaged over the group (divided first, then summed)."""
    group = process_group if process_group is not None else dist.group.WORLD
    tensor.div_(dist.get_world_size(group))
    return dist.all_reduce(tensor, group=group, async_op=True).get_future().then(
        lambda fut: fut.value()[0])


def allreduce_hook(process_group, bucket):
    """What DDP does without a hook: the bucket averaged over the group."""
    return _allreduce_fut(process_group, bucket.buffer())


def _compress_hook(dtype, process_group, bucket):
    buffer = bucket.buffer()
    compressed = buffer.to(dtype)

    def decompress(fut):
        buffer.copy_(fut.value())  # back in the bucket's dtype, in its own memory
        return buffer
    return _allreduce_fut(process_group, compressed).then(decompress)


def fp16_compress_hook(process_group, bucket):
    """The bucket sent as float16 (half the bytes), averaged, and cast back."""
    return _compress_hook(_dt.float16, process_group, bucket)


def bf16_compress_hook(process_group, bucket):
    """The bucket sent as bfloat16, averaged, and cast back."""
    return _compress_hook(_dt.bfloat16, process_group, bucket)


def _compress_wrapper(dtype, hook):
    @functools.wraps(hook)
    def wrapped(state, bucket):
        buffer = bucket.buffer()
        bucket.set_buffer(buffer.to(dtype))
        fut = hook(state, bucket)

        def decompress(fut):
            buffer.copy_(fut.value())
            return buffer
        return fut.then(decompress)
    return wrapped


def fp16_compress_wrapper(hook):
    """`hook` run on the bucket cast to float16, its result cast back."""
    return _compress_wrapper(_dt.float16, hook)


def bf16_compress_wrapper(hook):
    """`hook` run on the bucket cast to bfloat16, its result cast back."""
    return _compress_wrapper(_dt.bfloat16, hook)
