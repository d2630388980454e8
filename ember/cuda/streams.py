"""`torch.cuda.streams`: CUDA streams and events, on CuPy's. ember's CUDA ops run through
CuPy, which launches on its current stream, so `with torch.cuda.stream(s):` puts the ops of
the block on `s`; events order streams and time them."""
from ..device import backend_of, device as _device
from ._utils import _get_device_index

__all__ = ["Event", "ExternalStream", "Stream"]  # and get_stream_from_external


def _cupy():
    return backend_of(_device("cuda")).xp


def _require_cuda(message):
    """PyTorch's error where its build without CUDA makes a stream or event."""
    from . import is_available
    if not is_available():
        raise RuntimeError(message)


class Stream:
    """A CUDA stream (a new one, or the one `_wrap` is given)."""

    def __init__(self, device=None, priority=0, **kwargs):
        _require_cuda("torch.cuda.Stream requires CUDA support")
        cp = _cupy()
        self.device = _device("cuda", _get_device_index(device, optional=True))
        with cp.cuda.Device(self.device.index):
            self._stream = kwargs.get("_wrap") or cp.cuda.Stream(non_blocking=False,
                                                                 priority=priority)

    @classmethod
    def _of(cls, cupy_stream, index):
        stream = cls.__new__(cls)
        stream.device, stream._stream = _device("cuda", index), cupy_stream
        return stream

    @property
    def cuda_stream(self):
        return self._stream.ptr

    def wait_event(self, event):
        self._stream.wait_event(event._event)

    def wait_stream(self, stream):
        self.wait_event(stream.record_event())

    def record_event(self, event=None):
        event = Event() if event is None else event
        event.record(self)
        return event

    def query(self):
        return self._stream.done

    def synchronize(self):
        self._stream.synchronize()

    def __enter__(self):
        self._previous = _cupy().cuda.get_current_stream()
        self._stream.use()
        return self

    def __exit__(self, *exc):
        self._previous.use()
        return False

    def __eq__(self, other):
        return isinstance(other, Stream) and self.cuda_stream == other.cuda_stream \
            and self.device == other.device

    def __hash__(self):
        return hash((self.cuda_stream, self.device))

    def __repr__(self):
        return f"<torch.cuda.Stream device={self.device} cuda_stream={hex(self.cuda_stream)}>"


class ExternalStream(Stream):
    """A stream made elsewhere (another library), by its `cudaStream_t` pointer."""

    def __init__(self, stream_ptr, device=None, **kwargs):
        cp = _cupy()
        super().__init__(device, _wrap=cp.cuda.ExternalStream(stream_ptr))


class Event:
    """A CUDA event: a marker in a stream that others can wait on, or time against."""

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        _require_cuda("Tried to instantiate dummy base class Event")
        self._event = _cupy().cuda.Event(block=blocking, disable_timing=not enable_timing,
                                         interprocess=interprocess)

    def record(self, stream=None):
        stream = current_stream() if stream is None else stream
        self._event.record(stream._stream)

    def wait(self, stream=None):
        stream = current_stream() if stream is None else stream
        stream.wait_event(self)

    def query(self):
        return self._event.done

    def elapsed_time(self, end_event):
        """Milliseconds between this event and `end_event` (both recorded, with timing)."""
        return _cupy().cuda.get_elapsed_time(self._event, end_event._event)

    def synchronize(self):
        self._event.synchronize()

    @property
    def cuda_event(self):
        return self._event.ptr


def current_stream(device=None):
    """The stream the ops of `device` run on now."""
    cp = _cupy()
    index = _get_device_index(device, optional=True)
    with cp.cuda.Device(index):
        return Stream._of(cp.cuda.get_current_stream(), index)


def default_stream(device=None):
    cp = _cupy()
    return Stream._of(cp.cuda.Stream.null, _get_device_index(device, optional=True))


def set_stream(stream):
    if stream is not None:
        stream._stream.use()


class StreamContext:
    """`with StreamContext(s):` runs the block's ops on `s` (None: no change)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            self.stream.__enter__()
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            self.stream.__exit__(*exc)
        return False


def stream(stream):
    return StreamContext(stream)


def get_stream_from_external(data_ptr, device=None):
    """A Stream for a `cudaStream_t` another library made (its address `data_ptr`)."""
    return ExternalStream(data_ptr, device)
