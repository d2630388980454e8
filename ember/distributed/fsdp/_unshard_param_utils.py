"""FSDP1's whole parameters outside forward: `summon_full_params`, and the gather / release
that state dicts use. A unit is gathered in full precision (mixed precision is for compute)
and its original parameters registered whole under their own names; on release, what was
written into them is copied back into this rank's shard (`writeback`) and the unit
reshards."""
import contextlib
from enum import Enum, auto

from ... import ops as _ops
from .. import distributed_c10d as _c10d

__all__ = []


class TrainingState(Enum):
    IDLE = auto()
    FORWARD_BACKWARD = auto()
    SUMMON_FULL_PARAMS = auto()


def gather_as_params(unit, offload_to_cpu=False):
    """Gather `unit` and register its original parameters, whole; returns what `release`
    needs."""
    state, flat = unit._fsdp_state, unit._flat
    state.reshard()
    state.unshard(full_precision=True)
    if flat is None:
        return None
    saved = flat.register_as_params()
    if offload_to_cpu:
        for e in flat.entries:
            value = flat.registered(e)
            if value.device.type != "cpu":
                for m, name in e.places:
                    m._parameters[name] = type(value)(value.cpu(), value.requires_grad)
    return saved


def release(unit, saved, writeback):
    if unit._flat is not None:
        if writeback:
            unit._flat.writeback()
        unit._flat.restore(saved)
    unit._fsdp_state.reshard()


def gather_grads(unit):
    """`summon_full_params(with_grads=True)`: the whole gradients on the gathered
    parameters."""
    flat = unit._flat
    if flat is None:
        return
    local = flat.local_grad()
    if local is None:
        local = _ops.zeros(flat.rows, dtype=flat.sharded.dtype, device=flat.sharded.device)
    full = local
    if flat.shard_size > 1:
        full = local.new_empty(flat.shard_size * flat.rows)
        _c10d.all_gather_into_tensor(full, local.contiguous(), group=unit.process_group)
    for e in flat.entries:
        if e.requires_grad:
            flat.registered(e).grad = flat.unflatten(full, e).clone()


@contextlib.contextmanager
def summon(units, writeback, rank0_only, offload_to_cpu, with_grads):
    if writeback and rank0_only:
        raise NotImplementedError("writeback=True and rank0_only=True is not supported yet")
    if with_grads and any(not u._use_orig_params for u in units):
        raise NotImplementedError(f"with_grads=True, use_orig_params=False, "
                                  f"offload_to_cpu={offload_to_cpu} is not supported yet")
    if any(u.training_state is TrainingState.SUMMON_FULL_PARAMS for u in units):
        yield  # already whole: an outer summon_full_params holds them
        return
    entered = []
    try:
        for unit in units:
            saved = None
            if not (rank0_only and unit.rank != 0):
                saved = gather_as_params(unit, offload_to_cpu)
                if with_grads:
                    gather_grads(unit)
            entered.append((unit, saved))
            unit.training_state = TrainingState.SUMMON_FULL_PARAMS
        yield
    finally:
        for unit, saved in reversed(entered):
            unit.training_state = TrainingState.IDLE
            if not (rank0_only and unit.rank != 0):
                release(unit, saved, writeback)
