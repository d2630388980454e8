"""How tensors and storages pickle between processes. ember sends them by value (the host
array, dtype, device and requires_grad): the receiver gets a copy on the same device, not
shared memory. `init_reductions` registers these with multiprocessing's ForkingPickler, which
queues, pipes and pools use; storages pickle by value as they are."""
from multiprocessing.reduction import ForkingPickler

from .._tensor import Tensor

__all__ = ["init_reductions", "rebuild_tensor", "reduce_tensor"]


def rebuild_tensor(cls, array, device, requires_grad, state):
    """The tensor `reduce_tensor` described, rebuilt in this process."""
    from .._tensor import _rebuild
    return _rebuild(cls, array, device, requires_grad, state)


def reduce_tensor(tensor):
    """(rebuild_tensor, its arguments) for `tensor`: a non-leaf that requires grad cannot
    cross, as in PyTorch (its graph stays behind)."""
    if tensor.requires_grad and not tensor.is_leaf:
        raise RuntimeError("Cowardly refusing to serialize non-leaf tensor which requires_grad, "
                           "since autograd does not support crossing process boundaries.  If "
                           "you just want to transfer the data, call detach() on the tensor "
                           "before serializing (e.g., putting it on the queue).")
    _, args = tensor.__reduce_ex__(2)
    return rebuild_tensor, args


def init_reductions():
    """Storages need no entry: they pickle by value already."""
    ForkingPickler.register(Tensor, reduce_tensor)
