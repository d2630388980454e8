"""`ember.cuda`: CUDA devices through CuPy: which there are and which is current, their
properties, generators, streams and events, the allocator's memory and its statistics
(memory.py), NVML's readings (_nvml.py), and the nccl, jiterator, tunable and sparse
modules. Without CuPy or a GPU, `is_available()` is False and every tensor stays on the CPU;
each function then answers, or fails, as PyTorch's build without CUDA does."""
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
           "set_stream", "StreamContext", "is_current_stream_capturing", "OutOfMemoryError",
           "CudaError", "DeferredCudaCallError", "GreenContext", "can_device_access_peer",
           "check_error", "clock_rate", "cudaStatus", "cudart", "current_blas_handle",
           "current_solver_handle", "default_generators", "device", "device_memory_used",
           "device_of", "get_arch_list", "get_device_capability", "get_device_properties",
           "get_gencode_flags", "get_stream_from_external", "get_sync_debug_mode",
           "set_sync_debug_mode", "has_half", "has_magma", "init", "ipc_collect",
           "is_bf16_supported", "is_tf32_supported", "list_gpu_processes", "power_draw",
           "temperature", "utilization", "memory_usage", "memory_stats",
           "memory_stats_as_nested_dict", "memory_summary", "memory_snapshot",
           "max_memory_allocated", "max_memory_reserved", "max_memory_cached",
           "reset_peak_memory_stats", "reset_max_memory_allocated", "reset_max_memory_cached",
           "reset_accumulated_memory_stats", "host_memory_stats",
           "host_memory_stats_as_nested_dict", "reset_accumulated_host_memory_stats",
           "reset_peak_host_memory_stats"]

has_half = True    # float16 tensors compute on CUDA
has_magma = False  # ember's CUDA linear algebra is cuSOLVER's, through CuPy

# the legacy typed classes of CUDA tensors and storages: ember.cuda.FloatTensor, ...Storage
from .._storage import CUDA_LEGACY_STORAGES as _LEGACY_STORAGES
from ..ops.legacy_constructors import CUDA_LEGACY_TYPES as _LEGACY_TENSORS
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


def _not_compiled():
    # PyTorch's build without CUDA answers so where CUDA would have to start
    return AssertionError("Torch not compiled with CUDA enabled")


def current_device():
    if not is_available():
        raise _not_compiled()
    return _state.cuda_device


def set_device(dev):
    if not isinstance(dev, int):
        dev = _device(dev)
        if dev.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {dev}")
        dev = dev.index or 0
    if not is_available():  # PyTorch's CPU build fails in its binding, with this message
        raise AttributeError("module 'torch._C' has no attribute '_cuda_setDevice'")
    _state.cuda_device = dev


def synchronize(device=None):
    index = _state.cuda_device if device is None else (device if isinstance(device, int)
                                                       else _device(device).index)
    _backend().synchronize(index)


def get_device_name(device=None):
    cp = _backend().xp
    index = _state.cuda_device if device is None else _device(device).index or 0
    return cp.cuda.runtime.getDeviceProperties(index)["name"].decode()


def __getattr__(name):
    if name == "default_generators":  # one per device, made when first asked for
        from .. import random as _random
        return tuple(_random.generator_for(_device("cuda", i)) for i in range(device_count()))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


from . import (amp, graphs, jiterator, memory, nccl, nvtx, profiler, random,  # noqa: E402
               sparse, streams, tunable)
from .memory import (empty_cache, mem_get_info, memory_allocated, memory_cached,  # noqa: E402
                     memory_reserved, get_per_process_memory_fraction,
                     set_per_process_memory_fraction, host_memory_stats,
                     host_memory_stats_as_nested_dict, max_memory_allocated, max_memory_cached,
                     max_memory_reserved, memory_snapshot, memory_stats,
                     memory_stats_as_nested_dict, memory_summary,
                     reset_accumulated_host_memory_stats, reset_accumulated_memory_stats,
                     reset_max_memory_allocated, reset_max_memory_cached,
                     reset_peak_host_memory_stats, reset_peak_memory_stats)
from ._device_info import (can_device_access_peer, cudart, current_blas_handle,  # noqa: E402
                           current_solver_handle, device, device_of, get_arch_list,
                           get_device_capability, get_device_properties, get_gencode_flags,
                           get_sync_debug_mode, init, ipc_collect, is_bf16_supported,
                           is_tf32_supported, set_sync_debug_mode)
from ._errors import CudaError, DeferredCudaCallError, check_error, cudaStatus  # noqa: E402
from ._nvml import (clock_rate, device_memory_used, list_gpu_processes,  # noqa: E402
                    memory_usage, power_draw, temperature, utilization)
from .green_contexts import GreenContext  # noqa: E402
from .random import (get_rng_state, get_rng_state_all, initial_seed, manual_seed,  # noqa: E402
                     manual_seed_all, seed, seed_all, set_rng_state, set_rng_state_all)
from .streams import (Event, ExternalStream, Stream, StreamContext, current_stream,  # noqa: E402
                      default_stream, get_stream_from_external, set_stream, stream)
from .graphs import CUDAGraph, graph, is_current_stream_capturing  # noqa: E402
