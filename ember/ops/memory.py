"""A tensor's memory seen from outside: `Tensor.new` (the legacy constructor),
`untyped_storage()` / `storage()`, `pin_memory()` / `is_pinned()`, `share_memory_()` /
`is_shared()`.

Moving a storage (into shared or pinned memory) rebinds the root base and the tensor it was
called on to the new memory; views made earlier of the base keep the old memory (ember has
no shared storage object to move under them).
"""
from .. import dtypes as _dt
from .._storage import TypedStorage, UntypedStorage, _flat
from .._tensor import Tensor, xp_of
from ..device import backend_of, device as _device
from .strided import _offset_in, _stride_view, _storage_of

__all__ = []
METHODS = ["new", "untyped_storage", "storage", "pin_memory", "is_pinned", "share_memory_",
           "is_shared"]


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
    from .creation import legacy_new
    return legacy_new(Tensor, self.dtype, args, self._device if device is None else device,
                      exact_dtype=True)


def untyped_storage(self):
    return UntypedStorage(_flat(self), self._device)


def storage(self):
    return TypedStorage(_flat(self), self.dtype, self._device)


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
    import mmap
    return mmap.mmap(-1, nbytes)  # MAP_SHARED | MAP_ANONYMOUS: seen by forked processes


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
    import mmap
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
