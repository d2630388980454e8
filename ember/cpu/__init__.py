"""`torch.cpu`: the CPU as a device module (always available, one device) and the
deprecated `torch.cpu.amp` aliases."""
from . import amp

__all__ = ["is_available", "device_count", "current_device", "synchronize", "amp"]


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def synchronize(device=None):
    """NumPy computes eagerly: every CPU op has finished when it returns."""
