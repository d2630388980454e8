"""The strict stand-in's array: `ndarray`, a device array that is NOT a NumPy array.

It keeps its values in a private NumPy array (`_a`) and behaves as CuPy's ndarray does
towards host code: it has exactly CuPy 14's attribute names; `np.asarray(x)`, `x.__array__()`
and NumPy functions without a CuPy twin refuse it (TypeError, CuPy's message); mixing it with a
NumPy array in arithmetic or a ufunc refuses too; reductions and integer indexing give 0-d
device arrays, not host scalars. Every read of device data on the host (`get`, `item`,
`tolist`, `bool`, `float`, `int`, `complex`, printing) counts as one device-to-host transfer
in `TRANSFERS`, so a test can bound the syncs a training step makes.
"""
import weakref

import numpy as np

from ._cupy_api import CLASSES, FLAGS

_HOST_CONVERSION = ("Implicit conversion to a NumPy array is not allowed. "
                    "Please use `.get()` to construct a NumPy array explicitly.")


class Transfers:
    """Device-to-host reads, counted. With `where` set to a list, each read also appends the
    code that made it (file:line of ember's frames), to find a sync that should not be."""

    def __init__(self):
        self.count = 0
        self.where = None

    def add(self):
        self.count += 1
        if self.where is not None:
            import traceback
            frames = [f"{f.filename.split('/ember/')[-1]}:{f.lineno} {f.name}"
                      for f in traceback.extract_stack()[:-2] if "/ember/" in f.filename]
            self.where.append(frames[-4:])


TRANSFERS = Transfers()


def unsupported(x):
    return TypeError(f"Unsupported type {type(x)}")


def kernel_dtype(dtype):
    """Refuse a dtype CuPy cannot name in a kernel (`_scalar.get_typename`: the float8 and
    float4 types of ml_dtypes): such arrays can be allocated, copied to and from the host and
    viewed, but nothing may compute on them, not even a cast or a strided copy."""
    dtype = np.dtype(dtype)
    if dtype.name.startswith(("float8_", "float4_", "float6_")):
        raise ValueError(f"Unsupported dtype {dtype.name}")
    if dtype.kind == "V" and dtype.type.__module__ == "numpy":  # records: no kernel names them
        raise TypeError(f"Unsupported type {dtype}")


def kernel_arrays(args):
    """kernel_dtype for every device array in `args` (nested in lists and tuples)."""
    for x in args:
        if type(x) is ndarray:
            kernel_dtype(x._a.dtype)
        elif type(x) in (list, tuple):
            kernel_arrays(x)


def unwrap(x, host_ok=False):
    """The NumPy values inside `x` (nested in lists, tuples and dicts). A NumPy array refuses
    unless `host_ok` (the functions that copy host data to the device)."""
    if type(x) is ndarray:
        return x._a
    if isinstance(x, np.ndarray) and not host_ok:
        raise unsupported(x)
    if type(x) in (list, tuple):
        return type(x)(unwrap(i, host_ok) for i in x)
    if type(x) is dict:
        return {k: unwrap(v, host_ok) for k, v in x.items()}
    return x


def wrap(x):
    """A NumPy result as the device sees it: arrays and scalars become `ndarray`s."""
    if isinstance(x, np.ndarray):
        return ndarray._of(x)
    if isinstance(x, np.generic):
        return ndarray._of(np.asarray(x))
    if type(x) in (list, tuple):
        return type(x)(wrap(i) for i in x)
    if hasattr(x, "_fields") and isinstance(x, tuple):  # NumPy's named results (eigh ...)
        return type(x)(*(wrap(i) for i in x))
    return x


class Flags:
    """CuPy's flags: contiguity and ownership only (no `writeable`: device memory has none)."""

    __slots__ = ("_a",)

    def __init__(self, a):
        self._a = a

    c_contiguous = property(lambda self: bool(self._a.flags.c_contiguous))
    f_contiguous = property(lambda self: bool(self._a.flags.f_contiguous))
    owndata = property(lambda self: bool(self._a.flags.owndata))
    fnc = property(lambda self: self.f_contiguous and not self.c_contiguous)
    forc = property(lambda self: self.f_contiguous or self.c_contiguous)

    def __getitem__(self, name):
        key = {"C_CONTIGUOUS": "c_contiguous", "F_CONTIGUOUS": "f_contiguous",
               "OWNDATA": "owndata"}.get(name)
        if key is None:
            raise KeyError(f"{name} is not defined for cupy.ndarray.flags")
        return getattr(self, key)


assert sorted(n for n in dir(Flags) if not n.startswith("_")) == FLAGS


class MemoryPointer:
    """`ndarray.data`: where the array's memory starts, on which device."""

    __slots__ = ("ptr", "device_id", "mem")

    def __init__(self, a):
        self.ptr = a.__array_interface__["data"][0]
        self.device_id = 0
        self.mem = a


# The device array around each NumPy array, so that `base` answers the same object while it
# lives, as CuPy's does (ember asks `view.base is owner` to tell a view from a copy).
_OWNERS = weakref.WeakValueDictionary()
POOL = None  # the memory pool of the device the stand-in is now (module.build sets it)


class ndarray:  # noqa: N801 (CuPy's name)
    # `_owner`: a view holds the array owning its memory, as CuPy's `_base` does (so that
    # the owner's references count as on CuPy: ember tells a gradient no one else holds by them)
    __slots__ = ("_a", "_owner", "__weakref__")
    __module__ = "cupy"  # as CuPy's: code may name an array's module from its type
    __array_priority__ = 100

    def __init__(self, shape, dtype=float, memptr=None, strides=None, order="C"):
        if memptr is not None:
            base = memptr.mem.reshape(-1).view(np.uint8)
            self._a = np.ndarray(shape, dtype, buffer=base, strides=strides,
                                 offset=memptr.ptr - base.__array_interface__["data"][0])
        else:
            self._a = np.ndarray(shape, dtype, strides=strides, order=order)
            _OWNERS[id(self._a)] = self
            if self._a.nbytes and POOL is not None:
                weakref.finalize(self._a, POOL.free, POOL.malloc(self._a.nbytes))

    @classmethod
    def _of(cls, a):
        known = _OWNERS.get(id(a))
        if known is not None and known._a is a:
            # NumPy gave back its input (astype(copy=False), ascontiguousarray of a contiguous
            # array ...): CuPy returns the very array then, not a second one over the same
            # memory (whose views would name another `base`)
            return known
        out = cls.__new__(cls)
        out._a = a
        _OWNERS[id(a)] = out
        if a.base is None and a.nbytes and POOL is not None:  # new device memory: from the pool
            weakref.finalize(a, POOL.free, POOL.malloc(a.nbytes))
        if isinstance(a.base, np.ndarray):
            owner = _OWNERS.get(id(a.base))
            out._owner = owner if owner is not None and owner._a is a.base else \
                ndarray._of(a.base)
        return out

    @property
    def base(self):
        owner = self._a.base
        if not isinstance(owner, np.ndarray):
            return None
        known = getattr(self, "_owner", None)
        if known is None or known._a is not owner:
            known = _OWNERS.get(id(owner))
            if known is None or known._a is not owner:
                known = _OWNERS[id(owner)] = ndarray._of(owner)
            self._owner = known
        return known

    # ---- host reads: each one is a device-to-host transfer ----------------------------------
    def get(self, stream=None, order="C", out=None, blocking=True):
        TRANSFERS.add()
        if not (self._a.flags.c_contiguous or self._a.flags.f_contiguous):
            kernel_dtype(self._a.dtype)  # made contiguous on the device first: a copy kernel
        if out is not None:
            np.copyto(out, self._a)
            return out
        return np.array(self._a, order=order, copy=True)

    def set(self, arr, stream=None):
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"Only numpy.ndarray can be set to cupy.ndarray, got {type(arr)}")
        if arr.shape != self._a.shape or arr.dtype != self._a.dtype:
            raise ValueError("Shape or dtype mismatch")
        self._a[...] = arr

    def item(self):
        TRANSFERS.add()
        return self._a.item()

    def tolist(self):
        TRANSFERS.add()
        return self._a.tolist()

    def tobytes(self, order="C"):
        TRANSFERS.add()
        return self._a.tobytes(order)

    def _scalar(self, kind):
        TRANSFERS.add()
        if self._a.size != 1:
            if kind is bool:
                raise ValueError("The truth value of an array with more than one element is "
                                 "ambiguous. Use a.any() or a.all()")
            raise TypeError("only length-1 arrays can be converted to Python scalars")
        return kind(self._a.reshape(()).item() if kind is not complex else self._a.reshape(())[()])

    def __bool__(self):
        return self._scalar(bool)

    def __float__(self):
        return self._scalar(float)

    def __int__(self):
        return self._scalar(int)

    def __complex__(self):
        return self._scalar(complex)

    def __repr__(self):
        TRANSFERS.add()
        return repr(self._a)

    def __str__(self):
        TRANSFERS.add()
        return str(self._a)

    def __array__(self, dtype=None, copy=None):
        raise TypeError(_HOST_CONVERSION)

    def __iter__(self):
        if self._a.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self._a.shape[0]))

    def __len__(self):
        if self._a.ndim == 0:
            raise TypeError("len() of unsized object")
        return self._a.shape[0]

    # ---- what the array is ------------------------------------------------------------------
    shape = property(lambda self: self._a.shape)
    strides = property(lambda self: self._a.strides)
    dtype = property(lambda self: self._a.dtype)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    nbytes = property(lambda self: self._a.nbytes)
    itemsize = property(lambda self: self._a.itemsize)
    flags = property(lambda self: Flags(self._a))
    data = property(lambda self: MemoryPointer(self._a))
    T = property(lambda self: ndarray._of(self._a.T))
    mT = property(lambda self: ndarray._of(np.swapaxes(self._a, -1, -2)))

    @property
    def device(self):
        from .module import cupy
        return cupy.cuda.Device(0)

    @shape.setter
    def shape(self, value):
        self._a.shape = value

    @property
    def real(self):
        return ndarray._of(self._a.real)

    @real.setter
    def real(self, value):
        self._a.real = unwrap(value)

    @property
    def imag(self):
        return ndarray._of(self._a.imag)

    @imag.setter
    def imag(self, value):
        self._a.imag = unwrap(value)

    @property
    def __cuda_array_interface__(self):
        interface = dict(self._a.__array_interface__)
        interface["version"] = 3
        interface["stream"] = 1
        return interface

    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA, device 0

    def __dlpack__(self, stream=None, max_version=None, dl_device=None, copy=None):
        return self._a.__dlpack__()

    # ---- indexing -------------------------------------------------------------------------
    def __getitem__(self, index):
        _no_fields(index)
        index = unwrap(index)
        if _advanced(index):
            kernel_dtype(self._a.dtype)  # a gather kernel
            read_mask_count(index)
            index = _wrapped(self._a.shape, index)
        out = self._a[index]
        if isinstance(out, np.generic):  # CuPy gives a 0-d view, never a host scalar
            out = self._a[(index if isinstance(index, tuple) else (index,)) + (Ellipsis,)]
        return ndarray._of(out)

    def __setitem__(self, index, value):
        _no_fields(index)
        kernel_dtype(self._a.dtype)  # a fill or copy kernel
        index = unwrap(index)
        if _advanced(index):
            read_mask_count(index)
            index = _wrapped(self._a.shape, index)  # a scatter wraps around, as a gather does
        value = unwrap(value, host_ok=True)
        if self._a.dtype.kind in "iu" and np.asarray(value).dtype.kind == "f":
            value = gpu_float_to_int(np.asarray(value), self._a.dtype)  # see gpu_float_to_int
        self._a[index] = value

    # ---- NumPy protocols: dispatch to the stand-in's own functions, as CuPy's do ---------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        from .module import cupy
        mine = getattr(cupy, ufunc.__name__, None)
        if mine is None:
            return NotImplemented
        if method == "__call__":
            return mine(*inputs, **kwargs)
        return getattr(mine, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from .module import cupy
        mine = getattr(cupy, func.__name__, None)
        if mine is None or func.__module__.split(".")[0] != "numpy":
            return NotImplemented
        return mine(*args, **kwargs)

    def __reduce__(self):
        TRANSFERS.add()
        return (_from_host, (np.array(self._a),))

    def __copy__(self):
        return ndarray._of(self._a.copy())

    def __deepcopy__(self, memo):
        return ndarray._of(self._a.copy())


def _from_host(a):
    return ndarray._of(a)


# ---- methods: NumPy's, with CuPy's names only; results stay on the device ------------------------
def _wrapped(shape, index):
    """CuPy wraps out-of-range integer-array indices around (NumPy raises IndexError): the
    documented difference, modelled so that code relying on NumPy's error is caught."""
    parts = index if isinstance(index, tuple) else (index,)
    if any(p is Ellipsis or p is None for p in parts):
        return index
    out, axis = [], 0
    for p in parts:
        if isinstance(p, (np.ndarray, list)) and np.asarray(p).dtype.kind in "iu" \
                and axis < len(shape) and shape[axis]:
            p = np.asarray(p) % shape[axis]
        out.append(p)
        axis += 1 if not (isinstance(p, np.ndarray) and p.dtype == bool) else np.asarray(p).ndim
    return tuple(out) if isinstance(index, tuple) else out[0]


def _no_fields(index):
    if isinstance(index, str):  # CuPy's arrays have no record fields
        raise IndexError(f"field access is not supported by cupy.ndarray: {index!r}")


# Methods that launch no kernel: views and metadata.
_NO_KERNEL = {"view", "reshape", "transpose", "swapaxes", "squeeze", "ravel", "T", "mT"}


def read_mask_count(index):
    """CuPy shapes a boolean-mask gather or scatter by reading how many elements the mask
    selects (the last element of its scan) on the host: a transfer, read or write side."""
    parts = index if isinstance(index, tuple) else (index,)
    if any(isinstance(p, np.ndarray) and p.dtype == bool and p.ndim and p.size for p in parts):
        TRANSFERS.add()


def _advanced(index):
    parts = index if isinstance(index, tuple) else (index,)
    return any(isinstance(p, (np.ndarray, list)) for p in parts)


def _method(name):
    def call(self, *args, **kwargs):
        if name not in _NO_KERNEL:
            kernel_dtype(self._a.dtype)
        return wrap(getattr(self._a, name)(*unwrap(args), **unwrap(kwargs)))
    call.__name__ = name
    return call


_SPECIAL = {"T", "mT", "base", "data", "device", "dtype", "flags", "imag", "itemsize", "nbytes",
            "ndim", "real", "shape", "size", "strides", "get", "set", "item", "tolist",
            "tobytes"}
for _name in CLASSES["ndarray"]:
    if _name.startswith("_") or _name in _SPECIAL:
        continue
    if hasattr(np.ndarray, _name) and _name not in ndarray.__dict__:
        setattr(ndarray, _name, _method(_name))


def _astype(self, dtype, order="K", casting=None, subok=None, copy=True):
    if np.dtype(dtype) != self._a.dtype:
        kernel_dtype(self._a.dtype)
        kernel_dtype(dtype)
    a = self._a
    if a.dtype.kind == "f" and np.dtype(dtype).kind in "iu":
        return ndarray._of(gpu_float_to_int(a, np.dtype(dtype)))
    return ndarray._of(a.astype(dtype, order=order, copy=copy))


def gpu_float_to_int(a, dtype):
    """Floats converted to an integer type as a GPU converts them (PTX's cvt.rzi): toward zero,
    saturating at the type's limits, NaN to 0. x86 (NumPy's cast) differs where C++ leaves it
    undefined: -2.5 to uint8 wraps to 254, NaN and infinities give the most negative integer
    (int32, int64) or 0 (narrower types)."""
    info = np.iinfo(dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        out = a.astype(dtype)
        out = np.where(a >= info.max, info.max, out)  # the limit as a float may round up
        out = np.where(a <= info.min, info.min, out)
        return np.where(np.isnan(a), 0, out).astype(dtype)


def _view(self, *args, **kwargs):
    if args and isinstance(args[0], type) and issubclass(args[0], np.ndarray):
        raise TypeError("cupy.ndarray.view does not take an array type")
    return ndarray._of(self._a.view(*args, **kwargs))


def _sort(self, axis=-1, kind=None):
    self._a.sort(axis=axis, kind="stable")  # CuPy's sorts are stable (radix/merge sorts)


def _argsort(self, axis=-1, kind=None):
    return ndarray._of(self._a.argsort(axis=axis, kind="stable"))


def _fill(self, value):
    """CuPy's fill: a memset of zero bytes for any value equal to 0 (so -0.0 becomes +0.0)."""
    kernel_dtype(self._a.dtype)
    value = unwrap(value)
    self._a.fill(0 if value == 0 else value)


def _nonzero(self):
    """CuPy's nonzero reads the count of nonzero elements on the host to size its result."""
    if self._a.size:
        TRANSFERS.add()
    return wrap(self._a.nonzero())


ndarray.astype = _astype
ndarray.nonzero = _nonzero
ndarray.view = _view
ndarray.fill = _fill
ndarray.sort = _sort
ndarray.argsort = _argsort


# ---- device memory by address (raw pointers: NCCL's buffers, pointers in kernels) ----------
def _roots():
    """The NumPy array behind each live device allocation, once each."""
    seen = set()
    for owner in list(_OWNERS.values()):
        root = owner._a
        while isinstance(root.base, np.ndarray):
            root = root.base
        if id(root) not in seen and root.flags.c_contiguous and root.nbytes:
            seen.add(id(root))
            yield root


def _span(root):
    return root.__array_interface__["data"][0], root.reshape(-1).view(np.uint8)


def allocations():
    """(start address, flat uint8 view) of every live device allocation, by address."""
    return sorted(map(_span, _roots()), key=lambda a: a[0])


def allocation_at(ptr):
    """(start, flat uint8 view) of the live allocation holding address `ptr`, or None."""
    for root in _roots():
        start = root.__array_interface__["data"][0]
        if start <= ptr < start + root.nbytes:
            return _span(root)
    return None


class Cells:
    """Elements of `dtype` at device addresses (one per kernel element), to read or write.
    Each must lie inside one live allocation, aligned to its size (an illegal or misaligned
    address on a GPU is an IndexError here), and a write may not reach one cell twice (two
    threads racing on a GPU)."""

    def __init__(self, addresses, dtype, write=False):
        self.dtype, self.n = np.dtype(dtype), addresses.size
        size = self.dtype.itemsize
        live = allocations()
        starts = np.array([s for s, _ in live], np.int64)
        owner = np.searchsorted(starts, addresses, side="right") - 1
        # runs of elements in one allocation (a kernel's elements mostly are, in long runs)
        cuts = np.concatenate(([0], np.flatnonzero(np.diff(owner)) + 1, [self.n]))
        self.runs, touched = [], {}  # (allocation's cells, cell indices, elements); cells hit
        for a, b in zip(cuts[:-1].tolist(), cuts[1:].tolist()):
            k = int(owner[a])
            start, flat = live[k] if k >= 0 else (0, None)
            offsets = addresses[a:b] - start
            if flat is None or offsets.min() < 0 or offsets.max() + size > flat.size:
                raise IndexError(f"a kernel accessed device address {int(addresses[a]):#x}, "
                                 f"outside any allocation (an illegal memory access on a GPU)")
            if np.any(offsets % size) or start % size:
                raise IndexError("a kernel accessed a misaligned address (an error on a GPU)")
            typed = flat[:flat.size - flat.size % size].view(self.dtype)
            cells = offsets // size
            if write:
                touched.setdefault(k, np.zeros(typed.size, bool))[cells] = True
            self.runs.append((typed, cells, slice(a, b)))
        if write and sum(np.count_nonzero(hit) for hit in touched.values()) != self.n:
            raise RuntimeError("two elements of a kernel write one address (a race on a GPU)")

    def read(self):
        out = np.empty(self.n, self.dtype)
        for typed, cells, elements in self.runs:
            out[elements] = typed[cells]
        return out

    def write(self, values):
        values = np.broadcast_to(values, (self.n,))
        for typed, cells, elements in self.runs:
            typed[cells] = values[elements]
