"""`torch.cpu`: the CPU as a device module (always available, one device), the stream and
event classes that let device-agnostic code run on it (NumPy computes eagerly, so they have
nothing to order: as PyTorch's, they do nothing), and the deprecated `torch.cpu.amp`
aliases."""
import contextlib

from . import amp
from ._capabilities import get_capabilities

__all__ = ["is_available", "device_count", "current_device", "synchronize", "amp", "Event",
           "Stream", "StreamContext", "current_stream", "is_initialized", "set_device",
           "stream", "get_capabilities"]


def is_available():
    return True


def device_count():
    return 1


def current_device():
    return "cpu"


def is_initialized():
    return True


def set_device(device):
    """There is one CPU device: nothing to select."""


def synchronize(device=None):
    """NumPy computes eagerly: every CPU op has finished when it returns."""


class Stream:
    """The CPU's stream, for code written for any device."""

    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self):
        pass

    def wait_event(self, event):
        pass


class Event:
    """The CPU's event: always complete."""

    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default_stream = Stream()
_current_stream = _default_stream


def current_stream(device=None):
    return _current_stream


class StreamContext(contextlib.AbstractContextManager):
    """`with StreamContext(s):` makes `s` the current CPU stream (None: no change)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = _default_stream

    def __enter__(self):
        global _current_stream
        if self.stream is not None:
            self.prev_stream, _current_stream = _current_stream, self.stream

    def __exit__(self, *exc):
        global _current_stream
        if self.stream is not None:
            _current_stream = self.prev_stream


def stream(stream):
    return StreamContext(stream)
