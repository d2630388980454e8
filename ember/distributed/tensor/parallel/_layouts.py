"""What the parallel styles compute with: parameters laid out on the mesh, activations moved
between layouts at a module's boundary, and the gradient reductions that PyTorch's DTensor
would do by sharding propagation.

ember's DTensor does not dispatch ops, so a parallelized module computes on its local
shards: its parameters are FSDP's sharded-parameter representation (a Tensor holding this
rank's piece that also is a DTensor, see `fsdp._param`), its inputs are turned into the
local tensors of the layout the style needs, and its output into the DTensor of the layout
the local computation produced. The layout changes go through `DTensor.redistribute`, whose
gradients are PyTorch's; where PyTorch's gradient would be a Partial that its DTensor sums
when it meets a Replicate or Shard layout, `_AllReduceGrad` sums it (Megatron's "f")."""
from ... import distributed_c10d as _c10d
from ....autograd import Function
from ...fsdp._param import make_sharded_parameter, sharded_like
from .._api import DTensor, _normalize, distribute_tensor
from ..placement_types import Replicate

__all__ = []


def _all_reduce(tensor, mesh):
    out = tensor.contiguous().clone()
    _c10d.all_reduce(out, group=mesh.get_group(0))
    return out


class _AllReduceGrad(Function):
    """Identity forward; backward sums the gradient over the mesh: a replicated tensor read
    by a computation whose other operand is sharded gets a summand of its gradient on each
    rank."""

    @staticmethod
    def forward(ctx, tensor, mesh):
        ctx.mesh = mesh
        return tensor.detach()

    @staticmethod
    def backward(ctx, grad):
        return _all_reduce(grad, ctx.mesh), None


def all_reduce_grad(tensor, mesh):
    if not tensor.requires_grad or mesh.size() == 1:
        return tensor
    return _AllReduceGrad.apply(tensor, mesh)


def layouts_equal(a, b, ndim):
    return _normalize(a, ndim) == _normalize(b, ndim)


def to_dtensor(tensor, mesh, layout):
    """`tensor` as a DTensor: a DTensor as it is, a Tensor taken as this rank's local tensor
    of `layout` (shards assumed even, as `DTensor.from_local` does)."""
    if isinstance(tensor, DTensor):
        return tensor
    return DTensor.from_local(tensor, mesh, tuple(layout))


def redistribute(dtensor, mesh, layout):
    if layouts_equal(dtensor.placements, layout, dtensor.ndim):
        return dtensor
    return dtensor.redistribute(mesh, tuple(layout))


def local_of(tensor, mesh, layout, desired):
    """This rank's local tensor of `desired` for an input given as `tensor` (a DTensor, or
    the local tensor of `layout`)."""
    return redistribute(to_dtensor(tensor, mesh, layout), mesh, desired).to_local()


def _wrap_grad(param):
    """The gradient as a DTensor of the parameter's layout, as PyTorch's is."""
    grad = param.grad
    if grad is not None and not isinstance(grad, DTensor):
        param.grad = sharded_like(grad, param)


def distributed_parameter(param, mesh, placements, src_data_rank=0):
    """`param` laid out as `placements` on `mesh` (its data taken from group rank
    `src_data_rank`, or this rank's own when None): a Parameter of this rank's piece that is
    a DTensor, whose gradients are DTensors of the same layout."""
    dt = distribute_tensor(param.detach(), mesh, placements, src_data_rank=src_data_rank)
    return _parameter_of(dt.to_local(), mesh, dt.placements, dt.shape, param.requires_grad)


def replicated_parameter(param, mesh):
    """`param` as a Replicate DTensor Parameter without communication (each rank's own
    value, as `DTensor.from_local(param, mesh, [Replicate()])`). Used by computations on
    shards of the activations, so each rank's gradient is a summand: they are summed."""
    out = _parameter_of(param.detach(), mesh, (Replicate(),) * mesh.ndim, param.shape,
                        param.requires_grad)
    if out.requires_grad and mesh.size() > 1:
        out.register_hook(lambda grad: _all_reduce(grad, mesh))
    return out


def _parameter_of(local, mesh, placements, shape, requires_grad):
    out = make_sharded_parameter(local, mesh, placements, shape, requires_grad)
    if requires_grad:
        out.register_post_accumulate_grad_hook(_wrap_grad)
    return out
