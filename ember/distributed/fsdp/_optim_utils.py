"""FSDP1's optimizer state dicts: `optim_state_dict` gathers the optimizer's per-shard state
into state per original parameter name (each state tensor whole, or with
SHARDED_STATE_DICT a DTensor sharded on dim 0); `to_load` cuts such a dict back into this
rank's shard-shaped state for `optim.load_state_dict`.

The optimizer holds either flat shards (`use_orig_params=False`) or the original parameters'
pieces of them (`use_orig_params=True`, where a rank whose piece is empty has no state for
it). Ranks first agree on which state each parameter has (an all-gather of plain values,
never pickled), then gather each state tensor in the flat layout and cut it per parameter."""
import numpy as np

from ... import dtypes as _dt
from ... import ops as _ops
from ..._tensor import Tensor
from .. import _wire
from .. import distributed_c10d as _c10d
from ..tensor import DTensor
from ._init_utils import WRAPPED
from .api import FullOptimStateDictConfig, StateDictType

__all__ = []


def _param_info(model):
    """{id(optimizer parameter): (kind, unit, flat, entry or None, [names])} where kind is
    "flat" (a unit's flat shard), "orig" (an original parameter's piece) or "plain"."""
    from .fully_sharded_data_parallel import FullyShardedDataParallel as FSDP
    info = {}
    for path, unit in model.named_modules():
        if not isinstance(unit, FSDP) or unit._flat is None:
            continue
        base = path.replace(WRAPPED + ".", "").replace(WRAPPED, "")
        flat = unit._flat
        names = [f"{base}.{fqns[0]}" if base else fqns[0] for fqns in unit._unit_fqns]
        if unit._use_orig_params:
            for e, name in zip(flat.entries, names):
                info[id(e.param)] = ("orig", unit, flat, e, [name])
        else:
            info[id(flat.sharded)] = ("flat", unit, flat, None, names)
    for name, p in model.named_parameters():
        info.setdefault(id(p), ("plain", None, None, None, [name.replace(WRAPPED + ".", "")]))
    return info


def _all_gather_plain(value):
    """Every rank's `value` (plain data: see `_wire`), through tensor collectives."""
    data = np.frombuffer(_wire.encode(value), dtype=np.uint8)
    n = _c10d.get_world_size()
    sizes = _ops.zeros(n, dtype=_dt.int64)
    _c10d.all_gather_into_tensor(sizes, _ops.tensor([len(data)], dtype=_dt.int64))
    width = int(sizes.max().item())
    mine = _ops.zeros(width, dtype=_dt.uint8)
    mine[:len(data)] = _ops.tensor(data)
    gathered = _ops.zeros(n * width, dtype=_dt.uint8)
    _c10d.all_gather_into_tensor(gathered, mine)
    rows = gathered.view(n, width).numpy()
    return [_wire.decode(rows[r, :int(sizes[r])].tobytes()) for r in range(n)]


def _describe(value, param):
    if isinstance(value, Tensor):
        if value.dim() == 0:
            return ["scalar", value.item(), value.dtype.name]
        return ["tensor", value.dtype.name]
    return ["value", value]


def _gather_flat(unit, flat, local):
    if flat.shard_size == 1:
        return local
    out = local.new_empty(flat.shard_size * flat.rows)
    _c10d.all_gather_into_tensor(out, local.contiguous(), group=unit.process_group)
    return out


def optim_state_dict(model, optim, osd=None):
    osd = osd if osd is not None else optim.state_dict()
    unit = _first_unit(model)
    config = unit._optim_state_dict_config if unit else FullOptimStateDictConfig()
    sharded = unit is not None and unit._state_dict_type is StateDictType.SHARDED_STATE_DICT
    params = [p for g in optim.param_groups for p in g["params"]]
    info = _param_info(model)
    local = [[[k, _describe(v, p)] for k, v in osd["state"].get(i, {}).items()]
             for i, p in enumerate(params)]
    everyone = _all_gather_plain(local) if _c10d.is_initialized() else [local]
    state = {}
    for i, p in enumerate(params):
        kind, unit_i, flat, entry, names = info[id(p)]
        described = {}
        for rank_view in everyone:
            for key, how in rank_view[i]:
                described.setdefault(key, how)
        mine = osd["state"].get(i, {})
        for key, how in described.items():
            for name, value in _whole(kind, unit_i, flat, entry, names, mine.get(key), how,
                                      p).items():
                if isinstance(value, Tensor):
                    value = value.cpu() if config.offload_to_cpu else value
                    if sharded and value.dim() > 0 and unit_i is not None and \
                            flat.shard_size > 1:
                        from ._state_dict_utils import shard_of
                        value = shard_of(unit_i, value)
                state.setdefault(name, {})[key] = value
    groups = []
    for saved, group in zip(osd["param_groups"], optim.param_groups):
        names = [n for p in group["params"] for n in info[id(p)][4]]
        groups.append({**{k: v for k, v in saved.items() if k != "params"}, "params": names})
    if getattr(config, "rank0_only", False) and _c10d.get_rank() != 0:
        return {}
    return {"state": state, "param_groups": groups}


def _whole(kind, unit, flat, entry, names, value, how, param):
    """{name: the whole state value} of one optimizer parameter's state `how`."""
    if how[0] == "scalar":
        v = _ops.tensor(how[1], dtype=getattr(_dt, how[2]))
        return {n: v.clone() for n in names}
    if how[0] == "value" or kind == "plain":
        return {n: value for n in names}
    dtype = getattr(_dt, how[1])
    if kind == "flat":
        local = value if value is not None else \
            _ops.zeros(flat.rows, dtype=dtype, device=flat.sharded.device)
    else:
        local = _ops.zeros(flat.rows, dtype=dtype, device=flat.sharded.device)
        if value is not None:
            start, length = flat.piece(entry)
            local.narrow(0, start, length).copy_(value.detach().reshape(-1))
    full = _gather_flat(unit, flat, local.detach())
    entries = flat.entries if kind == "flat" else [entry]
    return {n: flat.unflatten(full, e).clone() for n, e in zip(names, entries)}


def to_load(model, optim, osd):
    params = [p for g in optim.param_groups for p in g["params"]]
    info = _param_info(model)
    whole = {name: {k: v.full_tensor() if isinstance(v, DTensor) else v
                    for k, v in values.items()} for name, values in osd["state"].items()}
    state = {}
    for i, p in enumerate(params):
        kind, unit, flat, entry, names = info[id(p)]
        if kind == "plain":
            if names[0] in whole:
                state[i] = dict(whole[names[0]])
            continue
        entries = flat.entries if kind == "flat" else [entry]
        values = [whole.get(n, {}) for n in names]
        keys = list(dict.fromkeys(k for v in values for k in v))
        for key in keys:
            sample = next(v[key] for v in values if key in v)
            if not (isinstance(sample, Tensor) and sample.dim() > 0):
                state.setdefault(i, {})[key] = sample.clone() if isinstance(sample, Tensor) \
                    else sample
                continue
            full = _ops.zeros(flat.global_shape, dtype=sample.dtype, device=flat.sharded.device)
            for e, v in zip(entries, values):
                if key in v:
                    flat.unflatten(full, e).copy_(v[key])
            local = full.narrow(0, flat.start, flat.rows)
            piece = local if kind == "flat" else flat.sharded_view(entry, local)
            state.setdefault(i, {})[key] = piece.clone()
    ids, groups = iter(range(len(params))), []
    for saved, group in zip(osd["param_groups"], optim.param_groups):
        groups.append({**{k: v for k, v in saved.items() if k != "params"},
                       "params": [next(ids) for _ in group["params"]]})
    return {"state": state, "param_groups": groups}


def _first_unit(model):
    from .fully_sharded_data_parallel import FullyShardedDataParallel as FSDP
    return next((m for m in model.modules() if isinstance(m, FSDP)), None)
