"""`torch.distributed.checkpoint.save`: every rank saves its part of one state dict."""
import os
import warnings

from .. import distributed_c10d as _c10d
from .default_planner import DefaultSavePlanner
from .filesystem import FileSystemWriter
from .utils import _DistWrapper

__all__ = ["save", "save_state_dict"]


def _use_dist(no_dist, what):
    use = not no_dist and _c10d.is_available() and _c10d.is_initialized()
    if not no_dist and not use:
        warnings.warn(f"torch.distributed is disabled, unavailable or uninitialized, assuming "
                      f"the intent is to {what} in a single process.", stacklevel=3)
    return use


def storage_for(given, checkpoint_id, default):
    """The storage layer to use: the given one (reset to `checkpoint_id`), else the default
    (file system) one for a path."""
    if given is None:
        if checkpoint_id is None:
            raise RuntimeError("`checkpoint_id` must be specified if storage_writer/"
                               "storage_reader is None.")
        given = default(checkpoint_id)
    given.reset(checkpoint_id)
    return given


def save(state_dict, *, checkpoint_id=None, storage_writer=None, planner=None,
         process_group=None, no_dist=False, use_collectives=True):
    """Save `state_dict` (tensors, DTensors, and objects, nested in dicts and lists) in SPMD
    style: each rank writes the items it holds (a DTensor's shard; a tensor every rank holds
    is written by one of them), the coordinator (rank 0) the metadata. Returns the
    checkpoint's Metadata. Objects with a `state_dict()` (a module, an optimizer) are saved
    through it."""
    if isinstance(checkpoint_id, os.PathLike):
        checkpoint_id = os.fspath(checkpoint_id)
    storage_writer = storage_for(storage_writer, checkpoint_id, FileSystemWriter)
    state_dict = {k: v.state_dict() if _stateful(v) else v for k, v in state_dict.items()}
    dist = _DistWrapper(process_group, _use_dist(no_dist, "save"))
    planner = planner if planner is not None else DefaultSavePlanner()
    global_metadata = None

    def local_step():
        planner.set_up_planner(state_dict, storage_writer.storage_meta(), dist.is_coordinator)
        storage_writer.set_up_storage_writer(dist.is_coordinator, rank=dist.rank,
                                             use_collectives=use_collectives)
        return storage_writer.prepare_local_plan(planner.create_local_plan())

    def global_step(all_plans):
        nonlocal global_metadata
        all_plans, global_metadata = planner.create_global_plan(all_plans)
        return storage_writer.prepare_global_plan(all_plans)

    central_plan = dist.reduce_scatter("plan", local_step, global_step)

    def write_data():
        final = planner.finish_plan(central_plan)
        return storage_writer.write_data(final, planner).wait()

    def finish(all_results):
        storage_writer.finish(metadata=global_metadata, results=all_results)
        return global_metadata

    return dist.all_reduce("write", write_data, finish)


def _stateful(value):
    return callable(getattr(value, "state_dict", None)) and \
        callable(getattr(value, "load_state_dict", None)) and not isinstance(value, dict)


def save_state_dict(state_dict, storage_writer, process_group=None, coordinator_rank=0,
                    no_dist=False, planner=None):
    warnings.warn("'save_state_dict' is deprecated and will be removed in future versions."
                  "Please use 'save' instead.", FutureWarning, stacklevel=2)
    storage_writer.reset()
    return save(state_dict, storage_writer=storage_writer, process_group=process_group,
                no_dist=no_dist, planner=planner)
