"""`torch.futures`: a value that is, or will be, set once, and the helpers that wait on several.
`torch.jit.fork` hands one back; so do the distributed work handles' `get_future()`."""
import threading

__all__ = ["Future", "collect_all", "wait_all"]


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
            raise RuntimeError("Attempting to mark a completed Future as complete again. Note that a "
                               "Future can only be marked completed once.")
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


def _check_futures(futures):
    futures = list(futures)
    for fut in futures:
        if not isinstance(fut, Future):
            raise TypeError(f"collect_all(): expected a sequence of Future, got {type(fut).__name__}")
    return futures


def collect_all(futures):
    """A Future completed, with the list of `futures` itself, once every one of them is done
    (failed ones included: their errors stay inside them)."""
    futures = _check_futures(futures)
    combined = Future()
    remaining = [len(futures)]
    lock = threading.Lock()

    def one_done(_):
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            combined.set_result(futures)
    if not futures:
        combined.set_result([])
    for fut in futures:
        fut.add_done_callback(one_done)
    return combined


def wait_all(futures):
    """Wait for every future and return their values; the first failure raises its error."""
    return [fut.wait() for fut in collect_all(futures).wait()]
