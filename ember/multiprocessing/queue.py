"""Queues whose items pickle with ForkingPickler, so they use the tensor reductions of
`reductions` (a non-leaf tensor that requires grad is refused, as in PyTorch)."""
import io
import multiprocessing
import multiprocessing.queues
import pickle
from multiprocessing.reduction import ForkingPickler

__all__ = ["ConnectionWrapper", "Queue", "SimpleQueue"]


class ConnectionWrapper:
    """A multiprocessing Connection whose `send`/`recv` pickle with ForkingPickler."""

    def __init__(self, conn):
        self.conn = conn

    def send(self, obj):
        buf = io.BytesIO()
        ForkingPickler(buf, pickle.HIGHEST_PROTOCOL).dump(obj)
        self.send_bytes(buf.getvalue())

    def recv(self):
        return pickle.loads(self.recv_bytes())

    def __getattr__(self, name):
        if "conn" in self.__dict__:
            return getattr(self.conn, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute 'conn'")


class Queue(multiprocessing.queues.Queue):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("ctx", multiprocessing.get_context())
        super().__init__(*args, **kwargs)
        self._reader = ConnectionWrapper(self._reader)
        self._writer = ConnectionWrapper(self._writer)
        self._send = self._writer.send
        self._recv = self._reader.recv


class SimpleQueue(multiprocessing.queues.SimpleQueue):
    def __init__(self, *args, **kwargs):
        kwargs.setdefault("ctx", multiprocessing.get_context())
        super().__init__(*args, **kwargs)

    def _make_methods(self):
        if not isinstance(self._reader, ConnectionWrapper):
            self._reader = ConnectionWrapper(self._reader)
            self._writer = ConnectionWrapper(self._writer)
        super()._make_methods()
