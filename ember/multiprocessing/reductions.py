"""How tensors pickle between processes (queues, pipes, pools and the arguments of spawned
processes: `init_reductions` registers `reduce_tensor` with multiprocessing's ForkingPickler).

A CPU tensor in shared memory (`share_memory_()`, `Module.share_memory()`) crosses as its
memory: the descriptor of the memfd behind it (multiprocessing's DupFd hands it over) and the
tensor's place in it, so the receiver's tensor is the same memory, as PyTorch's
file_descriptor strategy gives, and Hogwild training under the spawn and forkserver start
methods updates one set of weights. Any other tensor crosses by value (the host array,
dtype, device and requires_grad): the receiver gets a copy. Storages pickle by value."""
from multiprocessing.reduction import DupFd, ForkingPickler

import numpy as np

from .._tensor import Tensor, _data_ptr, _rebuild
from ..ops.memory import SharedBuffer, _memory_owner

__all__ = ["init_reductions", "rebuild_tensor", "reduce_tensor"]


def rebuild_tensor(cls, array, device, requires_grad, state):
    """The tensor `reduce_tensor` described, rebuilt in this process."""
    return _rebuild(cls, array, device, requires_grad, state)


def rebuild_shared_tensor(cls, fd, nbytes, offset, shape, strides, dtype, requires_grad,
                          state):
    """A tensor over the sender's shared memory: `fd` (a DupFd) mapped here."""
    buffer = SharedBuffer.from_fd(fd.detach(), nbytes)
    flat = np.frombuffer(buffer, dtype, nbytes // dtype.itemsize)
    array = np.lib.stride_tricks.as_strided(
        np.frombuffer(buffer, np.uint8)[offset:].view(dtype), shape, strides)
    t = _rebuild(cls, array, "cpu", requires_grad, state)
    t.__dict__["_storage"] = flat  # the storage is the whole mapping, as the sender's
    return t


def reduce_tensor(tensor):
    """(rebuild function, its arguments) for `tensor`: a non-leaf that requires grad cannot
    cross, as in PyTorch (its graph stays behind)."""
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                           "since autograd does not support crossing process boundaries.  If "
                           "you just want to transfer the data, call detach() on the tensor "
                           "before serializing (e.g., putting it on the queue).")
    _, args = tensor.__reduce_ex__(2)
    array = tensor._array
    owner = _memory_owner(array) if tensor.device.type == "cpu" else None
    if isinstance(owner, SharedBuffer) and array.size:
        cls, _, _, requires_grad, state = args
        offset = _data_ptr(array) - _data_ptr(np.frombuffer(owner, np.uint8))
        return rebuild_shared_tensor, (cls, DupFd(owner.fd), len(owner), offset, array.shape,
                                       array.strides, array.dtype, requires_grad, state)
    return rebuild_tensor, args


def init_reductions():
    """Storages need no entry: they pickle by value already."""
    ForkingPickler.register(Tensor, reduce_tensor)
