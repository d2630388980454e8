"""DTensor: a tensor laid out over a device mesh. Each rank holds a local tensor; the
placements (one per mesh dimension) say how the locals make up the global tensor.

PyTorch's DTensor is a Tensor subclass whose every op is rewritten by sharding propagation.
ember's functions do not dispatch on Tensor subclasses, so ember's DTensor is the layout and
its conversions: `distribute_tensor` / `DTensor.from_local` make one, `to_local`,
`full_tensor` and `redistribute` move between layouts through the mesh's collectives, with
PyTorch's gradients (see `_Redistribute`). Computing on it goes through `to_local()` (or
`full_tensor()`)."""
from ... import autograd as _autograd
from ... import ops as _ops
from .. import distributed_c10d as _c10d
from ..device_mesh import DeviceMesh
from .placement_types import Partial, Placement, Replicate, Shard, _pad, _StridedShard

__all__ = ["DTensor", "distribute_tensor", "distribute_module", "ones", "zeros", "empty",
           "full", "rand", "randn"]

_REDUCE_OPS = {"sum": "SUM", "avg": "AVG", "max": "MAX", "min": "MIN", "product": "PRODUCT"}


# ---- the collectives of one mesh dimension ----------------------------------------------------
def _group_of(mesh, mesh_dim):
    return mesh.get_group(mesh_dim)


def _gather_pieces(local, mesh, mesh_dim, dim, global_size):
    """Every rank's piece along tensor `dim` (rank order of the mesh dimension): all-gather
    needs equal shapes, so each piece is padded to the first (largest) one and cut back."""
    n = mesh.size(mesh_dim)
    sizes = [Shard.local_shard_size_and_offset(global_size, n, r)[0] for r in range(n)]
    padded = _pad(local, dim, sizes[0] - local.size(dim))
    out = [_ops.empty_like(padded) for _ in range(n)]
    _c10d.all_gather(out, padded.contiguous(), group=_group_of(mesh, mesh_dim))
    return [piece.narrow(dim, 0, size) for piece, size in zip(out, sizes)]


def _replicate_dim(local, mesh, mesh_dim, placements, global_shape):
    """The local tensor once mesh dimension `mesh_dim` (laid out as `placements[mesh_dim]`)
    is made Replicate."""
    placement = placements[mesh_dim]
    if mesh.size(mesh_dim) == 1 or isinstance(placement, Replicate):
        return local
    if isinstance(placement, Shard):
        pieces = _gather_pieces(local, mesh, mesh_dim, placement.dim,
                                _size_before(global_shape, mesh, placements, mesh_dim))
        return placement._assemble(pieces)
    out = local.contiguous().clone()
    _c10d.all_reduce(out, op=getattr(_c10d.ReduceOp, _REDUCE_OPS[placement.reduce_op]),
                     group=_group_of(mesh, mesh_dim))
    return out


def _size_before(global_shape, mesh, placements, mesh_dim):
    """The size of the tensor dimension that mesh dimension `mesh_dim` shards, as it is
    before that split: earlier mesh dimensions sharding the same tensor dimension split it
    first (nested chunks)."""
    dim = placements[mesh_dim].dim
    size, coordinate = global_shape[dim], mesh.get_coordinate()
    for d in range(mesh_dim):
        if isinstance(placements[d], Shard) and placements[d].dim == dim:
            size = Shard.local_shard_size_and_offset(size, mesh.size(d), coordinate[d])[0]
    return size


def _place_dim(replicated, mesh, mesh_dim, placement):
    """A Replicate local tensor laid out as `placement` on mesh dimension `mesh_dim`."""
    if isinstance(placement, Shard):
        return placement._local_piece(replicated, mesh.size(mesh_dim),
                                      mesh.get_local_rank(mesh_dim))
    if isinstance(placement, Partial) and placement.reduce_op == "sum":
        return replicated / mesh.size(mesh_dim)  # n equal summands
    return replicated  # Replicate, and Partial avg/max/min: each rank's value is the whole


def _redistribute_local(local, mesh, current, target, global_shape):
    """This rank's local tensor of the layout `target`, from its local tensor of `current`.
    Mesh dimensions from the first one that changes onward are gathered (innermost first,
    since later mesh dimensions split the chunks of earlier ones) and laid out again
    (outermost first)."""
    current = list(current)
    changed = [d for d in range(mesh.ndim) if current[d] != target[d]]
    if not changed:
        return local
    for d in reversed(range(changed[0], mesh.ndim)):
        if isinstance(current[d], Shard) or d in changed:
            local = _replicate_dim(local, mesh, d, current, global_shape)
            current[d] = Replicate()
    for d in range(changed[0], mesh.ndim):
        if current[d] != target[d]:
            local = _place_dim(local, mesh, d, target[d])
            current[d] = target[d]
    return local.contiguous()


def _for_gradient(placements):
    """A gradient is never Partial: where the tensor was, its gradient is Replicate."""
    return tuple(Replicate() if isinstance(p, Partial) else p for p in placements)


class _Redistribute(_autograd.Function):
    """Forward: the redistribution. Backward, as PyTorch's: the gradient (laid out as the
    output, Partial read as Replicate) redistributed back to the input's layout (Partial
    again read as Replicate), so a gathered shard's gradient is the rank's piece of the
    replicated gradient and a replicated tensor's gradient is gathered from the shards."""

    @staticmethod
    def forward(ctx, local, mesh, current, target, global_shape):
        ctx.layout = (mesh, current, target, global_shape)
        return _redistribute_local(local.detach(), mesh, current, target, global_shape)

    @staticmethod
    def backward(ctx, grad):
        mesh, current, target, global_shape = ctx.layout
        out = _redistribute_local(grad, mesh, _for_gradient(target), _for_gradient(current),
                                  global_shape)
        return out, None, None, None, None


def _normalize(placements, ndim):
    out = []
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"expected a Placement, got {type(p)}")
        if isinstance(p, Shard) and p.dim < 0:
            p = (_StridedShard(p.dim + ndim, split_factor=p.split_factor)
                 if isinstance(p, _StridedShard)
                 else Shard(p.dim + ndim))
        out.append(p)
    return tuple(out)


class DTensor:
    """A global tensor of `shape` over `device_mesh`, this rank holding `to_local()`."""

    def __init__(self, local_tensor, device_mesh, placements, shape):
        self._local_tensor = local_tensor
        self._mesh = device_mesh
        self._placements = tuple(placements)
        self._shape = _ops_size(shape)

    # ---- making one --------------------------------------------------------------------------
    @staticmethod
    def from_local(local_tensor, device_mesh=None, placements=None, *, run_check=False,
                   shape=None, stride=None):
        """The DTensor whose local tensor on this rank is `local_tensor` (gradients flow
        back to it). Without `shape`, shards are taken to be even: the global size of a
        sharded dimension is the local size times the mesh dimension's size."""
        if device_mesh is None:
            raise RuntimeError("No device mesh is currently active!")
        placements = _normalize(placements or [Replicate()] * device_mesh.ndim,
                                local_tensor.dim())
        if len(placements) != device_mesh.ndim:
            raise ValueError(f"`placements` must have the same length as "
                             f"`device_mesh.ndim`! Found placements length: "
                             f"{len(placements)}, and device_mesh.ndim: {device_mesh.ndim}.")
        if run_check:
            for mesh_dim, p in enumerate(placements):
                if isinstance(p, Replicate) and device_mesh.size(mesh_dim) > 1:
                    local_tensor = local_tensor.detach().clone()
                    _c10d.broadcast(local_tensor, group_src=0,
                                    group=device_mesh.get_group(mesh_dim))
        if shape is None:
            shape = list(local_tensor.shape)
            for mesh_dim, p in enumerate(placements):
                if isinstance(p, Shard):
                    shape[p.dim] *= device_mesh.size(mesh_dim)
        return DTensor(local_tensor, device_mesh, placements, shape)

    # ---- reading it --------------------------------------------------------------------------
    def to_local(self, *, grad_placements=None):
        return self._local_tensor

    def full_tensor(self, *, grad_placements=None):
        """The whole tensor, on every rank of the mesh."""
        return self.redistribute(self._mesh, [Replicate()] * self._mesh.ndim).to_local()

    def redistribute(self, device_mesh=None, placements=None, *, async_op=False,
                     forward_dtype=None, backward_dtype=None):
        """The same global tensor laid out by `placements`."""
        mesh = device_mesh if device_mesh is not None else self._mesh
        if mesh != self._mesh:
            raise NotImplementedError("Cross device mesh comm not supported yet!")
        if placements is None:
            raise RuntimeError("placements is needed for redistribute!")
        target = _normalize(placements, len(self._shape))
        for p in target:
            if isinstance(p, Partial) and not any(q == p for q in self._placements):
                if any(isinstance(q, Partial) for q in self._placements):
                    raise RuntimeError("Can not redistribute between different Partial "
                                       "reduce types")
        local = self._local_tensor
        if forward_dtype is not None:
            local = local.to(forward_dtype)
        if target != self._placements:
            local = _Redistribute.apply(local, mesh, self._placements, target, self._shape)
        return DTensor(local, mesh, target, self._shape)

    # ---- what it is --------------------------------------------------------------------------
    @property
    def placements(self):
        return self._placements

    @property
    def device_mesh(self):
        return self._mesh

    @property
    def shape(self):
        return self._shape

    def size(self, dim=None):
        return self._shape if dim is None else self._shape[dim]

    def dim(self):
        return len(self._shape)

    ndim = property(dim)

    def numel(self):
        count = 1
        for s in self._shape:
            count *= s
        return count

    def stride(self, dim=None):
        """A contiguous global tensor's strides."""
        strides, step = [], 1
        for s in reversed(self._shape):
            strides.append(step)
            step *= max(s, 1)
        strides = tuple(reversed(strides))
        return strides if dim is None else strides[dim]

    @property
    def dtype(self):
        return self._local_tensor.dtype

    @property
    def device(self):
        return self._local_tensor.device

    @property
    def requires_grad(self):
        return self._local_tensor.requires_grad

    def requires_grad_(self, requires_grad=True):
        self._local_tensor.requires_grad_(requires_grad)
        return self

    @property
    def grad(self):
        """The local gradient, laid out as this tensor (PyTorch's DTensor gradient)."""
        g = self._local_tensor.grad
        return None if g is None else DTensor(g, self._mesh, self._placements, self._shape)

    def __repr__(self):
        return (f"DTensor(local_tensor={self._local_tensor!r}, device_mesh={self._mesh!r}, "
                f"placements={self._placements!r})")


def _ops_size(shape):
    from ..._tensor import Size
    return Size(tuple(int(s) for s in shape))


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    """`tensor` laid out on `device_mesh`: along each mesh dimension the ranks take the data
    of group rank `src_data_rank` (None: each rank's own `tensor`, no communication), then
    their piece of it. The result is a leaf that requires grad as `tensor` does."""
    if device_mesh is None:
        raise RuntimeError("No device mesh is currently active!")
    placements = list(placements or [Replicate()] * device_mesh.ndim)
    if len(placements) != device_mesh.ndim:
        raise ValueError(f"`placements` must have the same length as `device_mesh.ndim`! "
                         f"Found placements length: {len(placements)}, and device_mesh.ndim: "
                         f"{device_mesh.ndim}.")
    if isinstance(tensor, DTensor):
        if tensor.device_mesh != device_mesh:
            raise ValueError(f"Cannot distribute a DTensor with device mesh "
                             f"{tensor.device_mesh} to a different device mesh "
                             f"{device_mesh}.")
        if tensor.placements != tuple(placements):
            raise ValueError(f"Cannot distribute a DTensor with placements "
                             f"{tensor.placements} to a different placements {placements}. "
                             f"do you want to call `redistribute` instead?")
        return tensor
    partial_ops = {p.reduce_op for p in placements if isinstance(p, Partial)}
    if len(partial_ops) > 1:
        raise ValueError(f"Cannot mix Partial reduce types: found {sorted(partial_ops)}")
    placements = _normalize(placements, tensor.dim())
    for p in placements:
        if isinstance(p, Shard) and p.dim >= tensor.dim():
            raise AssertionError(f"Sharding dim {p.dim} greater than tensor ndim "
                                 f"{tensor.dim()}")
    local = tensor.detach()
    for mesh_dim, p in enumerate(placements):
        if src_data_rank is not None and device_mesh.size(mesh_dim) > 1:
            local = local.contiguous().clone()
            _c10d.broadcast(local, group_src=src_data_rank,
                            group=device_mesh.get_group(mesh_dim))
        local = _place_dim(local, device_mesh, mesh_dim, p)
    local = local.contiguous().requires_grad_(tensor.requires_grad)
    return DTensor(local, device_mesh, placements, tensor.shape)


def distribute_module(module, device_mesh=None, partition_fn=None, input_fn=None,
                      output_fn=None):
    """Lay out `module`'s parameters on `device_mesh`: `partition_fn(name, module, mesh)` for
    each submodule when given, else every parameter replicated; `input_fn(module, inputs,
    mesh)` and `output_fn(module, outputs, mesh)` become forward pre-/post-hooks. As
    DTensor is not a Tensor in ember, a replicated parameter keeps its (whole) tensor."""
    if device_mesh is None:
        raise RuntimeError("No device mesh is currently active!")
    if getattr(module, "_distribute_module_applied", False):
        raise RuntimeError("distribute_module should only be called once on a module, but "
                           "it has already been called on this module!")
    if partition_fn is not None:
        for name, submodule in module.named_modules():
            partition_fn(name, submodule, device_mesh)
    if input_fn is not None:
        module.register_forward_pre_hook(lambda mod, inputs: input_fn(mod, inputs,
                                                                      device_mesh))
    if output_fn is not None:
        module.register_forward_hook(lambda mod, inputs, outputs: output_fn(mod, outputs,
                                                                            device_mesh))
    module._distribute_module_applied = True
    return module


def _factory(make):
    def factory(*size, dtype=None, layout=None, requires_grad=False, device_mesh=None,
                placements=None, **kwargs):
        if len(size) == 1 and isinstance(size[0], (list, tuple)):
            size = tuple(size[0])
        whole = make(size, dtype=dtype, **kwargs)
        out = distribute_tensor(whole, device_mesh, placements, src_data_rank=0)
        return out.requires_grad_(requires_grad) if requires_grad else out
    return factory


ones = _factory(lambda size, **kw: _ops.ones(size, **kw))
zeros = _factory(lambda size, **kw: _ops.zeros(size, **kw))
empty = _factory(lambda size, **kw: _ops.empty(size, **kw))
rand = _factory(lambda size, **kw: _ops.rand(size, **kw))
randn = _factory(lambda size, **kw: _ops.randn(size, **kw))


def full(size, fill_value, *, dtype=None, layout=None, requires_grad=False, device_mesh=None,
         placements=None):
    out = distribute_tensor(_ops.full(tuple(size), fill_value, dtype=dtype), device_mesh,
                            placements, src_data_rank=0)
    return out.requires_grad_(requires_grad) if requires_grad else out


__all__ += ["DeviceMesh"]
