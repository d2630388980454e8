"""`load`: PyTorch's checkpoint formats read without PyTorch, every claim of the file checked
before it is used.

The zip format (`<name>/data.pkl` + one record per storage) and PyTorch's older format
(pickles, then each storage's raw bytes after its 8-byte length) are both read. A weights-only
load (the default) runs the pickle through ember's own opcode interpreter (unpickler.py), so
only allowed globals are reached and no length or memo index in the file sizes an allocation.
Each storage's byte count is held against what the pickle says it holds (numel * itemsize,
PyTorch's check), each tensor record against its storage (rebuild.py), the byte order record
against the two PyTorch knows.
"""
import io
import mmap as _mmap
import os
import pickle
import warnings
import zipfile

import numpy as np

from .. import dtypes as _dt
from .._storage import TypedStorage, UntypedStorage
from ..device import CPU
from ._torch_paths import ember_name
from .allowlist import (_DTYPE_OF_STORAGE, ember_global, find_allowed, make_call,
                        python3_name, user_types, weights_only_message)
from .locations import restore_location
from .records import PyTorchFileReader
from .settings import SKIP, get_default_mmap_options, little_endian_default
from .unpickler import Source, WeightsOnlyUnpickler, check_memo_indices

__all__ = ["load"]

_LEGACY_MAGIC = 0x1950A86A20F9469CFC6C
_LEGACY_PROTOCOL = 1001


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """Read a checkpoint. Weights-only unless `weights_only=False` is passed (or a
    `pickle_module`, which PyTorch takes as asking for a full load)."""
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only:
        if pickle_module is not None:
            raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                               "specified")
        if pickle_load_args:
            warnings.warn("pickle_load_args only works if `weights_only=False`.", stacklevel=2)
    elif pickle_module is None:
        pickle_module = pickle
    pickle_load_args.setdefault("encoding", "utf-8")
    opened = isinstance(f, (str, os.PathLike))
    if mmap and not opened:
        raise ValueError("f must be a file path in order to use the mmap argument")
    fh = open(f, "rb") if opened else f
    how = _How(weights_only, pickle_module, pickle_load_args, restore_location(map_location))
    try:
        start = fh.tell()
        if zipfile.is_zipfile(fh):
            fh.seek(start)
            return _load_zip(fh, how, os.fspath(f) if mmap else None)
        fh.seek(start)
        if fh.read(4) == b"PK\x03\x04":  # a zip archive without its end: cut short
            raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding "
                               "central directory. The file starts as a checkpoint but its end "
                               "is missing: it was most likely cut short (an interrupted save, "
                               "copy or download)")
        if mmap:
            raise RuntimeError("mmap can only be used with files saved with "
                               "`torch.save(_use_new_zipfile_serialization=True), please "
                               "torch.save your checkpoint with this option in order to use "
                               "mmap.")
        fh.seek(start)
        return _load_legacy(fh, how)
    except pickle.UnpicklingError as exc:  # a weights-only load's, in PyTorch's words
        if not weights_only:
            raise
        raise pickle.UnpicklingError(weights_only_message(str(exc))) from None
    finally:
        if opened:
            fh.close()


class _How:
    """How this load unpickles: weights-only through the interpreter, or with the caller's
    pickle module."""

    def __init__(self, weights_only, pickle_module, pickle_load_args, restore):
        self.weights_only, self.pickle_module = weights_only, pickle_module
        self.args, self.restore = pickle_load_args, restore

    def unpickle(self, data=None, file=None, end=None, persistent_load=None):
        """One pickle from `data` (bytes) or from `file` up to offset `end`."""
        if persistent_load is None:
            def persistent_load(pid):
                raise pickle.UnpicklingError("A load persistent id instruction was "
                                             "encountered, but no persistent_load function "
                                             "was specified.")
        if self.weights_only:
            src = Source(data=data) if data is not None else Source(file=file, end=end)
            return WeightsOnlyUnpickler(src, find_allowed, persistent_load,
                                        make_call(user_types()), user_types(),
                                        self.args.get("encoding", "utf-8")).load()
        stream = io.BytesIO(data) if data is not None else _Bounded(file, end)
        check_memo_indices(stream)
        reader = _full_unpickler(self.pickle_module)(stream, **self.args)
        reader.persistent_load = persistent_load
        return reader.load()


class _Bounded:
    """A file whose reads never ask for more than is left before `end` (the C unpickler
    and pickletools allocate a read's whole length before reading)."""

    def __init__(self, file, end):
        self._file, self._end = file, end

    def read(self, n=-1):
        left = max(self._end - self._file.tell(), 0)
        return self._file.read(left if n is None or n < 0 else min(n, left))

    def readinto(self, buf):
        data = self.read(len(buf))
        buf[:len(data)] = data
        return len(data)

    def readline(self, limit=-1):
        return self._file.readline(min(limit, 1 << 16) if limit and limit > 0 else 1 << 16)

    def tell(self):
        return self._file.tell()

    def seek(self, pos, whence=0):
        return self._file.seek(pos, whence)


def _unpickle(data, weights_only=True):
    """One pickle's object, unpickled as `load` would (no storages): for tests and tools."""
    how = _How(weights_only, None if weights_only else pickle, {"encoding": "utf-8"},
               restore_location(None))
    return how.unpickle(data=data)


def _full_unpickler(pickle_module):
    """The caller's pickle module's Unpickler, taking ember's objects for PyTorch's names
    (weights_only=False: any global, which can run code: for trusted files only)."""
    class FullUnpickler(pickle_module.Unpickler):
        def find_class(self, module, name):
            found = find_allowed(module, name, weights_only=False)
            if found is not None:
                return found
            module, name = python3_name(module, name)
            ours = ember_name(module, name)
            obj = ember_global(*ours) if ours[0] != module else None
            return obj if obj is not None else super().find_class(*ours)
    return FullUnpickler


# ---- persistent ids -------------------------------------------------------------------------
def _storage_pid(pid, legacy=False):
    """(dtype, key, location, numel, view) of a storage's persistent id, checked."""
    if not isinstance(pid, tuple) or len(pid) < 5:
        raise pickle.UnpicklingError(f"persistent_load id must be a tuple of 5 or more items "
                                     f"('storage', type, key, location, numel), got "
                                     f"{type(pid).__name__}")
    kind, storage_type, key, location, numel = pid[:5]
    if isinstance(kind, bytes):
        kind = kind.decode("ascii", "replace")
    if kind != "storage":
        raise pickle.UnpicklingError(f"Only persistent_load of storage is allowed, but got "
                                     f"{kind!r}")
    dtype = _storage_dtype(storage_type)
    if isinstance(key, bytes):
        key = key.decode("ascii", "replace")
    if isinstance(location, bytes):
        location = location.decode("ascii", "replace")
    if not isinstance(key, str) or not isinstance(location, str):
        raise pickle.UnpicklingError("a storage's persistent id needs a str key and location")
    if not isinstance(numel, int) or isinstance(numel, bool) or numel < 0:
        raise RuntimeError(f"storage {key}: invalid number of elements {numel!r}")
    view = pid[5] if legacy and len(pid) > 5 else None
    return dtype, key, location, numel, view


def _storage_dtype(storage_type):
    """The element dtype a persistent id's storage type names (UntypedStorage: bytes)."""
    if isinstance(storage_type, _dt.dtype):
        return storage_type
    if storage_type is UntypedStorage:
        return _dt.uint8
    name = getattr(storage_type, "__name__", None)
    if isinstance(storage_type, type) and name in _DTYPE_OF_STORAGE:
        return _DTYPE_OF_STORAGE[name]
    raise pickle.UnpicklingError(f"a storage's persistent id names {storage_type!r}, not a "
                                 "storage type")


def _restored(restore, host, location):
    """The TypedStorage read into `host`, moved where `map_location` and the registered
    deserializers put it (a saved UntypedStorage comes back as bytes, as in PyTorch)."""
    storage = restore(UntypedStorage._wrap(host, CPU), location)
    if not isinstance(storage, (UntypedStorage, TypedStorage)):
        raise RuntimeError(f"map_location gave {type(storage).__name__}, not a storage")
    return TypedStorage._wrap(storage.untyped()._mem, _dt.FROM_NUMPY[host.dtype],
                              storage.device)


# ---- the zip format -------------------------------------------------------------------------
def _byteorder(reader):
    if not reader.has_record("byteorder"):
        return little_endian_default()
    raw = reader.get_record("byteorder")
    text = raw.decode("utf-8", "replace")
    if text not in ("little", "big"):
        raise ValueError(f"Unknown endianness type: {text}")
    return text == "little"


def _load_zip(fh, how, mmap_path):
    reader = PyTorchFileReader(fh)
    if not reader.has_record("data.pkl"):
        raise RuntimeError("PytorchStreamReader failed locating file data.pkl: file not found")
    little = _byteorder(reader)
    cache = {}

    def load_storage(pid):
        dtype, key, location, numel, _ = _storage_pid(pid)
        if key not in cache:
            name = f"data/{key}"
            reader.check_record_size(name, numel, dtype)  # before anything is allocated
            file_dtype = dtype.np.newbyteorder("<" if little else ">")
            if SKIP.skip_data:  # the bytes are not read: the tensors' values are undefined
                raw = np.empty(numel, dtype.np)
            elif mmap_path is not None:
                mode = "c" if get_default_mmap_options() == _mmap.MAP_PRIVATE else "r+"
                if reader._info(name).compress_type != zipfile.ZIP_STORED:
                    raise RuntimeError(f"mmap: record {name} is compressed; only stored "
                                       "records can be mapped")
                raw = np.memmap(mmap_path, file_dtype, mode, reader.get_record_offset(name),
                                (numel,)) if numel else np.empty(0, dtype.np)
            else:
                raw = np.frombuffer(reader._read(name), dtype=file_dtype, count=numel)
            if raw.dtype != dtype.np and raw.dtype.byteorder not in ("=", "|"):
                raw = raw.astype(dtype.np)  # the other byte order: one native copy
            cache[key] = _restored(how.restore, raw, location)
        return cache[key]

    return how.unpickle(data=reader.get_record("data.pkl"), persistent_load=load_storage)


# ---- PyTorch's older format -----------------------------------------------------------------
def _load_legacy(fh, how):
    """PyTorch's pre-1.6 format: magic, protocol and system info pickles, the object pickle,
    the list of storage keys, then each storage's raw bytes (after its 8-byte length)."""
    start = fh.tell()
    fh.seek(0, os.SEEK_END)
    end = fh.tell()
    fh.seek(start)

    def plain():
        return how.unpickle(file=fh, end=end)

    if plain() != _LEGACY_MAGIC:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol = plain()
    if protocol != _LEGACY_PROTOCOL:
        raise RuntimeError(f"Invalid protocol version: {protocol}")
    sys_info = plain()
    little = sys_info.get("little_endian", True) if isinstance(sys_info, dict) else True
    if not isinstance(little, bool):
        raise RuntimeError(f"Invalid system info: little_endian is {little!r}")
    storages, claimed = {}, [0]

    def load_storage(pid):
        dtype, key, location, numel, view = _storage_pid(pid, legacy=True)
        if key not in storages:
            # the bytes come after the pickle: the file must have room for all it claims
            claimed[0] += numel * dtype.itemsize
            if claimed[0] > end - fh.tell():
                raise RuntimeError(f"storage {key} claims {numel} elements of {dtype}, more "
                                   f"than the {end - fh.tell()} bytes left in the file")
            host = np.zeros(numel, dtype.np)  # the legacy format fills storages afterwards
            storages[key] = (host, _restored(how.restore, host, location).device)
        arr, dev = storages[key]
        if view is not None:
            if not (isinstance(view, tuple) and len(view) == 3 and
                    all(isinstance(v, int) and not isinstance(v, bool) for v in view[1:])):
                raise pickle.UnpicklingError(f"storage {key}: malformed view {view!r}")
            _, offset, size = view
            if offset < 0 or size < 0 or offset + size > arr.size:
                raise RuntimeError(f"storage {key}: a view of {size} elements at offset "
                                   f"{offset} is outside its {arr.size} elements")
            arr = arr[offset:offset + size]
        return (arr, dev)

    result = how.unpickle(file=fh, end=end, persistent_load=load_storage)
    keys = plain()
    if not isinstance(keys, list) or not all(isinstance(k, str) for k in keys):
        raise RuntimeError("Invalid storage key list; corrupt file?")
    if set(keys) != set(storages):
        raise RuntimeError(f"the file's storage keys {sorted(set(keys))[:8]} are not the "
                           f"storages its pickle uses {sorted(storages)[:8]}")
    for key in keys:
        arr = storages[key][0]
        header = fh.read(8)
        if len(header) != 8:
            raise RuntimeError(f"storage {key}: the file ends before its data")
        n = int.from_bytes(header, "little", signed=True)
        if n != arr.size:
            raise RuntimeError(f"storage has wrong byte size: expected {arr.size} got {n}")
        raw = fh.read(arr.nbytes)
        if len(raw) != arr.nbytes:
            raise RuntimeError(f"storage {key}: the file ends inside its data")
        arr[:] = np.frombuffer(raw, dtype=arr.dtype.newbyteorder("<" if little else ">"),
                               count=n)
    return result
