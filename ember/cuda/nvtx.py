"""`torch.cuda.nvtx`: NVTX annotations (marks and nested ranges) for NVIDIA's profilers,
through CuPy's bindings. Without them, PyTorch's error."""
import contextlib

__all__ = ["mark", "range", "range_pop", "range_push"]


def _nvtx():
    try:
        from cupy.cuda import nvtx
    except ImportError:
        raise RuntimeError("NVTX functions not installed. Are you sure you have a CUDA "
                           "build?") from None
    return nvtx


def range_push(msg):
    """Open a nested range named `msg`."""
    _nvtx().RangePush(msg)


def range_pop():
    """Close the innermost open range."""
    _nvtx().RangePop()


def mark(msg):
    """An instantaneous event named `msg`."""
    _nvtx().Mark(msg)


@contextlib.contextmanager
def range(msg, *args, **kwargs):
    """`with range("step {}", i):` brackets the block in a range named `msg.format(...)`."""
    range_push(msg.format(*args, **kwargs))
    try:
        yield
    finally:
        range_pop()
