"""`torch.Stream` and `torch.Event`: a stream and an event of any device type. On CUDA they
are CuPy's, through `ember.cuda`'s classes; on the CPU (and `meta`) there is one stream, on
which every operation has finished when it returns: it has nothing to order, and, as in
PyTorch, no events to record."""
from . import _state
from .device import DEVICE_TYPE_CODES, backend_of, device as _device

__all__ = ["Stream", "Event"]

_EVENTLESS = ("cpu", "meta")


def _resolve(device):
    """The device a stream or event is on: the given one, else the current accelerator's,
    else the CPU."""
    if device is None:
        cuda = backend_of(_device("cuda"))
        return _device("cuda", _state.cuda_device) if cuda.is_available() else _device("cpu")
    dev = _device(device)
    if dev.type in _EVENTLESS:
        return dev
    if dev.type == "cuda" and backend_of(dev).is_available():
        return _device("cuda", _state.cuda_device if dev.index is None else dev.index)
    raise RuntimeError(f"PyTorch is not linked with support for {dev.type} devices")


def _no_events(device_type):
    return RuntimeError(f"{device_type} backend doesn't support events.")


class Stream:
    """A device's stream; `Stream(device="cuda")` is a new CUDA stream."""

    def __init__(self, device=None, *, priority=0):
        self.device = _resolve(device)
        self._cuda = None
        if self.device.type == "cuda":
            from .cuda.streams import Stream as CudaStream
            self._cuda = CudaStream(self.device, priority=priority)

    @classmethod
    def _of(cls, cuda_stream):
        """The torch.Stream of a torch.cuda.Stream."""
        stream = cls.__new__(cls)
        stream.device, stream._cuda = cuda_stream.device, cuda_stream
        return stream

    @property
    def device_type(self):
        return DEVICE_TYPE_CODES[self.device.type]

    @property
    def device_index(self):
        return -1 if self.device.index is None else self.device.index

    @property
    def stream_id(self):
        return 0 if self._cuda is None else self._cuda.cuda_stream

    @property
    def native_handle(self):
        if self._cuda is None:
            raise RuntimeError("Backend doesn't support getting stream native handle.")
        return self._cuda.cuda_stream

    def query(self):
        return True if self._cuda is None else self._cuda.query()

    def synchronize(self):
        if self._cuda is not None:
            self._cuda.synchronize()

    def is_capturing(self):
        return False if self._cuda is None else self._cuda._stream.is_capturing()

    def record_event(self, event=None):
        event = Event(self.device) if event is None else event
        event.record(self)
        return event

    def wait_event(self, event):
        if self._cuda is not None:
            self._cuda.wait_event(event._cuda)

    def wait_stream(self, stream):
        self.wait_event(stream.record_event())

    def __eq__(self, other):
        return isinstance(other, Stream) and self.device == other.device \
            and self.stream_id == other.stream_id

    def __hash__(self):
        return hash((self.device, self.stream_id))

    def __repr__(self):
        return (f"torch.Stream device_type={self.device.type}, device_index="
                f"{self.device_index}, stream_id={self.stream_id}")


class Event:
    """A marker in a device's stream; on CUDA, one that others wait on and that times."""

    def __init__(self, device=None, *, enable_timing=False, blocking=False,
                 interprocess=False):
        self.device = _resolve(device)
        self._flag = 1 if enable_timing else 0
        self._recorded = False
        self._cuda = None
        if self.device.type == "cuda":
            from .cuda.streams import Event as CudaEvent
            self._cuda = CudaEvent(enable_timing, blocking, interprocess)

    @property
    def event_id(self):
        return 0 if self._cuda is None else self._cuda.cuda_event

    def record(self, stream=None):
        if self._cuda is None:
            raise _no_events(self.device.type)
        if stream is None:
            from .cuda.streams import current_stream
            stream = current_stream(self.device)
        self._cuda.record(stream._cuda if isinstance(stream, Stream) and stream._cuda
                          else stream)
        self._recorded = True

    def wait(self, stream=None):
        if self._cuda is not None:
            if stream is None:
                from .cuda.streams import current_stream
                stream = current_stream(self.device)
            self._cuda.wait(stream._cuda if isinstance(stream, Stream) and stream._cuda
                            else stream)

    def query(self):
        return True if self._cuda is None else self._cuda.query()

    def synchronize(self):
        if self._cuda is not None:
            self._cuda.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds from this event to `end_event` (both recorded, with timing)."""
        if not (self._recorded and end_event._recorded):
            raise ValueError("Both events must be recorded before calculating elapsed time.")
        return self._cuda.elapsed_time(end_event._cuda)

    def ipc_handle(self):
        raise NotImplementedError("torch.Event ipc is not supported yet, please open an issue "
                                  "if you need this!")

    @classmethod
    def from_ipc_handle(cls, device, ipc_handle):
        raise NotImplementedError("torch.Event ipc is not supported yet, please open an issue "
                                  "if you need this!")

    def __repr__(self):
        index = -1 if self.device.index is None else self.device.index
        return (f"torch.Event device_type={self.device.type}, device_index={index}, "
                f"event_flag={self._flag}, event_id={self.event_id}")
