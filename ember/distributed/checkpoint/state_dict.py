"""`torch.distributed.checkpoint.state_dict`: a model's and its optimizers' state dicts in
one form whatever wraps or shards the model. Keys are parameter names without the DDP
wrapper's "module." prefix; an optimizer's state and param_groups are keyed by those names
rather than by position, so they survive a change of wrapping or world size. Parameters
that are DTensors (FSDP's) stay sharded, or with `full_state_dict` are gathered whole; a
full state dict set into a sharded model gives each rank its piece."""
from dataclasses import dataclass

from .. import distributed_c10d as _c10d
from ..tensor import DTensor
from .default_planner import global_shape, local_chunk, narrow

__all__ = ["StateDictOptions", "get_model_state_dict", "get_optimizer_state_dict",
           "get_state_dict", "set_model_state_dict", "set_optimizer_state_dict",
           "set_state_dict"]


@dataclass
class StateDictOptions:
    """full_state_dict: DTensors gathered to whole tensors (setting: whole tensors are cut
    to each rank's shard). cpu_offload: tensors moved to the CPU (with full_state_dict only
    rank 0 keeps a state dict; the others get an empty one). ignore_frozen_params: no
    parameters that do not require grad. strict: set_model_state_dict's strict.
    broadcast_from_rank0: setting takes rank 0's full state dict on every rank.
    flatten_optimizer_state_dict: the optimizer's state dict as one flat dict."""
    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _unwrapped(model):
    """The model under DDP's wrapper (whose names carry "module.")."""
    from ...nn.parallel.distributed import DistributedDataParallel
    while isinstance(model, DistributedDataParallel):
        model = model.module
    return model


def _options(options):
    if options is None:
        return StateDictOptions()
    if not isinstance(options, StateDictOptions):
        raise TypeError(f"options must be a StateDictOptions, got {type(options).__name__}")
    return options


def _rank():
    return _c10d.get_rank() if _c10d.is_initialized() else 0


def _as_dtensor_like(value, param):
    """An optimizer state tensor of a DTensor parameter's shard shape, as a DTensor laid
    out as the parameter (so it is saved and gathered as a shard)."""
    from ..._tensor import Tensor
    if isinstance(param, DTensor) and isinstance(value, Tensor) and \
            not isinstance(value, DTensor) and value.dim() > 0 and \
            tuple(value.shape) == tuple(local_chunk(param)[1].sizes):
        return DTensor(value, param.device_mesh, param.placements, global_shape(param))
    return value


def _finish(state, options):
    """DTensors gathered (full_state_dict) and tensors moved to the CPU (cpu_offload)."""
    from ..._tensor import Tensor

    def convert(value):
        if isinstance(value, dict):
            return {k: convert(v) for k, v in value.items()}
        if isinstance(value, list):
            return [convert(v) for v in value]
        if options.full_state_dict and isinstance(value, DTensor):
            value = value.full_tensor()
        if options.cpu_offload and isinstance(value, Tensor):
            value = value.cpu()
        return value
    state = convert(state)
    if options.full_state_dict and options.cpu_offload and _rank() != 0:
        return {}
    return state


def _submodule_filter(model, state, submodules, options):
    if not submodules:
        return state
    prefixes = [name + "." for name, m in model.named_modules() if m in submodules]
    out = {}
    for key, value in state.items():
        for prefix in prefixes:
            if key.startswith(prefix):
                out[key if options.keep_submodule_prefixes else key[len(prefix):]] = value
    return out


def _model_state(model, options, submodules=None):
    model = _unwrapped(model)
    state = dict(model.state_dict(keep_vars=True))
    if options.ignore_frozen_params:
        frozen = {name for name, p in model.named_parameters() if not p.requires_grad}
        state = {k: v for k, v in state.items() if k not in frozen}
    state = {k: v.detach() if not isinstance(v, DTensor) else v for k, v in state.items()}
    return _submodule_filter(model, state, submodules, options)


def get_model_state_dict(model, *, submodules=None, options=None):
    options = _options(options)
    return _finish(_model_state(model, options, submodules), options)


def _optimizers(optimizers):
    from ...optim import Optimizer
    return [optimizers] if isinstance(optimizers, Optimizer) else list(optimizers)


def _param_names(model):
    return {id(p): name for name, p in _unwrapped(model).named_parameters()}


def _optim_state(model, optimizer, options):
    """The optimizer's state dict keyed by parameter names."""
    names = _param_names(model)
    params = [p for group in optimizer.param_groups for p in group["params"]]
    raw = optimizer.state_dict()
    by_id = {i: names[id(p)] for i, p in enumerate(params)}
    state = {by_id[i]: {k: _as_dtensor_like(v, params[i]) for k, v in s.items()}
             for i, s in raw["state"].items()}
    groups = [{**g, "params": [by_id[i] for i in g["params"]]} for g in raw["param_groups"]]
    return {"state": state, "param_groups": groups}


def _flatten_optim(osd):
    """{"state.<param>.<key>": value, "param_groups.<param>.<key>": value}."""
    flat = {}
    for name, s in osd["state"].items():
        for key, value in s.items():
            flat[f"state.{name}.{key}"] = value
    for group in osd["param_groups"]:
        for name in group["params"]:
            for key, value in group.items():
                if key != "params":
                    flat[f"param_groups.{name}.{key}"] = value
    return flat


def get_optimizer_state_dict(model, optimizers, *, submodules=None, options=None):
    options = _options(options)
    merged = {"state": {}, "param_groups": []}
    for optimizer in _optimizers(optimizers):
        osd = _optim_state(model, optimizer, options)
        merged["state"].update(osd["state"])
        merged["param_groups"] += osd["param_groups"]
    if options.flatten_optimizer_state_dict:
        merged = _flatten_optim(merged)
    return _finish(merged, options)


def get_state_dict(model, optimizers, *, submodules=None, options=None):
    return (get_model_state_dict(model, submodules=submodules, options=options),
            get_optimizer_state_dict(model, optimizers, submodules=submodules,
                                     options=options))


def _broadcast(state, options):
    if options.broadcast_from_rank0 and _c10d.is_initialized():
        box = [state if _rank() == 0 else None]
        _c10d.broadcast_object_list(box, src=0)
        return box[0]
    return state


def _local_piece(value, target):
    """What of `value` (a whole tensor or a DTensor) lands in `target`'s storage: the
    rank's shard where `target` is a DTensor."""
    from ..._tensor import Tensor
    if not isinstance(target, DTensor):
        return value.full_tensor() if isinstance(value, DTensor) else value
    if isinstance(value, DTensor):
        if tuple(value.placements) != tuple(target.placements):
            value = value.redistribute(value.device_mesh, target.placements)
        return value.to_local()
    if not isinstance(value, Tensor):
        return value
    if tuple(value.shape) != tuple(global_shape(target)):
        raise RuntimeError(f"size mismatch: the state dict's tensor is {tuple(value.shape)}, "
                           f"the sharded parameter's whole is {tuple(global_shape(target))}")
    _, chunk, _ = local_chunk(target)
    return narrow(value, chunk.offsets, chunk.sizes)


def set_model_state_dict(model, model_state_dict, *, options=None):
    options = _options(options)
    model_state_dict = _broadcast(model_state_dict, options)
    inner = _unwrapped(model)
    current = inner.state_dict(keep_vars=True)
    given = {k: _local_piece(v, current[k]) if k in current else v
             for k, v in model_state_dict.items()}
    strict = options.strict and not options.ignore_frozen_params
    return inner.load_state_dict(given, strict=strict)


def set_optimizer_state_dict(model, optimizers, optim_state_dict, *, options=None):
    options = _options(options)
    optim_state_dict = _broadcast(optim_state_dict, options)
    if optim_state_dict and "state" not in optim_state_dict:
        optim_state_dict = _unflatten_optim(optim_state_dict)
    saved_groups = {name: g for g in optim_state_dict["param_groups"] for name in g["params"]}
    for optimizer in _optimizers(optimizers):
        names = _param_names(model)
        state, groups, index = {}, [], 0
        for group in optimizer.param_groups:
            ids = []
            for p in group["params"]:
                name = names[id(p)]
                if name in optim_state_dict["state"]:
                    state[index] = {k: _local_piece(v, p) if _is_sharded_state(v) else v
                                    for k, v in optim_state_dict["state"][name].items()}
                ids.append(index)
                index += 1
            saved = saved_groups.get(names[id(group["params"][0])], {}) if group["params"] \
                else {}
            groups.append({**group, **{k: v for k, v in saved.items() if k != "params"},
                           "params": ids})
        optimizer.load_state_dict({"state": state, "param_groups": groups})


def _is_sharded_state(value):
    """Whether an optimizer state value follows its parameter's layout (a step count or
    other scalar does not)."""
    from ..._tensor import Tensor
    return isinstance(value, DTensor) or (isinstance(value, Tensor) and value.dim() > 0)


def _unflatten_optim(flat):
    state, groups = {}, {}
    for key, value in flat.items():
        kind, rest = key.split(".", 1)
        name, field = rest.rsplit(".", 1)
        if kind == "state":
            state.setdefault(name, {})[field] = value
        else:
            groups.setdefault(name, {})[field] = value
    param_groups = []
    for name, settings in groups.items():
        match = next((g for g in param_groups
                      if {k: v for k, v in g.items() if k != "params"} == settings), None)
        if match is None:
            param_groups.append({**settings, "params": [name]})
        else:
            match["params"].append(name)
    return {"state": state, "param_groups": param_groups}


def set_state_dict(model, optimizers, *, model_state_dict, optim_state_dict, options=None):
    keys = set_model_state_dict(model, model_state_dict, options=options)
    if optim_state_dict:
        set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return keys

