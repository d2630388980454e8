"""`save` and `load` in PyTorch's checkpoint format, both ways.

A checkpoint is a zip: `<name>/data.pkl` (a protocol-2 pickle in which each tensor is
`torch._utils._rebuild_tensor_v2(storage, offset, size, stride, ...)` and each storage a
persistent id `('storage', torch.FloatStorage, key, location, numel)`), the raw little-endian
storages as `<name>/data/<key>` (stored, 64-byte aligned), and small version records. Views
of one tensor share one storage. Loading unpickles with a restricted unpickler: with
`weights_only=True` (the default) only tensors, containers and numbers come back, so a
malicious file cannot run code. PyTorch's older non-zip format is read too.
"""
import _compat_pickle
import collections
import io
import mmap as _mmap
import os
import pickle
import struct
import sys
import types
import zipfile

import numpy as np

from .. import _memory_format as _mf
from .. import _dtype_casts as _casts, dtypes as _dt
from .._storage import TypedStorage, UntypedStorage
from .._tensor import Tensor, _make
from ..device import CPU, backend_of
from ._torch_paths import ember_name, torch_name
from .locations import restore_location
from .records import PyTorchFileReader, PyTorchFileWriter
from .settings import (SKIP, get_crc32_options, get_default_mmap_options,
                       little_endian_default)

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "DEFAULT_PROTOCOL"]

DEFAULT_PROTOCOL = 2
_ALIGN = 64
_DTYPE_OF_STORAGE = {d._storage_type: d for d in _dt.ALL_DTYPES}
# PyTorch writes the dtypes without a typed storage class (uint16, float8 ...) as bytes in an
# UntypedStorage, naming the dtype in `_rebuild_tensor_v3`.
_DTYPE_OF_STORAGE["UntypedStorage"] = _dt.uint8
_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001


# ---- what pickles refer to --------------------------------------------------------------
def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    """A tensor over a loaded storage: a strided view of it, so tensors that shared a storage
    when saved share memory again (and the legacy format can fill storages afterwards).
    `storage` is a loaded storage object (on its device), or the legacy loader's (host
    array, device) pair."""
    if isinstance(storage, tuple):
        array, device = storage
    else:
        array, device = storage._mem, storage.device
    n = 1
    for s in size:
        n *= s
    last = storage_offset + sum((s - 1) * st for s, st in zip(size, stride)) if n else 0
    if any(st < 0 for st in stride) or (n and last >= array.size):
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {storage_offset} require more than the storage's "
                           f"{array.size} elements")
    xp = np if isinstance(array, np.ndarray) else backend_of(device).xp
    view = _casts.as_strided(xp, array[storage_offset:], tuple(size),
                             tuple(s * array.itemsize for s in stride))
    view = _dt.with_own_dtype(view)  # the file's byte-ordered dtype is an equal copy of ours
    if device.type != "cpu" and isinstance(view, np.ndarray):
        view = backend_of(device).from_host(view, device.index)
    t = _make(Tensor, view, device)
    t._requires_grad = bool(requires_grad) and (t.dtype.is_floating_point or t.dtype.is_complex)
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    """A tensor over a loaded untyped (byte) storage, read as `dtype`."""
    if isinstance(storage, tuple):  # the legacy loader's (host array, device)
        array, device = storage
    else:
        array, device = storage._mem, storage.device
    return _rebuild_tensor_v2((array.view(dtype.np), device), storage_offset, size, stride,
                              requires_grad, backward_hooks, metadata)


def _rebuild_parameter(data, requires_grad, backward_hooks=None, *state):
    from ..nn.parameter import Parameter
    return Parameter(data, requires_grad)


def _rebuild_from_type_v2(func, new_type, args, state):
    return func(*args)


def _get_layout(name):
    """`torch.serialization._get_layout`: how PyTorch pickles a layout ('torch.strided'); only
    the layouts ember has."""
    from .. import _layout
    layouts = {f"torch.{n}": getattr(_layout, n) for n in ("strided", "sparse_coo", "sparse_csr",
                                                           "sparse_csc", "sparse_bsr",
                                                           "sparse_bsc")}
    if name not in layouts:
        raise RuntimeError(f"ember cannot load tensors of layout {name}")
    return layouts[name]


def _rebuild_sparse_tensor(layout, data):
    """A sparse COO tensor from (indices, values, size, is_coalesced), or a compressed one
    (CSR ...) from (compressed indices, plain indices, values, size). Its indices are checked
    against its size (PyTorch's invariant checks), so a file cannot make ember index out of
    range."""
    from .._layout import sparse_coo
    from .._sparse_compressed import COMPRESSED_LAYOUTS
    from ..ops.sparse import sparse_coo_tensor
    if layout in COMPRESSED_LAYOUTS:
        from ..ops.sparse_compressed import sparse_compressed_tensor
        compressed, plain, values, size = data[:4]
        return sparse_compressed_tensor(compressed, plain, values, size, layout=layout,
                                        check_invariants=True)
    if layout is not sparse_coo:
        raise RuntimeError(f"_rebuild_sparse_tensor: unsupported layout {layout}")
    indices, values, size, coalesced = data[:4]
    return sparse_coo_tensor(indices, values, size, check_invariants=True,
                             is_coalesced=coalesced)


# What a weights-only load allows by default: PyTorch 2.x's list (no frozenset, slice, range,
# defaultdict or deque: those need add_safe_globals there too)
_SAFE = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("collections", "Counter"): collections.Counter,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch.storage", "UntypedStorage"): UntypedStorage,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
    ("torch._utils", "_rebuild_sparse_tensor"): _rebuild_sparse_tensor,
    ("torch.serialization", "_get_layout"): _get_layout,
    ("torch", "Tensor"): Tensor,
    ("builtins", "set"): set, ("builtins", "complex"): complex,
    ("builtins", "bytearray"): bytearray, ("_codecs", "encode"): __import__("codecs").encode,
}
_user_safe = {}


def add_safe_globals(safe_globals):
    """Allow these classes/functions (or (obj, "module.name") pairs) in weights-only loads."""
    for g in safe_globals:
        obj, name = (g if isinstance(g, tuple) else (g, f"{g.__module__}.{g.__qualname__}"))
        module, _, attr = name.rpartition(".")
        _user_safe[(module, attr)] = obj


def get_safe_globals():
    return list(_user_safe.values())


def clear_safe_globals():
    _user_safe.clear()


class safe_globals:
    """Context manager: `add_safe_globals` for the duration of a `with` block."""

    def __init__(self, safe_globals):
        self.globals = safe_globals

    def __enter__(self):
        self._saved = dict(_user_safe)
        add_safe_globals(self.globals)

    def __exit__(self, *exc):
        _user_safe.clear()
        _user_safe.update(self._saved)


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
_STORAGE_GLOBALS = {d: _TorchGlobal("torch", d._storage_type) for d in _dt.ALL_DTYPES}
_DTYPE_GLOBALS = {d: _TorchGlobal("torch", d.name) for d in _dt.EVERY_DTYPE}
_TORCH_DEVICE = _TorchGlobal("torch", "device")
_TORCH_SIZE = _TorchGlobal("torch", "Size")
_REBUILD_SPARSE = _TorchGlobal("torch._utils", "_rebuild_sparse_tensor")
_GET_LAYOUT = _TorchGlobal("torch.serialization", "_get_layout")


class _Writer(pickle._Pickler):
    """The pure-Python pickler (it lets us write named globals); storages go out of band."""

    dispatch = dict(pickle._Pickler.dispatch)

    def __init__(self, file, protocol):
        super().__init__(file, protocol)
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
            return super().save_global(obj, name)
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

    def reducer_override(self, obj):
        from ..nn.parameter import Parameter
        from ..device import device
        from .._tensor import Size
        from .._layout import layout, sparse_coo
        from .._sparse_compressed import COMPRESSED_LAYOUTS
        if isinstance(obj, layout):
            return (_GET_LAYOUT, (str(obj),))
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
        base's storage; memory that is not one C-contiguous block is saved compacted."""
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
            return obj.pid
        if isinstance(obj, (TypedStorage, UntypedStorage)):
            return self._storage_pid(obj)
        return None

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


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """Write `obj` in PyTorch's format. A path is written through a temporary file and
    renamed, so an interrupted save never destroys the previous file."""
    buf = io.BytesIO()
    writer = _Writer(buf, pickle_protocol)
    writer.dump(obj)
    data_pkl, storages = buf.getvalue(), writer.storages
    byteorder = not _disable_byteorder_record
    if not isinstance(f, (str, os.PathLike)):
        _write_records(f, "archive", data_pkl, storages, byteorder)
        return
    path = os.fspath(f)
    name = os.path.splitext(os.path.basename(path))[0] or "archive"
    import tempfile  # here: it imports shutil and random, which a save alone needs
    fd, tmp = tempfile.mkstemp(prefix=".ember-save-", dir=os.path.dirname(os.path.abspath(path)))
    try:
        umask = os.umask(0)  # mkstemp makes the file 0600; give it what open() would
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as out:
            _write_records(out, name, data_pkl, storages, byteorder)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


# ---- reading ------------------------------------------------------------------------------
class _Reader(pickle.Unpickler):
    def __init__(self, file, load_storage, weights_only):
        super().__init__(file)
        self.load_storage, self.weights_only = load_storage, weights_only

    def find_class(self, module, name):
        # protocol-2 pickles name Python 2's modules (__builtin__.set, copy_reg ...)
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        allowed = _allowed_global(module, name)
        if allowed is not None:
            return allowed
        # a user's add_safe_globals names ember's classes; a file PyTorch wrote names torch's
        ours = ember_name(module, name)
        if (module, name) in _user_safe or ours in _user_safe:
            return _user_safe.get((module, name), _user_safe.get(ours))
        if ours[0] != module:  # ember's class of that torch path may live in another module
            obj = self._ember_global(*ours)
            if obj is not None and any(obj is g for g in _user_safe.values()):
                return obj
        if self.weights_only:
            shown = torch_name(module, name)  # PyTorch's name, also for an older ember file
            full = name if module == "builtins" else ".".join(shown)
            raise pickle.UnpicklingError(
                "Weights only load failed. This file can still be loaded, to do so you have two "
                "options, \033[1mdo those steps only if you trust the source of the checkpoint"
                "\033[0m. \n\t(1) In PyTorch 2.6, we changed the default value of the `weights_only` "
                "argument in `torch.load` from `False` to `True`. Re-running `torch.load` with "
                "`weights_only` set to `False` will likely succeed, but it can result in arbitrary "
                "code execution. Do it only if you got the file from a trusted source.\n\t(2) "
                f"Alternatively, to load with `weights_only=True` please check the recommended "
                f"steps in the following error message.\n\tWeightsUnpickler error: Unsupported "
                f"global: GLOBAL {full} was not an allowed global by default. Please use "
                f"`torch.serialization.add_safe_globals([{full}])` or the "
                f"`torch.serialization.safe_globals([{full}])` context manager to allowlist this "
                "global if you trust this class/function.\n\nCheck the documentation of torch.load "
                "to learn more about types accepted by default with weights_only "
                "https://pytorch.org/docs/stable/generated/torch.load.html.")
        obj = self._ember_global(*ours) if ours[0] != module else None
        return obj if obj is not None else super().find_class(*ours)

    def _ember_global(self, module, name):
        """ember's object for a torch path: at the same path, or, for a layer of
        torch.nn.modules.<file>, ember.nn's layer of that name (ember files them its own way)."""
        try:
            return super().find_class(module, name)
        except (ImportError, AttributeError):
            if module.startswith("ember.nn.modules."):
                from .. import nn
                return getattr(nn, name, None)
            return None

    def persistent_load(self, pid):
        return self.load_storage(pid)


def _allowed_global(module, name):
    """The object a weights-only load may take for `module.name` by default, or None."""
    key = (module, name)
    if key in _SAFE:
        return _SAFE[key]
    if module == "torch":
        if name in _DTYPE_OF_STORAGE:
            return _DTYPE_OF_STORAGE[name]
        if name in _dt._BY_NAME:
            return _dt._BY_NAME[name]
        if name == "device":
            from ..device import device
            return device
        if name == "Size":
            from .._tensor import Size
            return Size
        from ..ops.creation import LEGACY_TYPES  # torch.FloatTensor ...: tensor classes
        if name in LEGACY_TYPES:
            return LEGACY_TYPES[name]
    if key == ("torch.storage", "UntypedStorage"):  # the type of a saved UntypedStorage
        return UntypedStorage
    if key == ("torch.nn.parameter", "Parameter"):
        from ..nn.parameter import Parameter
        return Parameter
    return None


def _restored(restore, host, location):
    """The TypedStorage read into `host`, moved where `map_location` and the registered
    deserializers put it (a saved UntypedStorage comes back as bytes, as in PyTorch)."""
    storage = restore(UntypedStorage._wrap(host, CPU), location)
    if not isinstance(storage, (UntypedStorage, TypedStorage)):
        raise RuntimeError(f"map_location gave {type(storage).__name__}, not a storage")
    return TypedStorage._wrap(storage.untyped()._mem, _dt.FROM_NUMPY[host.dtype],
                              storage.device)


def _storage_dtype(storage_type):
    """The element dtype a persistent id's storage type names (UntypedStorage: bytes)."""
    if isinstance(storage_type, _dt.dtype):
        return storage_type
    name = getattr(storage_type, "__name__", str(storage_type))
    return _dt.uint8 if name == "UntypedStorage" else _DTYPE_OF_STORAGE[name]


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    if weights_only is None:
        weights_only = True
    opened = isinstance(f, (str, os.PathLike))
    if mmap and not opened:
        raise ValueError("f must be a file path in order to use the mmap argument")
    fh = open(f, "rb") if opened else f
    try:
        start = fh.tell()
        if zipfile.is_zipfile(fh):
            fh.seek(start)
            return _load_zip(fh, map_location, weights_only, os.fspath(f) if mmap else None)
        if mmap:
            raise RuntimeError("mmap can only be used with files saved with "
                               "`torch.save(_use_new_zipfile_serialization=True), please "
                               "torch.save your checkpoint with this option in order to use "
                               "mmap.")
        fh.seek(start)
        return _load_legacy(fh, map_location, weights_only)
    finally:
        if opened:
            fh.close()


def _load_zip(fh, map_location, weights_only, mmap_path):
    reader = PyTorchFileReader(fh)
    if not reader.has_record("data.pkl"):
        raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
    little = reader.get_record("byteorder").decode() == "little" \
        if reader.has_record("byteorder") else little_endian_default()
    restore = restore_location(map_location)
    cache = {}

    def load_storage(pid):
        kind, storage_type, key, location, numel = pid[:5]
        if kind != "storage":
            raise pickle.UnpicklingError(f"unknown persistent id {kind!r}")
        if key not in cache:
            dtype = _storage_dtype(storage_type)
            file_dtype = dtype.np.newbyteorder("<" if little else ">")
            name = f"data/{key}"
            if SKIP.skip_data:  # the bytes are not read: the tensors' values are undefined
                raw = np.empty(numel, dtype.np)
            elif mmap_path is not None:
                mode = "c" if get_default_mmap_options() == _mmap.MAP_PRIVATE else "r+"
                raw = np.memmap(mmap_path, file_dtype, mode, reader.get_record_offset(name),
                                (numel,)) if numel else np.empty(0, dtype.np)
            else:
                raw = np.frombuffer(reader._read(name), dtype=file_dtype, count=numel)
            if raw.dtype != dtype.np and raw.dtype.byteorder not in ("=", "|"):
                raw = raw.astype(dtype.np)  # the other byte order: one native copy
            cache[key] = _restored(restore, raw, location)
        return cache[key]

    return _Reader(io.BytesIO(reader.get_record("data.pkl")), load_storage, weights_only).load()


def _load_legacy(fh, map_location, weights_only):
    """PyTorch's pre-1.6 format: magic, protocol and system info pickles, the object pickle,
    the list of storage keys, then each storage's raw bytes (after its 8-byte length)."""
    def plain(data):
        return _Reader(data, None, True).load()

    if plain(fh) != _LEGACY_MAGIC:
        raise RuntimeError("Invalid magic number; corrupt file?")
    if plain(fh) != _LEGACY_PROTOCOL:
        raise RuntimeError("Invalid protocol version")
    restore = restore_location(map_location)
    sys_info = plain(fh)
    little = sys_info.get("little_endian", True) if isinstance(sys_info, dict) else True
    storages = {}

    def load_storage(pid):
        kind, storage_type, key, location, numel = pid[:5]
        view = pid[5] if len(pid) > 5 else None
        if key not in storages:
            # the legacy format fills storages after the pickle: keep the host array to fill
            host = np.empty(numel, _storage_dtype(storage_type).np)
            storages[key] = (host, _restored(restore, host, location).device)
        arr, dev = storages[key]
        if view is not None:
            _, offset, size = view
            arr = arr[offset:offset + size]
        return (arr, dev)

    result = _Reader(fh, load_storage, weights_only).load()
    keys = plain(fh)
    for key in keys:
        arr = storages[key][0]
        (n,) = struct.unpack("<q", fh.read(8))
        data = np.frombuffer(fh.read(n * arr.itemsize), dtype=arr.dtype.newbyteorder(
            "<" if little else ">"), count=n)
        arr[:] = data
    return result


