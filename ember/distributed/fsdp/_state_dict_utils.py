"""FSDP1's state dicts, as hooks on each FSDP instance, so that a plain module holding FSDP
instances saves and loads through them too.

Saving: the pre-hook gathers the unit and registers its original parameters, whole, under
their own names; `Module.state_dict` walks the tree as usual; the post-hook drops the
wrapper's `_fsdp_wrapped_module.` from the keys of its subtree and turns the unit's
parameters into copies (FULL_STATE_DICT: whole tensors; SHARDED_STATE_DICT: DTensors
sharded on dim 0, PyTorch's form with a device mesh), then reshards.
Loading: the pre-hook puts the wrapper's name back into the keys, gathers and registers
the whole parameters (a sharded value is gathered first); the post-hook writes the loaded
values into this rank's shard and reshards."""
import warnings

from .. import distributed_c10d as _c10d
from ..device_mesh import DeviceMesh
from ..tensor import DTensor, Shard
from ._init_utils import WRAPPED
from ._param import _sharded, _ShardedTensor
from .api import CONFIGS, ShardingStrategy, StateDictSettings, StateDictType

__all__ = []


def _units(module):
    from .fully_sharded_data_parallel import FullyShardedDataParallel
    return FullyShardedDataParallel.fsdp_modules(module)


def set_type(module, state_dict_type, state_dict_config=None, optim_state_dict_config=None):
    warnings.warn("FSDP.state_dict_type() and FSDP.set_state_dict_type() are being "
                  "deprecated. Please use APIs, get_state_dict() and set_state_dict(), which "
                  "can support different parallelisms, FSDP1, FSDP2, DDP. API doc: https://"
                  "pytorch.org/docs/stable/distributed.checkpoint.html#torch.distributed."
                  "checkpoint.state_dict.get_state_dict .Tutorial: https://pytorch.org/"
                  "tutorials/recipes/distributed_checkpoint_recipe.html .", FutureWarning,
                  stacklevel=3)
    config_cls, optim_config_cls = CONFIGS[state_dict_type]
    state_dict_config = state_dict_config if state_dict_config is not None else config_cls()
    if optim_state_dict_config is None:
        optim_state_dict_config = optim_config_cls()
    if type(state_dict_config) is not config_cls:
        raise RuntimeError(f"Expected state_dict_config of type {config_cls} but got "
                           f"{type(state_dict_config)}")
    if type(optim_state_dict_config) is not optim_config_cls:
        raise RuntimeError(f"Expected optim_state_dict_config of type {optim_config_cls} but "
                           f"got {type(optim_state_dict_config)}")
    previous = None
    for unit in _units(module):
        if previous is None:
            previous = StateDictSettings(unit._state_dict_type, unit._state_dict_config,
                                         unit._optim_state_dict_config)
        elif previous.state_dict_type != unit._state_dict_type:
            raise AssertionError("All FSDP modules should have the same state_dict_type.")
        unit._state_dict_type = state_dict_type
        unit._state_dict_config = state_dict_config
        unit._optim_state_dict_config = optim_state_dict_config
    return previous


def get_type(module):
    settings = None
    for unit in _units(module):
        mine = StateDictSettings(unit._state_dict_type, unit._state_dict_config,
                                 unit._optim_state_dict_config)
        if settings is None:
            settings = mine
        elif settings != mine:
            raise AssertionError(f"All FSDP modules must have the same state dict settings."
                                 f"Got {settings} and {mine}.")
    if settings is None:
        raise AssertionError("No FSDP modules are in the module tree.")
    return settings


def register_hooks(unit):
    unit.register_state_dict_pre_hook(_pre_save)
    unit._register_state_dict_hook(_post_save)
    unit._register_load_state_dict_pre_hook(_pre_load, with_module=True)
    unit.register_load_state_dict_post_hook(_post_load)


def _check_kind(unit):
    if unit._state_dict_type is StateDictType.LOCAL_STATE_DICT:
        raise NotImplementedError("ember: LOCAL_STATE_DICT (each rank's flat shard) is not "
                                  "supported; SHARDED_STATE_DICT saves the shards as DTensors")
    sharded = unit._state_dict_type is StateDictType.SHARDED_STATE_DICT
    if sharded and unit.sharding_strategy is ShardingStrategy.NO_SHARD:
        warnings.warn("When using ``NO_SHARD`` for ``ShardingStrategy``, full_state_dict will "
                      "be returned.", stacklevel=4)
        return False
    return sharded


def mesh_of(unit):
    """A 1-d mesh over the unit's process group (its group, no new one)."""
    mesh = unit.__dict__.get("_mesh")
    if mesh is None:
        mesh = DeviceMesh(unit.compute_device.type, _c10d.get_process_group_ranks(unit.process_group),
                          _init_backend=False)
        mesh._groups = [unit.process_group]
        unit.__dict__["_mesh"] = mesh
    return mesh


def shard_of(unit, whole):
    """`whole` as the DTensor sharded on dim 0 over the unit's ranks."""
    mesh = mesh_of(unit)
    local = Shard(0)._local_piece(whole, mesh.size(0), mesh.get_local_rank(0)).clone()
    return _sharded(_ShardedTensor, local, DTensor(local, mesh, (Shard(0),), whole.shape))


def _pre_save(unit, prefix, keep_vars):
    _check_kind(unit)
    unit.__dict__["_saving"] = unit._gather_as_params()


def _post_save(unit, destination, prefix, local_metadata):
    sharded = _check_kind(unit)
    config = unit._state_dict_config
    inner = prefix + WRAPPED + "."
    moved = [(k, destination.pop(k)) for k in [k for k in destination if k.startswith(inner)]]
    for key, value in moved:
        destination[prefix + key[len(inner):]] = value
    for fqns in unit._unit_fqns:
        for fqn in fqns:
            key = prefix + fqn
            if key in destination:
                whole = destination[key].detach()
                if config.offload_to_cpu:
                    whole = whole.cpu()
                destination[key] = shard_of(unit, whole) if sharded else whole.clone()
    if getattr(config, "rank0_only", False) and unit.rank != 0:
        for key in [k for k in destination if k.startswith(prefix)]:
            del destination[key]
    unit._release(unit.__dict__.pop("_saving"), writeback=False)
    return destination


def _pre_load(unit, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
              error_msgs):
    _check_kind(unit)
    inner = prefix + WRAPPED + "."
    for key in [k for k in state_dict if k.startswith(prefix) and not k.startswith(inner)]:
        state_dict[inner + key[len(prefix):]] = state_dict.pop(key)
    for fqns in unit._unit_fqns:
        for fqn in fqns:
            value = state_dict.get(inner + fqn)
            if isinstance(value, DTensor):
                state_dict[inner + fqn] = value.full_tensor()
    unit.__dict__["_loading"] = unit._gather_as_params()


def _post_load(unit, incompatible_keys):
    for keys in (incompatible_keys.missing_keys, incompatible_keys.unexpected_keys):
        keys[:] = [k.replace(WRAPPED + ".", "") for k in keys]
    unit._release(unit.__dict__.pop("_loading"), writeback=True)
