"""ember's dtypes and PyTorch's type-promotion rules.

A dtype is an ember object that knows its NumPy dtype. Promotion is decided here, by one
table built at import, never by NumPy: NumPy's rules differ from PyTorch's (a Python float
with an int64 array gives float64 in NumPy, float32 in PyTorch).
"""
import builtins

import ml_dtypes
import numpy as np

from ._frozen import Frozen, fill

__all__ = [
    "dtype", "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
    "float32", "float64", "complex64", "complex128", "short", "int", "long", "half",
    "float", "double", "cfloat", "cdouble", "finfo", "iinfo", "get_default_dtype",
    "set_default_dtype", "promote_types", "result_type", "can_cast",
    "uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
    "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "complex32", "chalf",
    "bits1x8", "bits2x4", "bits4x2", "bits8", "bits16",
    "int1", "int2", "int3", "int4", "int5", "int6", "int7",
    "uint1", "uint2", "uint3", "uint4", "uint5", "uint6", "uint7", "bit",
]

# Categories, ordered: a higher category wins over a lower one whatever the sizes.
_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3

# The kinds of PyTorch's "barebones" dtypes: tensors of them exist, but only a few ops take
# them (creation, copies and conversion, views, equality, a little arithmetic); the ops that
# refuse them say "... not implemented for 'UInt16'". "" is every ordinary dtype.
UINT = "uint"            # uint16, uint32, uint64: NumPy's own unsigned types
FLOAT8 = "float8"        # ml_dtypes' 8-bit floats
COMPLEX32 = "complex32"  # two float16 halves (NumPy has no complex half)
FLOAT4 = "float4"        # float4_e2m1fn_x2: two 4-bit floats packed in a byte
BITS = "bits"            # bits8, bits16, bits1x8 ...: raw bits with no arithmetic
SUB_INT = "sub_int"      # int1..int7: sub-byte signed integers, one per byte
SUB_UINT = "sub_uint"    # uint1..uint7


class dtype(Frozen):
    """A tensor element type; prints as PyTorch's does (`torch.float32`). Read-only: every
    tensor of the type shares the object."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "_signed",
                 "_category", "_scalar_name", "_tensor_type", "_storage_type", "_cpp_name",
                 "_kind")
    _torch_name = "torch.dtype"
    __module__ = "ember"  # `<class 'torch.dtype'>` (finfo, iinfo), as PyTorch files them

    def __init__(self, name, np_dtype, category, scalar_name, cpp_name, kind=""):
        np_dtype = np.dtype(np_dtype)
        fill(self, name=name, np=np_dtype, itemsize=np_dtype.itemsize,
             is_floating_point=category == _FLOAT, is_complex=category == _COMPLEX,
             _signed=not name.startswith(("bool", "uint")) and name != "float8_e8m0fnu",
             _kind=kind, _category=category,
             # The names PyTorch derives from a dtype, for its messages and legacy classes:
             _scalar_name=scalar_name,                 # its ScalarType, "Float"
             _tensor_type=scalar_name + "Tensor",      # legacy tensor class, "FloatTensor"
             _storage_type=scalar_name + "Storage",    # legacy storage class, "FloatStorage"
             _cpp_name=cpp_name)                       # C++ element type, "float", "long int"

    def __repr__(self):
        return "torch." + self.name

    @property
    def is_signed(self):
        if self._kind is BITS:
            raise RuntimeError("Bits types are undefined")
        return self._signed

    @property
    def abbr(self):
        """PyTorch's short name: 'f32', 'i64', 'b8', 'bf16', 'c64' ..."""
        if self.name == "bfloat16":
            return "bf16"
        kind = "b" if self.name == "bool" else "u" if self.name.startswith("uint") else \
            "c" if self.is_complex else "f" if self.is_floating_point else "i"
        return f"{kind}{self.itemsize * 8}"

    def __reduce__(self):
        # dtypes are singletons: unpickle to the same object
        return (_dtype_by_name, (self.name,))

    def to_real(self):
        return _REAL_OF.get(self, self)

    def to_complex(self):
        if self._category == _COMPLEX:
            return self
        if self not in _COMPLEX_OF:
            raise RuntimeError(f"Unknown Complex ScalarType for {self._scalar_name}")
        return _COMPLEX_OF[self]


bool = dtype("bool", np.bool_, _BOOL, "Bool", "bool")
uint8 = dtype("uint8", np.uint8, _INT, "Byte", "unsigned char")
int8 = dtype("int8", np.int8, _INT, "Char", "signed char")
int16 = dtype("int16", np.int16, _INT, "Short", "short int")
int32 = dtype("int32", np.int32, _INT, "Int", "int")
int64 = dtype("int64", np.int64, _INT, "Long", "long int")
float16 = dtype("float16", np.float16, _FLOAT, "Half", "c10::Half")
bfloat16 = dtype("bfloat16", ml_dtypes.bfloat16, _FLOAT, "BFloat16", "c10::BFloat16")
float32 = dtype("float32", np.float32, _FLOAT, "Float", "float")
float64 = dtype("float64", np.float64, _FLOAT, "Double", "double")
complex64 = dtype("complex64", np.complex64, _COMPLEX, "ComplexFloat", "c10::complex<float>")
complex128 = dtype("complex128", np.complex128, _COMPLEX, "ComplexDouble",
                   "c10::complex<double>")
short, int, long = int16, int32, int64
half, float, double = float16, float32, float64
cfloat, cdouble = complex64, complex128

# The barebones dtypes (see the kinds above). Each needs a NumPy dtype of its own, since a
# tensor's dtype is read off its array's: NumPy's and ml_dtypes' types where they exist; else
# a one-field structured dtype of the right size, named after the dtype, that NumPy can
# allocate, copy, view and index but not compute with.
def _raw(name, base="u1"):
    return np.dtype([(name, base)])


uint16 = dtype("uint16", np.uint16, _INT, "UInt16", "unsigned short", UINT)
uint32 = dtype("uint32", np.uint32, _INT, "UInt32", "unsigned int", UINT)
uint64 = dtype("uint64", np.uint64, _INT, "UInt64", "unsigned long", UINT)
float8_e4m3fn, float8_e4m3fnuz, float8_e5m2, float8_e5m2fnuz, float8_e8m0fnu = (
    dtype(n, getattr(ml_dtypes, n), _FLOAT, "F" + n[1:], "c10::F" + n[1:], FLOAT8)
    for n in ("float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz",
              "float8_e8m0fnu"))
float4_e2m1fn_x2 = dtype("float4_e2m1fn_x2", _raw("float4_e2m1fn_x2"), _FLOAT,
                         "Float4_e2m1fn_x2", "c10::Float4_e2m1fn_x2", FLOAT4)
complex32 = dtype("complex32", [("real", "<f2"), ("imag", "<f2")], _COMPLEX, "ComplexHalf",
                  "c10::complex<c10::Half>", COMPLEX32)
chalf = complex32
bits1x8, bits2x4, bits4x2, bits8 = (dtype(n, _raw(n), _INT, "B" + n[1:], "c10::" + n, BITS)
                                    for n in ("bits1x8", "bits2x4", "bits4x2", "bits8"))
bits16 = dtype("bits16", _raw("bits16", "<u2"), _INT, "Bits16", "c10::bits16", BITS)
int1, int2, int3, int4, int5, int6, int7 = (
    dtype(f"int{n}", _raw(f"int{n}"), _INT, f"Int{n}", f"c10::int{n}", SUB_INT)
    for n in range(1, 8))
uint1, uint2, uint3, uint4, uint5, uint6, uint7 = (
    dtype(f"uint{n}", _raw(f"uint{n}"), _INT, f"UInt{n}", f"c10::uint{n}", SUB_UINT)
    for n in range(1, 8))
bit = uint1  # PyTorch's other name for it

ALL_DTYPES = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
              complex64, complex128)
BAREBONES_DTYPES = (uint16, uint32, uint64, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2,
                    float8_e5m2fnuz, float8_e8m0fnu, float4_e2m1fn_x2, complex32, bits1x8,
                    bits2x4, bits4x2, bits8, bits16, int1, int2, int3, int4, int5, int6, int7,
                    uint1, uint2, uint3, uint4, uint5, uint6, uint7)
EVERY_DTYPE = ALL_DTYPES + BAREBONES_DTYPES  # every dtype a tensor can have
_BY_NAME = {d.name: d for d in EVERY_DTYPE}
_BY_NAME.update(short=int16, int=int32, long=int64, half=float16, float=float32,
                double=float64, cfloat=complex64, cdouble=complex128, chalf=complex32,
                bit=uint1)
_BY_LEGACY = {d._tensor_type: d for d in EVERY_DTYPE}
_REAL_OF = {complex32: float16, complex64: float32, complex128: float64}
_COMPLEX_OF = {float16: complex32, bfloat16: complex64, float32: complex64, float64: complex128}

# Quantized element types, as names only: ember has no quantized tensors (no tensor ever has
# one of these dtypes; they stay out of ALL_DTYPES and FROM_NUMPY). ember.ao's dynamically
# quantized modules take them as their `dtype=` and print them, as PyTorch's do.
qint8 = dtype("qint8", np.int8, _INT, "QInt8", "c10::qint8")
quint8 = dtype("quint8", np.uint8, _INT, "QUInt8", "c10::quint8")
qint32 = dtype("qint32", np.int32, _INT, "QInt32", "c10::qint32")
fill(quint8, _signed=False)  # unsigned, though not named "uint"
_BY_NAME.update(qint8=qint8, quint8=quint8, qint32=qint32)
# NumPy dtype -> ember dtype; read on every tensor's `.dtype`, so a plain dict.
FROM_NUMPY = {d.np: d for d in EVERY_DTYPE}
# The NumPy types a user's array may have to become a tensor (PyTorch's list): not the
# carriers of float8 and the other barebones dtypes, which PyTorch refuses from NumPy.
_FROM_USER_NUMPY = {d.np: d for d in ALL_DTYPES + (uint16, uint32, uint64)}


def _dtype_by_name(name):
    return _BY_NAME[name]


def with_own_dtype(arr):
    """`arr`, or a view of it, whose dtype is the very NumPy dtype object ember's dtype holds.

    Ops compare dtypes by identity (`a.dtype is b.dtype`, cheap on the hot path). NumPy's
    builtin dtypes are singletons only until pickled: an array that crossed a process
    (DataLoader workers, queues, `pickle.loads`) carries an equal but distinct dtype object."""
    own = FROM_NUMPY[arr.dtype].np
    return arr if arr.dtype is own else arr.view(own)


def from_numpy_dtype(np_dtype):
    """The ember dtype of a NumPy dtype, or PyTorch's TypeError for the unsupported ones."""
    try:
        return _FROM_USER_NUMPY[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        kind = np.dtype(np_dtype).type
        raise TypeError(
            f"can't convert np.ndarray of type {kind.__module__}.{kind.__name__}. The "
            "only supported "
            "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
            "int8, uint64, uint32, uint16, uint8, and bool.") from None


def to_dtype(obj):
    """Accept an ember dtype, a NumPy dtype or type, or a legacy type name; give an ember dtype."""
    if isinstance(obj, dtype):
        return obj
    if obj is builtins.float:
        return float64
    if obj is builtins.int:
        return int64
    if obj is builtins.bool:
        return bool
    if obj is builtins.complex:
        return complex128
    if isinstance(obj, str):
        name = obj[len("torch."):] if obj.startswith("torch.") else obj
        if name in _BY_LEGACY:
            return _BY_LEGACY[name]
        if name in _BY_NAME:
            return _BY_NAME[name]
        raise TypeError(f"invalid type: '{obj}'")
    legacy = getattr(obj, "_legacy_dtype", None)  # ember.FloatTensor and friends
    if legacy is not None:
        return legacy
    return from_numpy_dtype(obj)


def dtype_arg(obj, fname):
    """A user's `dtype=` argument as PyTorch parses it: a dtype (or float/int/bool/complex);
    a string is a TypeError (`ones(3, dtype='float32')`), where `to_dtype` takes type names."""
    if isinstance(obj, str):
        raise TypeError(f"{fname}(): argument 'dtype' must be torch.dtype, not str")
    return to_dtype(obj)


# ---- default dtype -------------------------------------------------------------------
_default = [float32]


def get_default_dtype():
    return _default[0]


def set_default_dtype(d):
    if isinstance(d, str):
        raise TypeError("set_default_dtype(): argument 'd' (position 1) must be torch.dtype, "
                        "not str")
    d = to_dtype(d)
    if d not in (float16, bfloat16, float32, float64):
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


# ---- promotion -----------------------------------------------------------------------
def _promote_pair(a, b):
    if a is b:
        return a
    if a._category != b._category:
        hi, lo = (a, b) if a._category > b._category else (b, a)
        if hi._category == _COMPLEX and lo in (float64,):
            return complex128
        return hi
    if a._category == _INT:
        if a is uint8 or b is uint8:
            other = b if a is uint8 else a
            return int16 if other is int8 else other
        return a if a.itemsize > b.itemsize else b
    if a._category == _FLOAT:
        if {a, b} == {float16, bfloat16}:
            return float32
        return a if a.itemsize > b.itemsize else b
    return a if a.itemsize > b.itemsize else b


def _promote_barebones(a, b):
    """PyTorch's promotion where a barebones dtype takes part: its checks in its order (bits,
    then float8, then the unsigned types, which only a floating type absorbs), then its table,
    which knows complex32 among the barebones and refuses the rest (PyTorch fails an internal
    assert there; ember says the promotion is unsupported)."""
    if a is b:
        return a
    if a._kind is BITS or b._kind is BITS:
        raise RuntimeError(f"Promotion from {a._scalar_name} and {b._scalar_name} is "
                           "unsupported.")
    if a._kind is FLOAT8 or b._kind is FLOAT8:
        raise RuntimeError("Promotion for Float8 Types is not supported, attempted to promote "
                           f"{a._scalar_name} and {b._scalar_name}")
    if a._kind in (UINT, SUB_UINT) or b._kind in (UINT, SUB_UINT):
        if a.is_floating_point:
            return a
        if b.is_floating_point:
            return b
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {a._scalar_name} and {b._scalar_name}")
    if (a is complex32 and b in ALL_DTYPES) or (b is complex32 and a in ALL_DTYPES):
        other = b if a is complex32 else a
        if other in (bfloat16, float32, complex64):
            return complex64
        return complex128 if other in (float64, complex128) else complex32
    raise RuntimeError(f"Promotion from {a._scalar_name} and {b._scalar_name} is unsupported.")


class _PromotionTable(dict):
    """The pairs of ALL_DTYPES, made at import; a pair with a barebones dtype is worked out on
    first lookup (there are ~1500 such pairs, most refused: filling them all, exceptions and
    messages included, cost every `import ember` some milliseconds)."""
    def __missing__(self, pair):
        promoted = _promote_barebones(*pair)  # a pair PyTorch refuses raises its error
        self[pair] = promoted
        return promoted


_PROMOTE = _PromotionTable({(a, b): _promote_pair(a, b) for a in ALL_DTYPES for b in ALL_DTYPES})


def promote_types(type1, type2):
    return _PROMOTE[to_dtype(type1), to_dtype(type2)]


def _combine(higher, lower):
    """PyTorch's combine_categories: `higher` wins when its category is at least `lower`'s."""
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher._category >= lower._category:
        if higher._category == _COMPLEX or higher._category == _FLOAT:
            return higher
        if higher is bool:
            return _PROMOTE[higher, lower]
        return higher
    if lower._category == _COMPLEX and higher._category == _FLOAT:
        return higher.to_complex()
    return _PROMOTE[higher, lower]


def scalar_dtype(value):
    """The dtype a Python number takes part in promotion with (a float counts as the default)."""
    if isinstance(value, builtins.bool):
        return bool
    if isinstance(value, builtins.int):
        return int64
    if isinstance(value, builtins.float):
        return _default[0]
    if isinstance(value, builtins.complex):  # the default dtype's complex counterpart
        return complex128 if _default[0] is float64 else \
            complex32 if _default[0] is float16 else complex64
    raise TypeError(f"unsupported scalar type {type(value).__name__}")


def promote_operands(operands):
    """Result dtype of an op over `operands`: (dtype, ndim) pairs, ndim None for Python scalars.

    PyTorch's rule: dimensioned tensors decide unless a 0-dim tensor, or else a Python scalar,
    is of a higher category, in which case that group decides.
    """
    dim = zero = wrapped = None
    for d, ndim in operands:
        if ndim is None:
            wrapped = d if wrapped is None else _PROMOTE[wrapped, d]
        elif ndim:
            dim = d if dim is None else _PROMOTE[dim, d]
        else:
            zero = d if zero is None else _PROMOTE[zero, d]
    return _combine(dim, _combine(zero, wrapped))


def result_type(tensor, other):
    def operand(x):  # a tensor is what carries an ember dtype (read by attribute: floor 2)
        if isinstance(getattr(x, "dtype", None), dtype):
            return x.dtype, x.ndim
        return scalar_dtype(x), None
    return promote_operands([operand(tensor), operand(other)])


def can_cast(from_, to):
    """PyTorch's same-kind rule: no complex to non-complex, no floating to integral, nothing
    but bool to bool. (The bits and sub-byte types do not count as integral.)"""
    from_, to = to_dtype(from_), to_dtype(to)
    if from_.is_complex and not to.is_complex:
        return False
    if from_.is_floating_point and to._category == _INT and to._kind in ("", UINT):
        return False
    return from_ is bool or to is not bool


# ---- finfo / iinfo -------------------------------------------------------------------
# What PyTorch's limits say where NumPy's or ml_dtypes' differ.
_FINFO_FIXES = {float8_e5m2fnuz: {"eps": 0.125}}
# The C++ limit each attribute of a float4_e2m1fn_x2 finfo asks for (which PyTorch lacks).
_FLOAT4_LIMIT = {"eps": "epsilon", "max": "max", "min": "lowest", "tiny": "min",
                 "smallest_normal": "min", "resolution": "digits10", "dtype": "dtype"}


class _TypeInfo(Frozen):
    """What finfo and iinfo share with PyTorch's: read-only, equal when they describe the
    same dtype, unhashable, and not picklable (nor copyable)."""

    __slots__ = ()
    __hash__ = None

    def __eq__(self, other):
        if not isinstance(other, _TypeInfo):
            return NotImplemented
        return self._described is other._described

    def __reduce_ex__(self, protocol):
        raise TypeError(f"cannot pickle '{self._torch_name}' object")


class finfo(_TypeInfo):
    """Machine limits of a floating-point dtype, with PyTorch's attribute names."""

    __slots__ = ("bits", "dtype", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                 "_described")
    __module__ = "ember"
    _torch_name = "torch.finfo"

    def __init__(self, type=None):
        d = to_dtype(type) if type is not None else _default[0]
        if not (d.is_floating_point or d.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. "
                            "Use torch.iinfo to handle 'torch.finfo'")
        fill(self, bits=8 * d.to_real().itemsize, _described=d.to_real())
        if d is float4_e2m1fn_x2:  # a packed pair has no limits of its own: see __getattr__
            return
        info = ml_dtypes.finfo(d.to_real().np)
        # PyTorch's: exactly 10**-digits10, digits10 being floor(mantissa bits * log10(2))
        digits10 = builtins.int(info.nmant * 0.30102999566398120)
        smallest_normal = builtins.float(info.smallest_normal)
        fill(self, dtype=d.to_real().name, eps=builtins.float(info.eps),
             max=builtins.float(info.max), min=builtins.float(info.min), tiny=smallest_normal,
             smallest_normal=smallest_normal, resolution=builtins.float(f"1e-{digits10}"))
        fill(self, **_FINFO_FIXES.get(d, {}))

    def __getattr__(self, name):  # an attribute a float4_e2m1fn_x2 finfo lacks, or none
        if name in _FLOAT4_LIMIT and self._described is float4_e2m1fn_x2:
            raise NotImplementedError(f'"{_FLOAT4_LIMIT[name]}" not implemented for '
                                      f"'{float4_e2m1fn_x2._scalar_name}'")
        return super().__getattr__(name)

    def __repr__(self):
        if self._described is float4_e2m1fn_x2:
            raise TypeError("bad argument type for built-in operation")
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo(_TypeInfo):
    """Limits of an integer dtype, with PyTorch's attribute names."""

    __slots__ = ("bits", "dtype", "max", "min", "_described")
    __module__ = "ember"
    _torch_name = "torch.iinfo"

    def __init__(self, type):
        d = to_dtype(type)
        if d.is_floating_point or d.is_complex or d._kind in (BITS, SUB_INT, SUB_UINT):
            raise TypeError("torch.iinfo() requires an integer input type. "
                            "Use torch.finfo to handle 'torch.iinfo'")
        if d is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        info = np.iinfo(d.np)
        fill(self, dtype=d.name, bits=info.bits, max=builtins.int(info.max),
             min=builtins.int(info.min), _described=d)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
