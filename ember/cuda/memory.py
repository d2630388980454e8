"""`torch.cuda.memory`: what ember's caching allocator on CUDA (CuPy's memory pool) holds:
bytes in tensors (`memory_allocated`), bytes reserved from the driver (`memory_reserved`), their
peaks and running totals (`memory_stats`, kept by the hook in ember/_allocator.py), giving
cached blocks back (`empty_cache`), the device's free and total memory, and a cap on the pool
as a fraction of the device. Without a GPU nothing is allocated: the figures are 0 and the
statistics empty, and the functions that would reset or list the allocator's state fail as
PyTorch's do in a build without CUDA."""
import collections
import contextlib
import warnings

from .. import _allocator
from ..device import backend_of, device as _device
from ._memory_summary import format_summary
from ._nvml import list_gpu_processes
from ._utils import _get_device_index

__all__ = ["empty_cache", "get_per_process_memory_fraction", "mem_get_info", "memory_allocated",
           "memory_cached", "memory_reserved", "set_per_process_memory_fraction",
           "memory_stats", "memory_stats_as_nested_dict", "reset_accumulated_memory_stats",
           "reset_peak_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached",
           "host_memory_stats", "host_memory_stats_as_nested_dict",
           "reset_accumulated_host_memory_stats", "reset_peak_host_memory_stats",
           "max_memory_allocated", "max_memory_reserved", "max_memory_cached",
           "memory_snapshot", "memory_summary", "list_gpu_processes"]


def _available():
    from . import is_available
    return is_available()


def _no_cuda(function):
    """PyTorch's error for an allocator function its build without CUDA does not have."""
    return AttributeError(f"module 'torch._C' has no attribute '{function}'")


@contextlib.contextmanager
def _on(device):
    """CuPy's module with `device` current (its pool is per device)."""
    cp = backend_of(_device("cuda")).xp
    with cp.cuda.Device(_get_device_index(device, optional=True)):
        yield cp


def _stats(device):
    """`device`'s counters, brought up to date with what its pool holds now."""
    with _on(device) as cp:
        tracker = _allocator.cuda_memory_stats or _allocator.track_cuda_memory(cp)
        pool = cp.get_default_memory_pool()
        stats = tracker.device(_get_device_index(device, optional=True))
        stats.resync(pool.used_bytes(), pool.total_bytes())
        return stats


def memory_allocated(device=None):
    """Bytes the tensors on `device` occupy (each block rounded up as the pool allocates)."""
    if not _available():
        return 0
    with _on(device) as cp:
        return cp.get_default_memory_pool().used_bytes()


def memory_reserved(device=None):
    """Bytes the pool holds on `device`: in tensors or cached for reuse."""
    if not _available():
        return 0
    with _on(device) as cp:
        return cp.get_default_memory_pool().total_bytes()


def memory_cached(device=None):
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`",
                  FutureWarning, stacklevel=2)
    return memory_reserved(device)


def memory_stats_as_nested_dict(device=None):
    """The allocator's statistics as nested dicts: {"allocated_bytes": {"all": {"peak": ..."""
    if not _available():
        return {}
    nested = {}
    for key, value in _stats(device).as_flat_dict().items():
        *path, leaf = key.split(".")
        level = nested
        for part in path:
            level = level.setdefault(part, {})
        level[leaf] = value
    return nested


def memory_stats(device=None):
    """The allocator's statistics, keyed "allocated_bytes.all.peak" and so on, sorted:
    current/peak/allocated/freed of bytes and counts in tensors (allocated, active,
    requested) and reserved from the driver (reserved_bytes, segment), for all blocks and
    for the small (<= 1 MiB) and large pools; and counts of out-of-memory errors and of
    driver allocations and frees."""
    if not _available():
        return collections.OrderedDict()
    return collections.OrderedDict(sorted(_stats(device).as_flat_dict().items()))


def max_memory_allocated(device=None):
    """The most bytes tensors occupied on `device` at once (since the start, or the last
    reset_peak_memory_stats)."""
    return memory_stats(device).get("allocated_bytes.all.peak", 0)


def max_memory_reserved(device=None):
    """The most bytes the pool held on `device` at once."""
    return memory_stats(device).get("reserved_bytes.all.peak", 0)


def max_memory_cached(device=None):
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to "
                  "`torch.cuda.max_memory_reserved`", FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def reset_peak_memory_stats(device=None):
    """Start every peak afresh from the current figure."""
    if not _available():
        raise _no_cuda("_cuda_resetPeakMemoryStats")
    _stats(device).reset_peak()


def reset_accumulated_memory_stats(device=None):
    """Zero the running totals (allocated, freed) and the counts of events."""
    if not _available():
        raise _no_cuda("_cuda_resetAccumulatedMemoryStats")
    _stats(device).reset_accumulated()


def _reset_peak_for(old):
    warnings.warn(f"torch.cuda.{old} now calls torch.cuda.reset_peak_memory_stats, which "
                  "resets /all/ peak memory stats.", FutureWarning, stacklevel=3)


def reset_max_memory_allocated(device=None):
    _reset_peak_for("reset_max_memory_allocated")
    return reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None):
    _reset_peak_for("reset_max_memory_cached")
    return reset_peak_memory_stats(device)


def memory_summary(device=None, abbreviated=False):
    """memory_stats as a readable table (PyTorch's layout)."""
    return format_summary(memory_stats(device), _get_device_index(device, optional=True),
                          abbreviated)


def memory_snapshot(mempool_id=None, include_traces=True):
    """PyTorch lists its allocator's segments and their blocks here. CuPy's pool keeps its
    segments to itself, so ember has no such list to give."""
    if not _available():
        raise _no_cuda("_cuda_memorySnapshot")
    raise RuntimeError("memory_snapshot: ember's CUDA allocator (CuPy's memory pool) does not "
                       "expose its segments; memory_stats() has its figures")


# The host side: PyTorch keeps statistics of its caching allocator of pinned host memory.
# ember's host tensors are NumPy arrays from the ordinary heap, so no such allocator exists
# and there is nothing to count: the statistics are empty, as PyTorch's are before any
# pinned allocation.

def host_memory_stats_as_nested_dict():
    return {}


def host_memory_stats():
    return collections.OrderedDict()


def reset_accumulated_host_memory_stats():
    if not _available():
        raise _no_cuda("_cuda_resetAccumulatedHostMemoryStats")


def reset_peak_host_memory_stats():
    if not _available():
        raise _no_cuda("_cuda_resetPeakHostMemoryStats")


def empty_cache():
    """Give the pool's cached, unused blocks back to the driver."""
    if _available():
        cp = backend_of(_device("cuda")).xp
        cp.get_default_memory_pool().free_all_blocks()


def mem_get_info(device=None):
    """(free, total) bytes of the device, as the driver reports them."""
    with _on(device) as cp:
        return cp.cuda.runtime.memGetInfo()


def set_per_process_memory_fraction(fraction, device=None):
    """Cap the pool on `device` at `fraction` of the device's memory: an allocation past it
    fails with out-of-memory."""
    if not isinstance(fraction, float):
        raise TypeError("Invalid type for fraction argument, must be `float`")
    if not 0 <= fraction <= 1:
        raise ValueError(f"Invalid fraction value: {fraction}. Allowed range: 0~1")
    with _on(device) as cp:
        cp.get_default_memory_pool().set_limit(fraction=fraction)


def get_per_process_memory_fraction(device=None):
    """The cap set by set_per_process_memory_fraction (1.0 when there is none)."""
    with _on(device) as cp:
        limit = cp.get_default_memory_pool().get_limit()
        total = cp.cuda.runtime.memGetInfo()[1]
        return 1.0 if limit == 0 else limit / total
