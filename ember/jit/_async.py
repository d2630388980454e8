"""`torch.jit.fork` / `wait` and the `Future` they pass. In eager PyTorch `fork` runs the
function at once in the caller's thread and returns a completed future; ember's does the same."""
from ..futures import Future


def fork(func, *args, **kwargs):
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def wait(fut):
    return fut.wait()
