"""`torch.cuda.sparse`: the legacy typed classes of sparse COO tensors on CUDA
(`torch.cuda.sparse.FloatTensor(indices, values, size)`). `isinstance` asks a tensor's layout,
dtype and device; calling one builds a sparse COO tensor on the current CUDA device (PyTorch's
deprecation warning included). Without CUDA, PyTorch's TypeError."""
import warnings

from .. import dtypes as _dt
from .._tensor import Tensor
from ..device import backend_of, device as _device
from ..ops.creation import empty
from ..ops.sparse import sparse_coo_tensor

_DTYPES = {"ByteTensor": _dt.uint8, "CharTensor": _dt.int8, "DoubleTensor": _dt.float64,
           "FloatTensor": _dt.float32, "IntTensor": _dt.int32, "LongTensor": _dt.int64,
           "ShortTensor": _dt.int16, "HalfTensor": _dt.float16, "BFloat16Tensor": _dt.bfloat16}


class _SparseCudaTensorType(type):
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.is_sparse and obj.is_cuda \
            and obj.dtype is cls._dtype

    def __call__(cls, *args, device=None):
        try:
            available = backend_of(_device("cuda")).is_available()
        except AssertionError:
            available = False
        if not available:
            raise TypeError(f"type torch.cuda.sparse.{cls.__name__} not available. Torch not "
                            "compiled with CUDA enabled.")
        device = "cuda" if device is None else device
        if args and isinstance(args[0], Tensor):  # (indices, values[, size])
            warnings.warn("torch.sparse.SparseTensor(indices, values, shape, *, device=) is "
                          "deprecated.  Please use torch.sparse_coo_tensor(indices, values, "
                          "shape, dtype=, device=).", UserWarning, stacklevel=2)
            indices, values, *size = args
            if values.dtype is not cls._dtype:
                raise RuntimeError(f"expected scalar type {cls._dtype._scalar_name} but found "
                                   f"{values.dtype._scalar_name}")
            return sparse_coo_tensor(indices, values, *size, device=device,
                                     check_invariants=False)
        warnings.warn("torch.sparse.SparseTensor(shape, *, device=) is deprecated.  Please use "
                      "torch.sparse_coo_tensor(shape, dtype=, device=).", UserWarning,
                      stacklevel=2)
        size = tuple(args[0]) if len(args) == 1 and not isinstance(args[0], int) else args
        indices = empty((len(size), 0), dtype=_dt.int64, device=device)
        values = empty((0,), dtype=cls._dtype, device=device)
        return sparse_coo_tensor(indices, values, size, device=device,
                                 check_invariants=False)

    def __repr__(cls):
        return f"<class 'torch.cuda.sparse.{cls.__name__}'>"


for _name, _dtype in _DTYPES.items():
    globals()[_name] = _SparseCudaTensorType(_name, (), {"_dtype": _dtype,
                                                          "__module__": __name__})
