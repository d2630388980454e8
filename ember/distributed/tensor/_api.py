"""DTensor: a tensor laid out over a device mesh. Each rank holds a local tensor; the
placements (one per mesh dimension) say how the locals make up the global tensor.

PyTorch's DTensor is a Tensor subclass whose every op is rewritten by sharding propagation.
ember's functions do not dispatch on Tensor subclasses, so ember's DTensor is the layout and
its conversions: `distribute_tensor` / `DTensor.from_local` make one, `to_local`,
`full_tensor` and `redistribute` move between layouts through the mesh's collectives (with
gradients: an all-gather's backward reduce-scatters, a reduction's backward passes the
gradient to each summand). Computing on it goes through `to_local()` (or `full_tensor()`)."""
from ... import autograd as _autograd
from ... import ops as _ops
from .. import distributed_c10d as _c10d
from ..device_mesh import DeviceMesh
from .placement_types import Partial, Placement, Replicate, Shard, _StridedShard

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
    padded = local
    if local.size(dim) < sizes[0]:
        pad_shape = list(local.shape)
        pad_shape[dim] = sizes[0] - local.size(dim)
        padded = _ops.cat([local, local.new_zeros(pad_shape)], dim=dim)
    out = [_ops.empty_like(padded) for _ in range(n)]
    _c10d.all_gather(out, padded.contiguous(), group=_group_of(mesh, mesh_dim))
    return [piece.narrow(dim, 0, size) for piece, size in zip(out, sizes)]


class _AllGather(_autograd.Function):
    """Shard -> Replicate on one mesh dimension. Backward: each rank's gradient of the whole
    is summed across the dimension and the rank keeps its own piece (a reduce-scatter)."""

    @staticmethod
    def forward(ctx, local, mesh, mesh_dim, placement, global_size):
        ctx.mesh, ctx.mesh_dim, ctx.placement = mesh, mesh_dim, placement
        pieces = _gather_pieces(local, mesh, mesh_dim, placement.dim, global_size)
        return placement._assemble(pieces)

    @staticmethod
    def backward(ctx, grad):
        grad = grad.contiguous().clone()
        _c10d.all_reduce(grad, group=_group_of(ctx.mesh, ctx.mesh_dim))
        index = ctx.mesh.get_local_rank(ctx.mesh_dim)
        piece = ctx.placement._local_piece(grad, ctx.mesh.size(ctx.mesh_dim), index)
        return piece.contiguous(), None, None, None, None


class _Reduce(_autograd.Function):
    """Partial -> Replicate: the reduction of the summands. Backward (sum, avg): each summand
    receives the gradient of the whole (scaled by 1/n for an average)."""

    @staticmethod
    def forward(ctx, local, mesh, mesh_dim, reduce_op):
        if reduce_op not in ("sum", "avg") and local.requires_grad:
            ctx.unsupported = reduce_op
        ctx.n, ctx.reduce_op = mesh.size(mesh_dim), reduce_op
        out = local.contiguous().clone()
        _c10d.all_reduce(out, op=getattr(_c10d.ReduceOp, _REDUCE_OPS[reduce_op]),
                         group=_group_of(mesh, mesh_dim))
        return out

    @staticmethod
    def backward(ctx, grad):
        if getattr(ctx, "unsupported", None):
            raise NotImplementedError(f"backward of a Partial({ctx.unsupported}) reduction")
        return (grad / ctx.n if ctx.reduce_op == "avg" else grad), None, None, None


def _replicate_dim(local, mesh, mesh_dim, placements, global_shape):
    """The local tensor once mesh dimension `mesh_dim` (laid out as `placements[mesh_dim]`)
    is made Replicate."""
    placement = placements[mesh_dim]
    if mesh.size(mesh_dim) == 1 or isinstance(placement, Replicate):
        return local
    if isinstance(placement, Shard):
        return _AllGather.apply(local, mesh, mesh_dim, placement,
                                _size_before(global_shape, mesh, placements, mesh_dim))
    return _Reduce.apply(local, mesh, mesh_dim, placement.reduce_op)


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


def _normalize(placements, ndim):
    out = []
    for p in placements:
        if not isinstance(p, Placement):
            raise TypeError(f"expected a Placement, got {type(p)}")
        if isinstance(p, Shard) and p.dim < 0:
            p = (_StridedShard(p.dim + ndim, p.split_factor) if isinstance(p, _StridedShard)
                 else Shard(p.dim + ndim))
        out.append(p)
    return tuple(out)


class DTensor:
    """A global tensor of `shape` over `device_mesh`, this rank holding `to_local()`."""

    def __init__(self, local_tensor, device_mesh, placements, shape, *, requires_grad=False):
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
        """The same global tensor laid out by `placements`. Mesh dimensions from the first
        one that changes onward are gathered (innermost first, since later mesh dimensions
        split the chunks of earlier ones) and laid out again (outermost first)."""
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
        current = list(self._placements)
        local = self._local_tensor
        if forward_dtype is not None:
            local = local.to(forward_dtype)
        changed = [d for d in range(mesh.ndim) if current[d] != target[d]]
        if changed:
            first = changed[0]
            for d in reversed(range(first, mesh.ndim)):
                if isinstance(current[d], Shard) or d in changed:
                    local = _replicate_dim(local, mesh, d, current, self._shape)
                    current[d] = Replicate()
            for d in range(first, mesh.ndim):
                if current[d] != target[d]:
                    local = _place_dim(local, mesh, d, target[d])
                    current[d] = target[d]
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
