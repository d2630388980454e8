"""`torch.distributed.tensor.parallel.loss`: `loss_parallel`, the cross-entropy of logits
sharded on the class dimension without gathering them.

Inside the context, `F.cross_entropy` and `nn.CrossEntropyLoss` given a DTensor of logits
sharded on the class dimension over a 1-d mesh compute on the local logits: the maximum, the
sum of exponentials and the target's logit are reduced over the mesh (the sums as Partial
DTensors made Replicate, whose gradient each rank keeps), so each rank's gradient is its
shard's softmax minus its shard's one-hot. PyTorch returns the loss as a replicated DTensor;
ember, whose DTensor is not a Tensor, returns the replicated loss as a Tensor, so that
`loss.backward()` and `loss.item()` work as users call them."""
import contextlib

from ... import distributed_c10d as _c10d
from ....nn import functional as _F
from ....ops import loss as _loss_ops
from .._api import DTensor
from .._utils import compute_local_shape_and_global_offset
from ..placement_types import Partial, Replicate

__all__ = ["loss_parallel"]


@contextlib.contextmanager
def loss_parallel():
    """Within it, the cross-entropy of class-sharded DTensor logits is computed in parallel
    (see the module's docstring); other inputs take the ordinary path."""
    original = (_F.cross_entropy, _loss_ops.cross_entropy)

    def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                      reduce=None, reduction="mean", label_smoothing=0.0):
        if not isinstance(input, DTensor):
            return original[1](input, target, weight, size_average, ignore_index, reduce,
                               reduction, label_smoothing)
        return _parallel_cross_entropy(input, target, weight, ignore_index,
                                       _reduction(size_average, reduce, reduction),
                                       label_smoothing)

    _F.cross_entropy = _loss_ops.cross_entropy = cross_entropy
    try:
        yield
    finally:
        _F.cross_entropy, _loss_ops.cross_entropy = original


def _reduction(size_average, reduce, reduction):
    if size_average is None and reduce is None:
        return reduction
    if reduce is False:
        return "none"
    return "sum" if size_average is False else "mean"


def _summed(local, mesh):
    """The sum over the mesh of each rank's `local`; each rank's gradient passes through."""
    return DTensor.from_local(local, mesh, [Partial()]).redistribute(
        mesh, [Replicate()]).to_local()


def _parallel_cross_entropy(input, target, weight, ignore_index, reduction,
                            label_smoothing):
    mesh = input.device_mesh
    class_dim = 1 if input.dim() >= 2 else 0
    placements = input.placements
    shards = [i for i, p in enumerate(placements) if p.is_shard(class_dim)]
    if len(shards) != 1:
        raise ValueError(f"loss_parallel() requires exactly one mesh dim to shard tensor "
                         f"dimension {class_dim}, but got placements {placements} with "
                         f"{len(shards)} such mesh dim(s).")
    if mesh.ndim != 1:
        raise NotImplementedError("ember: loss_parallel over a multi-dimensional mesh is "
                                  "not supported")
    if label_smoothing:
        raise NotImplementedError("ember: loss_parallel with label_smoothing is not "
                                  "supported (PyTorch's does not support it either)")
    if isinstance(target, DTensor):
        target = target.redistribute(mesh, [Replicate()]).to_local()
    if target.is_floating_point():
        raise NotImplementedError("ember: loss_parallel with class probabilities as the "
                                  "target is not supported")
    if isinstance(weight, DTensor):
        weight = weight.full_tensor()
    logits = input.to_local()
    local_classes = logits.shape[class_dim]
    start = _class_offset(input, class_dim)
    # log p(target) = logit(target) - max - log(sum exp(logits - max)), each over the mesh
    top = logits.detach().amax(class_dim, keepdim=True)
    _c10d.all_reduce(top, op=_c10d.ReduceOp.MAX, group=mesh.get_group(0))
    sum_exp = _summed((logits - top).exp().sum(class_dim, keepdim=True), mesh)
    shifted = target - start
    mine = (shifted >= 0) & (shifted < local_classes)
    picked = logits.gather(class_dim, (shifted * mine).unsqueeze(class_dim))
    picked = _summed(picked * mine.unsqueeze(class_dim).to(picked.dtype), mesh)
    losses = (top + sum_exp.log() - picked).squeeze(class_dim)
    kept = (target != ignore_index).to(losses.dtype)
    scale = kept if weight is None else weight[target * (target != ignore_index)] * kept
    losses = losses * scale
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    return losses.sum() / scale.sum()


def _class_offset(input, class_dim):
    return compute_local_shape_and_global_offset(input.shape, input.device_mesh,
                                                 input.placements)[1][class_dim]
