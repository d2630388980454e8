"""Casting arrays between dtypes where NumPy's `astype` alone is not PyTorch's cast.

The barebones dtypes (see `dtypes`) live in arrays of their own NumPy types: complex32 as a
pair of float16 fields, float8 as ml_dtypes' types, the bits, sub-byte and packed float4 types
as opaque one-field records. This module converts them the way PyTorch does:

- float8_e4m3fn has no infinity: PyTorch saturates anything beyond its range (inf included)
  to +-448, where ml_dtypes would give NaN. float8_e8m0fnu keeps only an exponent: PyTorch
  takes the magnitude and sends 0 to its smallest value (ml_dtypes: NaN for both). Every
  float8 is reached through float32, as PyTorch's conversions go.
- complex32 goes through complex64.
- the bits and sub-byte types copy only to themselves (PyTorch: '"copy_" not implemented');
  float4_e2m1fn_x2 the same ('"copy_kernel"' when the other side is a floating type).
"""
import math

import numpy as np

from . import dtypes as _dt
from ._state import warn_once

_OPAQUE = (_dt.BITS, _dt.SUB_INT, _dt.SUB_UINT, _dt.FLOAT4)
_E4M3FN_MAX = 448.0
_E8M0_SMALLEST = np.float32(2.0 ** -127)
_E5M2 = _dt.float8_e5m2.np.type


def not_implemented(kernel, d):
    """PyTorch's error for a kernel that has no version for dtype `d`."""
    return NotImplementedError(f'"{kernel}" not implemented for \'{d._scalar_name}\'')


def refuse(d, kernel, takes=()):
    """Raise PyTorch's refusal of `kernel` for barebones dtype `d`, unless `d`'s kind is one
    of `takes` (callers test `d._kind` first: ordinary dtypes never reach here)."""
    if d._kind not in takes:
        raise not_implemented(kernel, d)


def check_copyable(src, dst):
    """Raise PyTorch's error when an element cast from `src` to `dst` does not exist."""
    if src is dst:
        return
    for d in (dst, src):
        if d._kind in (_dt.BITS, _dt.SUB_INT, _dt.SUB_UINT):
            raise not_implemented("copy_", d)
    for d, other in ((src, dst), (dst, src)):
        if d._kind is _dt.FLOAT4:
            floating = other.is_floating_point or other.is_complex
            raise not_implemented("copy_kernel" if floating else "copy_", d)


def cast_if_needed(arr, np_dtype):
    """`arr` in NumPy dtype `np_dtype`: `arr` itself when it already has it (not even an
    `astype(copy=False)` call, each array call being host time on a device), else a copy."""
    return arr if arr.dtype == np_dtype else arr.astype(np_dtype)


def astype(arr, dst):
    """`arr` (of any ember dtype's NumPy type) cast to ember dtype `dst`, PyTorch's way; a new
    array unless it already has `dst`'s type."""
    src = _dt.FROM_NUMPY[arr.dtype]
    if src is dst:
        return arr
    if not (src._kind or dst._kind):
        if dst is _dt.uint8 and src.is_floating_point and type(arr) is not np.ndarray:
            # PyTorch converts floats to uint8 through int64 on every device, so -2.5 wraps
            # to 254 (NumPy's cast on x86 does too); a GPU's direct cast saturates to 0
            return arr.astype(np.int64).astype(np.uint8)
        return arr.astype(dst.np)
    check_copyable(src, dst)
    if _dt.FLOAT8 in (src._kind, dst._kind) and type(arr) is not np.ndarray:
        return _cast_on_the_host(arr, dst)
    if src is _dt.complex32:
        arr = complex32_to_complex64(arr)
    elif src._kind is _dt.FLOAT8:
        arr = arr.astype(np.float32)
    if dst is _dt.complex32:
        return complex64_to_complex32(arr.astype(np.complex64))
    if dst._kind is _dt.FLOAT8:
        return _to_float8(arr, dst)
    return arr.astype(dst.np)


def bits_of(np_dtype):
    """The unsigned type of the same size when `np_dtype` is one of ml_dtypes' (bfloat16, the
    float8s) or a record (complex32, float4_e2m1fn_x2, the bits and sub-byte types): arrays of
    those are copied and joined as their bits, which every backend can do (CuPy has no kernels
    for either, not even a copy). None for NumPy's own number types."""
    if np_dtype.type.__module__ != "ml_dtypes" and np_dtype.kind != "V":
        return None
    return np.dtype(f"u{np_dtype.itemsize}")


def empty(xp, shape, np_dtype):
    """`xp.empty(shape, np_dtype)`; an array of one of ml_dtypes' types or a record is made
    as its bits and viewed, as CuPy makes a float8 array only by a view."""
    dtype = np.dtype(np_dtype)
    bits = bits_of(dtype)
    return xp.empty(shape, dtype) if bits is None else xp.empty(shape, bits).view(dtype)


def zeros(xp, shape, np_dtype):
    """`xp.zeros(shape, np_dtype)`: zero bytes, made as `empty` makes its arrays (a record's
    and float8_e8m0fnu's zero bytes are what PyTorch's zeros hold too)."""
    dtype = np.dtype(np_dtype)
    bits = bits_of(dtype)
    return xp.zeros(shape, dtype) if bits is None else xp.zeros(shape, bits).view(dtype)


def on_bits(move, *arrays):
    """`move(*arrays)` for an op that only moves elements (copy, gather, flip, stack): done
    on the arrays' bits when their type is one of ml_dtypes', as every backend can (CuPy has
    no kernels for the float8s, not even a copy). The arrays share one dtype."""
    bits = bits_of(arrays[0].dtype)
    if bits is None:
        return move(*arrays)
    return move(*(a.view(bits) for a in arrays)).view(arrays[0].dtype)


def full_array(xp, shape, value, np_dtype):
    """`xp.full(shape, value, np_dtype)` that keeps a negative zero: CuPy's fill writes zero
    bytes for any value equal to 0 (so -0.0 became +0.0, in `cupy.asarray(-0.0)` too), so a
    zero is made as zeros, negated when its sign bit is set."""
    if value == 0 and not isinstance(value, (complex, np.complexfloating)):
        arr = xp.zeros(shape, np_dtype)
        if math.copysign(1.0, float(value)) < 0 and _dt.FROM_NUMPY[arr.dtype].is_floating_point:
            xp.negative(arr, out=arr)
        return arr
    return xp.full(shape, value, dtype=np_dtype)


def _cast_on_the_host(arr, dst):
    """A float8 cast of a device array: CuPy has no kernels for the float8 types (it cannot
    even copy them with a cast), so the values make a round trip through the host, where
    ml_dtypes converts them. One device-to-host copy per cast: float8 tensors on a GPU are
    for storage and for scaled_mm, not for arithmetic."""
    import cupy  # only reached for CuPy arrays
    src_bits = bits_of(arr.dtype)  # a strided array is made contiguous for the copy: as bits
    host = astype(arr.get() if src_bits is None else arr.view(src_bits).get().view(arr.dtype),
                  dst)
    bits = bits_of(host.dtype)
    with arr.device:  # CuPy makes no float8 array from data, but views one
        return cupy.asarray(host) if bits is None else cupy.asarray(host.view(bits)).view(dst.np)


# complex32's record read as one uint32 word (little-endian: the real half is the low 16 bits).
# Only same-size views and integer arithmetic on array methods: they run on CuPy as on NumPy
# (CuPy has no record field access, and changing the item size needs a contiguous last axis).
def complex32_to_complex64(arr):
    bits = arr.view(np.uint32).reshape(-1)  # 1-d: NumPy's 0-d arithmetic gives scalars
    real = (bits & 0xFFFF).astype(np.uint16).view(np.float16)
    out = real.astype(np.complex64)
    out.imag = (bits >> 16).astype(np.uint16).view(np.float16)
    return out.reshape(arr.shape)


def warn_complex32():
    """PyTorch's warning on making a complex32 tensor, once per process as PyTorch's."""
    warn_once("ComplexHalf support is experimental and many operators don't support it yet.")


def complex64_to_complex32(arr):
    warn_complex32()
    flat = arr.reshape(-1)
    real = flat.real.astype(np.float16).view(np.uint16).astype(np.uint32)
    imag = flat.imag.astype(np.float16).view(np.uint16).astype(np.uint32)
    return (real | (imag << 16)).view(_dt.complex32.np).reshape(arr.shape)


def _to_float8(arr, dst):
    # array methods and operators only, so a CuPy array stays on its device (no host reads)
    if arr.dtype.kind == "c":
        arr = arr.real
    x = arr.astype(np.float32, copy=False)
    if dst is _dt.float8_e4m3fn:
        x = x.clip(-_E4M3FN_MAX, _E4M3FN_MAX)
    elif dst is _dt.float8_e8m0fnu:
        x = abs(x)
        x = x + (x == 0) * _E8M0_SMALLEST  # 0 becomes the smallest power of two
    out = x.astype(dst.np)
    if dst is _dt.float8_e5m2:  # PyTorch's NaN is 0x7f (0xff negative); ml_dtypes' 0x7e
        bits = out.view(np.uint8)
        bits |= (x != x).astype(np.uint8)  # x != x: NaN
    return out


def as_strided(xp, arr, shape, strides):
    """`xp.lib.stride_tricks.as_strided`, also for float8_e5m2, whose ml_dtypes type NumPy
    cannot read back from the array interface its stride tricks pass through: strided as
    bytes, then viewed back."""
    if arr.dtype.type is not _E5M2:
        return xp.lib.stride_tricks.as_strided(arr, shape, strides)
    return xp.lib.stride_tricks.as_strided(arr.view(np.uint8), shape, strides).view(arr.dtype)


def to_python(arr):
    """The Python numbers of an array (`tolist`/`item`), for dtypes whose NumPy types would
    give something else (complex32's records, float8's ml_dtypes scalars)."""
    d = _dt.FROM_NUMPY[arr.dtype]
    if d is _dt.complex32:
        return complex32_to_complex64(arr).astype(np.complex128).tolist()
    if d._kind is _dt.FLOAT8:
        return arr.astype(np.float64).tolist()
    if d._kind in _OPAQUE:
        raise RuntimeError("load_scalar: invalid type")
    return arr.tolist()
