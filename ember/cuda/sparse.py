"""`torch.cuda.sparse`: the legacy typed classes of sparse COO tensors on CUDA
(`torch.cuda.sparse.FloatTensor(indices, values, size)`; `ember/sparse/_legacy.py`). Without
CUDA, PyTorch's TypeError."""
from ..device import backend_of, device as _device
from ..sparse._legacy import LegacySparseType, define


class _SparseCudaTensorType(LegacySparseType):
    def _default_device(cls, device):
        try:
            available = backend_of(_device("cuda")).is_available()
        except AssertionError:
            available = False
        if not available:
            raise TypeError(f"type torch.cuda.sparse.{cls.__name__} not available. Torch not "
                            "compiled with CUDA enabled.")
        return "cuda" if device is None else device


define(globals(), "torch.cuda.sparse", _SparseCudaTensorType)
