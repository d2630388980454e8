"""Storages: `UntypedStorage` (bytes), `TypedStorage` (elements of a dtype) and the legacy
typed classes (`ember.FloatStorage`, `ember.cuda.FloatStorage` ...), PyTorch's objects over the
memory a tensor and its views share.

ember has no storage object of its own: a tensor's storage is the memory of its root base
(`_base`, or the tensor), from the root's first element (or, for a root restrided, resized or
`set_` in place, from its first memory, kept as `_storage`). A storage is a flat view of such
memory, so reading and writing it reads and writes the tensors; a storage made by its
constructor (`ember.FloatStorage(3)`) owns fresh memory, which `Tensor.set_` puts tensors on.
"""
import warnings

import numpy as np

from . import _dtype_casts as _casts, dtypes as _dt
from .device import backend_of, canonical


def span(arr):
    """The number of elements from an array's first element to its last, inclusive."""
    if arr.size == 0:
        return 0
    return 1 + sum((n - 1) * st for n, st in zip(arr.shape, arr.strides)) // arr.itemsize


def _flat(t):
    """A 1-D view (in elements) of the whole memory `t`'s storage spans."""
    root = t._base if t._base is not None else t
    arr = root.__dict__.get("_storage", root._array)
    flat = _casts.as_strided(backend_of(t._device).xp, arr, (span(arr),), (arr.itemsize,))
    if isinstance(flat, np.ndarray) and not flat.flags.writeable:
        flat = flat.view()
        flat.flags.writeable = True
    return flat


def _data_ptr(arr):
    if isinstance(arr, np.ndarray):
        return arr.__array_interface__["data"][0]
    return arr.data.ptr


def _on(device, host):
    """`host` (a NumPy array) on `device`."""
    return host if device.type == "cpu" else backend_of(device).from_host(host, device.index)


def _to_host(arr, device):
    return arr if device.type == "cpu" else backend_of(device).to_host(arr)


def _check_index(idx, n, what):
    if isinstance(idx, slice):
        raise RuntimeError(f"slices are only supported in {what}")
    i = int(idx)
    if not -n <= i < n:
        raise IndexError(f"index {i} out of range for storage of size {n}")
    return i % n


def _storage_device(device):
    dev = canonical("cpu" if device is None else device)
    if dev.type == "cuda" and dev.index is None:
        dev = canonical("cuda:0")
    return dev


def _cuda_device(device):
    """`storage.cuda(device)`'s device: the current CUDA device when None, `cuda:i` for i."""
    if device is None:
        return canonical("cuda")  # with the current device's index
    return canonical(f"cuda:{device}" if isinstance(device, int) else device)


class _StorageBase:
    """What both storage kinds share: their memory is `self._mem`, a flat array."""

    is_sparse = False

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    def get_device(self):
        return self.device.index if self.device.type == "cuda" else -1

    def data_ptr(self):
        return _data_ptr(self._mem)

    def __len__(self):
        return self.size()

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self):
        return _to_host(self._mem, self.device).tolist()

    def _host(self):
        return _to_host(self._mem, self.device)

    def is_pinned(self, device="cuda"):
        return False

    def is_shared(self):
        if self.device.type != "cpu":
            return True
        import mmap
        obj = self._mem
        while getattr(obj, "base", None) is not None:
            obj = obj.base
        return isinstance(obj, mmap.mmap)

    def __copy__(self):
        return self.clone()

    def __deepcopy__(self, memo):
        return memo.setdefault(id(self), self.clone())


class UntypedStorage(_StorageBase):
    """The bytes of a storage. `UntypedStorage(nbytes)`, `UntypedStorage([byte, ...])`,
    `UntypedStorage()`, each with `device=`."""

    __module__ = "ember.storage"  # its public address, as PyTorch's is torch.storage

    def __init__(self, *args, device=None):
        dev = _storage_device(device)
        if not args:
            host = np.zeros(0, np.uint8)
        elif len(args) == 1 and isinstance(args[0], int) and not isinstance(args[0], bool):
            host = np.zeros(args[0], np.uint8)
        elif len(args) == 1 and hasattr(args[0], "__len__"):
            host = np.array(list(args[0]), dtype=np.int64)
            if ((host < 0) | (host > 255)).any():
                raise RuntimeError("Overflow when unpacking long")  # not a byte
            host = host.astype(np.uint8)
        else:
            got = ", ".join(type(a).__name__ for a in args)
            raise TypeError(f"UntypedStorage(): could not construct from ({got})")
        self._set(_on(dev, host), dev)

    @classmethod
    def _wrap(cls, flat, device):
        """The storage over a flat array's memory (a tensor's: `Tensor.untyped_storage()`)."""
        self = cls.__new__(cls)
        self._set(flat, device)
        return self

    def _set(self, flat, device):
        self._mem = flat.view(np.uint8) if flat.size else flat.reshape(0).view(np.uint8)
        self.device = device

    def size(self):
        return self._mem.size

    def nbytes(self):
        return self._mem.size

    def element_size(self):
        return 1

    def untyped(self):
        return self

    def __getitem__(self, idx):
        if isinstance(idx, slice):  # a storage over those bytes, sharing them (safetensors)
            start, stop, step = idx.indices(self._mem.size)
            if step != 1:
                raise RuntimeError(f"Trying to slice with a step of {step}, but only a step "
                                   "of 1 is supported")
            return UntypedStorage._wrap(self._mem[start:max(start, stop)], self.device)
        return int(self._mem[_check_index(idx, self._mem.size, "this storage's __getitem__")])

    def __setitem__(self, idx, value):
        self._mem[_check_index(idx, self._mem.size, "this storage's __setitem__")] = value

    def type(self, dtype=None, non_blocking=False):
        if dtype is None:
            return "torch.storage.UntypedStorage"
        raise TypeError("UntypedStorage.type(): an untyped storage has no element type to "
                        "convert")

    # ---- copies and moves -----------------------------------------------------------------
    def clone(self):
        return UntypedStorage._wrap(self._mem.copy(), self.device)

    def copy_(self, source, non_blocking=None):
        if source.nbytes() != self.nbytes():
            raise RuntimeError(f"size mismatch: copying a storage of {source.nbytes()} bytes "
                               f"into one of {self.nbytes()}")
        src = source.untyped()._host()
        self._mem[...] = src if self.device.type == "cpu" else _on(self.device, src)
        return self

    def fill_(self, value):
        self._mem[...] = value
        return self

    def to(self, *, device=None, non_blocking=False):
        dev = _storage_device(device)
        if dev == self.device:
            return self
        return UntypedStorage._wrap(_on(dev, self._host().copy()), dev)

    def cpu(self):
        return self.to(device="cpu")

    def cuda(self, device=None, non_blocking=False):
        return self.to(device=_cuda_device(device))

    def share_memory_(self):
        if self.device.type == "cpu" and not self.is_shared():
            import mmap
            moved = np.frombuffer(mmap.mmap(-1, max(self.nbytes(), 1)), np.uint8,
                                  self.nbytes())
            moved[...] = self._mem
            self._mem = moved
        return self

    @classmethod
    def from_file(cls, filename, shared=False, nbytes=0):
        return cls._wrap(_map_file(filename, shared, nbytes), canonical("cpu"))

    def __repr__(self):
        body = "\n".join(f" {b}" for b in self.tolist()) or " "
        return (f"{body}\n[torch.storage.UntypedStorage(device={self.device}) of size "
                f"{self.size()}]")

    def __reduce__(self):
        return (_rebuild_untyped, (self._host().copy(), str(self.device)))


def _rebuild_untyped(host, device):
    dev = canonical(device)
    return UntypedStorage._wrap(_on(dev, host), dev)


def _map_file(filename, shared, nbytes):
    """`nbytes` bytes of a file as a flat uint8 array: the file's own pages when `shared`
    (writes reach the file), else a private copy."""
    if nbytes == 0:
        return np.zeros(0, np.uint8)
    import os
    size = os.path.getsize(filename)
    if size < nbytes:
        raise RuntimeError(f"file <{filename}> size <{size}> is smaller than the required "
                           f"mapping size <{nbytes}>")
    if shared:
        return np.memmap(filename, np.uint8, "r+", shape=(nbytes,))
    return np.fromfile(filename, np.uint8, count=nbytes)


_warned = []


def _warn_typed_storage(stacklevel):
    if not _warned:
        _warned.append(True)
        warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                      "UntypedStorage will be the only storage class. This should only matter "
                      "to you if you are using storages directly.  To access UntypedStorage "
                      "directly, use tensor.untyped_storage() instead of tensor.storage()",
                      UserWarning, stacklevel=stacklevel + 1)


class TypedStorage(_StorageBase):
    """A storage's elements in a dtype (PyTorch deprecates it, and says so).
    `TypedStorage(size)`, `TypedStorage([values])`, `TypedStorage()` with `dtype=` and
    `device=`, or `TypedStorage(wrap_storage=untyped, dtype=...)`."""

    __module__ = "ember.storage"

    def __init__(self, *args, wrap_storage=None, dtype=None, device=None, _internal=False):
        if not _internal:
            _warn_typed_storage(2)
        d = _dt.get_default_dtype() if dtype is None else _dt.to_dtype(dtype)
        if wrap_storage is not None:
            if args or device is not None:
                raise RuntimeError("TypedStorage.__init__ received unexpected arguments with "
                                   "wrap_storage: only dtype may be given")
            if not isinstance(wrap_storage, UntypedStorage):
                raise TypeError("expected a Storage object for argument 'wrap_storage', but "
                                f"got {type(wrap_storage).__name__}")
            if dtype is None:
                raise RuntimeError("TypedStorage.__init__ received wrap_storage without dtype")
            self._set(wrap_storage._mem, d, wrap_storage.device)
            return
        dev = _storage_device(device)
        if not args:
            host = np.zeros(0, d.np)
        elif len(args) == 1 and isinstance(args[0], int) and not isinstance(args[0], bool):
            host = np.zeros(args[0], d.np)
        elif len(args) == 1 and hasattr(args[0], "__len__"):
            host = np.array(list(args[0]), dtype=d.np)
        else:
            got = ", ".join(type(a).__name__ for a in args)
            raise TypeError(f"TypedStorage.__init__ received an invalid combination of "
                            f"arguments: ({got})")
        self._set(_on(dev, host), d, dev)

    @classmethod
    def _wrap(cls, flat, dtype, device):
        """The storage over a flat array (a tensor's: `Tensor.storage()`, which warns)."""
        self = cls.__new__(cls)
        self._set(flat, dtype, device)
        return self

    def _set(self, mem, dtype, device):
        if mem.dtype != dtype.np:
            if mem.size * mem.itemsize % dtype.itemsize:
                raise RuntimeError(f"TypedStorage: {mem.size * mem.itemsize} bytes are not a "
                                   f"whole number of {dtype} elements")
            mem = mem.view(dtype.np)
        self._mem = mem
        self.dtype = dtype
        self.device = device

    @property
    def _untyped_storage(self):
        return UntypedStorage._wrap(self._mem, self.device)

    def untyped(self):
        return self._untyped_storage

    def size(self):
        return self._mem.size

    def element_size(self):
        return self._mem.itemsize

    def nbytes(self):
        return self._mem.size * self._mem.itemsize

    def __getitem__(self, idx):
        return self._mem[_check_index(idx, self._mem.size, "UntypedStorage.__getitem__")].item()

    def __setitem__(self, idx, value):
        self._mem[_check_index(idx, self._mem.size, "UntypedStorage.__setitem__")] = value

    def pickle_storage_type(self):
        return self.dtype._storage_type

    _pickle_storage_type = pickle_storage_type

    def type(self, dtype=None, non_blocking=False):
        """'torch.FloatStorage' (its legacy class's name); given a dtype or a legacy storage
        class or its name, a copy in that type."""
        if dtype is None:
            prefix = "torch.cuda." if self.is_cuda else "torch."
            return prefix + self.dtype._storage_type
        if isinstance(dtype, str):
            name = dtype.rpartition(".")[2]
            by_storage = {d._storage_type: d for d in _dt.ALL_DTYPES}
            target = by_storage[name] if name in by_storage else _dt.to_dtype(dtype)
        else:
            target = getattr(dtype, "dtype", dtype)
        return self._converted(_dt.to_dtype(target))

    def _converted(self, dtype):
        if dtype is self.dtype:
            return self
        host = self._host().astype(dtype.np)
        return TypedStorage._wrap(_on(self.device, host), dtype, self.device)

    def clone(self):
        return TypedStorage._wrap(self._mem.copy(), self.dtype, self.device)

    def copy_(self, source, non_blocking=None):
        if len(source) != self.size():
            raise RuntimeError(f"size mismatch: copying a storage of {len(source)} elements "
                               f"into one of {self.size()}")
        src = np.asarray(source.tolist(), dtype=self.dtype.np) \
            if isinstance(source, TypedStorage) else source._host().view(self.dtype.np)
        self._mem[...] = src if self.device.type == "cpu" else _on(self.device, src)
        return self

    def fill_(self, value):
        self._mem[...] = value
        return self

    def to(self, *, device=None, non_blocking=False):
        dev = _storage_device(device)
        if dev == self.device:
            return self
        return TypedStorage._wrap(_on(dev, self._host().copy()), self.dtype, dev)

    def cpu(self):
        return self.to(device="cpu")

    def cuda(self, device=None, non_blocking=False):
        moved = self.untyped().cuda(device)
        return TypedStorage._wrap(moved._mem, self.dtype, moved.device)

    def share_memory_(self):
        untyped = self.untyped().share_memory_()
        self._mem = untyped._mem.view(self.dtype.np)
        return self

    @classmethod
    def from_file(cls, filename, shared=False, size=0, dtype=None):
        d = _dt.to_dtype(getattr(cls, "dtype", None) or dtype or _dt.get_default_dtype())
        mem = _map_file(filename, shared, size * d.itemsize)
        return TypedStorage._wrap(mem, d, canonical("cpu"))

    def __repr__(self):
        # each element as Python prints its number; an empty storage prints one blank line
        body = "\n".join(f" {v}" for v in self.tolist()) or " "
        return (f"{body}\n[torch.storage.TypedStorage(dtype=torch.{self.dtype.name}, "
                f"device={self.device}) of size {self.size()}]")

    def __reduce__(self):
        return (_rebuild_typed, (self._host().copy(), self.dtype.name, str(self.device)))


def _rebuild_typed(host, dtype, device):
    dev = canonical(device)
    return TypedStorage._wrap(_on(dev, host), _dt.to_dtype(dtype), dev)


for _name, _d in [("byte", _dt.uint8), ("char", _dt.int8), ("short", _dt.int16),
                  ("int", _dt.int32), ("long", _dt.int64), ("half", _dt.float16),
                  ("bfloat16", _dt.bfloat16), ("float", _dt.float32), ("double", _dt.float64),
                  ("bool", _dt.bool), ("complex_float", _dt.complex64),
                  ("complex_double", _dt.complex128)]:
    setattr(TypedStorage, _name, (lambda d: lambda self: self._converted(d))(_d))


# ---- the legacy typed classes --------------------------------------------------------------
class _LegacyStorageMeta(type):
    """`ember.FloatStorage`: calling it makes a float32 TypedStorage (on CUDA for
    `ember.cuda.FloatStorage`), and `isinstance(s, ember.FloatStorage)` asks s's dtype and
    device, as PyTorch's legacy classes do."""

    def __instancecheck__(cls, obj):
        return type(obj) is TypedStorage and obj.dtype is cls.dtype and \
            obj.is_cuda == cls._is_cuda

    def __call__(cls, *args, wrap_storage=None, device=None):
        if cls._is_cuda and not backend_of(canonical("cuda")).is_available():
            raise AssertionError("Torch not compiled with CUDA enabled")
        if wrap_storage is not None:
            return TypedStorage(*args, wrap_storage=wrap_storage, dtype=cls.dtype,
                                _internal=True)
        default = "cuda" if cls._is_cuda else "cpu"
        return TypedStorage(*args, dtype=cls.dtype, device=default if device is None
                            else device, _internal=True)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _legacy_storage(dtype, cuda):
    return _LegacyStorageMeta(dtype._storage_type, (TypedStorage,),
                              {"dtype": dtype, "_is_cuda": cuda, "__slots__": (),
                               "__module__": "torch.cuda" if cuda else "torch"})


LEGACY_STORAGES = {d._storage_type: _legacy_storage(d, False) for d in _dt.ALL_DTYPES}
globals().update(LEGACY_STORAGES)  # ember.FloatStorage ... are these, loaded on first use
CUDA_LEGACY_STORAGES = {d._storage_type: _legacy_storage(d, True) for d in _dt.ALL_DTYPES}
