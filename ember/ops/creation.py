"""Tensor creation: from data (`tensor`, `as_tensor`, `from_numpy`), filled (`zeros`, `ones`,
`full`, `empty`, their `_like` and `new_*` forms) and the legacy constructors (`ember.Tensor(2, 3)`, `FloatTensor([...])`)."""
import builtins
import collections.abc
import math
import numbers

import numpy as np

from .. import _memory_format as _mf
from .. import _state
from .. import _dtype_casts as _casts, dtypes as _dt
from .._tensor import Tensor, make_tensor
from ..device import CPU, backend_of, canonical
from ._graph import Node
from ._varargs import int_list_error, varargs_or_keyword

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "empty", "full",
           "zeros_like", "ones_like", "empty_like", "full_like", "scalar_tensor", "empty_strided",
           "frombuffer"]
METHODS = ["new_tensor", "new_zeros", "new_ones", "new_empty", "new_full", "zero_", "fill_"]


# ---- where, of what type, how big ------------------------------------------------------------
def resolve_device(device):
    if device is None:
        dev = _state.default_device()
        return CPU if dev is None else canonical(dev)
    return canonical(device)


def _on_device(array, dev):
    """`array` (host memory) placed on `dev`."""
    return array if dev.type == "cpu" else backend_of(dev).from_host(array, dev.index)


def check_factory_grad(d, requires_grad):
    if requires_grad and not (d.is_floating_point or d.is_complex):
        raise RuntimeError("Only Tensors of floating point and complex dtype can require gradients")


def _finish(array, dev, requires_grad, d=None):
    d = d or _dt.FROM_NUMPY[array.dtype]
    check_factory_grad(d, requires_grad)
    t = make_tensor(_on_device(array, dev), dev)
    t._requires_grad = builtins.bool(requires_grad)
    return t


def _is_int(x):
    return isinstance(x, (builtins.int, np.integer)) and not isinstance(x, (builtins.bool, np.bool_))


def size_arg(args, fname, position=1):
    """A shape from `f(2, 3)`, `f((2, 3))`, `f([2, 3])` or `f(Size)`, with PyTorch's errors
    (`position`: where the size stands among the op's arguments, for them)."""
    size = args
    if len(size) == 1 and not _is_size_int(size[0]):
        size = size[0] if isinstance(size[0], (tuple, list)) else None
    if size is None or not builtins.all(_is_size_int(s) for s in size):
        err = int_list_error(args, fname, "size", position, _is_size_int)
        if err is not None:
            raise err
        size = args[0] if len(args) == 1 and not _is_size_int(args[0]) else args
    shape = tuple(builtins.int(s) for s in size)
    for s in shape:
        if s < 0:
            if fname == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(shape)}")
    return shape


def _is_size_int(s):
    return _is_int(s) or _is_int_tensor(s)


def _is_int_tensor(s):
    return isinstance(s, Tensor) and s._array.ndim == 0 and not (s.dtype.is_floating_point
                                                                 or s.dtype.is_complex)


_shape = size_arg


def _float_dtype(dtype, fname="tensor"):
    return _dt.get_default_dtype() if dtype is None else _dt.dtype_arg(dtype, fname)


# The C++ type names PyTorch's conversion errors print.
_C_TYPES = {"bool": "bool", "uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t",
            "int32": "int", "int64": "int64_t", "float16": "c10::Half",
            "bfloat16": "c10::BFloat16", "float32": "float", "float64": "double",
            "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}


def _convert_scalar(value, d, type_name=None):
    """A Python number as a value of dtype `d`, with PyTorch's overflow check: integers wrap
    into unsigned types from as low as -max, floats must fit, NaN never becomes an integer."""
    if isinstance(value, np.generic):
        value = value.item()
    if d is _dt.bool:
        return builtins.bool(value)
    if isinstance(value, builtins.complex) and not d.is_complex:
        if value.imag != 0:
            raise _overflow(d, type_name)
        value = value.real
    if d.is_complex:
        return value
    if d.is_floating_point:
        lo, hi = _range_of(d)
        if math.isfinite(value) and not lo <= value <= hi:
            raise _overflow(d, type_name)
        return value
    lo, hi = _range_of(d)
    if isinstance(value, builtins.float):
        if not math.isfinite(value):
            raise _overflow(d, type_name)
        value = builtins.int(value)  # truncation toward zero, as C++ casts
    if not (-hi if lo == 0 else lo) <= value <= hi:
        raise _overflow(d, type_name)
    return value % (hi + 1) if lo == 0 else value


def _overflow(d, type_name):
    name = type_name or _C_TYPES.get(d.name, d._cpp_name)
    return RuntimeError(f"value cannot be converted to type {name} without overflow")


_RANGES = {}  # dtype -> (min, max): every zeros/ones/full/clamp converts a scalar


def _range_of(d):
    """The (min, max) of dtype `d`'s values (finfo's floats, iinfo's ints), kept per dtype:
    making a finfo costs several microseconds."""
    found = _RANGES.get(d)
    if found is None:
        if d.is_floating_point:
            info = _dt.finfo(d)
            found = (info.min, info.max)
        else:
            info = np.iinfo(d.np)
            found = (builtins.int(info.min), builtins.int(info.max))
        _RANGES[d] = found
    return found


def _scalar_type(value):
    """The dtype PyTorch gives a fill value: bool, int64, or the default float or complex
    (a NumPy scalar counts as a number of its kind; np.bool_ as a float, as in PyTorch). Its
    default complex dtype is complex64 under any float default but float64, where a complex
    number in data or arithmetic takes the default's own (complex32 under float16)."""
    if isinstance(value, np.generic):
        kind = value.dtype.kind
        value = 1 if kind in "iu" else (1j if kind == "c" else 1.0)
    d = _dt.scalar_dtype(value)
    return _dt.complex64 if d is _dt.complex32 else d


# ---- from data -------------------------------------------------------------------------------
def _is_sequence(x):
    return isinstance(x, (list, tuple, builtins.range, np.ndarray)) and not (
        isinstance(x, np.ndarray) and x.ndim == 0)


def _is_other_sequence(x):
    """Python's sequence protocol beyond list/tuple/range (a deque, a user's class with
    __len__ and __getitem__, a memoryview): PyTorch reads those as sequences too. Not str or
    bytes (refused), mappings, NumPy values or tensors (leaves)."""
    return (hasattr(type(x), "__getitem__") and hasattr(type(x), "__len__")
            and not isinstance(x, (str, bytes, dict, np.ndarray, np.generic, Tensor))
            and not isinstance(x, collections.abc.Mapping))


def _as_lists(data):
    """Nested data with every sequence made a list, for NumPy to read."""
    if isinstance(data, (list, tuple)) or _is_other_sequence(data):
        return [_as_lists(x) for x in data]
    return data


def _compute_sizes(data):
    """The shape, read along the first elements (PyTorch's compute_sizes)."""
    sizes = []
    seq = data
    while _is_sequence(seq) or isinstance(seq, str) or _is_other_sequence(seq) or (
            sizes and isinstance(seq, np.ndarray)):
        if isinstance(seq, np.ndarray) and seq.ndim == 0:  # a 0-d array inside a list
            raise TypeError("len() of unsized object")
        if isinstance(seq, str) or len(sizes) >= 64:
            raise ValueError(f"too many dimensions '{type(seq).__name__}'")
        sizes.append(len(seq))
        if not len(seq):
            break
        seq = seq[0]
    return sizes


_BUILTIN_NUMBERS = {builtins.bool, builtins.int, builtins.float, builtins.complex}


def _infer(obj, sizes, dim, flags):
    """Check `obj` has shape `sizes[dim:]` and give the promoted dtype of its leaves (None
    for no leaves). `flags` collects whether tensors appear (they need a slower copy)."""
    if isinstance(obj, np.ndarray):  # (data that is one array never comes here)
        _state.warn_once("Creating a tensor from a list of numpy.ndarrays is extremely slow. "
                         "Please consider converting the list to a single numpy.ndarray with "
                         "numpy.array() before converting to a tensor.")
    if dim == len(sizes):
        return _leaf_dtype(obj, flags)
    if isinstance(obj, np.ndarray):
        if obj.ndim == 0:
            raise TypeError("len() of unsized object")
        if tuple(obj.shape) != tuple(sizes[dim:dim + obj.ndim]) or obj.ndim != len(sizes) - dim:
            _check_lengths(obj, sizes, dim)
        return _dt.from_numpy_dtype(obj.dtype)
    if not _is_sequence(obj):
        if not _is_other_sequence(obj):
            raise TypeError("not a sequence")
        flags["other"] = True
    if len(obj) != sizes[dim]:
        raise ValueError(f"expected sequence of length {sizes[dim]} at dim {dim} (got {len(obj)})")
    types = set(map(type, obj))
    d = None
    if dim == len(sizes) - 1 and types <= _BUILTIN_NUMBERS:
        for ty in types:  # a leaf row of plain numbers: a handful of types, not one per element
            d = _promote(d, _dt.scalar_dtype(ty(0)))
        return d
    for item in obj:
        d = _promote(d, _infer(item, sizes, dim + 1, flags))
    return d


def _check_lengths(arr, sizes, dim):
    for k, n in enumerate(arr.shape):
        if dim + k >= len(sizes):
            raise TypeError(f"'{type(arr).__name__}' object cannot be interpreted as an integer")
        if n != sizes[dim + k]:
            raise ValueError(f"expected sequence of length {sizes[dim + k]} at dim {dim + k} "
                             f"(got {n})")
    raise TypeError("not a sequence")


def _leaf_dtype(x, flags):
    if type(x) in _BUILTIN_NUMBERS:
        return _dt.scalar_dtype(x)
    if isinstance(x, np.generic):
        return _dt.from_numpy_dtype(x.dtype)
    if isinstance(x, Tensor):
        flags["tensor"] = True
        return x.dtype
    if isinstance(x, str):
        raise TypeError(f"new(): invalid data type '{type(x).__name__}'")
    if isinstance(x, np.ndarray):  # where a number belongs: a 0-d one reads as a NumPy
        if x.ndim:                 # scalar of its dtype (but for PyTorch's bool error)
            raise TypeError("only 0-dimensional arrays can be converted to Python scalars")
        if x.dtype.kind == "b":
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return _dt.from_numpy_dtype(x.dtype)
    if _is_sequence(x) or _is_other_sequence(x):
        flags["ragged"] = True  # a deeper list where a number belongs: fails when stored
        return None
    raise RuntimeError(f"Could not infer dtype of {type(x).__name__}")


def _promote(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return _dt.promote_types(a, b)


def _check_numpy(arr, shared=False):
    """`arr` as a tensor's array, refused as PyTorch refuses it; `shared`: the tensor is to
    use its memory (from_numpy, as_tensor), where PyTorch warns, once, of a read-only one."""
    if shared and not arr.flags.writeable:
        _state.warn_once("The given NumPy array is not writable, and PyTorch does not support "
                         "non-writable tensors. This means writing to this tensor will result "
                         "in undefined behavior. You may want to copy the array to protect its "
                         "data or make it writable before converting it to a tensor. This type "
                         "of warning will be suppressed for the rest of this program.")
    if any(st < 0 for st in arr.strides):
        raise ValueError("At least one stride in the given numpy array is negative, and tensors "
                         "with negative strides are not currently supported. (You can probably "
                         "work around this by making a copy of your array  with array.copy().) ")
    if not arr.dtype.isnative:
        raise ValueError("given numpy array has byte order different from the native byte order. "
                         "Conversion between byte orders is currently not supported.")
    _dt.from_numpy_dtype(arr.dtype)
    return _dt.with_own_dtype(arr)


def _data_to_array(data, dtype=None, type_name=None, shared=False):
    """A host array from Python data, typed as PyTorch infers: Python floats take the default
    dtype, ints int64, bools bool, NumPy values and tensors theirs; mixed leaves promote.
    `shared` as _check_numpy's (the legacy constructors, which PyTorch lets share)."""
    if isinstance(data, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(data).__name__}'")
    if isinstance(data, Tensor):
        arr = data._host()
        return arr if dtype is None else _casts.astype(arr, dtype)
    if isinstance(data, np.ndarray):
        data = _check_numpy(data, shared)
        return data if dtype is None else _casts.astype(data, dtype)
    if isinstance(data, (bytearray, memoryview)):
        data = list(bytes(data))
    sizes = _compute_sizes(data)
    flags = {}
    inferred = _infer(data, sizes, 0, flags) if sizes else _leaf_dtype(data, flags)
    inferred = inferred or _dt.get_default_dtype()
    d = dtype or inferred
    if inferred.is_complex and not d.is_complex:
        raise TypeError("must be real number, not complex")
    if d._kind in _OPAQUE_KINDS:
        raise RuntimeError("store_scalar: invalid type")
    if flags.get("other"):
        data = _as_lists(data)
    if flags.get("tensor"):
        data = _tensors_to_numbers(data)
    if flags.get("ragged"):
        _raise_ragged(data, sizes, d)
    if not sizes:  # one number
        if isinstance(data, builtins.int) and not (d.is_floating_point or d.is_complex) \
                and not -(1 << 63) <= data < (1 << 63):
            raise ValueError("Overflow when unpacking long long")
        value = _convert_scalar(data, d, type_name or d.name)
        if d._kind:
            return _casts.astype(np.asarray(value), d)
        return np.asarray(value, dtype=d.np)
    if d.is_floating_point or d.is_complex or d is _dt.bool:
        wide = np.complex128 if d.is_complex else (np.bool_ if d is _dt.bool else np.float64)
        wide = np.asarray(data, dtype=wide)
        return _casts.astype(wide, d) if d._kind else wide.astype(d.np, copy=False)
    try:
        wide = np.asarray(data, dtype=np.float64 if inferred.is_floating_point else np.int64)
    except OverflowError:
        if d is not _dt.uint64:
            raise ValueError("Overflow when unpacking long long") from None
        try:  # uint64's upper half: PyTorch reads those as unsigned
            wide = np.asarray(data, dtype=np.uint64)
        except OverflowError:
            raise OverflowError("can't convert negative int to unsigned") from None
    if wide.dtype.kind == "f":
        wide = np.trunc(wide)
    _check_int_range(wide, d, type_name or d.name)
    return wide.astype(d.np)


_OPAQUE_KINDS = (_dt.BITS, _dt.SUB_INT, _dt.SUB_UINT, _dt.FLOAT4)


def _check_int_range(wide, d, name):
    info = np.iinfo(d.np)
    lo = -builtins.int(info.max) if info.min == 0 else builtins.int(info.min)
    if wide.size and (builtins.bool((wide < lo).any()) or builtins.bool((wide > info.max).any())
                      or (wide.dtype.kind == "f" and not builtins.bool(np.isfinite(wide).all()))):
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")


def _tensors_to_numbers(data):
    if isinstance(data, Tensor):
        if data._array.size != 1:
            if data.dtype.is_floating_point or data.dtype.is_complex:
                raise ValueError("only one element tensors can be converted to Python scalars")
            raise TypeError("only integer tensors of a single element can be converted to an index")
        return data.item()
    if isinstance(data, (list, tuple)):
        return [_tensors_to_numbers(x) for x in data]
    return data


def _raise_ragged(data, sizes, d):
    """A list where a number belongs: PyTorch fails storing it, in the target dtype's words."""
    leaf = data
    for _ in sizes:
        bad = [x for x in leaf if _is_sequence(x)] if isinstance(leaf, (list, tuple)) else []
        if bad:
            leaf = bad[0]
            break
        leaf = leaf[0]
    name = type(leaf).__name__
    if d.is_floating_point or d.is_complex:
        raise TypeError(f"must be real number, not {name}")
    raise TypeError(f"'{name}' object cannot be interpreted as an integer")


def tensor(data, *, dtype=None, device=None, requires_grad=False, pin_memory=False):
    if isinstance(data, Tensor):
        import warnings
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than torch.tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
        if device is None:
            device = data._device
    d = _dt.dtype_arg(dtype, "tensor") if dtype is not None else None
    arr = np.array(_data_to_array(data, d), copy=True, order="C")
    return _finish(arr, resolve_device(device), requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Shares memory with `data` where it can: a tensor or array of the right dtype and device."""
    dtype = _dt.to_dtype(dtype) if dtype is not None else None
    if isinstance(data, Tensor):
        if (dtype is not None and dtype is not data.dtype) or (
                device is not None and canonical(device) != data._device):
            return data.to(device=device, dtype=dtype)
        return data
    if isinstance(data, np.ndarray):
        dev = resolve_device(device)
        data = _check_numpy(data, shared=True)
        arr = data if dtype is None or data.dtype == dtype.np else data.astype(dtype.np)
        return make_tensor(_on_device(arr, dev), dev)
    return tensor(data, dtype=dtype, device=device)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=None):
    """as_tensor with copy control; a tensor that requires grad stays in the graph unless
    told otherwise (PyTorch 2.x's new default, announced by its warning)."""
    if copy:
        src = obj.detach().clone() if isinstance(obj, Tensor) else tensor(obj)
        t = as_tensor(src, dtype=dtype, device=device)
    else:
        t = as_tensor(obj, dtype=dtype, device=device)
        if copy is False and isinstance(obj, (Tensor, np.ndarray)) and not _shares(t, obj):
            raise ValueError("can't alias tensor from the given object: a copy is required")
    if isinstance(obj, Tensor) and obj._requires_grad and not copy:
        if requires_grad is None:
            _state.warn_once("torch.asarray: unspecified requires_grad now defaults to "
                             "obj.requires_grad instead of False. Pass requires_grad=False "
                             "explicitly to get the old behavior and silence this warning.")
        elif not requires_grad:
            t = t.detach()
    if requires_grad and not t._requires_grad:
        t = t.detach() if t is obj else t
        t.requires_grad_(True)
    return t


def _shares(t, obj):
    arr = obj._array if isinstance(obj, Tensor) else obj
    return t._array is arr or np.shares_memory(t._host(), arr) if t._device.type == "cpu" else False


def from_numpy(ndarray):
    """A tensor sharing `ndarray`'s memory (writes through either show in both)."""
    if not isinstance(ndarray, np.ndarray):
        raise TypeError(f"expected np.ndarray (got {type(ndarray).__name__})")
    return make_tensor(_check_numpy(ndarray, shared=True), CPU)


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    arr = np.frombuffer(buffer, dtype=_dt.to_dtype(dtype).np, count=count, offset=offset)
    return _finish(arr, CPU, requires_grad)


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False):
    return full((), s, dtype=_float_dtype(dtype), device=device, requires_grad=requires_grad)


# ---- filled ------------------------------------------------------------------------------------
def _filled(fill, shape, dtype, device, requires_grad, out, fname):
    """zeros/ones/empty/full: dtype from `out` when not given; `out` is resized silently."""
    if out is not None:
        if dtype is not None and _dt.dtype_arg(dtype, fname) is not out.dtype:
            raise RuntimeError(f"dtype {_dt.to_dtype(dtype)._scalar_name} does not match dtype "
                               f"of out parameter ({out.dtype._scalar_name})")
        dtype = out.dtype
        device = out._device if device is None else device
    dev = resolve_device(device)
    d = _float_dtype(dtype, fname)
    check_factory_grad(d, requires_grad)
    xp = backend_of(dev).xp
    if d is _dt.complex32:
        _casts.warn_complex32()
    if fill is None:
        arr = _state.uninitialized(xp, shape, d.np)
    elif fill == 0 and not isinstance(fill, builtins.complex) and d._kind:
        arr = _casts.zeros(xp, shape, d.np)  # (float8_e8m0fnu's zero bytes are 2**-127)
    elif d._kind:
        arr = _filled_barebones(xp, shape, fill, d)
    else:
        arr = _casts.full_array(xp, shape, _convert_scalar(fill, d), d.np)
    t = make_tensor(arr, dev)
    t._requires_grad = builtins.bool(requires_grad)
    return t if out is None else factory_out(out, t, fname)


def _filled_barebones(xp, shape, fill, d):
    if d._kind in _OPAQUE_KINDS:
        raise _casts.not_implemented("fill_cpu", d)
    value = _convert_scalar(fill, d)
    wide = np.complex64 if d.is_complex else np.float32 if d.is_floating_point else d.np
    return _casts.astype(xp.full(shape, value, dtype=wide), d)


def factory_out(out, t, fname):
    """A factory's out=: PyTorch resizes `out` to the result without a warning."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{fname}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if out._array.shape != t._array.shape:
        from .._state import grad
        if grad.enabled and out._requires_grad:
            raise RuntimeError(f"{fname}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires grad.")
        out._array = t._array.astype(out._array.dtype, copy=False)
        out._vc.value += 1
        return out
    from ._writes import write_out
    return write_out(out, t, fname)


def _factory_size(args, size, fname):
    """The size of zeros/ones/empty: varargs or size=, one of them required (as PyTorch's
    signature, where an empty call is a TypeError, not a 0-d tensor)."""
    args = varargs_or_keyword(args, size, "size", fname)
    if not args:
        raise TypeError(f'{fname}() missing 1 required positional arguments: "size"')
    return size_arg(args, fname)


def zeros(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False):
    return _filled(0, _factory_size(args, size, "zeros"), dtype, device, requires_grad, out, "zeros")


def ones(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
         pin_memory=False):
    return _filled(1, _factory_size(args, size, "ones"), dtype, device, requires_grad, out, "ones")


def empty(*args, size=None, out=None, dtype=None, layout=None, device=None, requires_grad=False,
          pin_memory=False, memory_format=None):
    t = _filled(None, _factory_size(args, size, "empty"), dtype, device, requires_grad, out, "empty")
    if memory_format is None:
        return t
    strides = _mf.format_strides(tuple(t.shape), _mf.parse(memory_format, "empty", None))
    return _mf.lay_out_fresh(t, strides, backend_of(t._device).xp)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """An uninitialised tensor of `size` whose memory is laid out with `stride` (elements)."""
    size, stride = tuple(size), tuple(stride)
    if len(size) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(size)}) must match dimensionality of "
                           f"strides ({len(stride)})")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(size)} and "
                           f"strides={list(stride)}")
    t = empty(size, dtype=dtype, device=device, requires_grad=requires_grad)
    return _mf.lay_out_fresh(t, stride, backend_of(t._device).xp)


def full(size, fill_value, *, out=None, dtype=None, layout=None, device=None,
         requires_grad=False, pin_memory=False):
    shape = size_arg((size,), "full") if not _is_int(size) else None
    if shape is None:
        raise TypeError(f"full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    if isinstance(fill_value, Tensor) and not fill_value.dim():
        if dtype is None and out is None:
            dtype = fill_value.dtype
        fill_value = fill_value.item()
    elif not isinstance(fill_value, (numbers.Number, np.generic)):
        raise TypeError(f"full(): argument 'fill_value' (position 2) must be Number, not "
                        f"{type(fill_value).__name__}")
    if dtype is None and out is None:
        dtype = _scalar_type(fill_value)
    return _filled(fill_value, shape, dtype, device, requires_grad, out, "full")


def _like(input, dtype, device, fname):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return (input.dtype if dtype is None else _dt.dtype_arg(dtype, fname),
            input._device if device is None else device)


def zeros_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
               memory_format=None):
    d, dev = _like(input, dtype, device, "zeros_like")
    t = _filled(0, input._array.shape, d, dev, requires_grad, None, "zeros_like")
    return _mf.lay_out_like(t, input, memory_format, "zeros_like")


def ones_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
              memory_format=None):
    d, dev = _like(input, dtype, device, "ones_like")
    t = _filled(1, input._array.shape, d, dev, requires_grad, None, "ones_like")
    return _mf.lay_out_like(t, input, memory_format, "ones_like")


def empty_like(input, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
               memory_format=None):
    d, dev = _like(input, dtype, device, "empty_like")
    t = _filled(None, input._array.shape, d, dev, requires_grad, None, "empty_like")
    return _mf.lay_out_like(t, input, memory_format, "empty_like")


def full_like(input, fill_value, *, dtype=None, layout=None, device=None, requires_grad=False, pin_memory=False,
              memory_format=None):
    d, dev = _like(input, dtype, device, "full_like")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    t = _filled(fill_value, input._array.shape, d, dev, requires_grad, None, "full_like")
    return _mf.lay_out_like(t, input, memory_format, "full_like")


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False, layout=None,
               pin_memory=False):
    d, dev = _like(self, dtype, device, "new_tensor")
    if isinstance(data, Tensor):
        import warnings
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() or sourceTensor.detach().clone()."
                      "requires_grad_(True), rather than tensor.new_tensor(sourceTensor).",
                      UserWarning, stacklevel=2)
    arr = np.array(_data_to_array(data, d), copy=True, order="C")
    return _finish(arr, resolve_device(dev), requires_grad)


def new_zeros(self, *args, size=None, dtype=None, device=None, requires_grad=False, layout=None,
              pin_memory=False):
    d, dev = _like(self, dtype, device, "new_zeros")
    return _filled(0, size_arg(varargs_or_keyword(args, size, "size", "new_zeros"), "new_zeros"), d, dev, requires_grad, None, "new_zeros")


def new_ones(self, *args, size=None, dtype=None, device=None, requires_grad=False, layout=None,
             pin_memory=False):
    d, dev = _like(self, dtype, device, "new_ones")
    return _filled(1, size_arg(varargs_or_keyword(args, size, "size", "new_ones"), "new_ones"), d, dev, requires_grad, None, "new_ones")


def new_empty(self, *args, size=None, dtype=None, device=None, requires_grad=False, layout=None,
              pin_memory=False):
    d, dev = _like(self, dtype, device, "new_empty")
    return _filled(None, size_arg(varargs_or_keyword(args, size, "size", "new_empty"), "new_empty"), d, dev, requires_grad, None, "new_empty")


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False,
             layout=None, pin_memory=False):
    if _is_int(size):
        raise TypeError(f"new_full(): argument 'size' (position 1) must be tuple of ints, not "
                        f"{type(size).__name__}")
    d, dev = _like(self, dtype, device, "new_full")
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()
    return _filled(fill_value, size_arg((size,), "new_full"), d, dev, requires_grad, None,
                   "new_full")


# ---- in-place fills ------------------------------------------------------------------------
class _FillNode(Node):
    """fill_/zero_: no gradient reaches the old value; a tensor fill value gets the sum."""

    def backward(self, grad):
        grads = []
        # inputs (the old value, and a fill value tensor when there is one): by position, as
        # a 0-dim tensor's old value and fill value have the same shape
        for k, ((fn, _), (_, npd)) in enumerate(zip(self._next, self._meta)):
            if fn is None:
                grads.append(None)
            elif k == 0:
                grads.append(zeros_like(grad))
            else:  # the 0-dim fill value
                grads.append(grad.sum().to(_dt.FROM_NUMPY[npd]))
        return grads[0] if len(grads) == 1 else tuple(grads)


class ZeroBackward0(_FillNode):
    pass


class FillBackward2(_FillNode):
    pass


class FillBackward3(_FillNode):
    pass


def fill_(input, value):
    from ._writes import inplace
    if isinstance(value, Tensor):
        if value._array.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                               f"{value._array.ndim} dimensions.")
        return inplace(input, lambda s: _filled_like(s, value, FillBackward3), (value,))
    if not isinstance(value, (builtins.bool, builtins.int, builtins.float, builtins.complex,
                              np.generic)):
        raise TypeError(f"fill_() received an invalid combination of arguments - got "
                        f"({type(value).__name__})")
    return inplace(input, lambda s: _filled_like(s, value, FillBackward2), allow_overlap=True)


def _filled_like(s, value, node_cls):
    """The out-of-place value of `s.fill_(value)`: `value` everywhere, in s's dtype."""
    from ._graph import record
    inputs = (s,)
    xp = backend_of(s._device).xp
    if isinstance(value, Tensor):
        inputs = (s, value)
        if value._device == s._device and not (s.dtype._kind or value.dtype._kind):
            t = make_tensor(_copied_in(xp, value, s), s._device)
            record(node_cls, inputs, t)
            return t
        value = value.item()  # from another device: read as a number, as PyTorch does
    if s.dtype._kind:  # zero_ sets the bytes to zero, as PyTorch; fill_ converts
        zero = node_cls is ZeroBackward0
        arr = _casts.zeros(xp, s._array.shape, s._array.dtype) if zero else \
            _filled_barebones(xp, s._array.shape, value, s.dtype)
        t = make_tensor(arr, s._device)
        record(node_cls, inputs, t)
        return t
    v = _convert_scalar(value, s.dtype)
    arr = _casts.full_array(xp, s._array.shape, v, s._array.dtype)
    t = make_tensor(arr, s._device)
    record(node_cls, inputs, t)
    return t


def _copied_in(xp, value, s):
    """`s.fill_(value)` for a 0-dim `value` on s's device: PyTorch copies it in, cast as
    copy_ casts (wrapping, no overflow check) and read on the device (no host sync)."""
    arr = value._array
    if arr.dtype.kind == "c" and not s.dtype.is_complex:
        import warnings
        warnings.warn("Casting complex values to real discards the imaginary part",
                      UserWarning, stacklevel=4)
        arr = arr.real
    # a new array, so a value inside s is read before s is written
    return xp.broadcast_to(_casts.astype(arr, s.dtype), s._array.shape).copy()


def zero_(input):
    from ._writes import inplace
    return inplace(input, lambda s: _filled_like(s, 0, ZeroBackward0), allow_overlap=True)
