"""`ember.cuda`: queries about CUDA devices. Without CuPy or a GPU, `is_available()` is False
and every tensor stays on the CPU; asking for a CUDA tensor then raises PyTorch's error."""
from .. import _state, random as _random
from .._errors import OutOfMemoryError
from ..device import backend_of, device as _device

__all__ = ["is_available", "device_count", "current_device", "set_device", "synchronize",
           "manual_seed", "manual_seed_all", "get_device_name", "empty_cache", "is_initialized",
           "OutOfMemoryError"]

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


def manual_seed(seed):
    _random.generator_for(_device("cuda", _state.cuda_device)).manual_seed(seed)


def manual_seed_all(seed):
    for i in range(max(device_count(), 1)):
        _random.generator_for(_device("cuda", i)).manual_seed(seed)


def get_device_name(device=None):
    cp = _backend().xp
    index = _state.cuda_device if device is None else _device(device).index or 0
    return cp.cuda.runtime.getDeviceProperties(index)["name"].decode()


def empty_cache():
    if is_available():
        _backend().xp.get_default_memory_pool().free_all_blocks()


from . import amp  # noqa: E402  (torch.cuda.amp)
