"""`ember.accelerator`: the current accelerator, if any (CUDA through CuPy), as one
device-agnostic API: which device is current, its streams, its memory. Without one, every
question about a device fails with PyTorch's "Cannot access accelerator device when none is
available." """
import warnings

from . import _streams, dtypes as _dt
from .device import device


def _cuda():
    # ember.cuda on first use: `import ember` does not load it (ember/_lazy.py)
    from . import cuda
    return cuda


__all__ = ["current_accelerator", "current_device_idx", "current_device_index",
           "get_device_capability", "current_stream", "device_count", "device_index",
           "empty_cache", "empty_host_cache", "get_memory_info", "is_available",
           "max_memory_allocated", "max_memory_reserved", "memory_allocated",
           "memory_reserved", "memory_stats", "reset_accumulated_memory_stats",
           "reset_peak_memory_stats", "set_device_idx", "set_device_index", "set_stream",
           "synchronize"]


def _require():
    if not _cuda().is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def _index(device_arg, optional=True):
    """The accelerator's device index `device_arg` names (an int, "cuda:1", a device)."""
    if isinstance(device_arg, int):
        return device_arg
    if isinstance(device_arg, str):
        device_arg = device(device_arg)
    index = None
    if isinstance(device_arg, device):
        accelerator = current_accelerator()
        if accelerator is None:
            raise RuntimeError("Accelerator expected")
        if accelerator.type != device_arg.type:
            raise ValueError(f"{device_arg.type} doesn't match the current accelerator "
                             f"{accelerator}.")
        index = device_arg.index
    if index is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, "
                             f"but got:{device_arg}")
        return current_device_index()
    return index


def is_available():
    return _cuda().is_available()


def current_accelerator(check_available=False):
    if _cuda().is_available():
        return device("cuda")
    return None


def device_count():
    return _cuda().device_count() if _cuda().is_available() else 0


def current_device_index():
    _require()
    return _cuda().current_device()


def current_device_idx():
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_index(device, /):
    """Make `device` current (a negative index changes nothing)."""
    index = _index(device, optional=False)
    _require()
    if index >= 0:
        _cuda().set_device(index)


def set_device_idx(device, /):
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    return set_device_index(device)


class device_index:
    """`with device_index(1):` makes device 1 current for the block (None: no change)."""

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            _require()
            self.prev_idx = _cuda().current_device()
            if self.idx >= 0:
                _cuda().set_device(self.idx)

    def __exit__(self, *exc):
        if self.idx is not None and self.prev_idx >= 0:
            _cuda().set_device(self.prev_idx)
        return False


def synchronize(device=None, /):
    index = _index(device)
    _cuda().synchronize(index)


def current_stream(device=None, /):
    """The stream the ops of `device` run on now, as a torch.Stream."""
    return _streams.Stream._of(_cuda().current_stream(_index(device)))


def set_stream(stream):
    """Make `stream` (a torch.Stream of the accelerator) current on its device."""
    if not isinstance(stream, _streams.Stream):
        raise TypeError(f"set_stream(): argument 'stream' must be torch.Stream, not "
                        f"{type(stream).__name__}")
    _require()
    if stream._cuda is None:
        raise ValueError(f"{stream.device.type} doesn't match the current accelerator "
                         f"{current_accelerator()}.")
    _cuda().set_device(stream.device.index)
    _cuda().set_stream(stream._cuda)


_capabilities = {}


def get_device_capability(device=None, /):
    """{"supported_dtypes": the dtypes whose tensors the device can hold}."""
    index = _index(device)
    _require()
    if index not in _capabilities:
        cp = _cuda()._backend().xp
        supported = set()
        with cp.cuda.Device(index):
            for dtype in _dt.ALL_DTYPES:
                try:
                    cp.empty(0, dtype=dtype.np)
                except (TypeError, ValueError):
                    continue
                supported.add(dtype)
        _capabilities[index] = {"supported_dtypes": supported}
    return {"supported_dtypes": set(_capabilities[index]["supported_dtypes"])}


# ---- memory (the CUDA allocator's figures, torch.cuda.memory) ------------------------------

def empty_cache():
    _require()
    _cuda().empty_cache()


def empty_host_cache():
    """ember keeps no cache of pinned host blocks (host tensors are NumPy's): nothing to
    give back."""
    _require()


def memory_stats(device_index=None, /):
    _require()
    return _cuda().memory_stats(_index(device_index))


def memory_allocated(device_index=None, /):
    return memory_stats(device_index).get("allocated_bytes.all.current", 0)


def memory_reserved(device_index=None, /):
    return memory_stats(device_index).get("reserved_bytes.all.current", 0)


def max_memory_allocated(device_index=None, /):
    return memory_stats(device_index).get("allocated_bytes.all.peak", 0)


def max_memory_reserved(device_index=None, /):
    return memory_stats(device_index).get("reserved_bytes.all.peak", 0)


def reset_accumulated_memory_stats(device_index=None, /):
    _require()
    _cuda().reset_accumulated_memory_stats(_index(device_index))


def reset_peak_memory_stats(device_index=None, /):
    _require()
    _cuda().reset_peak_memory_stats(_index(device_index))


def get_memory_info(device_index=None, /):
    """(free, total) bytes of the device."""
    index = _index(device_index)
    _require()
    return _cuda().mem_get_info(index)
