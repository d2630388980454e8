"""The strict stand-in's modules: `cupy` (with `random`, `linalg`, `fft`, `lib`, `cuda`) and
`cupyx` (with `scipy.special`), holding exactly the names CuPy 14 has (`_cupy_api.py`) that
NumPy/SciPy can compute. A function binds its arguments to CuPy's own signature first, so a
keyword only NumPy knows fails as it would on CuPy; a ufunc runs only on the type loops CuPy
has (no float8 arithmetic, bfloat16 as CuPy's loops give it) and refuses NumPy arrays and
lists, as CuPy's do. Functions that copy host data to the device (`array`, `asarray` ...) are
the only ones that take NumPy arrays."""
import inspect
import os
import types
import warnings

import numpy as np
import scipy.special

from . import kernels
from . import nccl as nccl_parts
from . import runtime as runtime_parts
from ._cupy_api import GENERATOR_METHODS, MODULES
from . import array as array_parts
from .array import (TRANSFERS, _wrapped, kernel_arrays, kernel_dtype, ndarray, unsupported, unwrap,
                    wrap)

_PYTHON_SCALARS = (bool, int, float, complex)


def _signature(text):
    """CuPy's signature as an inspect.Signature (None when its text does not parse)."""
    if not text:
        return None
    params = text[1:-1].replace("<class '", "").replace("'>", "")
    try:
        return inspect.signature(eval(f"lambda {params}: None", {"numpy": np, "float": float,
                                                                   "int": int, "bool": bool}))
    except Exception:
        return None


# ---- ufuncs ------------------------------------------------------------------------------------
def _scalar_fits(value, char):
    kind = np.dtype(char).kind if char not in "E" else "f"
    if isinstance(value, bool):
        return True
    if isinstance(value, int):
        return kind in "iufc"
    if isinstance(value, float):
        return kind in "fc"
    return kind == "c"


def _safe(src, char):
    try:
        return np.can_cast(src, np.dtype(char) if char != "E" else _BF16, "safe")
    except TypeError:
        return False


try:
    import ml_dtypes
    _BF16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # CuPy has bfloat16 loops only with ml_dtypes
    _BF16 = None


def _dtype_of(char):
    return _BF16 if char == "E" else np.dtype(char)


class ufunc:  # noqa: N801 (CuPy's name)
    """A CuPy ufunc on NumPy's (or SciPy's) kernel, restricted to CuPy's type loops."""

    __module__ = "cupy"

    def __init__(self, name, kernel, loops, nin):
        self.__name__ = self.name = name
        self._kernel = kernel
        self._loops = [(t.split("->")[0], t.split("->")[1]) for t in loops]
        self.nin, self.nout = nin, len(self._loops[0][1]) if self._loops else 1
        self.nargs = self.nin + self.nout
        self.types = list(loops)

    def _loop(self, inputs, dtype):
        for ins, outs in self._loops:
            if dtype is not None and _dtype_of(outs[0]) != np.dtype(dtype):
                continue
            if all(_safe(x.dtype, c) if type(x) is ndarray else
                   (isinstance(x, np.generic) and _safe(x.dtype, c)) or
                   (isinstance(x, _PYTHON_SCALARS) and _scalar_fits(x, c))
                   for x, c in zip(inputs, ins)):
                return ins, outs
        names = ", ".join(str(x.dtype) if hasattr(x, "dtype") else type(x).__name__
                          for x in inputs)
        raise TypeError(f"Wrong type ({names}) of arguments for cupy_{self.name}")

    def __call__(self, *args, out=None, dtype=None, casting="same_kind", where=None):
        if len(args) > self.nin:
            args, out = args[:self.nin], args[self.nin:] if out is None else out
        if len(args) != self.nin:
            raise TypeError(f"Wrong number of arguments for {self.name}")
        for x in args:
            if type(x) is not ndarray and not isinstance(x, (*_PYTHON_SCALARS, np.generic)):
                raise unsupported(x)
        ins, outs = self._loop(args, dtype)
        cast = [x._a.astype(_dtype_of(c), copy=False) if type(x) is ndarray else
                np.asarray(x, dtype=_dtype_of(c)) for x, c in zip(args, ins)]
        with np.errstate(all="ignore"):  # a GPU kernel never warns
            result = self._kernel(*cast)
        results = result if isinstance(result, tuple) else (result,)
        results = tuple(np.asarray(r).astype(_dtype_of(c), copy=False)
                        for r, c in zip(results, outs))
        if where is not None:
            raise TypeError("the stand-in does not model `where=`")
        if out is not None:
            outs_given = out if isinstance(out, tuple) else (out,)
            for o, r in zip(outs_given, results):
                if type(o) is not ndarray:
                    raise TypeError(f"Output arguments must be cupy.ndarray, not {type(o)}")
                np.copyto(o._a, r, casting="unsafe")
            return out if isinstance(out, tuple) else outs_given[0]
        wrapped = tuple(ndarray._of(r) for r in results)
        return wrapped if len(wrapped) > 1 else wrapped[0]

    def _numpy(self, method, array, *args, **kwargs):
        if type(array) is not ndarray:
            raise unsupported(array)
        self._loop((array,) * self.nin, None)
        with np.errstate(all="ignore"):
            return wrap(getattr(self._kernel, method)(array._a, *unwrap(args), **unwrap(kwargs)))

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False):
        return self._numpy("reduce", array, axis=axis, dtype=dtype, out=out, keepdims=keepdims)

    def accumulate(self, array, axis=0, dtype=None, out=None):
        return self._numpy("accumulate", array, axis=axis, dtype=dtype, out=out)

    def reduceat(self, array, indices, axis=0, dtype=None, out=None):
        return self._numpy("reduceat", array, indices, axis=axis, dtype=dtype, out=out)

    def outer(self, a, b, **kwargs):
        return self._numpy("outer", a, b, **kwargs)

    def at(self, a, indices, b=None):
        if type(a) is not ndarray:
            raise unsupported(a)
        indices = _wrapped(a._a.shape, unwrap(indices))  # a scatter kernel wraps, as indexing
        values = unwrap(b)
        if self.name in ("maximum", "minimum") and a._a.dtype == np.float64 and b is not None:
            # CuPy 14.2's float64 scatter-max and -min keep float32's precision: on an H200
            # the maxima of random float64 values came back within float32 rounding, equal to
            # none of them (modelled as rounding the values to float32)
            values = np.asarray(values, np.float64).astype(np.float32).astype(np.float64)
        args = (indices,) if b is None else (indices, values)
        getattr(self._kernel, "at")(a._a, *args)

    def __repr__(self):
        return f"<ufunc '{self.name}'>"


# ---- functions ---------------------------------------------------------------------------------
# Functions that launch no kernel (memory, views, metadata): any dtype goes.
_NO_KERNEL = {"empty", "empty_like", "asarray", "array", "asanyarray", "reshape", "transpose",
              "swapaxes", "moveaxis", "squeeze", "expand_dims", "broadcast_to", "atleast_1d",
              "atleast_2d", "atleast_3d", "shape", "ndim", "size", "may_share_memory",
              "shares_memory", "result_type", "can_cast", "iscomplexobj", "isrealobj",
              "isscalar", "ravel", "from_dlpack", "fromDlpack"}
# Functions that copy host data onto the device: they take NumPy arrays and lists.
_FROM_HOST = {"array", "asarray", "asanyarray", "from_dlpack", "fromDlpack"}
# NumPy answers these with a Python bool; CuPy with a 0-d device array.
_DEVICE_BOOLS = {"array_equal", "allclose", "array_equiv"}


# CuPy fills 0-d host data in with `ndarray.fill`, which writes zero bytes for any value
# equal to 0: cupy.asarray(-0.0) holds +0.0 (cupy.full(2, -0.0) keeps the sign: seen on an H100)
# CuPy makes no float8 array from host data or by allocation (only `view` makes one)
_CREATES = {"array", "asarray", "asanyarray", "zeros", "empty", "ones", "full", "zeros_like",
            "empty_like", "ones_like", "full_like", "eye", "identity", "arange"}


def _function(name, kernel, signature):
    host_ok = name in _FROM_HOST
    sig = []  # parsed on the first call (most of CuPy's ~500 functions are never called)

    def call(*args, **kwargs):
        if name not in _NO_KERNEL:
            kernel_arrays(args)
            if kwargs.get("dtype") is not None:
                kernel_dtype(kwargs["dtype"])
        if not sig:
            sig.append(_signature(signature))
        if sig[0] is not None:
            sig[0].bind(*args, **kwargs)  # CuPy's own signature: a NumPy-only keyword fails
        if host_ok and args and _holds_host_data(args[0]):
            # host data crosses to the device: a copy, never the host's memory
            args = (np.array(unwrap(args[0], True), copy=True),) + args[1:]
        with np.errstate(all="ignore"):
            result = kernel(*unwrap(args, host_ok), **unwrap(kwargs, host_ok))
        if isinstance(result, np.ndarray) and name in _CREATES and \
                result.dtype.type.__module__ == "ml_dtypes" and result.dtype.name != "bfloat16":
            raise ValueError(f"Unsupported dtype {result.dtype.name}")  # a view can make one
        if name in _UNINITIALISED and isinstance(result, np.ndarray):
            _fill_with_garbage(result)
        if isinstance(result, np.ndarray) and name in _FROM_HOST and result.ndim == 0 \
                and result.dtype.fields is None:  # (a record, complex32's, has no -0.0 to lose)
            result[result == 0] = 0
        if name in _DEVICE_BOOLS:
            return ndarray._of(np.asarray(result))
        return wrap(result)
    call.__name__ = call.__qualname__ = name
    return call


# CuPy's `empty` hands out memory from its pool as the last user left it; NumPy's is often
# fresh zeroed pages, which hides a read before a write. The stand-in's holds garbage.
_UNINITIALISED = {"empty", "empty_like"}


def _fill_with_garbage(a):
    """NaN in floats (a read of it shows in any result), a nonzero junk value elsewhere."""
    if a.dtype.kind in "fc" or a.dtype == _BF16:
        a.fill(np.nan)
    elif a.dtype.kind in "iu":
        a.fill(-7 if a.dtype.kind == "i" else 7)
    elif a.dtype.kind == "b":
        a.fill(True)


def _holds_host_data(x):
    if type(x) is ndarray:
        return False
    if type(x) in (list, tuple):
        return not any(type(i) is ndarray for i in x)
    return True


def _asnumpy(a, stream=None, order="C", out=None, blocking=True):
    if type(a) is ndarray:
        return a.get(order=order, out=out)
    return np.asarray(a, order=order)


def _get_array_module(*args):
    return cupy if any(type(a) is ndarray for a in args) else np


def _ascontiguousarray(a, dtype=None):
    if type(a) is not ndarray:
        raise unsupported(a)
    if not a._a.flags.c_contiguous or (dtype is not None and np.dtype(dtype) != a._a.dtype):
        kernel_dtype(a._a.dtype)  # a copy kernel
    return ndarray._of(np.ascontiguousarray(a._a, dtype=dtype))


def _ndarray_only(name):
    def call(a, *args, **kwargs):
        if type(a) is not ndarray:
            raise unsupported(a)
        return wrap(getattr(np, name)(a._a, *unwrap(args), **unwrap(kwargs)))
    return call


def _sort(a, axis=-1, kind=None):
    if type(a) is not ndarray:
        raise unsupported(a)
    return ndarray._of(np.sort(a._a, axis=axis, kind="stable"))  # CuPy's sorts are stable


def _argsort(a, axis=-1, kind=None):
    if type(a) is not ndarray:
        raise unsupported(a)
    return ndarray._of(np.argsort(a._a, axis=axis, kind="stable"))


def _take(a, indices, axis=None, out=None):
    """CuPy's take: an out-of-range index wraps around (it has no `mode`)."""
    if type(a) is not ndarray:
        raise unsupported(a)
    kernel_dtype(a._a.dtype)
    return wrap(np.take(a._a, unwrap(indices), axis=axis, out=unwrap(out), mode="wrap"))


def _take_along_axis(a, indices, axis):
    """CuPy's take_along_axis indexes with integer arrays, so it too wraps around."""
    if type(a) is not ndarray or type(indices) is not ndarray:
        raise unsupported(a if type(a) is not ndarray else indices)
    kernel_dtype(a._a.dtype)
    size = a._a.shape[axis] if a._a.ndim else 0
    ind = indices._a % size if size and indices._a.dtype.kind in "iu" else indices._a
    return ndarray._of(np.take_along_axis(a._a, ind, axis))


def _put_along_axis(arr, indices, values, axis):
    """CuPy's put_along_axis scatters through integer-array indexing: it wraps around too."""
    if type(arr) is not ndarray or type(indices) is not ndarray:
        raise unsupported(arr if type(arr) is not ndarray else indices)
    kernel_dtype(arr._a.dtype)
    size = arr._a.shape[axis]
    ind = indices._a % size if size and indices._a.dtype.kind in "iu" else indices._a
    np.put_along_axis(arr._a, ind, unwrap(values), axis)


def _reading(name, reads):
    """A CuPy function whose result's size depends on the data: it reads on the host first
    (bincount: whether any value is negative, and the largest; the others: the count)."""
    kernel = getattr(np, name)

    def call(*args, **kwargs):
        if not args or type(args[0]) is not ndarray:
            raise unsupported(args[0] if args else None)
        kernel_arrays(args)
        for _ in range(reads if args[0]._a.size else 0):
            TRANSFERS.add()
        return wrap(kernel(*unwrap(args), **unwrap(kwargs)))
    call.__name__ = call.__qualname__ = name
    return call


_READS = {"bincount": 2, "nonzero": 1, "flatnonzero": 1, "argwhere": 1, "unique": 1,
          "compress": 1, "extract": 1}


_OWN = {"asnumpy": _asnumpy, "take": _take, "take_along_axis": _take_along_axis,
        "put_along_axis": _put_along_axis, "sort": _sort, "argsort": _argsort, "get_array_module": _get_array_module, "ndarray": ndarray,
        "ascontiguousarray": _ascontiguousarray, "asfortranarray": _ndarray_only("asfortranarray"),
        "ufunc": ufunc}
_OWN.update({name: _reading(name, n) for name, n in _READS.items()})


def _fill(module, spec, numpy_source):
    for name, entry in spec.items():
        if name in _OWN and module.__name__ == "cupy":
            setattr(module, name, _OWN[name])
            continue
        kind = entry["kind"]
        source = getattr(numpy_source, name, None)
        if kind == "ufunc":
            if source is not None:
                setattr(module, name, ufunc(name, source, entry["types"], entry["nin"]))
        elif kind == "function":
            if callable(source):
                setattr(module, name, _function(name, source, entry.get("signature")))
        elif kind in ("class", "value") and source is not None:
            setattr(module, name, source)


def _module(name, spec=None, numpy_source=None):
    module = types.ModuleType(name)
    if spec is not None:
        _fill(module, spec, numpy_source)
    return module


# ---- random ------------------------------------------------------------------------------------
class BitGenerator:
    """XORWOW's place: the stream's state is device memory (`_state`), as CuPy's is, so
    ember's get_state/set_state read and write it with `.get()`/`.set()`."""

    _SIZE = 48

    def __init__(self, seed):
        self._numpy = np.random.PCG64(seed)
        self._state = ndarray._of(np.zeros(self._SIZE, np.int8))
        self._store()

    def _store(self):
        s = self._numpy.state
        raw = (s["state"]["state"].to_bytes(16, "little") + s["state"]["inc"].to_bytes(16, "little")
               + int(s["has_uint32"]).to_bytes(8, "little") + s["uinteger"].to_bytes(8, "little"))
        self._state._a[:] = np.frombuffer(raw, np.int8)

    def _load(self):
        raw = self._state._a.tobytes()
        self._numpy.state = {"bit_generator": "PCG64",
                             "state": {"state": int.from_bytes(raw[:16], "little"),
                                       "inc": int.from_bytes(raw[16:32], "little")},
                             "has_uint32": int.from_bytes(raw[32:40], "little"),
                             "uinteger": int.from_bytes(raw[40:48], "little")}


class Generator:
    """cupy.random.Generator: CuPy's methods and signatures only, drawing from NumPy."""

    def __init__(self, bit_generator):
        self.bit_generator = bit_generator


def _draw(name):
    sig = _signature(GENERATOR_METHODS[name])

    def call(self, *args, **kwargs):
        bound = sig.bind(self, *args, **kwargs)
        bound.apply_defaults()
        params = dict(bound.arguments)
        params.pop("self")
        out = params.pop("out", None)
        bits = self.bit_generator
        bits._load()
        result = getattr(np.random.Generator(bits._numpy), name)(**unwrap(params))
        bits._store()
        if out is not None:
            out._a[...] = result
            return out
        return wrap(result) if np.ndim(result) else ndarray._of(np.asarray(result))
    call.__name__ = name
    return call


for _name in GENERATOR_METHODS:
    if not _name.startswith("_"):
        setattr(Generator, _name, _draw(_name))


def _default_rng(seed=None):
    return Generator(BitGenerator(seed))


# ---- cuda --------------------------------------------------------------------------------------
class Device:
    def __init__(self, device=None):
        self.id = 0 if device is None else int(device)
        if self.id != 0:
            raise runtime_parts.CUDARuntimeError(101)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def use(self):
        pass

    def synchronize(self):
        pass

    @property
    def compute_capability(self):
        return "86"

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    def __hash__(self):
        return self.id

    def __repr__(self):
        return f"<CUDA Device {self.id}>"


def _cuda_module(hooks, pool):
    cuda = _module("cupy.cuda")
    runtime = _module("cupy.cuda.runtime")
    properties = dict(runtime_parts.PROPERTIES)
    runtime.getDeviceCount = lambda: 1
    runtime.getDevice = lambda: 0
    runtime.getDeviceProperties = lambda i: dict(properties)
    runtime.deviceCanAccessPeer = lambda a, b: 0
    runtime.memGetInfo = lambda: (20 << 30, 24 << 30)
    runtime.deviceSynchronize = lambda: None
    runtime.CUDARuntimeError = runtime_parts.CUDARuntimeError
    cuda.runtime = runtime
    cuda.Device = Device
    cuda.Stream = runtime_parts.Stream
    cuda.ExternalStream = runtime_parts.ExternalStream
    cuda.Event = runtime_parts.Event
    cuda.alloc_pinned_memory = runtime_parts.alloc_pinned_memory
    cuda.get_elapsed_time = runtime_parts.get_elapsed_time
    cuda.get_current_stream = lambda: runtime_parts.Stream.current
    cuda.memory_hook = types.SimpleNamespace(get_memory_hooks=lambda: hooks)
    cuda.nvrtc = types.SimpleNamespace(getSupportedArchs=lambda: (75, 80, 86, 90))
    cuda.device = types.SimpleNamespace(get_cublas_handle=lambda: 0x1234,
                                        get_cusolver_handle=lambda: 0x5678)
    cuda.MemoryPointer = type(ndarray._of(np.zeros(1)).data)
    cuda.get_device_id = lambda: 0
    return cuda


# ---- cuBLAS's compute types (cupy._core._routines_linalg) ---------------------------------------
_COMPUTE_TYPES = {"COMPUTE_TYPE_TBD": 0, "COMPUTE_TYPE_DEFAULT": 1, "COMPUTE_TYPE_PEDANTIC": 2,
                  "COMPUTE_TYPE_FP16": 3, "COMPUTE_TYPE_FP32": 4, "COMPUTE_TYPE_FP64": 5,
                  "COMPUTE_TYPE_BF16": 6, "COMPUTE_TYPE_TF32": 7}
_TF32 = _COMPUTE_TYPES["COMPUTE_TYPE_TF32"]
_compute_types = None  # the current device's: the products read it


def _routines_linalg():
    """CuPy's compute types as it keeps them: one per dtype kind (bfloat16, float16, float32
    with complex64, float64 with complex128, int8, int32) for the process, undecided until
    first asked (then DEFAULT, or TF32 for float32 where CUPY_TF32 is set); TF32 and BF16
    need compute capability 8.0, else CuPy warns and keeps DEFAULT."""
    global _compute_types
    module = _module("cupy._core._routines_linalg")
    vars(module).update(_COMPUTE_TYPES)
    types = _compute_types = [0] * 6

    def to_compute_type_index(dtype):
        dtype = np.dtype(dtype)
        for index, kinds in enumerate(("", "e", "fF", "dD")):
            if kinds and dtype.char in kinds:
                return index
        if dtype.name == "bfloat16":
            return 0
        if dtype.char == "b":
            return 4
        if dtype.name == "int32":
            return 5
        raise TypeError(f"dtype is not supported: {dtype}")

    def set_compute_type(dtype, compute_type):
        if compute_type in (6, _TF32) and int(Device().compute_capability) < 80:
            warnings.warn("COMPUTE_TYPE_BF16 and COMPUTE_TYPE_TF32 are only available on GPUs "
                          "with compute capability 8.0 or higher. COMPUTE_TYPE_DEFAULT will be "
                          "used instead.")
            compute_type = 1
        elif compute_type not in range(8):
            raise ValueError(f"Unknown compute type: {compute_type}")
        types[to_compute_type_index(dtype)] = compute_type

    def get_compute_type(dtype):
        index = to_compute_type_index(dtype)
        if types[index] == 0:
            tf32 = np.dtype(dtype).char in "fF" and int(os.getenv("CUPY_TF32", "0")) > 0
            set_compute_type(dtype, _TF32 if tf32 else 1)
        return types[index]

    module.to_compute_type_index = to_compute_type_index
    module.set_compute_type, module.get_compute_type = set_compute_type, get_compute_type
    module.compute_type_to_str = lambda t: {v: k for k, v in _COMPUTE_TYPES.items()}.get(t, t)
    return module


def _in_tf32(a):
    """A float32 (or complex64) operand as cuBLAS's TF32 products read it: each float rounded
    to TF32's 10 mantissa bits (to nearest, ties to even; infinities and NaN kept)."""
    if type(a) is not ndarray or a._a.dtype.char not in "fF":
        return a
    bits = np.ascontiguousarray(a._a).view(np.uint32)
    rounded = (bits + np.uint32(0xFFF) + ((bits >> 13) & np.uint32(1))) & np.uint32(0xFFFFE000)
    special = (bits & np.uint32(0x7F800000)) == np.uint32(0x7F800000)
    operand = ndarray.__new__(ndarray)  # as the tensor cores read it: no memory of its own
    operand._a = np.where(special, bits, rounded).view(a._a.dtype).reshape(a._a.shape)
    return operand


def _products_in(function):
    """A CuPy product (matmul, dot, tensordot, inner: cuBLAS's) that reads its float32
    operands in TF32 where the compute type says so (CuPy's einsum, which also multiplies
    through cuBLAS at times, is not modelled: it stays float32)."""
    def product(*args, **kwargs):  # (not named `call`: host_overhead counts the inner one)
        if _compute_types is not None and _compute_types[2] == _TF32:
            args = [_in_tf32(a) for a in args[:2]] + list(args[2:])
        return function(*args, **kwargs)
    product.__name__ = product.__qualname__ = function.__name__
    return product


# ---- the modules -------------------------------------------------------------------------------
_MODULES = None  # the stateless modules, made once per process (their functions hold nothing)


def _stateless():
    global cupy, _MODULES
    if _MODULES is not None:
        return _MODULES
    cupy = _module("cupy", MODULES["cupy"], np)
    cupy.random = _module("cupy.random", MODULES["cupy.random"], np.random)
    cupy.random.default_rng = _default_rng
    cupy.random.Generator = Generator
    cupy.random.BitGenerator = BitGenerator
    cupy.ReductionKernel = kernels.ReductionKernel
    cupy.ElementwiseKernel = kernels.ElementwiseKernel
    cupy.linalg = _module("cupy.linalg", MODULES["cupy.linalg"], np.linalg)
    cupy.linalg.inv = _no_singular_error(cupy.linalg.inv)
    cupy.linalg.solve = _solve
    cupy.fft = _module("cupy.fft", MODULES["cupy.fft"], np.fft)
    cupy.lib = _module("cupy.lib")
    cupy.lib.stride_tricks = _module("cupy.lib.stride_tricks")
    cupy.lib.stride_tricks.as_strided = _ndarray_only_strided
    cupyx = _module("cupyx", MODULES["cupyx"], np)
    cupyx.scatter_add = _scatter("add")
    cupyx.scatter_max = _scatter("maximum")
    cupyx.scatter_min = _scatter("minimum")
    cupyx.scipy = _module("cupyx.scipy")
    cupyx.scipy.special = _module("cupyx.scipy.special", MODULES["cupyx.scipy.special"],
                                  scipy.special)
    for name in ("matmul", "dot", "tensordot", "inner"):
        setattr(cupy, name, _products_in(getattr(cupy, name)))
    cupy.TRANSFERS = TRANSFERS
    _MODULES = {"cupy": cupy, "cupy.random": cupy.random, "cupy.linalg": cupy.linalg,
                "cupy.fft": cupy.fft, "cupy.lib": cupy.lib,
                "cupy.lib.stride_tricks": cupy.lib.stride_tricks, "cupyx": cupyx,
                "cupyx.scipy": cupyx.scipy, "cupyx.scipy.special": cupyx.scipy.special}
    return _MODULES


_AS_MADE = {}  # each stateless module's attributes as first made


def build():
    """`cupy` and `cupyx` (with their submodules), keyed by import name, with a fresh device:
    a new memory pool, hooks and runtime (the array functions are made once per process; any
    attribute a test set on them is put back as it was made)."""
    modules = dict(_stateless())
    for name, module in modules.items():
        made = _AS_MADE.setdefault(name, dict(vars(module)))
        if vars(module) != made:
            vars(module).clear()
            vars(module).update(made)
    runtime_parts.Stream.current = runtime_parts.Stream.null
    hooks = {}
    pool = runtime_parts.MemoryPool(hooks)
    cupy.cuda = modules["cupy.cuda"] = _cuda_module(hooks, pool)
    modules["cupy.cuda.runtime"] = cupy.cuda.runtime
    cupy.cuda.nccl = modules["cupy.cuda.nccl"] = nccl_parts.build()
    cupy._core = modules["cupy._core"] = _module("cupy._core")
    cupy._core._routines_linalg = modules["cupy._core._routines_linalg"] = _routines_linalg()
    cupy.get_default_memory_pool = lambda: pool
    array_parts.POOL = pool
    return modules


def _ndarray_only_strided(x, shape=None, strides=None):
    if type(x) is not ndarray:
        raise unsupported(x)
    return ndarray._of(np.lib.stride_tricks.as_strided(x._a, shape, strides))


def _scatter(name):
    def call(a, slices, value):
        if type(a) is not ndarray:
            raise unsupported(a)
        getattr(np, name).at(a._a, unwrap(slices), unwrap(value))
    return call


def _no_singular_error(function):
    """CuPy's inv and solve do not look at getrf's info: a singular matrix gives numbers
    (inv of [[1, 2, 3], [2, 4, 6], [1, 0, 1]] is finite on an H100), never LinAlgError."""
    def call(*args, **kwargs):
        try:
            return function(*args, **kwargs)
        except np.linalg.LinAlgError:
            a = args[0]
            shape = a.shape if len(args) == 1 else \
                np.broadcast_shapes(a.shape[:-2], args[1].shape[:-2]) + args[1].shape[-2:]
            return ndarray._of(np.full(shape, np.nan, a._a.dtype))
    call.__name__ = function.__name__
    return call


@_no_singular_error
def _solve(a, b):
    """CuPy's solve: b is (..., M) or (..., M, K) with a's batch dims exactly (no broadcast)."""
    if type(a) is not ndarray or type(b) is not ndarray:
        raise unsupported(a if type(a) is not ndarray else b)
    if b.ndim > 1 and (b.ndim != a.ndim or a.shape[:-2] != b.shape[:-2]):
        raise ValueError("a must have (..., M, M) shape and b must have (..., M, K) for "
                         "multidimensional b")
    kernel_dtype(a._a.dtype)
    return ndarray._of(np.linalg.solve(a._a, b._a))


cupy = None  # the module build() made last: the arrays' `device` and protocols reach it


# ---- operators: through the ufuncs, so they refuse what CuPy's refuse ------------------------------
def _binary(ufunc_name, reflected=False, inplace=False):
    def op(self, other):
        if type(other) is not ndarray and not isinstance(other, (*_PYTHON_SCALARS, np.generic)):
            if isinstance(other, (np.ndarray, list, tuple)):
                raise unsupported(other)
            return NotImplemented
        u = getattr(cupy, ufunc_name)
        if inplace:
            return u(self, other, out=self)
        return u(other, self) if reflected else u(self, other)
    return op


def _unary(ufunc_name):
    return lambda self: getattr(cupy, ufunc_name)(self)


for _op, _u in {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
                "floordiv": "floor_divide", "mod": "remainder", "pow": "power",
                "and": "bitwise_and", "or": "bitwise_or", "xor": "bitwise_xor",
                "lshift": "left_shift", "rshift": "right_shift"}.items():
    setattr(ndarray, f"__{_op}__", _binary(_u))
    setattr(ndarray, f"__r{_op}__", _binary(_u, reflected=True))
    setattr(ndarray, f"__i{_op}__", _binary(_u, inplace=True))
for _op, _u in {"eq": "equal", "ne": "not_equal", "lt": "less", "le": "less_equal",
                "gt": "greater", "ge": "greater_equal"}.items():
    setattr(ndarray, f"__{_op}__", _binary(_u))
for _op, _u in {"neg": "negative", "pos": "positive", "abs": "absolute", "invert": "invert"}.items():
    setattr(ndarray, f"__{_op}__", _unary(_u))
ndarray.__hash__ = None


def _matmul(self, other, reflected=False):
    if type(other) is not ndarray:
        raise unsupported(other)
    return cupy.matmul(other, self) if reflected else cupy.matmul(self, other)


ndarray.take = lambda self, indices, axis=None, out=None: _take(self, indices, axis, out)
ndarray.__matmul__ = _matmul
ndarray.__rmatmul__ = lambda self, other: _matmul(self, other, reflected=True)
ndarray.__divmod__ = lambda self, other: cupy.divmod(self, other)
