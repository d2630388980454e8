"""The sharding engine both FSDPs run on: a group of parameters, each held as this rank's
dim-0 shard, gathered in one all-gather and reduced in one reduce-scatter per dtype.

FSDP2 (`fully_shard`) makes one group per call, of `_FSDPParam`s (one per parameter, its
shard a DTensor). FSDP1 (`FullyShardedDataParallel`) makes one group per wrapper, of a
single flat parameter (see `_flat_param`): the same engine sees a 1-d parameter.

The life of a group, as PyTorch's:
- forward pre-hook: all-gather the shards into the unsharded parameters (the same objects
  every iteration) and register those on the modules;
- forward hook: reshard when `reshard_after_forward` says so (freeing the gathered memory:
  ops saved the unsharded tensors themselves, whose data is refilled before backward), and
  hook the outputs so that the first gradient reaching them gathers the parameters again;
- at the end of backward (an engine callback queued by the root): reduce-scatter the
  unsharded gradients, averaged over the ranks, into the shards' gradients, then reshard.
A group may also be replicated (`replicate_group`: FSDP1's NO_SHARD shards over a world of
one and all-reduces the gradients over the replicas). Communication runs in order, not
overlapped with computation: the numbers are PyTorch's, the schedule is simpler."""
import math

from ... import ops as _ops
from ..._tensor import Tensor
from ...autograd import engine as _engine
from ...autograd.grad_mode import no_grad
from ...nn.parameter import Parameter
from ...utils._pytree import tree_map
from .. import distributed_c10d as _c10d
from ..tensor.placement_types import Shard, _pad
from ._param import make_sharded_parameter, sharded_like

__all__ = []


class _FSDPParam:
    """One FSDP2 parameter: its sharded form (a DTensor Parameter), its unsharded form (made
    at the first gather, refilled by every later one) and the places (module, name) it is
    registered. The engine talks to it through the methods below, which FSDP1's flat
    parameter answers in its own way."""

    def __init__(self, param, places, mesh, device):
        self.places = places
        whole = param.detach()
        if whole.device.type != "meta":  # meta parameters wait for to_empty()
            whole = whole.to(device)
        n, rank = mesh.size(0), mesh.get_local_rank(0)
        self.global_shape = tuple(whole.shape)
        self.rows = Shard.local_shard_size_and_offset(whole.size(0), n, 0)[0]  # padded shard
        self.padded_numel = self.rows * math.prod(self.global_shape[1:])
        local = Shard(0)._local_piece(whole, n, rank).clone()
        self.sharded = make_sharded_parameter(local, mesh, (Shard(0),), whole.shape,
                                              param.requires_grad)
        self.unsharded = None

    def gather_input(self, dtype):
        """This rank's shard, padded to the common shard size and flattened."""
        shard = self.sharded.detach().to(dtype)
        return _pad(shard, 0, self.rows - shard.size(0)).reshape(-1)

    def set_unsharded(self, full):
        if self.unsharded is None:
            self.unsharded = Parameter(full, requires_grad=self.sharded.requires_grad)
        else:
            self.unsharded.data = full

    def free_unsharded(self):
        """Drop the gathered memory; the Parameter object stays, as the graph holds it."""
        if self.unsharded is not None:
            self.unsharded.data = self.unsharded.new_empty(0)

    def register_unsharded(self):
        self._register(self.unsharded)

    def register_sharded(self):
        self._register(self.sharded)

    def _register(self, tensor):
        for module, name in self.places:
            module._parameters[name] = tensor

    def unsharded_grad(self):
        return None if self.unsharded is None else self.unsharded.grad

    def clear_unsharded_grad(self):
        self.unsharded.grad = None

    def accumulate_grad(self, piece):
        """Add the reduced gradient of this rank's shard (as autograd accumulates)."""
        if self.sharded.grad is None:
            self.sharded.grad = sharded_like(piece.contiguous(), self.sharded)
        else:
            self.sharded.grad.add_(piece)


class _FSDPState:
    """One group: `module` (whose forward it wraps), its `params`, the ranks it is sharded
    over (`shard_group` of `shard_size`) and, optionally, replicated over."""

    def __init__(self, module, params, shard_group, shard_size, reshard_after_forward,
                 mp_policy, replicate_group=None, replicate_size=1):
        self.module, self.params, self.mp_policy = module, params, mp_policy
        self.group, self.shard_size = shard_group, shard_size
        self.replicate_group, self.replicate_size = replicate_group, replicate_size
        self.reshard_after_forward = reshard_after_forward
        self.reshard_after_backward = True
        self.requires_gradient_sync = True
        self.gradient_divide_factor = None
        self.is_root = None  # decided at the first forward (see lazy_init)
        self.root, self.states = self, [self]
        self.unsharded = False
        self.callback_queued = False

    # ---- the group's collectives -------------------------------------------------------------
    def unshard(self, full_precision=False):
        """Gather the parameters (in the mixed-precision policy's dtype, unless
        `full_precision`) and register the unsharded ones."""
        if self.unsharded:
            return
        param_dtype = None if full_precision else self.mp_policy.param_dtype
        n = self.shard_size
        for dtype, params in _by_dtype(self.params, lambda p: param_dtype or p.sharded.dtype):
            with no_grad():
                flat = _ops.cat([p.gather_input(dtype) for p in params])
                if n > 1:
                    gathered = flat.new_empty(n * flat.numel())
                    _c10d.all_gather_into_tensor(gathered, flat, group=self.group)
                else:
                    gathered = flat
                by_rank, offset = gathered.view(n, -1), 0
                for p in params:
                    pieces = by_rank.narrow(1, offset, p.padded_numel)
                    offset += p.padded_numel
                    full = pieces.reshape(n * p.rows, *p.global_shape[1:])
                    p.set_unsharded(full.narrow(0, 0, p.global_shape[0]).contiguous())
        for p in self.params:
            p.register_unsharded()
        self.unsharded = True

    def reshard(self):
        for p in self.params:
            p.free_unsharded()
            p.register_sharded()
        self.unsharded = False

    def reduce_gradients(self):
        """Average the unsharded gradients over the ranks, each keeping its shard, into the
        sharded gradients (added to what is there, as autograd accumulates)."""
        grads = [(p, p.unsharded_grad()) for p in self.params]
        ready = [(p, g) for p, g in grads if g is not None]
        reduce_dtype = self.mp_policy.reduce_dtype or self.mp_policy.param_dtype
        n = self.shard_size
        divide = self.gradient_divide_factor or n * self.replicate_size
        for dtype, pairs in _by_dtype(ready, lambda pg: reduce_dtype or pg[0].sharded.dtype):
            with no_grad():
                # rank-major: row r holds every parameter's r-th padded chunk
                rows = [_pad(g.to(dtype), 0, n * p.rows - p.global_shape[0]).reshape(n, -1)
                        for p, g in pairs]
                flat = _ops.cat(rows, dim=1).reshape(-1)
                if n > 1:
                    mine = flat.new_empty(flat.numel() // n)
                    _c10d.reduce_scatter_tensor(mine, flat, group=self.group)
                else:
                    mine = flat.clone()
                if self.replicate_size > 1:
                    _c10d.all_reduce(mine, group=self.replicate_group)
                mine.div_(divide)
                offset = 0
                for p, _ in pairs:
                    piece = mine.narrow(0, offset, p.padded_numel).view(
                        p.rows, *p.global_shape[1:]).narrow(0, 0, p.sharded.size(0))
                    offset += p.padded_numel
                    p.accumulate_grad(piece.to(p.sharded.dtype))
                    p.clear_unsharded_grad()

    # ---- hooks -------------------------------------------------------------------------------
    def lazy_init(self):
        """The first FSDP module to run forward is the root: every FSDP module under it
        answers to it (its end-of-backward callback reduces and reshards them all)."""
        if self.is_root is not None:
            return
        self.is_root = True
        self.states = [m._fsdp_state for m in self.module.modules()
                       if getattr(m, "_fsdp_state", None) is not None]
        for state in self.states:
            if state is not self:
                state.is_root, state.root = False, self

    def pre_forward(self, module, args, kwargs):
        self.lazy_init()
        policy = self.mp_policy
        if policy.param_dtype is not None and policy.cast_forward_inputs:
            args, kwargs = cast_floating((args, kwargs), policy.param_dtype)
        self.unshard()
        return args, kwargs

    def post_forward(self, module, args, output):
        reshard = self.reshard_after_forward
        if reshard or (reshard is None and not self.is_root):
            self.reshard()
        if self.mp_policy.output_dtype is not None:
            output = cast_floating(output, self.mp_policy.output_dtype)
        tree_map(self._hook_output, output)
        return output

    def _hook_output(self, t):
        if isinstance(t, Tensor) and t.requires_grad:
            t.register_hook(self._pre_backward)

    def _pre_backward(self, grad):
        """The first gradient to reach this module's outputs: gather the parameters its
        backward needs, and have the root finish the backward."""
        root = self.root
        if not root.callback_queued:
            _engine.queue_callback(root._finish_backward, outermost=True)
            root.callback_queued = True
        self.unshard()

    def _finish_backward(self):
        self.callback_queued = False
        for state in self.states:
            if state.requires_gradient_sync:
                state.reduce_gradients()
            if state.reshard_after_backward:
                state.reshard()


def mesh_device(mesh_device_type):
    from ...device import device
    if mesh_device_type == "cpu":
        return device("cpu")
    from ... import cuda
    return device(mesh_device_type, cuda.current_device())


def _by_dtype(items, dtype_of):
    groups = {}
    for item in items:
        groups.setdefault(dtype_of(item), []).append(item)
    return groups.items()


def cast_floating(tree, dtype):
    def cast(x):
        if isinstance(x, Tensor) and x.is_floating_point() and x.dtype is not dtype:
            return x.to(dtype)
        return x
    return tree_map(cast, tree)
