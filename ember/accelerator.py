"""`ember.accelerator`: the current accelerator, if any (CUDA through CuPy)."""
from . import cuda
from .device import device

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "set_device_index", "synchronize"]


def is_available():
    return cuda.is_available()


def current_accelerator(check_available=False):
    if cuda.is_available():
        return device("cuda")
    return None


def device_count():
    return cuda.device_count() if cuda.is_available() else 0


def current_device_index():
    return cuda.current_device() if cuda.is_available() else -1


def set_device_index(index):
    cuda.set_device(index)


def synchronize(device=None):
    if cuda.is_available():
        cuda.synchronize(device)
