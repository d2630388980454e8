"""The legacy typed classes of sparse COO tensors, `torch.sparse.FloatTensor(indices, values,
size)` and friends (and `torch.cuda.sparse`'s, on the current CUDA device). `isinstance` asks
a tensor's layout, dtype and device type; a call builds a sparse COO tensor, unchecked, with
PyTorch's deprecation warning once a process. Given values keep their own dtype on the CPU
(PyTorch's CPU classes do not convert them); the CUDA classes refuse another dtype."""
from .. import dtypes as _dt
from .._state import warn_once
from .._tensor import Tensor
from ..ops.creation import empty
from ..ops.sparse import sparse_coo_tensor

DTYPES = {"ByteTensor": _dt.uint8, "CharTensor": _dt.int8, "DoubleTensor": _dt.float64,
          "FloatTensor": _dt.float32, "IntTensor": _dt.int32, "LongTensor": _dt.int64,
          "ShortTensor": _dt.int16, "HalfTensor": _dt.float16, "BFloat16Tensor": _dt.bfloat16}


class LegacySparseType(type):
    """The metaclass of those classes, which carry `_dtype` and `_cuda`; `_default_device` is
    the device a call builds on (torch.cuda.sparse's first checks that CUDA is there)."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.is_sparse and obj.is_cuda == cls._cuda \
            and obj.dtype is cls._dtype

    def __call__(cls, *args, device=None):
        device = cls._default_device(device)
        if args and isinstance(args[0], Tensor):  # (indices, values[, size])
            warn_once("torch.sparse.SparseTensor(indices, values, shape, *, device=) is "
                      "deprecated.  Please use torch.sparse_coo_tensor(indices, values, shape, "
                      "dtype=, device=).")
            indices, values, *size = args
            if cls._cuda and values.dtype is not cls._dtype:
                raise RuntimeError(f"expected scalar type {cls._dtype._scalar_name} but found "
                                   f"{values.dtype._scalar_name}")
            return sparse_coo_tensor(indices, values, *size, device=device,
                                     check_invariants=False)
        warn_once("torch.sparse.SparseTensor(shape, *, device=) is deprecated.  Please use "
                  "torch.sparse_coo_tensor(shape, dtype=, device=).")
        if not args:
            size = (0,)
        elif len(args) == 1 and not isinstance(args[0], int):
            size = tuple(args[0])
        else:
            size = args
        indices = empty((len(size), 0), dtype=_dt.int64, device=device)
        values = empty((0,), dtype=cls._dtype, device=device)
        return sparse_coo_tensor(indices, values, size, device=device, check_invariants=False)

    def _default_device(cls, device):
        return device

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def define(namespace, module, base=LegacySparseType):
    """The nine classes, made in `namespace` (a module's globals) as `module`'s."""
    for name, dtype in DTYPES.items():
        namespace[name] = base(name, (), {"_dtype": dtype, "_cuda": base is not
                                          LegacySparseType, "__module__": module})
