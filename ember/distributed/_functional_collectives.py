"""`torch.distributed._functional_collectives`: collectives that return a new tensor instead
of writing their input. `group` is a ProcessGroup, a list of ranks, a DeviceMesh (one
dimension) or a (DeviceMesh, mesh_dim) pair. ember runs them at once, so `wait_tensor`
has nothing to wait for and returns its tensor. The `_autograd` forms have gradients: an
all-to-all's backward is the all-to-all with the split sizes swapped, an all-gather's a
reduce-scatter."""
from .. import autograd as _autograd
from .. import ops as _ops
from . import distributed_c10d as _c10d

__all__ = ["all_reduce", "all_gather_tensor", "all_gather_tensor_autograd",
           "reduce_scatter_tensor", "all_to_all_single", "all_to_all_single_autograd",
           "broadcast", "wait_tensor"]

_OPS = {"sum": "SUM", "avg": "AVG", "max": "MAX", "min": "MIN", "product": "PRODUCT"}


def _resolve(group):
    from .device_mesh import DeviceMesh
    if isinstance(group, DeviceMesh):
        if group.ndim != 1:
            raise ValueError("Only 1D mesh is supported, pass in (DeviceMesh, int) together "
                             "if mesh > 1D")
        return group.get_group(0)
    if isinstance(group, tuple) and len(group) == 2 and isinstance(group[0], DeviceMesh):
        return group[0].get_group(group[1])
    if isinstance(group, list):
        if group and isinstance(group[0], list):
            raise ValueError("a list of rank lists names several groups: pass one")
        if sorted(group) == list(range(_c10d.get_world_size())):
            return _c10d.group.WORLD
        return _c10d.new_group(group)
    return group


def _op(reduce_op):
    name = _OPS.get(str(reduce_op).lower())
    if name is None:
        raise ValueError(f"Unrecognized reduce_op {reduce_op!r}")
    return getattr(_c10d.ReduceOp, name)


def wait_tensor(tensor):
    """The collective that made `tensor` has already finished: `tensor` itself."""
    return tensor


def all_reduce(self, reduceOp, group, tag=""):
    out = self.contiguous().clone()
    _c10d.all_reduce(out, op=_op(reduceOp), group=_resolve(group))
    return out


def broadcast(self, src, group, tag=""):
    out = self.contiguous().clone()
    _c10d.broadcast(out, src=src, group=_resolve(group))
    return out


def all_gather_tensor(self, gather_dim, group, tag=""):
    """Every rank's tensor, concatenated along `gather_dim` in rank order."""
    pg = _resolve(group)
    pieces = [_ops.empty_like(self) for _ in range(_c10d.get_world_size(pg))]
    _c10d.all_gather(pieces, self.contiguous(), group=pg)
    return _ops.cat(pieces, dim=gather_dim)


def reduce_scatter_tensor(self, reduceOp, scatter_dim, group, tag=""):
    """The reduction across ranks, split along `scatter_dim`: rank r keeps piece r."""
    pg = _resolve(group)
    n = _c10d.get_world_size(pg)
    if self.size(scatter_dim) % n:
        raise AssertionError(f"input dimension {scatter_dim} ({self.size(scatter_dim)}) must "
                             f"be a multiple of group_size {n}")
    total = all_reduce(self, reduceOp, pg)
    return total.chunk(n, dim=scatter_dim)[_c10d.get_rank(pg)].contiguous()


def all_to_all_single(self, output_split_sizes, input_split_sizes, group, tag=""):
    """Rows of dimension 0 sent out by `input_split_sizes` (rank order), received by
    `output_split_sizes`; None splits evenly."""
    pg = _resolve(group)
    n = _c10d.get_world_size(pg)
    rows = sum(output_split_sizes) if output_split_sizes is not None else self.size(0)
    if output_split_sizes is None and rows % n:
        raise AssertionError("all_to_all_single: an even split needs dimension 0 to be a "
                             f"multiple of the group size {n}")
    out = self.new_empty((rows, *self.shape[1:]))
    _c10d.all_to_all_single(out, self.contiguous(), output_split_sizes, input_split_sizes,
                            group=pg)
    return out


class _AllToAll(_autograd.Function):
    @staticmethod
    def forward(ctx, x, output_split_sizes, input_split_sizes, group):
        ctx.splits, ctx.group = (output_split_sizes, input_split_sizes), group
        return all_to_all_single(x, output_split_sizes, input_split_sizes, group)

    @staticmethod
    def backward(ctx, grad):
        out_sizes, in_sizes = ctx.splits
        return all_to_all_single(grad, in_sizes, out_sizes, ctx.group), None, None, None


def all_to_all_single_autograd(self, output_split_sizes, input_split_sizes, group, tag=""):
    return _AllToAll.apply(self, output_split_sizes, input_split_sizes, _resolve(group))


class _AllGather(_autograd.Function):
    @staticmethod
    def forward(ctx, x, gather_dim, group):
        ctx.gather_dim, ctx.group = gather_dim, group
        return all_gather_tensor(x, gather_dim, group)

    @staticmethod
    def backward(ctx, grad):
        return reduce_scatter_tensor(grad, "sum", ctx.gather_dim, ctx.group), None, None


def all_gather_tensor_autograd(self, gather_dim, group, tag=""):
    return _AllGather.apply(self, gather_dim, _resolve(group))
