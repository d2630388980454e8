"""`torch.cuda.nvtx`: NVTX annotations (marks and nested ranges) for NVIDIA's profilers,
through CuPy's bindings. Without them, PyTorch's error."""
import contextlib
import ctypes

__all__ = ["mark", "range", "range_end", "range_pop", "range_push", "range_start"]


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


_library = []  # libnvToolsExt, once loaded (CuPy binds no start/end ranges)


def _nvtx_library(function):
    if not _library:
        import ctypes.util  # here: it imports shutil and tempfile, wanted only now
        name = ctypes.util.find_library("nvToolsExt") or "libnvToolsExt.so.1"
        try:
            library = ctypes.CDLL(name)
            library.nvtxRangeStartA.restype = ctypes.c_uint64
            library.nvtxRangeStartA.argtypes = [ctypes.c_char_p]
            library.nvtxRangeEnd.argtypes = [ctypes.c_uint64]
        except (OSError, AttributeError):
            # PyTorch's error where its NVTX bindings are missing
            raise AttributeError(f"'_NVTXStub' object has no attribute '{function}'") from None
        _library.append(library)
    return _library[0]


def range_start(msg):
    """Open a range named `msg` that need not nest (it may end on another thread); returns
    its id for range_end."""
    return _nvtx_library("rangeStartA").nvtxRangeStartA(msg.encode())


def range_end(range_id):
    """Close the range range_start opened with id `range_id`."""
    _nvtx_library("rangeEnd").nvtxRangeEnd(range_id)
