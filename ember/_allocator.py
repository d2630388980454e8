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
import sys

_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3
MMAP_THRESHOLD = 32 << 20
TRIM_THRESHOLD = 64 << 20


def _glibc():
    """Whether this process runs on glibc. Asked of the C library itself: cheaper than
    platform.libc_ver(), which imports `platform` and scans the Python binary's bytes."""
    try:
        return (os.confstr("CS_GNU_LIBC_VERSION") or "").startswith("glibc")
    except (AttributeError, ValueError, OSError):
        return False


def _keep_freed_blocks():
    if not sys.platform.startswith("linux") or not _glibc():
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


# The counters kept on every allocation and free, in one flat list (the hook runs on every
# block, so it touches list slots, not objects): for each pool (all, small, large), for each
# quantity (bytes in tensors, blocks, bytes asked for), current/peak/allocated/freed.
_BLOCK_QUANTITIES = ("allocated_bytes", "allocation", "requested_bytes")
_FIELDS = Counter.__slots__
_ALL, _SMALL, _LARGE = 0, 12, 24  # each pool's offset in the list


class DeviceMemoryStats:
    """One device's counters, under PyTorch's names ("allocated_bytes.all.peak" ...)."""

    def __init__(self):
        self.blocks = [0] * 36
        self.segments = {(name, pool): Counter() for name in ("reserved_bytes", "segment")
                         for pool in POOLS}
        self.counts = dict.fromkeys(COUNTS, 0)
        self.requested = {}  # pointer -> bytes asked for (the pool rounds them up)
        # (blocks taken and returned are counted by CudaMemoryStats' callbacks, in `blocks`)

    def segment_allocated(self, size):
        pool = "small_pool" if size <= SMALL_BLOCK else "large_pool"
        for name, amount in (("reserved_bytes", size), ("segment", 1)):
            self.segments[name, "all"].add(amount)
            self.segments[name, pool].add(amount)
        self.counts["num_device_alloc"] += 1

    def segments_released(self, released):
        """The pool gave `released` bytes of cached segments back to the driver. CuPy does not
        say which segments went, so their count (segment, num_device_free) is not known, and
        the bytes are taken off the large pool first (where nearly all of a pool's bytes
        are)."""
        self.segments["reserved_bytes", "all"].remove(released)
        for pool in ("large_pool", "small_pool"):
            part = min(released, self.segments["reserved_bytes", pool].current)
            self.segments["reserved_bytes", pool].remove(part)
            released -= part

    def resync(self, used, total):
        """Bring the current figures to what the pool holds now (`used` in tensors, `total`
        reserved): frees seen by no hook, segments released by the pool itself."""
        v = self.blocks
        if used < v[_ALL]:
            v[_ALL + 3] += v[_ALL] - used
            v[_ALL] = used
        reserved = self.segments["reserved_bytes", "all"].current
        if total < reserved:
            self.segments_released(reserved - total)

    def as_flat_dict(self):
        stats = {}
        for pool, offset in zip(POOLS, (_ALL, _SMALL, _LARGE)):
            for k, name in enumerate(_BLOCK_QUANTITIES):
                values = self.blocks[offset + 4 * k: offset + 4 * k + 4]
                stats.update({f"{name}.{pool}.{f}": x for f, x in zip(_FIELDS, values)})
            for name, same_as in (("active_bytes", "allocated_bytes"), ("active", "allocation")):
                # CuPy returns a freed block to the pool at once: active is allocated
                stats.update({f"{name}.{pool}.{f}": stats[f"{same_as}.{pool}.{f}"]
                              for f in _FIELDS})
            for name in ("inactive_split_bytes", "inactive_split"):  # CuPy splits no blocks
                stats.update({f"{name}.{pool}.{f}": 0 for f in _FIELDS})
        for (name, pool), counter in self.segments.items():
            stats.update({f"{name}.{pool}.{f}": getattr(counter, f) for f in _FIELDS})
        for name in ("oversize_allocations", "oversize_segments"):  # no max_split_size here
            stats.update({f"{name}.{f}": 0 for f in _FIELDS})
        stats.update(self.counts)
        stats["max_split_size"] = -1
        return stats

    def reset_peak(self):
        v = self.blocks
        for o in range(0, 36, 4):
            v[o + 1] = v[o]
        for counter in self.segments.values():
            counter.reset_peak()

    def reset_accumulated(self):
        v = self.blocks
        for o in range(0, 36, 4):
            v[o + 2] = v[o + 3] = 0
        for counter in self.segments.values():
            counter.reset_accumulated()
        self.counts = dict.fromkeys(COUNTS, 0)


class CudaMemoryStats:
    """CuPy's memory hook (its six callbacks) feeding one DeviceMemoryStats per device.

    CuPy calls a hook on every allocation and free of a training step (thousands a step), so
    each event costs one Python frame: the block callbacks do their arithmetic in place on the
    flat list (no calls further down), and the three `*_preprocess` callbacks, which CuPy calls with keywords
    only and whose work is nothing, are the builtin `dict`: it takes any keywords and runs
    without a Python frame."""

    name = "ember.cuda.memory_stats"
    malloc_preprocess = free_preprocess = alloc_preprocess = staticmethod(dict)

    def __init__(self):
        self.devices = {}

    def device(self, index):
        stats = self.devices.get(index)
        if stats is None:
            stats = self.devices[index] = DeviceMemoryStats()
        return stats

    def malloc_postprocess(self, device_id, size, mem_size, mem_ptr, pmem_id, **_):
        """A block of `mem_size` bytes (`size` asked for) taken from the pool: counted in all
        blocks and in its pool, current/peak/allocated of bytes, blocks and bytes asked for."""
        stats = self.devices.get(device_id) or self.device(device_id)
        if not mem_ptr:
            stats.counts["num_ooms"] += 1
            return
        stats.requested[mem_ptr] = size
        v = stats.blocks
        for o in (_ALL, _SMALL if mem_size <= SMALL_BLOCK else _LARGE):
            c = v[o] + mem_size
            v[o], v[o + 2] = c, v[o + 2] + mem_size
            if c > v[o + 1]:
                v[o + 1] = c
            c = v[o + 4] + 1
            v[o + 4], v[o + 6] = c, v[o + 6] + 1
            if c > v[o + 5]:
                v[o + 5] = c
            c = v[o + 8] + size
            v[o + 8], v[o + 10] = c, v[o + 10] + size
            if c > v[o + 9]:
                v[o + 9] = c

    def free_postprocess(self, device_id, mem_size, mem_ptr, pmem_id, **_):
        """A block returned to the pool: current and freed of the same three quantities."""
        stats = self.devices.get(device_id) or self.device(device_id)
        size = stats.requested.pop(mem_ptr, mem_size)
        v = stats.blocks
        for o in (_ALL, _SMALL if mem_size <= SMALL_BLOCK else _LARGE):
            v[o], v[o + 3] = v[o] - mem_size, v[o + 3] + mem_size
            v[o + 4], v[o + 7] = v[o + 4] - 1, v[o + 7] + 1
            v[o + 8], v[o + 11] = v[o + 8] - size, v[o + 11] + size

    def alloc_postprocess(self, device_id, mem_size, mem_ptr, **_):
        if mem_ptr:
            self.device(device_id).segment_allocated(mem_size)


cuda_memory_stats = None  # the hook, once CuPy is loaded


def track_cuda_memory(cupy):
    """Enter the statistics hook into `cupy` (once); return it."""
    global cuda_memory_stats
    if cuda_memory_stats is None:
        hook = CudaMemoryStats()
        cupy.cuda.memory_hook.get_memory_hooks()[hook.name] = hook
        cuda_memory_stats = hook
    return cuda_memory_stats
