"""Gradient norms over gradients spread across ranks: FSDP1's `clip_grad_norm_` and
`nn.utils.clip_grad_norm_` / `get_total_norm` on DTensor gradients (FSDP2's).

Each rank reduces its own pieces to one number (the sum of |x|^p, or the max / min for the
infinite orders, or the count of nonzeros for order 0); ranks holding different pieces of
the same tensors combine theirs with one all-reduce; replicated pieces are counted once.
PyTorch returns the norm of DTensor gradients as a DTensor (Replicate, or Partial(max) for
the infinity norm); here its local value is the global norm on every rank, so `item()`,
`to_local()` and `full_tensor()` all give it."""
import math

from .. import dtypes as _dt
from .. import ops as _ops
from .._tensor import Tensor
from ..autograd.grad_mode import no_grad
from . import distributed_c10d as _c10d
from .tensor import DTensor, Partial, Replicate, Shard

__all__ = []


def _kind(p):
    return "max" if p == math.inf else "min" if p == -math.inf else "count" if p == 0 else "sum"


_REDUCE = {"max": "MAX", "min": "MIN", "count": "SUM", "sum": "SUM"}


def _local(tensors, p, dtype, device):
    """This rank's reduction of `tensors` for the norm of order `p`, a 0-d tensor."""
    kind = _kind(p)
    values = []
    for t in tensors:
        t = t.detach().to(dtype)
        if kind == "max":
            values.append(t.abs().max() if t.numel() else _ops.zeros((), dtype=dtype))
        elif kind == "min":
            values.append(t.abs().min() if t.numel() else _ops.full((), math.inf, dtype=dtype))
        elif kind == "count":
            values.append((t != 0).sum().to(dtype))
        elif p == 2:
            values.append(t.norm().pow(2))
        else:
            values.append(t.abs().pow(p).sum())
    if not values:
        start = {"max": 0.0, "min": math.inf}.get(kind, 0.0)
        return _ops.full((), start, dtype=dtype, device=device)
    stacked = _ops.stack([v.to(device) for v in values])
    return {"max": stacked.max, "min": stacked.min}.get(kind, stacked.sum)()


def reduced_norm(parts, norm_type):
    """The norm of order `norm_type` of every tensor in `parts`, a list of (groups,
    tensors): each rank holds its own pieces of those tensors, to be combined over
    `groups` (a process group, a list of them, or None for tensors whole on every rank)."""
    p = float(norm_type)
    kind = _kind(p)
    tensors = [t for _, ts in parts for t in ts]
    dtype = tensors[0].dtype if tensors else _dt.float32
    device = tensors[0].device if tensors else None
    totals = []
    with no_grad():
        for groups, ts in parts:
            value = _local(ts, p, dtype, device)
            for group in groups if isinstance(groups, list) else [groups]:
                if group is not None and _c10d.get_world_size(group) > 1:
                    _c10d.all_reduce(value, op=getattr(_c10d.ReduceOp, _REDUCE[kind]),
                                     group=group)
            totals.append(value)
        if not totals:
            return _ops.zeros((), dtype=dtype)
        stacked = _ops.stack(totals)
        total = {"max": stacked.max, "min": stacked.min}.get(kind, stacked.sum)()
        return total if kind != "sum" else total.pow(1.0 / p)


def _local_tensor(t):
    return Tensor.detach(t) if isinstance(t, Tensor) else t.to_local().detach()


def dtensor_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False):
    """`get_total_norm` of DTensors: a DTensor, whose local value is the global norm."""
    from .fsdp._param import _sharded, _ShardedTensor
    if any(not isinstance(t, DTensor) for t in tensors):
        raise RuntimeError("aten._foreach_norm.Scalar got mixed torch.Tensor and DTensor, need "
                           "to convert all torch.Tensor to DTensor before calling distributed "
                           "operators!")
    groups = {}
    for t in tensors:
        mesh = t.device_mesh
        if any(isinstance(pl, Partial) for pl in t.placements):
            raise NotImplementedError("ember: the norm of a Partial DTensor gradient")
        dims = tuple(d for d, pl in enumerate(t.placements) if isinstance(pl, Shard))
        key = (id(mesh), dims)
        groups.setdefault(key, ([mesh.get_group(d) for d in dims], []))[1].append(
            _local_tensor(t))
    total = reduced_norm(list(groups.values()), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(f"The total norm of order {float(norm_type)} for gradients from "
                           "`parameters` is non-finite, so it cannot be clipped. To disable "
                           "this error and scale the gradients by the non-finite norm anyway, "
                           "set `error_if_nonfinite=False`")
    mesh = tensors[0].device_mesh
    placement = Partial("max") if float(norm_type) == math.inf else Replicate()
    return _sharded(_ShardedTensor, total, DTensor(total, mesh, [placement] * mesh.ndim, ()))
