"""`torch.cuda.graphs`: whether the current stream is capturing a CUDA graph. ember does not
capture its ops into CUDA graphs (see the exclusions of tests/compat/test_module_surface.py)."""
from ..device import backend_of, device as _device

__all__ = ["is_current_stream_capturing"]


def is_current_stream_capturing():
    """True while CuPy's current stream records a graph (False without a GPU)."""
    from . import is_available
    if not is_available():
        return False
    return backend_of(_device("cuda")).xp.cuda.get_current_stream().is_capturing()
