"""A tensor's memory seen from outside: `Tensor.new` (the legacy constructor),
`untyped_storage()` / `storage()` / `storage_type()`, `set_` (a tensor onto a storage or
another tensor's), `ember.from_file`, `pin_memory()` / `is_pinned()`, `share_memory_()` /
`is_shared()`.

Moving a storage (into shared or pinned memory) rebinds the root base and the tensor it was
called on to the new memory; views made earlier of the base keep the old memory (ember has
no shared storage object to move under them).
"""
from .. import dtypes as _dt
import builtins
import mmap
import numbers
import os
import weakref

from .._state import grad as _grad_state

from .._storage import (CUDA_LEGACY_STORAGES, LEGACY_STORAGES, TypedStorage, UntypedStorage,
                        _flat, _map_file, _warn_typed_storage)
from .._tensor import Tensor, xp_of
from ..device import backend_of, device as _device
from .strided import _offset_in, _stride_view, _storage_of

__all__ = ["from_file"]
METHODS = ["new", "untyped_storage", "storage", "storage_type", "set_", "pin_memory",
           "is_pinned", "share_memory_", "is_shared"]


def _kwarg_type(v):
    if isinstance(v, _dt.dtype):
        return "torch.dtype"
    from ..device import device
    return "torch.device" if isinstance(v, device) else type(v).__name__


def new(self, *args, device=None, **kwargs):
    """`x.new(2, 3)` (uninitialised), `x.new([1, 2])` (data), `x.new()`: x's dtype and device."""
    if kwargs:
        got = ", ".join([type(a).__name__ for a in args] +
                        [f"{k}={_kwarg_type(v)}" for k, v in kwargs.items()])
        raise TypeError(
            f"new() received an invalid combination of arguments - got ({got}), but expected one "
            "of:\n * (*, torch.device device = None)\n      didn't match because some of the "
            f"keywords were incorrect: {', '.join(kwargs)}\n * (torch.Storage storage)\n"
            " * (Tensor other)\n * (tuple of ints size, *, torch.device device = None)\n"
            " * (object data, *, torch.device device = None)\n")
    from .legacy_constructors import legacy_new
    return legacy_new(Tensor, self.dtype, args, self._device if device is None else device,
                      exact_dtype=True)


def untyped_storage(self):
    return UntypedStorage._wrap(_flat(self), self._device)


def storage(self):
    _warn_typed_storage(2)
    return TypedStorage._wrap(_flat(self), self.dtype, self._device)


def storage_type(self):
    """The legacy class of the tensor's storage: `ember.FloatStorage`, `ember.cuda...`."""
    _warn_typed_storage(2)
    table = CUDA_LEGACY_STORAGES if self._device.type == "cuda" else LEGACY_STORAGES
    return table[self.dtype._storage_type]


# ---- set_ -------------------------------------------------------------------------------------
_SET_OVERLOADS = ("()", "(torch.Storage source)",
                  "(torch.Storage source, int storage_offset, tuple of ints size, tuple of ints "
                  "stride = None)", "(Tensor source)",
                  "(Tensor source, int storage_offset, tuple of ints size, tuple of ints "
                  "stride = None)")


def _set_type_error(args, kwargs):
    got = ", ".join([type(a).__name__ for a in args] +
                    [f"{k}={type(v).__name__}" for k, v in kwargs.items()])
    lines = []
    for overload in _SET_OVERLOADS:
        lines.append(f" * {overload}\n")
        if len(args) == 1 and not kwargs and "offset" not in overload:
            # PyTorch's parser says why a one-argument call missed the short overloads
            lines.append("      didn't match because some of the arguments have invalid "
                         f"types: (!{type(args[0]).__name__}!)\n")
    return TypeError(f"set_() received an invalid combination of arguments - got ({got}), but "
                     f"expected one of:\n{''.join(lines)}")


def set_(self, *args, **kwargs):
    """Point the tensor at other memory: `set_()` (a new empty storage), `set_(storage)` (all
    of it, 1-D), `set_(storage, storage_offset, size, stride=None)`, `set_(tensor)` (the
    tensor's storage, offset, size and strides). The tensor keeps its dtype and version
    counter; ember rebinds this tensor (views made of it earlier keep the old memory)."""
    from ._writes import _check_leaf_inplace
    names = ("source", "storage_offset", "size", "stride")
    if len(args) > 4 or builtins.any(k not in names for k in kwargs):
        raise _set_type_error(args, kwargs)
    bound = dict(zip(names, args))
    for k, v in kwargs.items():
        if k in bound:
            raise _set_type_error(args, kwargs)
        bound[k] = v
    source = bound.get("source")
    if source is None and len(bound) > 0 or (len(bound) not in (0, 1) and "size" not in bound):
        raise _set_type_error(args, kwargs)
    if source is None:
        flat, offset, size, stride = _empty_like_storage(self), 0, (0,), None
    elif isinstance(source, Tensor):
        if source.dtype is not self.dtype:
            raise RuntimeError(f"Could not set tensor of type {source.dtype._cpp_name} to a "
                               f"tensor of type {self.dtype._cpp_name}")
        flat = _flat(source)
        offset, size, stride = source.storage_offset(), tuple(source.shape), source.stride()
    elif isinstance(source, (TypedStorage, UntypedStorage)):
        flat = _storage_elements(self, source)
        offset, size, stride = 0, (flat.size,), None
    else:
        raise _set_type_error(args, kwargs)
    if "size" in bound:
        offset = bound.get("storage_offset", 0)
        if not isinstance(offset, numbers.Integral):
            raise _set_type_error(args, kwargs)
        size = tuple(builtins.int(n) for n in bound["size"])
        stride = bound.get("stride")
    if _grad_state.enabled and (self._requires_grad or (
            self._base is not None and self._base._requires_grad)):
        _check_leaf_inplace(self)
    _point_at(self, flat, builtins.int(offset), size,
              None if stride is None else tuple(builtins.int(s) for s in stride))
    return self


def _empty_like_storage(self):
    import numpy as np
    return backend_of(self._device).from_host(np.zeros(0, self.dtype.np), self._device.index) \
        if self._device.type != "cpu" else np.zeros(0, self.dtype.np)


def _storage_elements(self, storage):
    """The storage's memory as elements of the tensor's dtype (a typed storage must be of
    that dtype already, as PyTorch requires)."""
    if isinstance(storage, TypedStorage) and storage.dtype is not self.dtype:
        raise RuntimeError(f"Expected a Storage of type {self.dtype._cpp_name} or an "
                           f"UntypedStorage, but got type {storage.dtype._scalar_name} for "
                           "argument 1 'storage'")
    if storage.device != self._device:
        raise RuntimeError(f"Attempted to set the storage of a tensor on device "
                           f'"{self._device}" to a storage on different device '
                           f'"{storage.device}".  This is no longer allowed; the devices must '
                           "match.")
    raw = storage.untyped()._mem
    usable = raw.size - raw.size % self.dtype.itemsize
    return raw[:usable].view(self.dtype.np)


def _point_at(self, flat, offset, size, stride):
    """Rebind the tensor to `size`/`stride` over `flat` from `offset`, growing the memory (new
    zeros after the old contents) when it is too small, as PyTorch grows the storage."""
    from .strided import _stride_view
    if stride is None:
        stride, step = [], 1
        for n in reversed(size):
            stride.append(step)
            step *= builtins.max(n, 1)
        stride = tuple(reversed(stride))
    if builtins.any(n < 0 for n in size) or offset < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension or offset: "
                           f"size {list(size)}, storage offset {offset}")
    numel = 1
    for n in size:
        numel *= n
    needed = offset + 1 + builtins.sum((n - 1) * st for n, st in zip(size, stride)) if numel \
        else 0
    xp = xp_of(self)
    if needed > flat.size:
        grown = xp.zeros(needed, flat.dtype)
        grown[:flat.size] = flat
        flat = grown
    self._base = None
    self._view_fn = None
    self.__dict__["_storage"] = flat
    self._array = _stride_view(xp, flat, size, stride, offset) if flat.size else \
        flat[:0].reshape(size) if numel == 0 else flat
    self._vc.value += 1


def from_file(filename, shared=None, size=0, *, dtype=None, layout=None, device=None,
              pin_memory=False, requires_grad=False):
    """A 1-D tensor of `size` elements read from a file: the file's own pages when `shared`
    (writes reach the file), else a private copy."""
    from .. import dtypes as _dt
    from .._tensor import make_tensor
    from ..device import canonical
    d = _dt.get_default_dtype() if dtype is None else _dt.to_dtype(dtype)
    mem = _map_file(filename, builtins.bool(shared), builtins.int(size) * d.itemsize)
    arr = mem.view(d.np) if mem.size else mem[:0].view(d.np)
    dev = canonical("cpu" if device is None else device)
    if dev.type != "cpu":
        arr = backend_of(dev).from_host(arr, dev.index)
    t = make_tensor(arr, dev)
    if requires_grad:
        t.requires_grad_(True)
    return t


# ---- moving a storage ------------------------------------------------------------------------
def _move_storage(self, allocate):
    """Copy self's whole storage into `allocate(nbytes)` memory and rebind the root base (and
    self, when a view) to it; returns the root."""
    root, storage = _storage_of(self)
    flat = _flat(self)
    buffer = allocate(max(flat.nbytes, 1))
    import numpy as np
    moved = np.frombuffer(buffer, flat.dtype, flat.size)
    moved[...] = flat
    xp = xp_of(self)
    item = flat.itemsize

    def rebound(t):
        return _stride_view(xp, moved, t._array.shape, [st // item for st in t._array.strides],
                            _offset_in(t._array, storage))
    if self is not root:
        self._array = rebound(self)
    root._array = rebound(root)
    root.__dict__["_storage"] = moved
    return root


def _anonymous_shared(nbytes):
    """Shared memory for share_memory_(): a memfd's mapping where Linux has memfds, whose
    descriptor multiprocessing can hand to spawned processes (ember.multiprocessing's
    reductions), else an anonymous MAP_SHARED mapping, seen by forked processes only."""
    if not hasattr(os, "memfd_create"):
        return mmap.mmap(-1, nbytes)
    return SharedBuffer.from_fd(os.memfd_create("ember-shared", os.MFD_CLOEXEC), nbytes,
                                resize=True)


class SharedBuffer(mmap.mmap):
    """A MAP_SHARED mapping of a whole file (a memfd) that keeps its descriptor open for as
    long as it lives, so that the memory can be passed to another process by descriptor."""

    @classmethod
    def from_fd(cls, fd, nbytes, resize=False):
        """Map `nbytes` of `fd`, which the mapping takes over (closed when it is collected)."""
        try:
            if resize:
                os.ftruncate(fd, nbytes)
            buffer = cls(fd, nbytes)
        except BaseException:
            os.close(fd)
            raise
        buffer.fd = fd
        weakref.finalize(buffer, os.close, fd)
        return buffer


def _memory_owner(arr):
    """The object that owns an array's memory (an mmap, pinned memory, another array ...)."""
    obj = arr
    for _ in range(64):
        nxt = getattr(obj, "base", None)
        if nxt is None and isinstance(obj, memoryview):
            nxt = obj.obj
        if nxt is None:
            return obj
        obj = nxt
    return obj


def share_memory_(self):
    if self._device.type == "cpu" and not is_shared(self):
        _move_storage(self, _anonymous_shared)
    return self


def is_shared(self):
    if self._device.type != "cpu":
        return True  # PyTorch: device memory is always shareable
    return isinstance(_memory_owner(self._array), mmap.mmap)


def _accelerator():
    return backend_of(_device("cuda")).is_available()


def pin_memory(self, device=None):
    if not _accelerator():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if self._device.type != "cpu":
        raise RuntimeError(f"cannot pin '{self.type()}' only dense CPU tensors can be pinned")
    if is_pinned(self):
        return self
    import cupy
    out = self.detach().clone()
    _move_storage(out, cupy.cuda.alloc_pinned_memory)
    return out


def is_pinned(self, device=None):
    if self._device.type != "cpu":
        return False
    return type(_memory_owner(self._array)).__name__ == "PinnedMemoryPointer"
