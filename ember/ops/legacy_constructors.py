"""The legacy constructors: `torch.Tensor(2, 3)`, `torch.FloatTensor([1, 2])`, `x.new(...)`
and the typed classes (`torch.FloatTensor`, `torch.cuda.LongTensor` ...) that construct and
`isinstance`-check as PyTorch's do. Their sparse counterparts are in ember/sparse/_legacy.py."""
import builtins

import numpy as np

from .. import dtypes as _dt
from .._layout import strided
from .._tensor import Tensor, make_tensor
from ..device import backend_of, canonical
from .creation import _data_to_array, _is_int, _is_sequence, _on_device, resolve_device, size_arg


def tensor_new(cls, *args, device=None):
    """`ember.Tensor(2, 3)` (uninitialised), `Tensor([1, 2])`, `Tensor(size)`: default dtype.
    `Tensor.__new__` (bound in ember/ops/__init__.py)."""
    return legacy_new(cls, _dt.get_default_dtype(), args, device)


def legacy_new(cls, dtype, args, device, exact_dtype=False):
    """`ember.Tensor(...)` and `FloatTensor(...)`: sizes give an uninitialised tensor, data is
    copied into `dtype`, a tensor is aliased (of that dtype for the typed classes), nothing
    gives an empty one."""
    dev = resolve_device(device)
    if not args:
        return make_tensor(_on_device(np.empty((0,), dtype.np), dev), dev)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if exact_dtype and first.dtype is not dtype:
            raise TypeError(f"expected {_options(dtype)} (got {_options(first.dtype)})")
        return first.detach()
    if builtins.all(_is_int(a) for a in args) or (
            len(args) == 1 and isinstance(first, tuple) and type(first).__name__ == "Size"):
        return make_tensor(_on_device(np.empty(size_arg(args, "new"), dtype.np), dev), dev)
    if len(args) == 1:
        if not (_is_sequence(first) or isinstance(first, str)):
            name = type(first).__name__
            if isinstance(first, np.generic):
                name = f"numpy.{name}"
            raise TypeError(f"new(): data must be a sequence (got {name})")
        arr = _data_to_array(first, dtype, dtype.np.name if dtype.name != "bfloat16" else None,
                             shared=True)
        return make_tensor(_on_device(np.array(arr, dtype=dtype.np, copy=True), dev), dev)
    raise TypeError(f"new() received an invalid combination of arguments - got "
                    f"({', '.join(type(a).__name__ for a in args)})")


def _options(d):
    return (f"TensorOptions(dtype={d._cpp_name}, device=cpu, layout=Strided, "
            "requires_grad=false (default), pinned_memory=false (default), "
            "memory_format=(nullopt))")


class _LegacyTensorMeta(type):
    """`isinstance(t, ember.FloatTensor)` is true for strided float32 CPU tensors, as in
    PyTorch (a sparse COO one is a `torch.sparse.FloatTensor`)."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls._legacy_dtype and \
            (obj._device.type == "cuda") == cls._is_cuda and obj.layout is strided

    def __call__(cls, *args, device=None):
        if cls._is_cuda and not backend_of(canonical("cuda")).is_available():
            raise TypeError(f"type torch.cuda.{cls.__name__} not available. Torch not compiled "
                            "with CUDA enabled.")
        dev = "cuda" if cls._is_cuda else device
        return legacy_new(Tensor, cls._legacy_dtype, args, dev, exact_dtype=True)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _legacy_class(dtype, cuda=False):
    name = dtype._tensor_type
    return _LegacyTensorMeta(name, (), {"_legacy_dtype": dtype, "_is_cuda": cuda,
                                         "__module__": "torch.cuda" if cuda else "torch"})


LEGACY_TYPES = {d._tensor_type: _legacy_class(d) for d in _dt.ALL_DTYPES}
CUDA_LEGACY_TYPES = {d._tensor_type: _legacy_class(d, cuda=True) for d in _dt.ALL_DTYPES}
