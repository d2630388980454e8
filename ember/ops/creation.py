"""Tensor creation: from data (`tensor`, `as_tensor`, `from_numpy`), filled (`zeros`, `ones`,
`full`, `empty`, their `_like` and `new_*` forms), ranges (`arange`, `linspace`, `logspace`,
`eye`), and the legacy constructors (`ember.Tensor(2, 3)`, `FloatTensor([...])`)."""
import builtins
import math

import numpy as np

from .. import _state
from .. import dtypes as _dt
from .._tensor import Tensor, make_tensor
from ..device import CPU, backend_of, canonical

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "empty", "full",
           "zeros_like", "ones_like", "empty_like", "full_like", "arange", "range", "linspace",
           "logspace", "eye", "scalar_tensor", "empty_strided", "from_dlpack", "frombuffer"]
METHODS = ["new_tensor", "new_zeros", "new_ones", "new_empty", "new_full", "zero_", "fill_"]


# ---- where and of what type ----------------------------------------------------------------
def resolve_device(device):
    if device is None:
        dev = _state.default_device()
        return CPU if dev is None else canonical(dev)
    return canonical(device)


def _on_device(array, dev):
    """`array` (host memory) placed on `dev`."""
    return array if dev.type == "cpu" else backend_of(dev).from_host(array, dev.index)


def _finish(array, dev, requires_grad):
    t = make_tensor(_on_device(array, dev), dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _shape(size):
    if len(size) == 1 and not isinstance(size[0], (builtins.int, np.integer)):
        size = tuple(size[0])
    for s in size:
        if not isinstance(s, (builtins.int, np.integer)) and not (isinstance(s, Tensor) and s.numel() == 1):
            raise TypeError(f"zeros(): argument 'size' must be tuple of ints, but found element "
                            f"of type {type(s).__name__}")
    shape = tuple(builtins.int(s) for s in size)
    for s in shape:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: {list(shape)}")
    return shape


def _float_dtype(dtype):
    return _dt.get_default_dtype() if dtype is None else _dt.to_dtype(dtype)


# ---- from data -------------------------------------------------------------------------------
def _infer_array(data):
    """A host array from Python data, typed as PyTorch infers: Python floats take the
    default dtype, ints int64, bools bool; NumPy arrays and tensors keep their dtype."""
    if isinstance(data, Tensor):
        return data._host()
    if isinstance(data, np.ndarray):
        return data
    if isinstance(data, np.generic):
        return np.asarray(data)
    if isinstance(data, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
        return np.asarray(data, dtype=_dt.scalar_dtype(data).np)
    if isinstance(data, (list, tuple)):
        if any(isinstance(x, Tensor) for x in data):
            parts = [_infer_array(x) for x in data]
            d = _dt.promote_operands([(_dt.FROM_NUMPY[p.dtype], 1) for p in parts])
            return np.stack([p.astype(d.np) for p in parts]) if parts else np.zeros(0, np.float32)
        if not data:
            return np.zeros(0, dtype=_dt.get_default_dtype().np)
        try:
            arr = np.asarray(data)
        except ValueError as e:
            raise ValueError(f"expected sequence of equal lengths: {e}") from None
        if arr.dtype == np.float64 and not _has_numpy_float64(data):
            arr = arr.astype(_dt.get_default_dtype().np)
        elif arr.dtype == np.complex128:
            arr = arr.astype(_dt.scalar_dtype(1j).np)
        elif arr.dtype.kind in "iu" and arr.dtype != np.int64:
            arr = arr.astype(np.int64) if not _has_numpy_scalars(data) else arr
        elif arr.dtype.kind in "OUS":
            raise TypeError(f"new(): invalid data type '{type(_first_leaf(data)).__name__}'")
        return arr
    if hasattr(data, "__array__") or hasattr(data, "__array_interface__"):
        return np.asarray(data)
    raise TypeError(f"Could not infer dtype of {type(data).__name__}")


def _first_leaf(data):
    while isinstance(data, (list, tuple)) and data:
        data = data[0]
    return data


def _has_numpy_float64(data):
    leaf = _first_leaf(data)
    return isinstance(leaf, (np.floating, np.ndarray))


def _has_numpy_scalars(data):
    return isinstance(_first_leaf(data), (np.generic, np.ndarray))


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    if isinstance(data, Tensor):
        import warnings
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        if device is None:
            device = data._device
    arr = _infer_array(data)
    if dtype is not None:
        arr = _cast(arr, _dt.to_dtype(dtype))
    else:
        _dt.from_numpy_dtype(arr.dtype)
    arr = np.array(arr, copy=True, order="C")
    return _finish(arr, resolve_device(device), requires_grad)


def _cast(arr, d):
    if arr.dtype == d.np:
        return arr
    return arr.astype(d.np)


def as_tensor(data, dtype=None, device=None):
    """Shares memory with `data` where it can: a tensor or array of the right dtype and device."""
    dtype = _dt.to_dtype(dtype) if dtype is not None else None
    if isinstance(data, Tensor):
        out = data
        if dtype is not None and dtype is not data.dtype or device is not None:
            out = data.to(device=device, dtype=dtype)
        return out
    if isinstance(data, np.ndarray):
        dev = resolve_device(device)
        arr = data if dtype is None else _cast(data, dtype)
        _dt.from_numpy_dtype(arr.dtype)
        return make_tensor(_on_device(arr, dev), dev)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    t = as_tensor(obj, dtype=dtype, device=device) if not copy else tensor(obj, dtype=dtype, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t


def from_numpy(ndarray):
    """A tensor sharing `ndarray`'s memory (writes through either show in both)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    _dt.from_numpy_dtype(ndarray.dtype)
    if any(s < 0 for s in ndarray.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    if not ndarray.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. "
                         "Conversion between byte orders is currently not supported.")
    return make_tensor(ndarray, CPU)


def from_dlpack(ext_tensor):
    if isinstance(ext_tensor, Tensor):
        return ext_tensor
    dev_type, dev_index = ext_tensor.__dlpack_device__()
    if dev_type == 1:  # kDLCPU
        return make_tensor(np.from_dlpack(ext_tensor), CPU)
    cp = backend_of(canonical("cuda")).xp
    return make_tensor(cp.from_dlpack(ext_tensor), canonical(f"cuda:{dev_index}"))


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    arr = np.frombuffer(buffer, dtype=_dt.to_dtype(dtype).np, count=count, offset=offset)
    return _finish(arr, CPU, requires_grad)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    return full((), s, dtype=_float_dtype(dtype), device=device, requires_grad=requires_grad)


# ---- filled ------------------------------------------------------------------------------------
def _filled(fill, size, dtype, device, requires_grad, fname):
    shape = _shape(size)
    dev = resolve_device(device)
    d = _float_dtype(dtype)
    xp = backend_of(dev).xp
    if fill is None:
        arr = xp.empty(shape, dtype=d.np)
    elif fill == 0:
        arr = xp.zeros(shape, dtype=d.np)
    else:
        arr = xp.full(shape, fill, dtype=d.np)
    t = make_tensor(arr, dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


def zeros(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    t = _filled(0, size, dtype, device, requires_grad, "zeros")
    return _maybe_out(out, t, "zeros")


def ones(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    t = _filled(1, size, dtype, device, requires_grad, "ones")
    return _maybe_out(out, t, "ones")


def empty(*size, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    t = _filled(None, size, dtype, device, requires_grad, "empty")
    return _maybe_out(out, t, "empty")


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False, **kwargs):
    return empty(size, dtype=dtype, device=device, requires_grad=requires_grad)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    if dtype is None:
        dtype = _dt.scalar_dtype(fill_value)
    t = _filled(fill_value, (tuple(size),) if not isinstance(size, builtins.int) else (size,),
                dtype, device, requires_grad, "full")
    return _maybe_out(out, t, "full")


def _maybe_out(out, t, fname):
    if out is None:
        return t
    from ._graph import write_out
    return write_out(out, t, fname)


def _like(input, dtype, device):
    return (input.dtype if dtype is None else _dt.to_dtype(dtype),
            input._device if device is None else device)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    d, dev = _like(input, dtype, device)
    return zeros(input.shape, dtype=d, device=dev, requires_grad=requires_grad)


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    d, dev = _like(input, dtype, device)
    return ones(input.shape, dtype=d, device=dev, requires_grad=requires_grad)


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False,
               memory_format=None):
    d, dev = _like(input, dtype, device)
    return empty(input.shape, dtype=d, device=dev, requires_grad=requires_grad)


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False,
              memory_format=None):
    d, dev = _like(input, dtype, device)
    return full(input.shape, fill_value, dtype=d, device=dev, requires_grad=requires_grad)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, **kwargs):
    d, dev = _like(self, dtype, device)
    return tensor(data, dtype=d, device=dev, requires_grad=requires_grad)


def new_zeros(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
    d, dev = _like(self, dtype, device)
    return zeros(*size, dtype=d, device=dev, requires_grad=requires_grad)


def new_ones(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
    d, dev = _like(self, dtype, device)
    return ones(*size, dtype=d, device=dev, requires_grad=requires_grad)


def new_empty(self, *size, dtype=None, device=None, requires_grad=False, **kwargs):
    d, dev = _like(self, dtype, device)
    return empty(*size, dtype=d, device=dev, requires_grad=requires_grad)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False, **kwargs):
    d, dev = _like(self, dtype, device)
    return full(size, fill_value, dtype=d, device=dev, requires_grad=requires_grad)


# ---- in-place fills ------------------------------------------------------------------------
def fill_(self, value):
    from ._graph import inplace
    if isinstance(value, Tensor) and value._array.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value._array.ndim} dimensions.")
    return inplace(self, lambda s: _fill_value(s, value), (value,))


def _fill_value(s, value):
    """The out-of-place value of `s.fill_(value)`: `value` everywhere, in s's dtype."""
    from .pointwise import add
    if isinstance(value, Tensor):
        # differentiable in `value`: zeros of s's shape plus value
        return add(zeros_like(s, dtype=s.dtype).detach(), value.to(s.dtype))
    return make_tensor(backend_of(s._device).xp.full(s._array.shape, value, dtype=s._array.dtype),
                       s._device)


def zero_(self):
    return fill_(self, 0)


# ---- ranges --------------------------------------------------------------------------------------
def arange(start=0, end=None, step=1, *, out=None, dtype=None, layout=None, device=None,
           requires_grad=False):
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    start, end, step = vals
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (end - start) * step < 0:
        raise RuntimeError("upper bound and larger bound inconsistent with step sign")
    if dtype is None:
        is_float = any(isinstance(v, builtins.float) for v in vals)
        d = _dt.get_default_dtype() if is_float else _dt.int64
    else:
        d = _dt.to_dtype(dtype)
    n = builtins.max(0, math.ceil((end - start) / step))
    arr = (start + np.arange(n, dtype=np.float64) * step) if d.is_floating_point else \
        np.arange(start, start + n * step, step, dtype=np.int64)[:n]
    t = _finish(arr.astype(d.np), resolve_device(device), requires_grad)
    return _maybe_out(out, t, "arange")


def range(start=0, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    import warnings
    warnings.warn("torch.range is deprecated and will be removed in a future release because its "
                  "behavior is inconsistent with Python's range builtin. Instead, use torch.arange, "
                  "which produces values in [start, end).", UserWarning, stacklevel=2)
    if end is None:
        start, end = 0, start
    n = builtins.int(math.floor((end - start) / step)) + 1
    arr = start + np.arange(n, dtype=np.float64) * step
    return _finish(arr.astype(_float_dtype(dtype).np), resolve_device(device), requires_grad)


def linspace(start, end, steps, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    start, end = [v.item() if isinstance(v, Tensor) else v for v in (start, end)]
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    d = _float_dtype(dtype)
    # PyTorch fills the second half from the end, so the last value is exactly `end`
    step = (end - start) / (steps - 1) if steps > 1 else 0
    i = np.arange(steps, dtype=np.float64)
    half = steps // 2
    arr = np.where(i < half, start + step * i, end - step * (steps - 1 - i))
    t = _finish(arr.astype(d.np), resolve_device(device), requires_grad)
    return _maybe_out(out, t, "linspace")


def logspace(start, end, steps, base=10.0, *, out=None, dtype=None, layout=None, device=None,
             requires_grad=False):
    exps = linspace(start, end, steps, dtype=_dt.float64)._array
    d = _float_dtype(dtype)
    t = _finish(np.power(base, exps).astype(d.np), resolve_device(device), requires_grad)
    return _maybe_out(out, t, "logspace")


def eye(n, m=None, *, out=None, dtype=None, layout=None, device=None, requires_grad=False):
    m = n if m is None else m
    t = _finish(np.eye(n, m, dtype=_float_dtype(dtype).np), resolve_device(device), requires_grad)
    return _maybe_out(out, t, "eye")


# ---- legacy constructors -------------------------------------------------------------------------
def legacy_new(cls, dtype, args, device):
    """`ember.Tensor(...)` and `FloatTensor(...)`: sizes give an uninitialised tensor, data is
    copied into `dtype`, a tensor of that dtype is aliased, nothing gives an empty one."""
    dev = resolve_device(device)
    if not args:
        return make_tensor(_on_device(np.empty((0,), dtype.np), dev), dev)
    first = args[0]
    if len(args) == 1 and isinstance(first, Tensor):
        if first.dtype is not dtype:
            raise TypeError(f"expected {dtype._legacy[:-len('Tensor')] or dtype.name} "
                            f"(got {first.dtype._legacy[:-len('Tensor')]})")
        return first.detach()
    if all(isinstance(a, (builtins.int, np.integer)) and not isinstance(a, builtins.bool) for a in args):
        return make_tensor(_on_device(np.empty(_shape(args), dtype.np), dev), dev)
    if len(args) == 1 and isinstance(first, tuple) and type(first).__name__ == "Size":
        return make_tensor(_on_device(np.empty(_shape(args), dtype.np), dev), dev)
    if len(args) == 1:
        arr = _infer_array(first)
        return make_tensor(_on_device(np.array(arr, dtype=dtype.np, copy=True), dev), dev)
    raise TypeError(f"new() received an invalid combination of arguments - got "
                    f"({', '.join(type(a).__name__ for a in args)})")


class _LegacyTensorMeta(type):
    """`isinstance(t, ember.FloatTensor)` is true for float32 CPU tensors, as in PyTorch."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype is cls._legacy_dtype and \
            (obj._device.type == "cuda") == cls._is_cuda

    def __call__(cls, *args, device=None):
        dev = "cuda" if cls._is_cuda else device
        return legacy_new(Tensor, cls._legacy_dtype, args, dev)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _legacy_class(dtype, cuda=False):
    name = dtype._legacy
    return _LegacyTensorMeta(name, (), {"_legacy_dtype": dtype, "_is_cuda": cuda,
                                         "__module__": "torch.cuda" if cuda else "torch"})


LEGACY_TYPES = {d._legacy: _legacy_class(d) for d in _dt.ALL_DTYPES}
CUDA_LEGACY_TYPES = {d._legacy: _legacy_class(d, cuda=True) for d in _dt.ALL_DTYPES}
