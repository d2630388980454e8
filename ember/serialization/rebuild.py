"""What a checkpoint's pickle calls to make its tensors (`torch._utils._rebuild_tensor_v2` and
kin), each record checked before it touches memory.

A tensor record is (storage, offset, size, stride): a strided view of a storage read from the
file. A record PyTorch would refuse is refused here with PyTorch's exception type: a negative
offset, size or stride, a view reaching past its storage (which, unchecked, reads heap memory
beside the array), arguments of the wrong type. The checks are in Python integers, before
NumPy sees a number, so no overflow wraps a bad record into a good-looking one.
"""
import numpy as np

from .. import _dtype_casts as _casts, dtypes as _dt
from .._storage import TypedStorage, UntypedStorage
from .._tensor import Tensor, _make
from ..device import backend_of

_INT64_MAX = (1 << 63) - 1


def checked(exc):
    """Marks an error raised by a record check, so the unpickler passes it on as it is (a
    TypeError here is PyTorch's own type for a mistyped record, not a bug to wrap)."""
    exc._ember_checked = True
    return exc


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _int_tuple(value, what):
    if not isinstance(value, (tuple, list)) or not all(_is_int(v) for v in value):
        raise checked(TypeError(f"_rebuild_tensor: {what} must be a tuple of ints, got "
                                f"{_short(value)}"))
    if any(abs(v) > _INT64_MAX for v in value):
        raise checked(RuntimeError(f"_rebuild_tensor: {what} {list(value)} does not fit in "
                                   "int64"))
    return tuple(value)


def _short(value):
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def check_view(storage_offset, size, stride, numel, itemsize):
    """Raises PyTorch's error unless (offset, size, stride) is a view inside a storage of
    `numel` elements of `itemsize` bytes; returns (offset, size, stride) as int tuples."""
    size = _int_tuple(size, "size")
    stride = _int_tuple(stride, "stride")
    if not _is_int(storage_offset):
        raise checked(TypeError("_rebuild_tensor: the storage offset must be an int, got "
                                f"{_short(storage_offset)}"))
    if len(size) != len(stride):
        raise RuntimeError(f"unequal size length ({len(size)}) and stride length "
                           f"({len(stride)})")
    if storage_offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {storage_offset}")
    if storage_offset > _INT64_MAX:
        raise RuntimeError(f"Tensor: storage offset {storage_offset} does not fit in int64")
    for s in size:
        if s < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {s}: "
                               f"{list(size)}")
    if any(st < 0 for st in stride):
        raise RuntimeError(f"setStorage: negative strides are not supported: sizes "
                           f"{list(size)}, strides {list(stride)}")
    n = nonzero = 1
    for s in size:
        n *= s
        nonzero *= max(s, 1)
    if nonzero * itemsize > _INT64_MAX:  # (NumPy's limit too, even for an empty shape)
        raise RuntimeError(f"numel: integer multiplication overflow: sizes {list(size)}")
    if n:
        needed = storage_offset + 1 + sum((s - 1) * st for s, st in zip(size, stride))
        if needed > numel:
            raise RuntimeError(
                f"setStorage: sizes {list(size)}, strides {list(stride)}, storage offset "
                f"{storage_offset}, and itemsize {itemsize} requiring a storage size of "
                f"{needed * itemsize} are out of bounds for storage of size "
                f"{numel * itemsize}")
    return storage_offset, size, stride


def _storage_array(storage):
    """(host or device array, device) of what a pickle passed as a tensor's storage."""
    if isinstance(storage, tuple) and len(storage) == 2 and isinstance(storage[0], np.ndarray):
        return storage  # the legacy loader's (host array, device) pair
    if isinstance(storage, (TypedStorage, UntypedStorage)):
        return storage._mem, storage.device
    raise checked(TypeError("_rebuild_tensor: the storage must be a storage read from the "
                            f"file, got {type(storage).__name__}"))


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       metadata=None):
    """A tensor over a loaded storage: a strided view of it, so tensors that shared a storage
    when saved share memory again (and the legacy format can fill storages afterwards)."""
    array, device = _storage_array(storage)
    storage_offset, size, stride = check_view(storage_offset, size, stride, array.size,
                                              array.itemsize)
    xp = np if isinstance(array, np.ndarray) else backend_of(device).xp
    n = 1
    for s in size:
        n *= s
    if n:
        view = _casts.as_strided(xp, array[storage_offset:], size,
                                 tuple(s * array.itemsize for s in stride))
    else:  # an empty view: no memory is read, whatever its offset and strides say
        view = xp.empty(size, array.dtype)
    view = _dt.with_own_dtype(view)  # the file's byte-ordered dtype is an equal copy of ours
    if device.type != "cpu" and isinstance(view, np.ndarray):
        view = backend_of(device).from_host(view, device.index)
    t = _make(Tensor, view, device)
    t._requires_grad = _requires_grad(requires_grad, t.dtype)
    return t


def _requires_grad(flag, dtype):
    """PyTorch's checks of a record's requires_grad, as its setter makes them."""
    if not isinstance(flag, bool):
        raise RuntimeError("requires_grad must be a bool")
    if flag and not (dtype.is_floating_point or dtype.is_complex):
        raise RuntimeError("only Tensors of floating point and complex dtype can require "
                           "gradients")
    return flag


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    """A tensor over a loaded untyped (byte) storage, read as `dtype`."""
    array, device = _storage_array(storage)
    if not isinstance(dtype, _dt.dtype):
        raise checked(TypeError(f"_rebuild_tensor_v3: dtype must be a torch.dtype, got "
                                f"{_short(dtype)}"))
    if dtype._kind in (_dt.SUB_INT, _dt.SUB_UINT):
        raise RuntimeError(f"_rebuild_tensor_v3: ember cannot load tensors of dtype {dtype}")
    if array.nbytes % dtype.itemsize:
        raise RuntimeError(f"_rebuild_tensor_v3: a storage of {array.nbytes} bytes does not "
                           f"hold whole elements of {dtype} ({dtype.itemsize} bytes each)")
    flat = array.reshape(-1).view(np.uint8).view(dtype.np)
    return _rebuild_tensor_v2((flat, device), storage_offset, size, stride, requires_grad,
                              backward_hooks, metadata)


def _rebuild_parameter(data, requires_grad, backward_hooks=None, *state):
    from ..nn.parameter import Parameter
    if not isinstance(data, Tensor):
        raise checked(TypeError("_rebuild_parameter: the data must be a tensor, got "
                                f"{type(data).__name__}"))
    return Parameter(data, _requires_grad(requires_grad, data.dtype))


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad):
    """A meta tensor as PyTorch saves one: no storage, its dtype, size and stride."""
    from ..ops.creation import empty_strided
    if not isinstance(dtype, _dt.dtype):
        raise checked(TypeError(f"_rebuild_meta_tensor_no_storage: dtype must be a "
                                f"torch.dtype, got {_short(dtype)}"))
    size, stride = _int_tuple(size, "size"), _int_tuple(stride, "stride")
    t = empty_strided(size, stride, dtype=dtype, device="meta")
    t._requires_grad = _requires_grad(requires_grad, dtype)
    return t


REBUILDERS = (_rebuild_tensor_v2, _rebuild_tensor_v3, _rebuild_parameter,
              _rebuild_meta_tensor_no_storage)


def _rebuild_from_type_v2(func, new_type, args, state):
    """A tensor saved with its class: `func(*args)`, where func is one of the rebuilders."""
    if not any(func is r for r in REBUILDERS) or not isinstance(args, tuple):
        raise checked(TypeError(f"_rebuild_from_type_v2: cannot rebuild with {_short(func)}"))
    return func(*args)


def _get_layout(name):
    """`torch.serialization._get_layout`: how PyTorch pickles a layout ('torch.strided'); only
    the layouts ember has."""
    from .. import _layout
    layouts = {f"torch.{n}": getattr(_layout, n) for n in ("strided", "sparse_coo", "sparse_csr",
                                                           "sparse_csc", "sparse_bsr",
                                                           "sparse_bsc")}
    if name not in layouts:
        raise RuntimeError(f"ember cannot load tensors of layout {_short(name)}")
    return layouts[name]


def _rebuild_sparse_tensor(layout, data):
    """A sparse COO tensor from (indices, values, size, is_coalesced), or a compressed one
    (CSR ...) from (compressed indices, plain indices, values, size). Its indices are checked
    against its size (PyTorch's invariant checks), so a file cannot make ember index out of
    range."""
    from .._layout import sparse_coo
    from .._sparse_compressed import COMPRESSED_LAYOUTS
    from ..ops.sparse import sparse_coo_tensor
    if not isinstance(data, tuple) or len(data) < 4 or not all(
            isinstance(t, Tensor) for t in data[:2 if layout is sparse_coo else 3]):
        raise checked(TypeError("_rebuild_sparse_tensor: malformed sparse tensor record"))
    if layout in COMPRESSED_LAYOUTS:
        from ..ops.sparse_compressed import sparse_compressed_tensor
        compressed, plain, values, size = data[:4]
        return sparse_compressed_tensor(compressed, plain, values, _int_tuple(size, "size"),
                                        layout=layout, check_invariants=True)
    if layout is not sparse_coo:
        raise RuntimeError(f"_rebuild_sparse_tensor: unsupported layout {_short(layout)}")
    indices, values, size, coalesced = data[:4]
    return sparse_coo_tensor(indices, values, _int_tuple(size, "size"), check_invariants=True,
                             is_coalesced=bool(coalesced))
