"""A stand-in for the parts of CuPy that torch.cuda's device queries and memory statistics
talk to: the runtime's device properties, NVRTC's architectures, the library handles, and a
memory pool that behaves as CuPy's does towards its memory hooks (blocks rounded up to 512
bytes, cached when freed and reused for a request that fits, new segments from the "driver"
only when no cached block fits; free_all_blocks gives the cached ones back). The `cupy_like`
fixture puts it behind 'cuda' with ember's statistics hook entered into it, as loading CuPy
does."""
import contextlib
import sys
import types

import numpy

_ROUND = 512


class CUDARuntimeError(RuntimeError):
    _NAMES = {2: ("cudaErrorMemoryAllocation", "out of memory"),
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


Stream.null = Stream(ptr=0)
Stream.current = Stream.null


PROPERTIES = {"name": b"Stand-in GPU", "major": 8, "minor": 6, "totalGlobalMem": 24 << 30,
              "multiProcessorCount": 84, "l2CacheSize": 6 << 20, "uuid": bytes(range(16)),
              "pciBusID": 1, "pciDeviceID": 0, "pciDomainID": 0, "warpSize": 32}


def make_cupy_like():
    hooks = {}
    pool = MemoryPool(hooks)
    properties = PROPERTIES
    runtime = types.SimpleNamespace(
        getDeviceCount=lambda: 1, getDeviceProperties=lambda i: dict(properties),
        deviceCanAccessPeer=lambda a, b: 0, memGetInfo=lambda: (20 << 30, 24 << 30),
        CUDARuntimeError=CUDARuntimeError)
    cuda = types.SimpleNamespace(
        Device=lambda index=0: contextlib.nullcontext(), runtime=runtime,
        memory_hook=types.SimpleNamespace(get_memory_hooks=lambda: hooks),
        nvrtc=types.SimpleNamespace(getSupportedArchs=lambda: (75, 80, 86, 90)),
        device=types.SimpleNamespace(get_cublas_handle=lambda: 0x1234,
                                     get_cusolver_handle=lambda: 0x5678),
        Stream=Stream, get_current_stream=lambda: Stream.current)
    Stream.current = Stream.null
    return types.SimpleNamespace(cuda=cuda, get_default_memory_pool=lambda: pool,
                                 empty=lambda n, dtype: numpy.empty(n, dtype))


class CupyLikeBackend:
    """'cuda' on the stand-in: one device, available; its tensors' arrays are NumPy's."""

    name = "cuda"

    def __init__(self):
        self.xp = make_cupy_like()

    def is_available(self):
        return True

    def device_count(self):
        return 1

    def from_host(self, array, index):  # tensors on it stay NumPy arrays, copied
        return numpy.array(array, copy=True)

    def to_host(self, array):
        return numpy.array(array, copy=True)

    def synchronize(self, index):
        pass


@contextlib.contextmanager
def cupy_like_stand_in():
    """The stand-in behind 'cuda' while the block runs, with ember's statistics hook entered
    into it (as loading CuPy enters it); yields its CuPy module."""
    from ember import _allocator
    device_module = sys.modules["ember.device"]
    generators = sys.modules["ember.random"]._cuda_generators
    saved_generators = dict(generators)  # those made on the stand-in go with it
    backend = CupyLikeBackend()
    saved_hook = _allocator.cuda_memory_stats
    _allocator.cuda_memory_stats = None
    previous = device_module.register_backend("cuda", backend)
    _allocator.track_cuda_memory(backend.xp)
    try:
        yield backend.xp
    finally:
        device_module.register_backend("cuda", previous)
        _allocator.cuda_memory_stats = saved_hook
        generators.clear()
        generators.update(saved_generators)
