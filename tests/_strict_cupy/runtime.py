"""The stand-in's runtime: the device's properties, CUDA's runtime errors, streams, and a
memory pool that behaves as CuPy's does towards its memory hooks (blocks rounded up to 512
bytes, cached when freed and reused for a request that fits, new segments from the "driver"
only when no cached block fits; free_all_blocks gives the cached ones back). torch.cuda's
device queries and memory statistics talk to these."""
_ROUND = 512


class CUDARuntimeError(RuntimeError):
    _NAMES = {400: ("cudaErrorInvalidResourceHandle", "invalid resource handle"),
              2: ("cudaErrorMemoryAllocation", "out of memory"),
              34: ("cudaErrorNotReady", "device not ready")}

    def __init__(self, status):
        name, text = self._NAMES.get(status, ("cudaErrorUnknown", "unknown error"))
        super().__init__(f"{name}: {text}")


class MemoryPool:
    def __init__(self, hooks):
        self._hooks = hooks
        self._in_use = {}   # pointer -> rounded size
        self._cached = []   # (pointer, rounded size) of freed blocks
        self._segments = {}  # pointer -> size, as the driver gave them
        self._next = 1 << 20

    def _call(self, method, **kwargs):
        for hook in self._hooks.values():
            getattr(hook, method)(**kwargs)

    def malloc(self, size):
        rounded = -(-size // _ROUND) * _ROUND
        self._call("malloc_preprocess", device_id=0, size=size, mem_size=rounded)
        for i, (pointer, cached_size) in enumerate(self._cached):
            if cached_size == rounded:
                del self._cached[i]
                break
        else:
            self._call("alloc_preprocess", device_id=0, mem_size=rounded)
            pointer, self._next = self._next, self._next + rounded
            self._segments[pointer] = rounded
            self._call("alloc_postprocess", device_id=0, mem_size=rounded, mem_ptr=pointer)
        self._in_use[pointer] = rounded
        self._call("malloc_postprocess", device_id=0, size=size, mem_size=rounded,
                   mem_ptr=pointer, pmem_id=pointer)
        return pointer

    def free(self, pointer):
        rounded = self._in_use.pop(pointer)
        self._call("free_preprocess", device_id=0, mem_size=rounded, mem_ptr=pointer,
                   pmem_id=pointer)
        self._cached.append((pointer, rounded))
        self._call("free_postprocess", device_id=0, mem_size=rounded, mem_ptr=pointer,
                   pmem_id=pointer)

    def used_bytes(self):
        return sum(self._in_use.values())

    def total_bytes(self):
        return sum(self._segments.values())

    def free_all_blocks(self):
        for pointer, _ in self._cached:
            del self._segments[pointer]
        self._cached.clear()


class Stream:
    """A CUDA stream: its address, and whether it is the current one."""

    _next = 0x1000
    current = None

    def __init__(self, non_blocking=False, priority=0, ptr=None):
        if ptr is None:
            ptr, Stream._next = Stream._next, Stream._next + 0x10
        self.ptr, self.priority, self.done = ptr, priority, True

    def use(self):
        Stream.current = self
        return self

    def synchronize(self):
        pass

    def is_capturing(self):
        return False

    def record(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def wait_event(self, event):
        pass

    @property
    def is_non_blocking(self):
        return False


class ExternalStream(Stream):
    def __init__(self, ptr, device_id=-1):
        super().__init__(ptr=ptr)


class Event:
    """A CUDA event: recorded at a moment (the stand-in's work is done when it is queued)."""

    _next = 0x9000

    def __init__(self, block=False, disable_timing=False, interprocess=False):
        self.ptr, Event._next = Event._next, Event._next + 0x10
        self._timing, self._at = not disable_timing, None
        self.done = True

    def record(self, stream=None):
        import time
        self._at = time.perf_counter()

    def synchronize(self):
        pass


def get_elapsed_time(start, end):
    """Milliseconds between two recorded events, as cupy.cuda.get_elapsed_time."""
    if not (start._timing and end._timing) or start._at is None or end._at is None:
        raise CUDARuntimeError(400)
    return (end._at - start._at) * 1e3


Stream.null = Stream(ptr=0)
Stream.current = Stream.null


PROPERTIES = {"name": b"Stand-in GPU", "major": 8, "minor": 6, "totalGlobalMem": 24 << 30,
              "multiProcessorCount": 84, "l2CacheSize": 6 << 20, "uuid": bytes(range(16)),
              "pciBusID": 1, "pciDeviceID": 0, "pciDomainID": 0, "warpSize": 32}


class PinnedMemoryPointer(bytearray):
    """Page-locked host memory (cupy.cuda.alloc_pinned_memory): a host buffer NumPy can read."""


def alloc_pinned_memory(nbytes):
    return PinnedMemoryPointer(nbytes)
