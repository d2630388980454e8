"""`torch.cuda.profiler`: start and stop the CUDA profiler's collection (for nsys / ncu with
`--capture-range=cudaProfilerApi`), through CuPy."""
import contextlib

from ..device import backend_of, device as _device

__all__ = ["profile", "start", "stop"]


def start():
    backend_of(_device("cuda")).xp.cuda.profiler.start()


def stop():
    backend_of(_device("cuda")).xp.cuda.profiler.stop()


@contextlib.contextmanager
def profile():
    """Collect only while the block runs."""
    try:
        start()
        yield
    finally:
        stop()
