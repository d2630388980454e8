"""Moving and converting tensors: `to` in all its call forms, `cpu`, `cuda`, `type`, and the
dtype shorthands (`.float()`, `.long()` ...). A conversion is differentiable
(`ToCopyBackward0`): the gradient goes back to the source's dtype and device."""
import builtins

import numpy as np

from .. import _memory_format as _mf
from .. import _dtype_casts as _casts, dtypes as _dt
from .._tensor import Tensor, make_tensor
from ..device import backend_of, canonical, device as _device_cls, no_aten_cuda
from ._graph import Node, record

__all__ = []
METHODS = ["to", "cpu", "cuda", "type", "type_as", "float", "double", "half", "bfloat16",
           "int", "long", "short", "char", "byte", "bool", "cfloat", "cdouble", "chalf"]


class ToCopyBackward0(Node):
    def backward(self, grad):
        if grad.dtype.is_complex and self._meta[0][1].kind != "c":
            from .complex_views import real  # a real input's gradient is the real part
            grad = real(grad)
        return to(grad, device=self.source_device, dtype=_dt.FROM_NUMPY[self._meta[0][1]])


def _move(array, src, dst):
    if src == dst:
        return array
    if src.type != "cpu":
        array = backend_of(src).to_host(array)
    if dst.type != "cpu":
        array = backend_of(dst).from_host(array, dst.index)
    return array


def _parse_to(args, kwargs):
    """PyTorch's `to` overloads: (device, dtype), (dtype), (tensor), with keywords."""
    given_kw = dict(kwargs)
    dev = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    fmt = _mf.parse(kwargs.pop("memory_format", None), "to", _mf.preserve_format)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    given, args = args, list(args)
    if args and isinstance(args[0], Tensor):
        other = args.pop(0)
        dev, dtype = other._device, other.dtype
    elif args and args[0] is None:  # the first overload's device=None, then its dtype=None
        args.pop(0)
        if args and args[0] is None:
            args.pop(0)
    elif args and (isinstance(args[0], (str, _device_cls)) or
                   (isinstance(args[0], builtins.int) and not isinstance(args[0], builtins.bool))):
        if isinstance(args[0], str) and args[0].startswith("torch."):
            dtype = args.pop(0)
        else:
            dev = args.pop(0)
    # a dtype, or a Python type standing for one (`x.to(float)`); `type` here is Tensor.type
    kw_dtype = given_kw.get("dtype")
    if args and (isinstance(args[0], _dt.dtype) or isinstance(args[0], builtins.type)):
        if kw_dtype is not None:  # a dtype twice: no overload takes it
            args.append(kw_dtype)
        dtype = args.pop(0)
    elif kw_dtype is not None and not isinstance(kw_dtype, (_dt.dtype, builtins.type)):
        args.append(kw_dtype)  # `to(dtype="float32")`: no overload takes it
    if args and isinstance(args[0], builtins.bool):  # legacy positional non_blocking, copy
        args.pop(0)
        if args:
            copy = args.pop(0)
    if args:
        raise TypeError(f"to() received an invalid combination of arguments - got "
                        f"({_got(given, given_kw)}), but expected one of:\n"
                        + "".join(f" * ({overload}, bool non_blocking = False, bool copy = False, "
                                  "*, torch.memory_format memory_format = None)\n"
                                  for overload in ("torch.device device = None, torch.dtype dtype "
                                                   "= None", "torch.dtype dtype",
                                                   "Tensor tensor")))
    return dev, dtype, copy, fmt


def _got(args, kwargs):
    """The arguments as PyTorch's parser lists them: positional types, then keywords in name
    order (each followed by ', ' when there is no positional one)."""
    keywords = [f"{k}={_arg_type(v)}" for k, v in sorted(kwargs.items())]
    if args:
        return ", ".join([_arg_type(a) for a in args] + keywords)
    return "".join(k + ", " for k in keywords)


def _arg_type(a):
    """An argument's type as PyTorch's argument parser names it."""
    if isinstance(a, Tensor):
        return "Tensor"
    if isinstance(a, _dt.dtype):
        return "torch.dtype"
    if isinstance(a, _device_cls):
        return "torch.device"
    return builtins.type(a).__name__


def to(self, *args, **kwargs):
    dev, dtype, copy, fmt = _parse_to(args, dict(kwargs))
    dst = self._device if dev is None else canonical(dev)
    d = self.dtype if dtype is None else _dt.dtype_arg(dtype, "to")
    if (dst == self._device and d is self.dtype and not copy and
            (fmt is _mf.preserve_format or _mf.suggest(self._array.shape, self.stride()) is fmt)):
        return self
    arr = _move(self._array, self._device, dst)
    if fmt is not _mf.preserve_format or not _mf.plainly_contiguous(arr):
        _mf.check_rank(fmt, arr.ndim)
        if d._kind or self.dtype._kind or not isinstance(arr, np.ndarray):
            # cast first: NumPy cannot cast these while laying out, and a device's copy
            # casts its own way (a GPU saturates -2.5 to uint8 at 0; PyTorch gives 254)
            arr = _casts.astype(arr, d)
        strides = _mf.target_strides(arr.shape, self.stride(), fmt)
        arr = _mf.laid_out(backend_of(dst).xp, arr, strides, d.np)
    elif arr.dtype != d.np:
        arr = _casts.astype(arr, d)
    elif arr is self._array:
        arr = arr.copy()
    out = make_tensor(arr, dst)
    node = record(ToCopyBackward0, (self,), out) if (d.is_floating_point or d.is_complex) else None
    if node is not None:
        node.source_device = self._device
    return out


def cpu(self, memory_format=None):
    return to(self, "cpu", memory_format=memory_format)


def cuda(self, device=None, non_blocking=False, memory_format=None):
    if device is None:
        device = "cuda"  # canonical() gives it the current CUDA device's index
    if isinstance(device, builtins.bool) or not isinstance(
            device, (builtins.int, np.integer, builtins.str, _device_cls)):
        raise TypeError(f"cuda(): argument 'device' (position 1) must be torch.device, not "
                        f"{builtins.type(device).__name__}")
    # a bare index names the current accelerator: on a machine without one, PyTorch's
    # "Cannot access accelerator device" RuntimeError (device(int) raises it)
    dev = canonical(device)
    if dev.type != "cuda":
        raise RuntimeError("Invalid device, must be cuda device")
    return to(self, dev, memory_format=memory_format)


# what PyTorch's CPU-only build raises when a CUDA tensor type is asked for by name
_NO_ATEN_CUDA = no_aten_cuda("Cannot initialize CUDA")


def _type_by_name(self, name):
    """`t.type('torch.FloatTensor')` / `'torch.cuda.FloatTensor'`: only legacy type names."""
    cuda_type = name.startswith("torch.cuda.")
    if cuda_type and not backend_of(canonical("cuda")).is_available():
        raise RuntimeError(_NO_ATEN_CUDA)
    short = name[len("torch.cuda."):] if cuda_type else \
        name[len("torch."):] if name.startswith("torch.") else None
    if short not in _dt._BY_LEGACY:
        raise ValueError(f"invalid type: '{name}'")
    d = _dt._BY_LEGACY[short]
    if cuda_type:
        return to(self, "cuda", d)
    return to(self, "cpu", d) if self._device.type != "cpu" else to(self, d)


def type(self, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:
        prefix = "torch.cuda." if self._device.type == "cuda" else "torch."
        if self.is_sparse:  # COO; PyTorch names no legacy type for the compressed layouts
            prefix += "sparse."
        return prefix + self.dtype._tensor_type
    if isinstance(dtype, str):
        return _type_by_name(self, dtype)
    if not isinstance(dtype, (_dt.dtype, builtins.type)):
        raise TypeError("dtype must be a type, str, or dtype object")
    if getattr(dtype, "_is_cuda", False) and not backend_of(canonical("cuda")).is_available():
        raise RuntimeError(_NO_ATEN_CUDA)
    is_cuda = getattr(dtype, "_is_cuda", None)
    if is_cuda:
        return to(self, "cuda", dtype._legacy_dtype)
    if is_cuda is False and self._device.type != "cpu":
        return to(self, "cpu", dtype._legacy_dtype)
    return to(self, _dt.to_dtype(dtype))


def type_as(self, other):
    return to(self, other.dtype)


def _shorthand(d):
    def convert(self, memory_format=None):
        return to(self, d, memory_format=memory_format)
    convert.__name__ = d.name
    return convert


float = _shorthand(_dt.float32)
double = _shorthand(_dt.float64)
half = _shorthand(_dt.float16)
bfloat16 = _shorthand(_dt.bfloat16)
int = _shorthand(_dt.int32)
long = _shorthand(_dt.int64)
short = _shorthand(_dt.int16)
char = _shorthand(_dt.int8)
byte = _shorthand(_dt.uint8)
bool = _shorthand(_dt.bool)
cfloat = _shorthand(_dt.complex64)
cdouble = _shorthand(_dt.complex128)
chalf = _shorthand(_dt.complex32)


def view_dtype(self, dtype):
    """`t.view(dtype)`: the same bytes read as another dtype."""
    d = _dt.to_dtype(dtype)
    src = self.dtype
    if d.itemsize != src.itemsize:
        _check_view_dtype(self, src, d)
    from .shape import make_view_of
    return make_view_of(self, self._array.view(d.np), lambda b: view_dtype(b, d))


def _check_view_dtype(t, src, dst):
    """PyTorch's conditions for reading memory as a dtype of another element size."""
    what = (f"to view {src._scalar_name} as {dst._scalar_name} "
            "(different element sizes)")
    if t.dim() == 0:
        raise RuntimeError(f"self.dim() cannot be 0 {what}")
    if t.stride(-1) != 1:
        raise RuntimeError(f"self.stride(-1) must be 1 {what}, but got {t.stride(-1)}")
    if dst.itemsize > src.itemsize:
        ratio = dst.itemsize // src.itemsize
        if t.size(-1) % ratio:
            raise RuntimeError(f"self.size(-1) must be divisible by {ratio} {what}, but got "
                               f"{t.size(-1)}")
        if t.storage_offset() % ratio:
            raise RuntimeError(f"self.storage_offset() must be divisible by {ratio} {what}, but "
                               f"got {t.storage_offset()}")
        for k in range(t.dim() - 1):
            if t.stride(k) % ratio:
                raise RuntimeError(f"self.stride({k}) must be divisible by {ratio} {what}, but "
                                   f"got {t.stride(k)}")
