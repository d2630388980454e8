"""`fully_shard` (FSDP2): a module's parameters become shards on dim 0 over a 1-d device mesh
(see `_param` for what a sharded parameter is in ember). Each `fully_shard` call makes one
group of the engine in `_fsdp_state`: the module's parameters not already in a group of a
submodule, gathered in one all-gather and reduced in one reduce-scatter per dtype."""
from ...autograd.grad_mode import no_grad
from ...nn.modules.module import Module
from .. import distributed_c10d as _c10d
from ..device_mesh import DeviceMesh, init_device_mesh
from ._api import CPUOffloadPolicy, MixedPrecisionPolicy, OffloadPolicy
from ._fsdp_state import _FSDPParam, _FSDPState, mesh_device
from ._param import _ShardedParameter

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
    state = _FSDPState(module, _sharded_params(module, mesh, ignored_params),
                       mesh.get_group(0), mesh.size(0), reshard_after_forward, mp_policy)
    state.mesh = mesh
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


def _sharded_params(module, mesh, ignored_params):
    """The group's parameters, sharded and registered in place of the originals; buffers
    move to the mesh's device; state dicts are saved from and loaded into the shards."""
    device = mesh_device(mesh.device_type)
    ignored = {id(p) for p in ignored_params or ()}
    params = [_FSDPParam(p, places, mesh, device)
              for p, places in _managed_params(module, ignored)]
    for p in params:
        p.register_sharded()
    with no_grad():
        for buffer in module.buffers():
            if buffer.device.type != "meta" and buffer.device != device:
                buffer.data = buffer.to(device)
    for owner in {id(m): m for p in params for m, _ in p.places}.values():
        owner.register_state_dict_pre_hook(lambda *args, **kwargs: _reshard(module))
        owner._register_load_state_dict_pre_hook(lambda *args, **kwargs: _reshard(module))
    return params


def _reshard(module):
    module._fsdp_state.reshard()


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
