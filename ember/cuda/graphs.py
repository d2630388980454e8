"""`torch.cuda.graphs`: whether the current stream is capturing a CUDA graph. ember does not
capture its ops into CUDA graphs (see the exclusions of tests/compat/test_module_surface.py)."""
from ..device import backend_of, device as _device

__all__ = ["is_current_stream_capturing", "CUDAGraph", "graph"]


def is_current_stream_capturing():
    """True while CuPy's current stream records a graph (False without a GPU)."""
    from . import is_available
    if not is_available():
        return False
    return backend_of(_device("cuda")).xp.cuda.get_current_stream().is_capturing()


class CUDAGraph:
    """PyTorch's CUDA graph handle. ember runs its CUDA ops through CuPy, which launches some
    of them with host-side work in between (allocation, shape checks), so they cannot be
    captured into a replayable graph: the class exists for the code that names it (annotations,
    isinstance checks), and making one fails as it does in PyTorch's build without CUDA."""

    def __new__(cls, *args, **kwargs):
        _refuse_capture("Tried to instantiate dummy base class CUDAGraph")


class graph:
    """PyTorch's `with torch.cuda.graph(g):` capture block; it needs a CUDAGraph, which
    ember cannot make (see CUDAGraph), so opening one fails as in PyTorch's build without
    CUDA, where the capture stream cannot be made."""

    def __init__(self, cuda_graph, pool=None, stream=None, capture_error_mode="global",
                 enable_annotations=False, check_input_liveness=False):
        _refuse_capture("torch.cuda.Stream requires CUDA support")


def _refuse_capture(cpu_build_message):
    from . import is_available
    if not is_available():  # what PyTorch's CPU build raises
        raise RuntimeError(cpu_build_message)
    raise RuntimeError("CUDA graph capture is not supported by ember: its CUDA ops run "
                       "through CuPy with host work between launches")
