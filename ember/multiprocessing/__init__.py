"""`ember.multiprocessing`: Python's multiprocessing, with PyTorch's additions: `spawn`, the
sharing strategies, and queues and a pool that pickle with the reductions of `reductions`.
A CPU tensor in shared memory crosses as that memory (a memfd's descriptor); any other tensor
crosses by value (its host array), as a copy."""
import multiprocessing
import sys
from multiprocessing import *  # noqa: F401,F403

from . import pool, queue, reductions
from .spawn import (ProcessContext, ProcessException, ProcessExitedException,
                    ProcessRaisedException, SpawnContext, spawn, start_processes)

__all__ = ["set_sharing_strategy", "get_sharing_strategy", "get_all_sharing_strategies"]
__all__ += multiprocessing.__all__

# PyTorch's strategies for sharing CPU tensors: file descriptors where the platform passes
# them (Linux), else named files. ember passes shared tensors by descriptor whichever is
# chosen; the setting is kept so code that picks one runs and reads back what it set.
if sys.platform in ("darwin", "win32"):
    _all_sharing_strategies = {"file_system"}
    _sharing_strategy = "file_system"
else:
    _all_sharing_strategies = {"file_descriptor", "file_system"}
    _sharing_strategy = "file_descriptor"


def set_sharing_strategy(new_strategy):
    """Set the strategy for sharing CPU tensors, one of `get_all_sharing_strategies()`."""
    global _sharing_strategy
    if new_strategy not in _all_sharing_strategies:
        raise AssertionError(f"invalid sharing strategy {new_strategy!r}, expected one of "
                             f"{_all_sharing_strategies}")
    _sharing_strategy = new_strategy


def get_sharing_strategy():
    return _sharing_strategy


def get_all_sharing_strategies():
    return _all_sharing_strategies


reductions.init_reductions()
