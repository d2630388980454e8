"""Keeps large freed blocks in the heap (glibc only), set once at import.

glibc hands a freed block of more than its mmap threshold back to the OS and trims the heap
top past its trim threshold; the next allocation of that size then faults every page in
afresh. A training step allocates and frees the same few-MB activations and gradients on
every iteration, so with glibc's defaults a small CNN's step spent about a third of its time
in page faults (13-15 ms -> 9-10 ms on 2 cores; an MLP's larger, longer-lived blocks did not
change; peak RSS did not change). Both thresholds are fixed at glibc's own dynamic maxima
(32 MB and twice that), which it reaches by itself only after freeing a block that large.
A process that sets MALLOC_MMAP_THRESHOLD_ or MALLOC_TRIM_THRESHOLD_ keeps its own choice.
"""
import ctypes
import os
import platform

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20


def _keep_freed_blocks():
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    if "MALLOC_MMAP_THRESHOLD_" in os.environ or "MALLOC_TRIM_THRESHOLD_" in os.environ:
        return False
    try:
        libc = ctypes.CDLL(None)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    return bool(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) and \
        bool(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD))


tuned = _keep_freed_blocks()


# --- CUDA: the statistics of ember's caching allocator (CuPy's memory pool) -----------------
# CuPy's pool reports only what it holds now (used_bytes, total_bytes). PyTorch's allocator
# also keeps peaks, running totals and counts (torch.cuda.memory_stats), which scripts read to
# size batches: max_memory_allocated. CuPy calls a memory hook on every allocation from the
# pool, every return to it and every new segment from the driver, so a hook keeps them here.
# CuPy's hooks are per thread: the hook is entered on the thread that first imports CuPy (the
# one that computes, in ember); the current figures are resynchronised with the pool whenever
# they are read, so a block freed on another thread cannot leave them high.

SMALL_BLOCK = 1 << 20  # PyTorch's small pool holds blocks of at most 1 MiB
POOLS = ("all", "small_pool", "large_pool")
PER_POOL = ("allocated_bytes", "active_bytes", "requested_bytes", "reserved_bytes",
            "inactive_split_bytes", "allocation", "active", "segment", "inactive_split")
COUNTS = ("num_alloc_retries", "num_ooms", "num_sync_all_streams", "num_device_alloc",
          "num_device_free")


class Counter:
    """A quantity's current value, its peak, and how much of it was ever added and removed."""

    __slots__ = ("current", "peak", "allocated", "freed")

    def __init__(self):
        self.current = self.peak = self.allocated = self.freed = 0

    def add(self, amount):
        self.current += amount
        self.allocated += amount
        if self.current > self.peak:
            self.peak = self.current

    def remove(self, amount):
        self.current -= amount
        self.freed += amount

    def reset_peak(self):
        self.peak = self.current

    def reset_accumulated(self):
        self.allocated = self.freed = 0


class DeviceMemoryStats:
    """One device's counters, under PyTorch's names ("allocated_bytes.all.peak" ...)."""

    def __init__(self):
        self.counters = {(name, pool): Counter() for name in PER_POOL for pool in POOLS}
        self.counts = dict.fromkeys(COUNTS, 0)
        self.requested = {}  # pointer -> bytes asked for (the pool rounds them up)

    def _add(self, name, pool, amount):
        self.counters[name, "all"].add(amount)
        self.counters[name, pool].add(amount)

    def _remove(self, name, pool, amount):
        self.counters[name, "all"].remove(amount)
        self.counters[name, pool].remove(amount)

    def block_allocated(self, pointer, size, rounded):
        pool = "small_pool" if rounded <= SMALL_BLOCK else "large_pool"
        self.requested[pointer] = size
        for name, amount in (("allocated_bytes", rounded), ("active_bytes", rounded),
                             ("requested_bytes", size), ("allocation", 1), ("active", 1)):
            self._add(name, pool, amount)

    def block_freed(self, pointer, rounded):
        pool = "small_pool" if rounded <= SMALL_BLOCK else "large_pool"
        size = self.requested.pop(pointer, rounded)
        for name, amount in (("allocated_bytes", rounded), ("active_bytes", rounded),
                             ("requested_bytes", size), ("allocation", 1), ("active", 1)):
            self._remove(name, pool, amount)

    def segment_allocated(self, size):
        pool = "small_pool" if size <= SMALL_BLOCK else "large_pool"
        self._add("reserved_bytes", pool, size)
        self._add("segment", pool, 1)
        self.counts["num_device_alloc"] += 1

    def segments_released(self, released):
        """The pool gave `released` bytes of cached segments back to the driver. CuPy does not
        say which segments went, so their count (segment, num_device_free) is not known, and
        the bytes are taken off the large pool first (where nearly all of a pool's bytes
        are)."""
        self.counters["reserved_bytes", "all"].remove(released)
        for pool in ("large_pool", "small_pool"):
            part = min(released, self.counters["reserved_bytes", pool].current)
            self.counters["reserved_bytes", pool].remove(part)
            released -= part

    def resync(self, used, total):
        """Bring the current figures to what the pool holds now (`used` in tensors, `total`
        reserved): frees seen by no hook, segments released by the pool itself."""
        allocated = self.counters["allocated_bytes", "all"]
        if used < allocated.current:
            unseen = allocated.current - used
            for name in ("allocated_bytes", "active_bytes"):
                self.counters[name, "all"].remove(unseen)
        reserved = self.counters["reserved_bytes", "all"]
        if total < reserved.current:
            self.segments_released(reserved.current - total)

    def as_flat_dict(self):
        stats = {f"{name}.{pool}.{field}": getattr(counter, field)
                 for (name, pool), counter in self.counters.items()
                 for field in Counter.__slots__}
        for name in ("oversize_allocations", "oversize_segments"):  # no max_split_size here
            stats.update({f"{name}.{field}": 0 for field in Counter.__slots__})
        stats.update(self.counts)
        stats["max_split_size"] = -1
        return stats

    def reset_peak(self):
        for counter in self.counters.values():
            counter.reset_peak()

    def reset_accumulated(self):
        for counter in self.counters.values():
            counter.reset_accumulated()
        self.counts = dict.fromkeys(COUNTS, 0)


class CudaMemoryStats:
    """CuPy's memory hook (its six callbacks) feeding one DeviceMemoryStats per device."""

    name = "ember.cuda.memory_stats"

    def __init__(self):
        self.devices = {}

    def device(self, index):
        stats = self.devices.get(index)
        if stats is None:
            stats = self.devices[index] = DeviceMemoryStats()
        return stats

    def malloc_postprocess(self, device_id, size, mem_size, mem_ptr, pmem_id, **_):
        if mem_ptr:
            self.device(device_id).block_allocated(mem_ptr, size, mem_size)
        else:
            self.device(device_id).counts["num_ooms"] += 1

    def free_postprocess(self, device_id, mem_size, mem_ptr, pmem_id, **_):
        self.device(device_id).block_freed(mem_ptr, mem_size)

    def alloc_postprocess(self, device_id, mem_size, mem_ptr, **_):
        if mem_ptr:
            self.device(device_id).segment_allocated(mem_size)

    def malloc_preprocess(self, **_):
        pass

    def free_preprocess(self, **_):
        pass

    def alloc_preprocess(self, **_):
        pass


cuda_memory_stats = None  # the hook, once CuPy is loaded


def track_cuda_memory(cupy):
    """Enter the statistics hook into `cupy` (once); return it."""
    global cuda_memory_stats
    if cuda_memory_stats is None:
        hook = CudaMemoryStats()
        cupy.cuda.memory_hook.get_memory_hooks()[hook.name] = hook
        cuda_memory_stats = hook
    return cuda_memory_stats
