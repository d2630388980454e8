"""`torch.jit.fork` / `wait` and the `Future` they pass. In eager PyTorch `fork` runs the
function at once in the caller's thread and returns a completed future; ember's does the same."""
import threading


class Future:
    """A value that is, or will be, set once; `wait()` returns it (or raises its error)."""

    def __init__(self, *, devices=None):
        self._done = threading.Event()
        self._value = self._error = None
        self._callbacks = []

    def done(self):
        return self._done.is_set()

    def wait(self):
        self._done.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        if not self.done():
            raise RuntimeError("Future.value() called before the value was set")
        return self.wait()

    def set_result(self, result):
        self._finish(result, None)

    def set_exception(self, result):
        if not isinstance(result, BaseException):
            raise TypeError(f"{result!r} is of type {type(result)}, not an Exception.")
        self._finish(None, result)

    def _finish(self, value, error):
        if self.done():
            raise RuntimeError("Future can only be marked completed once.")
        self._value, self._error = value, error
        self._done.set()
        for callback in self._callbacks:
            callback(self)

    def add_done_callback(self, callback):
        if self.done():
            callback(self)
        else:
            self._callbacks.append(callback)

    def then(self, callback):
        """A future of `callback(self)`, run once this one completes."""
        chained = Future()

        def run(fut):
            try:
                chained.set_result(callback(fut))
            except Exception as e:  # the error travels to whoever waits on the chain
                chained.set_exception(e)
        self.add_done_callback(run)
        return chained


def fork(func, *args, **kwargs):
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(future):
    return future.wait()
