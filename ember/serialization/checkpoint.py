"""`save` in PyTorch's checkpoint format (`load` reads it: loading.py).

A checkpoint is a zip: `<name>/data.pkl` (a protocol-2 pickle in which each tensor is
`torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)` and each storage a
persistent id `('storage', torch.FloatStorage, key, location, numel)`), the raw little-endian
storages as `<name>/data/<key>` (stored, 64-byte aligned), and small version records. Views
of one tensor share one storage. `_use_new_zipfile_serialization=False` writes PyTorch's
older non-zip format.
"""
import collections
import io
import os
import pickle
import sys
import types

import numpy as np

from .. import _memory_format as _mf
from .. import _qscheme
from .. import dtypes as _dt
from .._storage import TypedStorage, UntypedStorage
from .._tensor import Tensor
from ._torch_paths import torch_name
from .allowlist import (add_safe_globals, clear_safe_globals, get_safe_globals,  # noqa: F401
                        safe_globals)
from .loading import load  # noqa: F401 (torch.serialization.load)
from .records import PyTorchFileWriter
from .saving import LEGACY_MAGIC, LEGACY_PROTOCOL, replace_atomically
from .settings import SKIP, get_crc32_options

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2
_ALIGN = 64


# ---- writing ------------------------------------------------------------------------------
class _TorchGlobal:
    """A PyTorch global (`torch._utils._rebuild_tensor_v2`, `torch FloatStorage`, `torch
    float32`) written into our pickles by name, so PyTorch resolves it to its own object."""

    def __init__(self, module, name):
        self.module, self.name = module, name

    def __call__(self, *args):  # pickle's reduce protocol wants a callable
        raise RuntimeError(f"{self.module}.{self.name} is only written, never called")


_REBUILD_TENSOR = _TorchGlobal("torch._utils", "_rebuild_tensor_v2")
_REBUILD_TENSOR_V3 = _TorchGlobal("torch._utils", "_rebuild_tensor_v3")
_UNTYPED_STORAGE = _TorchGlobal("torch.storage", "UntypedStorage")
_REBUILD_PARAMETER = _TorchGlobal("torch._utils", "_rebuild_parameter")
_REBUILD_META = _TorchGlobal("torch._utils", "_rebuild_meta_tensor_no_storage")
_STORAGE_GLOBALS = {d: _TorchGlobal("torch", d._storage_type) for d in _dt.ALL_DTYPES}
_DTYPE_GLOBALS = {d: _TorchGlobal("torch", d.name) for d in _dt.EVERY_DTYPE}
_TORCH_DEVICE = _TorchGlobal("torch", "device")
_TORCH_SIZE = _TorchGlobal("torch", "Size")
_REBUILD_SPARSE = _TorchGlobal("torch._utils", "_rebuild_sparse_tensor")
_GET_LAYOUT = _TorchGlobal("torch.serialization", "_get_layout")


class _Writer(pickle._Pickler):
    """The pure-Python pickler (it lets us write named globals); storages go out of band."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol, legacy=False):
        super().__init__(file, protocol)
        self.legacy = legacy  # the legacy format's persistent ids carry a view (None)
        self.storages = {}  # id(storage array or storage object) -> (key, array)
        self._kept = []

    def _save_torch_global(self, obj):
        self.write(pickle.GLOBAL + f"{obj.module}\n{obj.name}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[_TorchGlobal] = _save_torch_global

    def save_global(self, obj, name=None):
        """ember's classes and functions by PyTorch's names for them (`ember.nn.modules.linear.
        Linear` as `torch.nn.modules.linear.Linear`), so PyTorch loads whole pickled models;
        ember's loader maps the names back. Anything else is pickle's business."""
        qualname = name or getattr(obj, "__qualname__", None) or getattr(obj, "__name__", "")
        module = pickle.whichmodule(obj, qualname)
        if not (module == "ember" or module.startswith("ember.")):
            try:
                return super().save_global(obj, name)
            except pickle.PicklingError:
                pass
            # the error PyTorch's (C) pickler gives for it (AttributeError for a local function
            # or class on Python 3.11-3.13, where this pickler says PicklingError)
            pickle.dumps(obj, self.proto)
            return super().save_global(obj, name)  # (its own error, should that one pass)
        found = sys.modules.get(module)
        for part in qualname.split("."):
            found = getattr(found, part, None)
        if found is not obj:  # pickle's own check: the name leads back to this very object
            raise pickle.PicklingError(f"Can't pickle {obj!r}: it's not found as "
                                       f"{module}.{qualname}")
        module, qualname = torch_name(module, qualname, obj)
        if self.proto >= 4:
            self.save(module)
            self.save(qualname)
            self.write(pickle.STACK_GLOBAL)
        elif "." in qualname:
            raise pickle.PicklingError(f"Can't pickle {obj!r}: a nested name ({qualname}) "
                                       "needs pickle protocol 4 or higher")
        else:
            self.write(pickle.GLOBAL + f"{module}\n{qualname}\n".encode("utf-8"))
        self.memoize(obj)

    dispatch[types.FunctionType] = save_global

    def _save_dtype(self, obj):
        self.save(_DTYPE_GLOBALS[obj])  # (through the memo: a dtype may be written often)

    dispatch[_dt.dtype] = _save_dtype

    def _save_torch_singleton(self, obj):
        # a qscheme or memory format as PyTorch's module attribute (`torch.per_tensor_affine`,
        # `torch.channels_last`), which PyTorch's unpickler finds, as ember's does
        self.save(_TorchGlobal("torch", repr(obj)[len("torch."):]))

    dispatch[_qscheme.qscheme] = _save_torch_singleton
    dispatch[_mf.memory_format] = _save_torch_singleton

    def reducer_override(self, obj):
        from ..nn.parameter import Parameter, is_lazy
        from ..device import device
        from .._tensor import Size
        from .._layout import layout, sparse_coo
        from .._sparse_compressed import COMPRESSED_LAYOUTS
        if isinstance(obj, layout):
            return (_GET_LAYOUT, (str(obj),))
        if is_lazy(obj):  # as PyTorch writes it: the placeholder's class and requires_grad
            return NotImplemented
        if isinstance(obj, Tensor) and obj.layout is sparse_coo:
            # PyTorch's form: the layout, then indices, values, size and is_coalesced
            return (_REBUILD_SPARSE, (sparse_coo, (obj._indices(), obj._values(),
                                                   Size(obj.shape), obj.is_coalesced())))
        if isinstance(obj, Tensor) and obj.layout in COMPRESSED_LAYOUTS:
            # PyTorch's form: the layout, then both indices, the values and the size
            return (_REBUILD_SPARSE, (obj.layout, (obj._cind, obj._pind, obj._val.detach(),
                                                   Size(obj.shape))))
        if isinstance(obj, Parameter):
            return (_REBUILD_PARAMETER, (obj.detach(), obj.requires_grad,
                                         collections.OrderedDict()))
        if isinstance(obj, Tensor):
            return self._reduce_tensor(obj)
        if isinstance(obj, device):
            return (_TORCH_DEVICE, (str(obj),))
        if isinstance(obj, Size):
            return (_TORCH_SIZE, (tuple(obj),))
        return NotImplemented

    def _reduce_tensor(self, t):
        """A tensor as PyTorch writes it: storage, offset, size, stride. A view shares its
        base's storage; memory that is not one C-contiguous block is saved compacted. A meta
        tensor has no storage: its dtype, size and stride are all there is to write."""
        if t._device.type == "meta":
            return (_REBUILD_META, (t.dtype, tuple(t.shape), tuple(t.stride()),
                                    t.requires_grad))
        root = t._base if t._base is not None else t
        arr = root._host()
        if arr.flags.c_contiguous and (t._device.type != "cpu" or root is t or
                                       np.shares_memory(arr, t._array)):
            offset, stride = t.storage_offset(), t.stride()
        elif root is t and t.numel() and _mf.is_dense(t.shape, t.stride()) and min(t.stride()) >= 0:
            # a dense layout of its own (channels_last, transposed ...) is saved as it lies,
            # so PyTorch loads the same strides
            stride, offset = t.stride(), 0
            flat = np.empty(t.numel(), arr.dtype)
            np.ndarray(arr.shape, arr.dtype, buffer=flat,
                       strides=tuple(st * arr.itemsize for st in stride))[...] = arr
            arr = flat
        else:
            arr, offset, stride = np.ascontiguousarray(t._host()), 0, _contiguous_strides(t.shape)
        entry = self.storages.get(id(arr))
        if entry is None:
            entry = self.storages[id(arr)] = (str(len(self.storages)), arr)
        location = "cpu" if t._device.type == "cpu" else str(t._device)
        if t.dtype in _STORAGE_GLOBALS:
            pid = ("storage", _STORAGE_GLOBALS[t.dtype], entry[0], location, arr.size)
            return (_REBUILD_TENSOR, (_Persistent(pid), offset, tuple(t.shape), tuple(stride),
                                      t.requires_grad, collections.OrderedDict()))
        if t.dtype._kind in (_dt.SUB_INT, _dt.SUB_UINT):  # PyTorch cannot save these
            raise KeyError(f"dtype {t.dtype} is not recognized")
        pid = ("storage", _UNTYPED_STORAGE, entry[0], location, arr.nbytes)
        return (_REBUILD_TENSOR_V3, (_Persistent(pid), offset, tuple(t.shape), tuple(stride),
                                     t.requires_grad, collections.OrderedDict(), t.dtype))

    def persistent_id(self, obj):
        if isinstance(obj, _Persistent):
            pid = obj.pid
        elif isinstance(obj, (TypedStorage, UntypedStorage)):
            pid = self._storage_pid(obj)
        else:
            return None
        return pid + (None,) if self.legacy else pid

    def _storage_pid(self, storage):
        """A storage saved by itself (`save(t.storage())`), as PyTorch writes one: its bytes
        as a record, its legacy type (or torch.UntypedStorage) in the persistent id."""
        entry = self.storages.get(id(storage))
        if entry is None:
            host = np.ascontiguousarray(storage._host())
            entry = self.storages[id(storage)] = (str(len(self.storages)), host)
            self._kept.append(storage)  # its id stays its own while the pickle is written
        kind = _STORAGE_GLOBALS[storage.dtype] if isinstance(storage, TypedStorage) \
            else _UNTYPED_STORAGE
        location = "cpu" if storage.device.type == "cpu" else str(storage.device)
        return ("storage", kind, entry[0], location, storage.size())


class _Persistent:
    def __init__(self, pid):
        self.pid = pid


def _contiguous_strides(shape):
    strides, acc = [], 1
    for s in reversed(shape):
        strides.append(acc)
        acc *= max(s, 1)
    return tuple(reversed(strides))


def _write_records(out, archive, data_pkl, storages, byteorder_record):
    """The checkpoint's records in PyTorch's order; inside `skip_data` the storages' records
    get their size but not their bytes."""
    writer = PyTorchFileWriter(out, compute_crc32=get_crc32_options(), storage_alignment=_ALIGN,
                               _archive=archive)
    writer.write_record("data.pkl", data_pkl, len(data_pkl))
    writer.write_record(".format_version", b"1", 1)
    writer.write_record(".storage_alignment", str(_ALIGN).encode(), len(str(_ALIGN)))
    if byteorder_record:
        writer.write_record("byteorder", sys.byteorder.encode(), len(sys.byteorder))
    for key, arr in storages.values():
        if SKIP.skip_data:
            writer.write_record_metadata(f"data/{key}", arr.nbytes)
        else:
            data = np.ascontiguousarray(arr)
            writer.write_record(f"data/{key}", data.view(np.uint8).reshape(-1), data.nbytes)
    writer.write_end_of_file()


def _write_legacy(out, data_pkl, storages, protocol):
    """PyTorch's pre-1.6 format (`_use_new_zipfile_serialization=False`): magic number,
    protocol version and system info pickles, the object pickle, the sorted storage keys,
    then each storage as its element count (8 bytes, little-endian) and its raw bytes."""
    sys_info = {"protocol_version": LEGACY_PROTOCOL, "little_endian": sys.byteorder == "little",
                "type_sizes": {"short": 2, "int": 4, "long": 4}}
    for header in (LEGACY_MAGIC, LEGACY_PROTOCOL, sys_info):
        out.write(pickle.dumps(header, protocol=protocol))
    out.write(data_pkl)
    keys = sorted(key for key, _ in storages.values())
    out.write(pickle.dumps(keys, protocol=protocol))
    arrays = {key: arr for key, arr in storages.values()}
    for key in keys:
        arr = np.ascontiguousarray(arrays[key])
        out.write(int(arr.size).to_bytes(8, "little", signed=True))
        out.write(arr.view(np.uint8).reshape(-1).tobytes() if not SKIP.skip_data
                  else bytes(arr.nbytes))


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Write `obj` in PyTorch's format. A path is written through a temporary file and
    renamed (saving.py), so an interrupted save never destroys the previous file nor
    leaves a full-size temporary."""
    buf = io.BytesIO()
    writer = _Writer(buf, pickle_protocol, legacy=not _use_new_zipfile_serialization)
    writer.dump(obj)
    data_pkl, storages = buf.getvalue(), writer.storages
    byteorder = not _disable_byteorder_record
    path = os.fspath(f) if isinstance(f, (str, os.PathLike)) else None
    name = (os.path.splitext(os.path.basename(path))[0] or "archive") if path else "archive"

    def write(out):
        if _use_new_zipfile_serialization:
            _write_records(out, name, data_pkl, storages, byteorder)
        else:
            _write_legacy(out, data_pkl, storages, pickle_protocol)

    if path is None:
        write(f)
    else:
        _check_target(path)
        try:
            replace_atomically(path, write)
        except OSError as exc:  # named by the target, not by the temporary written first
            raise RuntimeError(f"cannot write {path}: {exc.strerror or exc}") from exc


def _check_target(path):
    """PyTorch's errors for a path that cannot take the file, before anything is written (the
    write goes to a temporary beside it, whose name the OS error would show instead)."""
    parent = os.path.dirname(path)
    if parent and not os.path.isdir(parent):
        raise RuntimeError(f"Parent directory {parent} does not exist.")
    if os.path.isdir(path):
        raise RuntimeError(f"open file failed with strerror: Is a directory ({path})")
