"""Storages: `Tensor.untyped_storage()` (bytes) and `Tensor.storage()` (elements of the
tensor's dtype), PyTorch's objects over the memory a tensor and its views share.

ember has no storage object of its own: a tensor's storage is the memory of its root base
(`_base`, or the tensor), from the root's first element (or, for a root restrided or resized
in place, from its first memory, kept as `_storage`). A storage made here is a flat view of
that memory, so reading and writing it reads and writes the tensors.
"""
import warnings

import numpy as np

from . import _dtype_casts as _casts


def span(arr):
    """The number of elements from an array's first element to its last, inclusive."""
    if arr.size == 0:
        return 0
    return 1 + sum((n - 1) * st for n, st in zip(arr.shape, arr.strides)) // arr.itemsize


def _flat(t):
    """A 1-D view (in elements) of the whole memory `t`'s storage spans."""
    root = t._base if t._base is not None else t
    arr = root.__dict__.get("_storage", root._array)
    xp = np if isinstance(arr, np.ndarray) else __import__("cupy")
    flat = _casts.as_strided(xp, arr, (span(arr),), (arr.itemsize,))
    if isinstance(flat, np.ndarray) and not flat.flags.writeable:
        flat = flat.view()
        flat.flags.writeable = True
    return flat


def _data_ptr(arr):
    if isinstance(arr, np.ndarray):
        return arr.__array_interface__["data"][0]
    return arr.data.ptr


class UntypedStorage:
    """The bytes of a tensor's storage."""

    def __init__(self, flat, device):
        self._bytes = flat.view(np.uint8) if flat.size else flat.reshape(0).view(np.uint8)
        self._ptr = _data_ptr(flat)
        self.device = device

    def size(self):
        return self._bytes.size

    nbytes = size

    def __len__(self):
        return self._bytes.size

    def element_size(self):
        return 1

    def data_ptr(self):
        return self._ptr

    def _index(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError("slices are not supported in this storage's __getitem__")
        n = self._bytes.size
        i = int(idx)
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return i % n

    def __getitem__(self, idx):
        return int(self._bytes[self._index(idx)])

    def __setitem__(self, idx, value):
        self._bytes[self._index(idx)] = value

    def tolist(self):
        return [int(b) for b in self._host()]

    def _host(self):
        b = self._bytes
        return b if isinstance(b, np.ndarray) else b.get()

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self):
        body = "\n".join(f" {b}" for b in self.tolist()) or " "
        return f"{body}\n[torch.storage.UntypedStorage(device={self.device}) of size {self.size()}]"


_warned = []


class TypedStorage:
    """The elements of a tensor's storage, in its dtype (PyTorch deprecates it, and says so)."""

    def __init__(self, flat, dtype, device):
        if not _warned:
            _warned.append(True)
            warnings.warn("TypedStorage is deprecated. It will be removed in the future and "
                          "UntypedStorage will be the only storage class. This should only matter "
                          "to you if you are using storages directly.  To access UntypedStorage "
                          "directly, use tensor.untyped_storage() instead of tensor.storage()",
                          UserWarning, stacklevel=3)
        self._flat = flat
        self.dtype = dtype
        self.device = device

    def size(self):
        return self._flat.size

    def __len__(self):
        return self._flat.size

    def element_size(self):
        return self._flat.itemsize

    def nbytes(self):
        return self._flat.size * self._flat.itemsize

    def data_ptr(self):
        return _data_ptr(self._flat)

    def untyped(self):
        return UntypedStorage(self._flat, self.device)

    def _index(self, idx):
        if isinstance(idx, slice):
            raise RuntimeError("slices are only supported in UntypedStorage.__getitem__")
        n = self._flat.size
        i = int(idx)
        if not -n <= i < n:
            raise IndexError(f"index {i} out of range for storage of size {n}")
        return i % n

    def __getitem__(self, idx):
        return self._flat[self._index(idx)].item()

    def __setitem__(self, idx, value):
        self._flat[self._index(idx)] = value

    def tolist(self):
        flat = self._flat if isinstance(self._flat, np.ndarray) else self._flat.get()
        return flat.tolist()

    def __iter__(self):
        return iter(self.tolist())

    def __repr__(self):
        # each element as Python prints its number; an empty storage prints one blank line
        body = "\n".join(f" {v}" for v in self.tolist()) or " "
        return (f"{body}\n[torch.storage.TypedStorage(dtype=torch.{self.dtype.name}, "
                f"device={self.device}) of size {self.size()}]")
