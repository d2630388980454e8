"""`from_dlpack`: a tensor over memory another library lends through DLPack (an object with
`__dlpack__`, or a bare capsule from `to_dlpack`), without copying unless asked; `to_dlpack`,
a tensor's memory lent as such a capsule."""
import numpy as np

from .. import dtypes as _dt
from .._tensor import Tensor, make_tensor
from ..device import CPU, backend_of, canonical
from .creation import resolve_device

__all__ = ["from_dlpack", "to_dlpack"]
METHODS = []


def to_dlpack(tensor):
    """A DLPack capsule over `tensor`'s memory (its gradient tracking is not carried)."""
    return tensor.detach().__dlpack__()


def from_dlpack(ext_tensor, *, device=None, copy=None):
    """A tensor over the memory of `ext_tensor` (anything with `__dlpack__`, or a DLPack
    capsule from `to_dlpack`, which can be consumed once); `copy=True` copies it, and
    `device=` moves it where asked."""
    if type(ext_tensor).__name__ == "PyCapsule":
        ext_tensor = _Capsule(ext_tensor)
    elif not hasattr(ext_tensor, "__dlpack_device__"):
        raise RuntimeError(_SPENT_CAPSULE)
    if isinstance(ext_tensor, Tensor):
        t = ext_tensor
    else:
        dev_type, dev_index = ext_tensor.__dlpack_device__()
        if dev_type == 1:  # kDLCPU
            arr = np.from_dlpack(ext_tensor)
            if isinstance(ext_tensor, _Capsule):
                arr = _writable_view(arr)
            t = make_tensor(_dt.with_own_dtype(arr), CPU)
        else:
            cp = backend_of(canonical("cuda")).xp
            t = make_tensor(cp.from_dlpack(ext_tensor), canonical(f"cuda:{dev_index}"))
    if device is not None:
        target = resolve_device(device)
        if target != t._device:
            if copy is False:
                raise BufferError(f"from_dlpack: moving a tensor on {t._device} to {target} "
                                  "needs a copy, and copy=False forbids it")
            return t.to(target)
    return t.clone() if copy else t


_SPENT_CAPSULE = ("from_dlpack received an invalid capsule. Note that DLTensor capsules can "
                  "be consumed only once, so you might have already constructed a tensor from "
                  "it once.")


def _writable_view(arr):
    """NumPy imports a bare (unversioned) capsule read-only, since that DLPack version cannot
    say whether the memory may be written; PyTorch's exporters lend it writable, so view the
    same memory writably, the view keeping the import (and so the capsule's owner) alive."""
    import ctypes
    low = sum((n - 1) * step for n, step in zip(arr.shape, arr.strides) if step < 0)
    high = sum((n - 1) * step for n, step in zip(arr.shape, arr.strides) if step > 0)
    size = (high - low + arr.itemsize) if arr.size else 0
    memory = (ctypes.c_char * size).from_address(arr.__array_interface__["data"][0] + low)
    memory.owner = arr
    return np.ndarray(arr.shape, arr.dtype, buffer=memory, offset=-low, strides=arr.strides)


class _Capsule:
    """A bare DLPack capsule dressed in the protocol NumPy and CuPy import from. The device
    is read from the DLTensor the capsule points to (data pointer, then device type and
    index as two int32)."""

    def __init__(self, capsule):
        import ctypes
        get = ctypes.pythonapi.PyCapsule_GetPointer
        get.restype, get.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
        valid = ctypes.pythonapi.PyCapsule_IsValid
        valid.restype, valid.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]
        if not valid(capsule, b"dltensor"):
            raise RuntimeError(_SPENT_CAPSULE)
        address = get(capsule, b"dltensor") + ctypes.sizeof(ctypes.c_void_p)
        device = (ctypes.c_int32 * 2).from_address(address)
        self._capsule, self._device = capsule, (int(device[0]), int(device[1]))

    def __dlpack__(self, stream=None, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return self._device
