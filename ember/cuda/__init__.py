"""`ember.cuda`: queries about CUDA devices. Without CuPy or a GPU, `is_available()` is False
and every tensor stays on the CPU; asking for a CUDA tensor then raises PyTorch's error."""
from .. import _state
from .._errors import OutOfMemoryError
from ..device import backend_of, device as _device

__all__ = ["is_available", "device_count", "current_device", "set_device", "synchronize",
           "manual_seed", "manual_seed_all", "get_device_name", "empty_cache", "is_initialized",
           "seed", "seed_all", "initial_seed", "get_rng_state", "get_rng_state_all",
           "set_rng_state", "set_rng_state_all", "memory_allocated", "memory_cached",
           "memory_reserved",
           "mem_get_info", "get_per_process_memory_fraction", "set_per_process_memory_fraction",
           "Stream", "Event", "ExternalStream", "current_stream", "default_stream", "stream",
           "set_stream", "StreamContext", "is_current_stream_capturing", "OutOfMemoryError"]

# the legacy typed classes of CUDA tensors and storages: ember.cuda.FloatTensor, ...Storage
from .._storage import CUDA_LEGACY_STORAGES as _LEGACY_STORAGES
from ..ops.creation import CUDA_LEGACY_TYPES as _LEGACY_TENSORS
globals().update(_LEGACY_TENSORS)
globals().update(_LEGACY_STORAGES)

def _backend():
    return backend_of(_device("cuda"))


def is_available():
    return _backend().is_available()


def device_count():
    return _backend().device_count()


def is_initialized():
    return is_available()


def current_device():
    return _state.cuda_device


def set_device(dev):
    _state.cuda_device = dev if isinstance(dev, int) else (_device(dev).index or 0)


def synchronize(device=None):
    index = _state.cuda_device if device is None else (device if isinstance(device, int)
                                                       else _device(device).index)
    _backend().synchronize(index)


def get_device_name(device=None):
    cp = _backend().xp
    index = _state.cuda_device if device is None else _device(device).index or 0
    return cp.cuda.runtime.getDeviceProperties(index)["name"].decode()


from . import amp, graphs, memory, nvtx, profiler, random, streams  # noqa: E402
from .memory import (empty_cache, mem_get_info, memory_allocated, memory_cached,  # noqa: E402
                     memory_reserved, get_per_process_memory_fraction,
                     set_per_process_memory_fraction)
from .random import (get_rng_state, get_rng_state_all, initial_seed, manual_seed,  # noqa: E402
                     manual_seed_all, seed, seed_all, set_rng_state, set_rng_state_all)
from .streams import (Event, ExternalStream, Stream, StreamContext, current_stream,  # noqa: E402
                      default_stream, set_stream, stream)
from .graphs import is_current_stream_capturing  # noqa: E402
