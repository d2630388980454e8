"""CUDA's error codes as PyTorch raises them: `CudaError` (a RuntimeError carrying the
runtime's description of a code), `check_error`, `cudaStatus`, and the error of a CUDA call
queued before CUDA started that then failed (`DeferredCudaCallError`)."""
from ..device import backend_of, device as _device

__all__ = ["CudaError", "DeferredCudaCallError", "check_error", "cudaStatus"]


class cudaStatus:
    SUCCESS = 0
    ERROR_NOT_READY = 34


class CudaError(RuntimeError):
    """The CUDA runtime's error `code`, described as the runtime describes it."""

    def __init__(self, code):
        cp = backend_of(_device("cuda")).xp
        description = str(cp.cuda.runtime.CUDARuntimeError(code)).split(": ", 1)[-1]
        super().__init__(f"{description} ({code})")


class DeferredCudaCallError(Exception):
    pass


def check_error(res):
    """Raise CudaError for a runtime status other than success."""
    if res != cudaStatus.SUCCESS:
        raise CudaError(res)
