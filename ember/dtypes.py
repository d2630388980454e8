"""ember's dtypes and PyTorch's type-promotion rules.

A dtype is an ember object that knows its NumPy dtype. Promotion is decided here, by one
table built at import, never by NumPy: NumPy's rules differ from PyTorch's (a Python float
with an int64 array gives float64 in NumPy, float32 in PyTorch).
"""
import builtins

import ml_dtypes
import numpy as np

__all__ = [
    "dtype", "bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
    "float32", "float64", "complex64", "complex128", "short", "int", "long", "half",
    "float", "double", "cfloat", "cdouble", "finfo", "iinfo", "get_default_dtype",
    "set_default_dtype", "promote_types", "result_type", "can_cast",
]

# Categories, ordered: a higher category wins over a lower one whatever the sizes.
_BOOL, _INT, _FLOAT, _COMPLEX = 0, 1, 2, 3


class dtype:
    """A tensor element type; prints as PyTorch's does (`torch.float32`)."""

    __slots__ = ("name", "np", "itemsize", "is_floating_point", "is_complex", "is_signed",
                 "_category", "_scalar_name", "_tensor_type", "_storage_type", "_cpp_name")

    def __init__(self, name, np_dtype, category, scalar_name, cpp_name):
        self.name = name
        self.np = np.dtype(np_dtype)
        self.itemsize = self.np.itemsize
        self.is_floating_point = category == _FLOAT
        self.is_complex = category == _COMPLEX
        self.is_signed = name not in ("bool", "uint8")
        self._category = category
        # The names PyTorch derives from a dtype, for its messages and legacy classes:
        self._scalar_name = scalar_name                 # its ScalarType, "Float"
        self._tensor_type = scalar_name + "Tensor"      # legacy tensor class, "FloatTensor"
        self._storage_type = scalar_name + "Storage"    # legacy storage class, "FloatStorage"
        self._cpp_name = cpp_name                       # C++ element type, "float", "long int"

    def __repr__(self):
        return "torch." + self.name

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
        return {complex64: float32, complex128: float64}.get(self, self)

    def to_complex(self):
        # (float16's complex type, complex32, does not exist in ember: complex64 stands in)
        return {float32: complex64, float64: complex128, float16: complex64,
                bfloat16: complex64}.get(self, self)


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

ALL_DTYPES = (bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
              complex64, complex128)
_BY_NAME = {d.name: d for d in ALL_DTYPES}
_BY_NAME.update(short=int16, int=int32, long=int64, half=float16, float=float32,
                double=float64, cfloat=complex64, cdouble=complex128)
_BY_LEGACY = {d._tensor_type: d for d in ALL_DTYPES}

# Quantized element types, as names only: ember has no quantized tensors (no tensor ever has
# one of these dtypes; they stay out of ALL_DTYPES and FROM_NUMPY). ember.ao's dynamically
# quantized modules take them as their `dtype=` and print them, as PyTorch's do.
qint8 = dtype("qint8", np.int8, _INT, "QInt8", "c10::qint8")
quint8 = dtype("quint8", np.uint8, _INT, "QUInt8", "c10::quint8")
qint32 = dtype("qint32", np.int32, _INT, "QInt32", "c10::qint32")
quint8.is_signed = False
_BY_NAME.update(qint8=qint8, quint8=quint8, qint32=qint32)
# NumPy dtype -> ember dtype; read on every tensor's `.dtype`, so a plain dict.
FROM_NUMPY = {d.np: d for d in ALL_DTYPES}


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
        return FROM_NUMPY[np.dtype(np_dtype)]
    except (KeyError, TypeError):
        raise TypeError(
            f"can't convert np.ndarray of type numpy.{np.dtype(np_dtype).type.__name__}. The "
            "only supported "
            "types are: float64, float32, float16, complex64, complex128, int64, int32, int16, "
            "int8, uint8, and bool.") from None


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


# ---- default dtype -------------------------------------------------------------------
_default = [float32]


def get_default_dtype():
    return _default[0]


def set_default_dtype(d):
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


_PROMOTE = {(a, b): _promote_pair(a, b) for a in ALL_DTYPES for b in ALL_DTYPES}


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
    if isinstance(value, builtins.complex):
        return complex128 if _default[0] is float64 else complex64
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
    """PyTorch's same-kind rule: no cast to a lower category (float -> int, int -> bool)."""
    from_, to = to_dtype(from_), to_dtype(to)
    return from_._category <= to._category


# ---- finfo / iinfo -------------------------------------------------------------------
class finfo:
    """Machine limits of a floating-point dtype, with PyTorch's attribute names."""

    def __init__(self, type=None):
        d = to_dtype(type) if type is not None else _default[0]
        if not (d.is_floating_point or d.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. "
                            "Use torch.iinfo to handle 'torch.finfo'")
        info = ml_dtypes.finfo(d.to_real().np)
        self.dtype = d.to_real().name
        self.bits = info.bits
        self.eps = builtins.float(info.eps)
        self.max = builtins.float(info.max)
        self.min = builtins.float(info.min)
        self.tiny = self.smallest_normal = builtins.float(info.smallest_normal)
        self.resolution = builtins.float(f"1e-{info.precision}")  # PyTorch's: exactly 10**-p

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.tiny:g}, tiny={self.tiny:g}, "
                f"dtype={self.dtype})")


class iinfo:
    """Limits of an integer dtype, with PyTorch's attribute names."""

    def __init__(self, type):
        d = to_dtype(type)
        if d.is_floating_point or d.is_complex:
            raise TypeError("torch.iinfo() requires an integer input type. "
                            "Use torch.finfo to handle 'torch.iinfo'")
        if d is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        info = np.iinfo(np.int8 if d is bool else d.np) if d is not bool else None
        self.dtype = d.name
        self.bits = 8 if d is bool else info.bits
        self.max = 1 if d is bool else builtins.int(info.max)
        self.min = 0 if d is bool else builtins.int(info.min)

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
