"""`fully_shard` (FSDP2): a module's parameters become shards on dim 0 over a 1-d device mesh
(see `_param` for what a sharded parameter is in ember). Each `fully_shard` call makes one
group: the module's parameters not already in a group of a submodule, gathered in one
all-gather and reduced in one reduce-scatter per dtype.

The life of a group, as PyTorch's:
- forward pre-hook: all-gather the shards into the unsharded parameters (plain Parameters,
  the same objects every iteration) and register those on the modules;
- forward hook: reshard when `reshard_after_forward` says so (freeing the gathered memory:
  ops saved the unsharded Parameter itself, whose data is refilled before backward), and
  hook the outputs so that the first gradient reaching them gathers the parameters again;
- at the end of backward (an engine callback queued by the root): reduce-scatter the
  unsharded gradients, averaged over the mesh, into the shards' `.grad`, then reshard.
Communication runs in order, not overlapped with computation: the numbers are PyTorch's,
the schedule is simpler."""
import math

from ... import ops as _ops
from ..._tensor import Tensor
from ...autograd import engine as _engine
from ...autograd.grad_mode import no_grad
from ...nn.modules.module import Module
from ...nn.parameter import Parameter
from ...utils._pytree import tree_map
from .. import distributed_c10d as _c10d
from ..device_mesh import DeviceMesh, init_device_mesh
from ..tensor.placement_types import Shard, _pad
from ._api import CPUOffloadPolicy, MixedPrecisionPolicy, OffloadPolicy
from ._param import _ShardedParameter, make_sharded_parameter, sharded_like

__all__ = ["fully_shard", "FSDPModule", "UnshardHandle", "register_fsdp_forward_method"]

_FSDP_CLASSES = {}  # module class -> its FSDP subclass, made once as PyTorch caches them


def fully_shard(module, *, mesh=None, reshard_after_forward=None, shard_placement_fn=None,
                mp_policy=MixedPrecisionPolicy(), offload_policy=OffloadPolicy(),
                ignored_params=None, dp_mesh_dims=None):
    """Shard `module`'s parameters (those not sharded by an earlier call on a submodule) on
    dim 0 over `mesh` (default: a 1-d mesh over the default group) and make `module` an
    `FSDPModule`. `reshard_after_forward`: True frees the gathered parameters after forward
    (gathered again in backward), False keeps them, None is False for the root module
    (whose backward comes at once) and True for the others. Returns `module`."""
    if isinstance(module, (list, tuple)):
        raise NotImplementedError("ember: fully_shard of a list of modules (one group over "
                                  "several modules) is not supported")
    if not isinstance(module, Module):
        raise TypeError(f"'{type(module).__name__}' object is not iterable")
    if getattr(module, "_fsdp_state", None) is not None:
        raise AssertionError("Each distinct composable distributed API can only be applied "
                             "to a module once. fully_shard has already been applied to the "
                             f"following module:\n{module}")
    for option, value in (("shard_placement_fn", shard_placement_fn),
                          ("dp_mesh_dims", dp_mesh_dims)):
        if value is not None:
            raise NotImplementedError(f"ember: fully_shard({option}=...) is not supported: "
                                      "parameters are sharded on dim 0")
    mesh = mesh if mesh is not None else _default_mesh()
    if not isinstance(mesh, DeviceMesh):
        raise ValueError(f"fully_shard expects a DeviceMesh but got {mesh}")
    if mesh.ndim != 1:
        raise NotImplementedError("ember: fully_shard over a 2-d mesh (HSDP) is not supported")
    if not isinstance(reshard_after_forward, (bool, type(None))):
        if reshard_after_forward in (1, mesh.size()) or mesh.size() % reshard_after_forward:
            raise ValueError(f"If passing reshard_after_forward as an int, it should be a "
                             f"factor of {mesh.size()}, not {reshard_after_forward}")
        raise NotImplementedError("ember: resharding after forward to a smaller world (an "
                                  "int reshard_after_forward) is not supported")
    _check_offload(offload_policy, mesh)
    state = _FSDPState(module, mesh, reshard_after_forward, mp_policy,
                       {id(p) for p in ignored_params or ()})
    cls = type(module)
    if cls not in _FSDP_CLASSES:
        _FSDP_CLASSES[cls] = type(f"FSDP{cls.__name__}", (FSDPModule, cls),
                                  {"__deepcopy__": _unimplemented_deepcopy})
    module.__class__ = _FSDP_CLASSES[cls]
    module._fsdp_state = state
    module.register_forward_pre_hook(state.pre_forward, prepend=True, with_kwargs=True)
    module.register_forward_hook(state.post_forward)
    return module


def _unimplemented_deepcopy(*args, **kwargs):
    raise AssertionError("FSDP does not support deepcopy. Please use state dict for "
                         "serialization.")


def _default_mesh():
    if not _c10d.is_initialized():
        _c10d.init_process_group()
    return init_device_mesh(_mesh_device_type(), (_c10d.get_world_size(),))


def _mesh_device_type():
    from ... import cuda
    return "cuda" if cuda.is_available() else "cpu"


def _check_offload(policy, mesh):
    """Offloading to the host is nothing to do when the mesh's device is the host, and
    pinning host memory needs an accelerator, as in PyTorch."""
    if not isinstance(policy, CPUOffloadPolicy):
        return
    if policy.pin_memory:
        from ... import cuda
        if not cuda.is_available():
            raise RuntimeError("Cannot access accelerator device when none is available.")
    if mesh.device_type != "cpu":
        raise NotImplementedError("ember: CPUOffloadPolicy with an accelerator mesh (host "
                                  "shards copied to the device for each all-gather) is not "
                                  "supported")


class _FSDPParam:
    """One managed parameter: its sharded form, its unsharded form (made at the first
    gather, refilled by every later one) and the places (module, name) it is registered."""

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

    def set_unsharded(self, full):
        if self.unsharded is None:
            self.unsharded = Parameter(full, requires_grad=self.sharded.requires_grad)
        else:
            self.unsharded.data = full

    def free_unsharded(self):
        """Drop the gathered memory; the Parameter object stays, as the graph holds it."""
        if self.unsharded is not None:
            self.unsharded.data = self.unsharded.new_empty(0)

    def register(self, tensor):
        for module, name in self.places:
            module._parameters[name] = tensor


class _FSDPState:
    def __init__(self, module, mesh, reshard_after_forward, mp_policy, ignored):
        self.module, self.mesh, self.mp_policy = module, mesh, mp_policy
        self.reshard_after_forward = reshard_after_forward
        self.reshard_after_backward = True
        self.requires_gradient_sync = True
        self.gradient_divide_factor = None
        self.is_root = None  # decided at the first forward (see lazy_init)
        self.root, self.states = self, [self]
        self.unsharded = False
        self.callback_queued = False
        self.group = mesh.get_group(0)
        device = _mesh_device(mesh)
        self.params = [_FSDPParam(p, places, mesh, device)
                       for p, places in _managed_params(module, ignored)]
        for p in self.params:
            p.register(p.sharded)
        with no_grad():
            for buffer in module.buffers():
                if buffer.device.type != "meta" and buffer.device != device:
                    buffer.data = buffer.to(device)
        # state dicts are saved from and loaded into the sharded parameters
        for owner in {id(m): m for p in self.params for m, _ in p.places}.values():
            owner.register_state_dict_pre_hook(lambda *args, **kwargs: self.reshard())
            owner._register_load_state_dict_pre_hook(lambda *args, **kwargs: self.reshard())

    # ---- the group's collectives -------------------------------------------------------------
    def unshard(self):
        if self.unsharded:
            return
        param_dtype = self.mp_policy.param_dtype
        for dtype, params in _by_dtype(self.params, lambda p: param_dtype or p.sharded.dtype):
            with no_grad():
                flat = _ops.cat([_pad(p.sharded.detach().to(dtype),
                                      0, p.rows - p.sharded.size(0)).reshape(-1)
                                 for p in params])
                n = self.mesh.size(0)
                gathered = flat.new_empty(n * flat.numel())
                _c10d.all_gather_into_tensor(gathered, flat, group=self.group)
                by_rank, offset = gathered.view(n, -1), 0
                for p in params:
                    pieces = by_rank.narrow(1, offset, p.padded_numel)
                    offset += p.padded_numel
                    full = pieces.reshape(n * p.rows, *p.global_shape[1:])
                    p.set_unsharded(full.narrow(0, 0, p.global_shape[0]).contiguous())
        for p in self.params:
            p.register(p.unsharded)
        self.unsharded = True

    def reshard(self):
        for p in self.params:
            p.free_unsharded()
            p.register(p.sharded)
        self.unsharded = False

    def reduce_gradients(self):
        """Average the unsharded gradients over the mesh, each rank keeping its shard, into
        the sharded parameters' `.grad` (added to what is there, as autograd accumulates)."""
        ready = [p for p in self.params if p.unsharded is not None
                 and p.unsharded.grad is not None]
        reduce_dtype = self.mp_policy.reduce_dtype or self.mp_policy.param_dtype
        n = self.mesh.size(0)
        divide = self.gradient_divide_factor or n
        for dtype, params in _by_dtype(ready, lambda p: reduce_dtype or p.sharded.dtype):
            with no_grad():
                # rank-major: row r holds every parameter's r-th padded chunk
                rows = [_pad(p.unsharded.grad.to(dtype), 0,
                             n * p.rows - p.global_shape[0]).reshape(n, -1) for p in params]
                flat = _ops.cat(rows, dim=1).reshape(-1)
                mine = flat.new_empty(flat.numel() // n)
                _c10d.reduce_scatter_tensor(mine, flat, group=self.group)
                mine.div_(divide)
                offset = 0
                for p in params:
                    piece = mine.narrow(0, offset, p.padded_numel).view(
                        p.rows, *p.global_shape[1:]).narrow(0, 0, p.sharded.size(0))
                    offset += p.padded_numel
                    piece = piece.to(p.sharded.dtype)
                    if p.sharded.grad is None:
                        p.sharded.grad = sharded_like(piece.contiguous(), p.sharded)
                    else:
                        p.sharded.grad.add_(piece)
                    p.unsharded.grad = None

    # ---- hooks -------------------------------------------------------------------------------
    def lazy_init(self):
        """The first FSDP module to run forward is the root: every FSDP module under it
        answers to it (its end-of-backward callback reduces and reshards them all)."""
        if self.is_root is not None:
            return
        self.is_root = True
        self.states = [m._fsdp_state for m in self.module.modules()
                       if isinstance(m, FSDPModule)]
        for state in self.states:
            if state is not self:
                state.is_root, state.root = False, self

    def pre_forward(self, module, args, kwargs):
        self.lazy_init()
        policy = self.mp_policy
        if policy.param_dtype is not None and policy.cast_forward_inputs:
            args, kwargs = _cast_floating((args, kwargs), policy.param_dtype)
        self.unshard()
        return args, kwargs

    def post_forward(self, module, args, output):
        reshard = self.reshard_after_forward
        if reshard or (reshard is None and not self.is_root):
            self.reshard()
        if self.mp_policy.output_dtype is not None:
            output = _cast_floating(output, self.mp_policy.output_dtype)
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


def _mesh_device(mesh):
    from ...device import device
    if mesh.device_type == "cpu":
        return device("cpu")
    from ... import cuda
    return device(mesh.device_type, cuda.current_device())


def _managed_params(module, ignored):
    """(parameter, [(module, name) ...]) for every parameter under `module` that no earlier
    fully_shard took (a shared parameter once, with all its places)."""
    places = {}
    for sub in module.modules():
        for name, p in sub._parameters.items():
            if p is None or isinstance(p, _ShardedParameter) or id(p) in ignored:
                continue
            if p.dim() == 0:
                raise ValueError(f"fully_shard doesn't support scalar parameters. Change "
                                 f"{name} to a 1D tensor with numel equal to 1.")
            places.setdefault(id(p), (p, []))[1].append((sub, name))
    return list(places.values())


def _by_dtype(params, dtype_of):
    groups = {}
    for p in params:
        groups.setdefault(dtype_of(p), []).append(p)
    return groups.items()


def _cast_floating(tree, dtype):
    def cast(x):
        if isinstance(x, Tensor) and x.is_floating_point() and x.dtype is not dtype:
            return x.to(dtype)
        return x
    return tree_map(cast, tree)


class UnshardHandle:
    """What `unshard(async_op=True)` returns: ember gathers at once, so `wait()` finds the
    parameters already unsharded."""

    def wait(self):
        return None


class FSDPModule:
    """Mixed into a module's class by `fully_shard` (`FSDPLinear` ...): the controls of its
    group and, with `recurse`, those of the FSDP modules under it."""

    def reshard(self):
        """Free the unsharded parameters and register the sharded ones."""
        self._fsdp_state.reshard()

    def unshard(self, async_op=False):
        """All-gather the parameters and register the unsharded ones."""
        state = self._fsdp_state
        state.lazy_init()
        state.unshard()
        return UnshardHandle() if async_op else None

    def _apply(self, *args, **kwargs):
        # `.to()` and friends convert the sharded parameters (the unsharded are regathered)
        self.reshard()
        return super()._apply(*args, **kwargs)

    def _states(self, recurse):
        if not recurse:
            return [self._fsdp_state]
        return [m._fsdp_state for m in self.modules() if isinstance(m, FSDPModule)]

    def set_requires_gradient_sync(self, requires_gradient_sync, *, recurse=True):
        """False: backward accumulates the unsharded gradients without reducing them (for
        gradient accumulation); the next backward with True reduces the sum."""
        for state in self._states(recurse):
            state.requires_gradient_sync = requires_gradient_sync

    def set_reshard_after_forward(self, reshard_after_forward, recurse=True):
        if not isinstance(reshard_after_forward, bool):
            raise ValueError(f"reshard_after_forward should be a bool, got "
                             f"{type(reshard_after_forward)}")
        for state in self._states(recurse):
            state.reshard_after_forward = reshard_after_forward

    def set_reshard_after_backward(self, reshard_after_backward, *, recurse=True):
        for state in self._states(recurse):
            state.reshard_after_backward = reshard_after_backward

    def set_gradient_divide_factor(self, factor):
        """Divide the summed gradients by `factor` instead of the mesh's size."""
        self._fsdp_state.gradient_divide_factor = factor


def register_fsdp_forward_method(module, method_name):
    """Run FSDP's forward hooks around `module.method_name` too (a method other than
    `forward` that computes with the parameters, such as `generate`)."""
    if not isinstance(module, FSDPModule):
        return
    if not hasattr(module, method_name):
        raise ValueError(f"{type(module)} does not have a method {method_name}")
    method = getattr(module, method_name)
    state = module._fsdp_state

    def wrapped(*args, **kwargs):
        args, kwargs = state.pre_forward(module, args, kwargs)
        return state.post_forward(module, args, method(*args, **kwargs))
    setattr(module, method_name, wrapped)
