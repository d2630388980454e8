"""What `FullyShardedDataParallel.__init__` settles before sharding: the ignored modules and
parameters, the process group and sharding strategy (with PyTorch's checks and warnings),
the compute device, the auto-wrapped children, deferred (meta) initialisation, and the
parameters the new unit flattens."""
import warnings

from ...autograd.grad_mode import no_grad
from ...device import device as _device
from ...nn.modules.module import Module
from .. import distributed_c10d as _c10d
from .api import ShardingStrategy
from .wrap import policy_targets

__all__ = []

WRAPPED = "_fsdp_wrapped_module"
_HYBRID = (ShardingStrategy.HYBRID_SHARD, ShardingStrategy._HYBRID_SHARD_ZERO2)


def is_fsdp(module):
    return WRAPPED in module.__dict__.get("_modules", {})


def ignored(module, ignored_modules, ignored_states):
    """(the ignored modules with everything under them, the ids of their parameters and of
    the ignored parameters)."""
    if ignored_modules is not None and ignored_states is not None:
        raise ValueError("Cannot pass both `ignored_modules` and `ignored_states` at the "
                         "same time. Please just pass `ignored_states`.")
    items = list(ignored_modules if ignored_modules is not None else ignored_states or ())
    if ignored_modules is not None:
        bad = [type(m) for m in items if not isinstance(m, Module)]
        if bad:
            raise ValueError(f"ignored_modules expects nn.Module list elements but got types "
                             f"{bad}")
    mods = {id(s): s for m in items if isinstance(m, Module) for s in m.modules()}
    params = {id(p) for m in mods.values() for p in m.parameters()}
    params |= {id(p) for p in items if not isinstance(p, Module)}
    return set(mods.values()), params


def process_group(group, mesh, strategy):
    """The group the unit shards (or replicates) over."""
    if strategy in _HYBRID:
        if group is None and mesh is None:
            raise ValueError(f"Manual wrapping with {strategy} requires explicit "
                             f"specification of process group or device_mesh.")
        raise NotImplementedError(f"ember: FullyShardedDataParallel with {strategy} (sharded "
                                  "within a node, replicated across) is not supported; use "
                                  "FULL_SHARD, SHARD_GRAD_OP or NO_SHARD")
    if mesh is not None:
        if group is not None:
            raise ValueError("Cannot pass both process_group and device_mesh at the same "
                             "time. Please just pass only one of them.")
        if mesh.ndim != 1:
            raise NotImplementedError("ember: FullyShardedDataParallel over a 2-d device "
                                      "mesh (hybrid sharding) is not supported")
        return mesh.get_group(0)
    if isinstance(group, tuple):
        raise NotImplementedError("ember: a (intra-node, inter-node) pair of process groups "
                                  "is for hybrid sharding, which is not supported")
    return group if group is not None else _c10d._default_group()


def strategy(chosen, world):
    """A world of one shards nothing: PyTorch switches to NO_SHARD, with a warning."""
    if world == 1:
        if chosen is not ShardingStrategy.NO_SHARD:
            warnings.warn(f"FSDP is switching to use `NO_SHARD` instead of {chosen} since "
                          "the world size is 1.", stacklevel=3)
        return ShardingStrategy.NO_SHARD
    if not isinstance(chosen, ShardingStrategy):
        raise KeyError(chosen)
    return chosen


def compute_device(module, ignored_params, device_id):
    """`device_id`, else the device of the parameters not on the host, else the
    accelerator's; FSDP1 does not compute on the host unless told to."""
    if device_id is not None:
        if isinstance(device_id, int):
            from ... import cuda
            return _device("cuda", device_id) if cuda.is_available() else _device(device_id)
        return device_id if isinstance(device_id, _device) else _device(device_id)
    found = None
    for p in module.parameters():
        if id(p) in ignored_params or p.device.type in ("cpu", "meta"):
            continue
        if found is not None and p.device.type != found.type:
            raise RuntimeError(f"FSDP does not support modules with different device types "
                               f"but got params on {found.type} and {p.device.type}")
        found = found or p.device
    if found is not None:
        return found
    from ... import cuda
    if cuda.is_available():
        return _device("cuda", cuda.current_device())
    raise RuntimeError("FSDP needs a non-CPU accelerator device, but no accelerator device is "
                       "detected.")


def auto_wrap(root, policy, ignored_modules, ignored_params, kwargs, fsdp_cls):
    """Wrap the submodules `policy` picks (children before parents), each in an FSDP
    instance of its own made with `kwargs`. With mixed precision, the modules of its
    `_module_classes_to_ignore` are wrapped on their own in full precision."""
    for name, m in root.named_modules():
        if is_fsdp(m):
            raise ValueError("FSDP auto wrapping requires modules to not already have FSDP "
                             f"applied but found {name} in\n{root}")
    targets = policy_targets(policy, root, ignored_modules, ignored_params, kwargs)
    mp = kwargs.get("mixed_precision")
    if mp is not None and mp._module_classes_to_ignore:
        classes = tuple(mp._module_classes_to_ignore)
        found = {type(m) for m in root.modules() if m is not root and isinstance(m, classes)
                 and m not in ignored_modules}
        for m in root.modules():
            if m is not root and type(m) in found:
                targets[m] = dict(targets.get(m, kwargs), mixed_precision=None)
        if found:
            warnings.warn("Both mixed precision and an auto_wrap_policy were specified to "
                          f"FSDP, where the wrapped module has submodules of type:\n{found}\n"
                          "These modules will be wrapped as separate FSDP instacnes with "
                          "mixed precision disabled.", stacklevel=3)
    _wrap_targets(root, targets, ignored_modules, fsdp_cls)


def _wrap_targets(module, targets, ignored_modules, fsdp_cls):
    for name, child in list(module.named_children()):
        if child in ignored_modules or is_fsdp(child):
            continue
        _wrap_targets(child, targets, ignored_modules, fsdp_cls)
        if child in targets:
            setattr(module, name, fsdp_cls(child, **targets[child]))


def materialize(module, param_init_fn, device, ignored_params):
    """Give the unit's modules that hold tensors on the meta device (deferred
    initialisation) their memory: `param_init_fn(m)` for each when given, else its
    `to_empty` on `device` and `reset_parameters()`."""
    if param_init_fn is not None and not callable(param_init_fn):
        raise ValueError(f"Expected {param_init_fn} to be callable but got "
                         f"{type(param_init_fn)}")
    for m in _unit_modules(module):
        own = [t for t in list(m._parameters.values()) + list(m._buffers.values())
               if t is not None and id(t) not in ignored_params]
        if not any(t.device.type == "meta" for t in own):
            continue
        if param_init_fn is not None:
            param_init_fn(m)
            continue
        m.to_empty(device=device, recurse=False)
        if hasattr(m, "reset_parameters"):
            with no_grad():
                m.reset_parameters()


def _unit_modules(module):
    """`module` and its submodules, not descending into FSDP instances."""
    out, stack = [], [module]
    while stack:
        m = stack.pop()
        out.append(m)
        stack.extend(reversed([c for c in m.children() if not is_fsdp(c)]))
    return out


def unit_params(module, ignored_params):
    """(parameter, [(module, name) ...], [fqn ...]) for every parameter of the unit: under
    `module`, outside nested FSDP instances, not ignored; shared ones once, in the order
    of `named_modules`. The fqns are relative to `module`."""
    found, stack = {}, [("", module)]
    while stack:
        path, m = stack.pop()
        for name, p in m._parameters.items():
            if p is None or id(p) in ignored_params or getattr(p, "_fsdp_flattened", False):
                continue
            entry = found.setdefault(id(p), (p, [], []))
            entry[1].append((m, name))
            entry[2].append(path + name)
        stack.extend(reversed([(f"{path}{n}.", c) for n, c in m.named_children()
                               if not is_fsdp(c)]))
    return list(found.values())


def unit_buffers(module):
    return [b for m in _unit_modules(module) for b in m._buffers.values() if b is not None]


def move_and_sync(module, params, device, sync, group):
    """The unit's parameters and buffers on `device`; with `sync`, rank 0's values
    everywhere."""
    with no_grad():
        for m in _unit_modules(module):
            for key, t in list(m._parameters.items()) + list(m._buffers.items()):
                if t is not None and t.device != device and t.device.type != "meta":
                    t.data = t.to(device)
        if sync:
            for t in [p for p, _, _ in params] + unit_buffers(module):
                _c10d.broadcast(t.detach(), group_src=0, group=group)
