"""`torch.distributed.checkpoint.load`: every rank loads its part of a checkpoint into its
state dict, in place."""
import os
import warnings

from .default_planner import DefaultLoadPlanner
from .filesystem import FileSystemReader
from .state_dict_saver import _stateful, _use_dist, storage_for
from .utils import _DistWrapper

__all__ = ["load", "load_state_dict"]


def load(state_dict, *, checkpoint_id=None, storage_reader=None, planner=None,
         process_group=None, no_dist=False):
    """Fill `state_dict` from the checkpoint: each tensor (each DTensor's local shard) is
    copied into from the stored chunks it overlaps, whatever world size wrote them; stored
    objects replace the state dict's values. Objects with `load_state_dict` (a module, an
    optimizer) are loaded through their state dicts."""
    if isinstance(checkpoint_id, os.PathLike):
        checkpoint_id = os.fspath(checkpoint_id)
    storage_reader = storage_for(storage_reader, checkpoint_id, FileSystemReader)
    stateful = {k: v for k, v in state_dict.items() if _stateful(v)}
    flat = {k: v.state_dict() if k in stateful else v for k, v in state_dict.items()}
    dist = _DistWrapper(process_group, _use_dist(no_dist, "load"))
    planner = planner if planner is not None else DefaultLoadPlanner()

    def local_step():
        metadata = storage_reader.read_metadata()
        planner.set_up_planner(flat, metadata, dist.is_coordinator)
        storage_reader.set_up_storage_reader(metadata, dist.is_coordinator)
        return storage_reader.prepare_local_plan(planner.create_local_plan())

    def global_step(all_plans):
        return storage_reader.prepare_global_plan(planner.create_global_plan(all_plans))

    central_plan = dist.reduce_scatter("plan", local_step, global_step)

    def read_data():
        final = planner.finish_plan(central_plan)
        storage_reader.read_data(final, planner).wait()

    dist.all_gather("read", read_data)
    for key, obj in stateful.items():
        obj.load_state_dict(flat[key])
    state_dict.update({k: v for k, v in flat.items() if k not in stateful})


def load_state_dict(state_dict, storage_reader, process_group=None, coordinator_rank=0,
                    no_dist=False, planner=None):
    warnings.warn("'load_state_dict' is deprecated and will be removed in future versions. "
                  "Please use 'load' instead.", FutureWarning, stacklevel=2)
    storage_reader.reset()
    return load(state_dict, storage_reader=storage_reader, process_group=process_group,
                no_dist=no_dist, planner=planner)
