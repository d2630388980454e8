"""`torch.cuda.memory`: what CuPy's memory pool (ember's caching allocator on CUDA) holds:
bytes in tensors (`memory_allocated`), bytes reserved from the driver (`memory_reserved`),
giving cached blocks back (`empty_cache`), the device's free and total memory, and a cap on
the pool as a fraction of the device. Without a GPU nothing is allocated: 0, as PyTorch
reports before CUDA starts."""
import contextlib

from ..device import backend_of, device as _device
from ._utils import _get_device_index

__all__ = ["empty_cache", "get_per_process_memory_fraction", "mem_get_info", "memory_allocated",
           "memory_cached", "memory_reserved", "set_per_process_memory_fraction"]


def _available():
    from . import is_available
    return is_available()


@contextlib.contextmanager
def _on(device):
    """CuPy's module with `device` current (its pool is per device)."""
    cp = backend_of(_device("cuda")).xp
    with cp.cuda.Device(_get_device_index(device, optional=True)):
        yield cp


def memory_allocated(device=None):
    """Bytes the tensors on `device` occupy."""
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
    """Deprecated spelling of memory_reserved."""
    return memory_reserved(device)


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
