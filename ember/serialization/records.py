"""`torch.PyTorchFileWriter` and `torch.PyTorchFileReader`: the zip archive of named records a
checkpoint is (PyTorch's `inline_container`), written and read without PyTorch.

Every record sits under one folder, the archive name (`model/data.pkl`, `model/data/0`), stored
uncompressed, its bytes starting at a multiple of the storage alignment (64), padded with a
local extra field PyTorch calls "FB", so a loader can map a storage straight from the file.
The reader reads a record's bytes from their offset, as PyTorch does, without checking CRC-32
(PyTorch writes none for a record whose data `skip_data` left out).
"""
import ctypes
import os
import struct
import sys
import zipfile

_LOCAL_HEADER = 30  # bytes of a zip local file header before its name
_FB = 0x4246  # PyTorch's extra-field id, "FB"
FORMAT_VERSION = 3


def _padding(name_len, offset, alignment):
    """The extra field that makes a record's data start aligned, from its header's offset."""
    start = offset + _LOCAL_HEADER + name_len + 4
    pad = (-start) % alignment
    return struct.pack("<HH", _FB, pad) + b"Z" * pad


class PyTorchFileWriter:
    """Writes records into a checkpoint archive: `PyTorchFileWriter(file_name_or_buffer,
    compute_crc32=True, storage_alignment=64)`, `write_record(name, data, size)`, then
    `write_end_of_file()`."""

    def __init__(self, file, compute_crc32=True, storage_alignment=64, *, _archive=None):
        # `_archive`: ember's save writes a path through a temporary file, named for the path
        if isinstance(file, (str, os.PathLike)):
            path = os.fspath(file)
            self._archive = os.path.splitext(os.path.basename(path))[0] or "archive"
            self._own = open(path, "wb")
            out = self._own
        elif hasattr(file, "write"):
            self._archive, self._own, out = "archive", None, file
        else:
            raise TypeError("PyTorchFileWriter(): expected a file name or a buffer with a "
                            f"write method, got {type(file).__name__}")
        self._archive = _archive or self._archive
        self._zip = zipfile.ZipFile(out, "w", zipfile.ZIP_STORED, allowZip64=True)
        # Python's zipfile always computes CRC-32; the flag is kept for get_crc32_options'
        # callers (a file with checksums is valid for every reader)
        self.compute_crc32 = bool(compute_crc32)
        self._alignment = int(storage_alignment)
        self._written = []
        self._version = FORMAT_VERSION
        self._finalized = False
        self._serialization_id = str(int.from_bytes(os.urandom(16), "little")).zfill(40)

    def archive_name(self):
        return self._archive

    def serialization_id(self):
        return self._serialization_id

    def set_min_version(self, version):
        self._version = max(self._version, int(version))

    def get_all_written_records(self):
        return set(self._written)

    def _put(self, name, payload):
        if self._finalized:
            raise RuntimeError("PyTorchFileWriter: the archive is already finalized "
                               "(write_end_of_file was called)")
        if name in self._written:
            raise RuntimeError(f"Tried to serialize file twice: {name}")
        full = f"{self._archive}/{name}"
        info = zipfile.ZipInfo(full, date_time=(1980, 1, 1, 0, 0, 0))
        info.compress_type = zipfile.ZIP_STORED
        large = len(payload) >= zipfile.ZIP64_LIMIT  # zipfile then adds a zip64 extra field
        info.extra = _padding(len(full.encode()) + (20 if large else 0), self._zip.fp.tell(),
                              self._alignment)
        with self._zip.open(info, "w", force_zip64=large) as out:
            out.write(payload)
        self._written.append(name)

    def write_record(self, name, data, size):
        """`data`: bytes (or any buffer), or the address of `size` bytes in host memory (a
        CPU tensor's `data_ptr()`)."""
        if isinstance(data, int):
            payload = ctypes.string_at(data, size) if size else b""
        else:
            payload = memoryview(data).cast("B")[:size]
        self._put(name, payload)

    def write_record_metadata(self, name, size):
        """A record of `size` bytes whose data is not written (zeros): `skip_data`'s storages."""
        self._put(name, bytes(size))

    def write_end_of_file(self):
        if self._finalized:
            return
        self._put("version", f"{self._version}\n".encode())
        if "byteorder" not in self._written:
            self._put("byteorder", sys.byteorder.encode())
        self._put(".data/serialization_id", self._serialization_id.encode())
        self._finalized = True
        self._zip.close()
        if self._own is not None:
            self._own.close()


class PyTorchFileReader:
    """Reads a checkpoint archive's records by name (without the archive folder):
    `get_record("data.pkl")`, `get_all_records()`, the offsets of their data in the file."""

    def __init__(self, file):
        if isinstance(file, (str, os.PathLike)):
            self._fh = open(os.fspath(file), "rb")
        elif hasattr(file, "read") and hasattr(file, "seek"):
            self._fh = file
        else:
            raise TypeError("PyTorchFileReader(): expected a file name or a readable, seekable "
                            f"buffer, got {type(file).__name__}")
        start = self._fh.tell()
        self._fh.seek(0, os.SEEK_END)
        self._size = self._fh.tell()
        self._fh.seek(start)
        try:
            self._zip = zipfile.ZipFile(self._fh)
            infos = self._zip.infolist()
        except zipfile.BadZipFile:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: failed finding "
                               "central directory") from None
        except (ValueError, OverflowError, struct.error, EOFError, UnicodeDecodeError,
                NotImplementedError, OSError) as exc:  # a directory that does not parse
            raise RuntimeError("PytorchStreamReader failed reading zip archive: malformed "
                               f"central directory ({type(exc).__name__}: {exc})") from None
        # every record lies in one folder, the first record's (PyTorch checks it so)
        first = infos[0].filename if infos else ""
        self._prefix = first[:first.index("/") + 1] if "/" in first else ""
        self._infos = {}
        for info in infos:
            if not self._prefix or not info.filename.startswith(self._prefix):
                raise RuntimeError("PytorchStreamReader failed reading zip archive: file in "
                                   "archive is not in a subdirectory "
                                   f"{self._prefix or first + '/'}: {info.filename}")
            if not info.filename.endswith("/"):
                self._infos[info.filename[len(self._prefix):]] = info

    def _info(self, name):
        info = self._infos.get(name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not "
                               "found")
        return info

    def has_record(self, name):
        return name in self._infos

    def get_all_records(self):
        return list(self._infos)

    def get_record_size(self, name):
        return self._info(name).file_size

    def get_record_header_offset(self, name):
        return self._info(name).header_offset

    def get_record_offset(self, name):
        """Where the record's data starts in the file (after its local header), checked: the
        local header must be one, name the record the directory names, and its data must lie
        inside the file, so a damaged directory never makes the reader read elsewhere."""
        info = self._info(name)
        if not 0 <= info.header_offset <= self._size - _LOCAL_HEADER:
            self._bad(name, f"its header offset {info.header_offset} is outside the file")
        self._fh.seek(info.header_offset)
        header = self._fh.read(_LOCAL_HEADER)
        if header[:4] != b"PK\x03\x04":
            self._bad(name, "no local file header where the directory points")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        local_name = self._fh.read(name_len)
        if local_name != info.orig_filename.encode("utf-8" if info.flag_bits & 0x800
                                                      else "cp437", "replace"):
            self._bad(name, "the local header names another file")
        extra = self._fh.read(extra_len)
        pos = 0
        while pos + 4 <= len(extra):  # the extra field is a chain of (id, size, data)
            pos += 4 + struct.unpack("<HH", extra[pos:pos + 4])[1]
        if pos != extra_len or len(extra) != extra_len:
            self._bad(name, "its local extra field is malformed")
        start = info.header_offset + _LOCAL_HEADER + name_len + extra_len
        if info.compress_size < 0 or start + info.compress_size > self._size:
            self._bad(name, f"its {info.compress_size} bytes at offset {start} run past the "
                      f"end of the {self._size}-byte file")
        return start

    def _bad(self, name, why):
        raise RuntimeError(f"PytorchStreamReader failed reading file {name}: {why}")

    def get_record_offset_no_read(self, zipfile_header_offset, filename, size,
                                  storage_alignment):
        """Where a record written by PyTorchFileWriter at that header offset starts its data,
        computed without reading the file."""
        full = f"{self._prefix}{filename}".encode()
        zip64 = 20 if size >= zipfile.ZIP64_LIMIT else 0  # the zip64 extra of a large record
        extra = _padding(len(full) + zip64, zipfile_header_offset, storage_alignment)
        return zipfile_header_offset + _LOCAL_HEADER + len(full) + zip64 + len(extra)

    def get_record(self, name):
        return bytes(self._read(name))

    def _read(self, name):
        """The record's bytes in a fresh, writable buffer (one copy from the file). Only what
        the file holds is allocated: a stored record's size is held against the file first,
        a deflated one is inflated piece by piece and stops at its declared size."""
        info = self._info(name)
        start = self.get_record_offset(name)
        if info.flag_bits & 0x41:  # (PyTorch's reader refuses them too)
            self._bad(name, "it is encrypted")
        self._fh.seek(start)
        if info.compress_type == zipfile.ZIP_STORED:
            if info.compress_size != info.file_size:
                self._bad(name, f"a stored record of {info.compress_size} bytes declares "
                          f"{info.file_size}")
            data = bytearray(info.file_size)
            view, got = memoryview(data), 0
            while got < len(data):
                n = self._fh.readinto(view[got:])
                if not n:
                    self._bad(name, "the file ends inside the record")
                got += n
            return data
        if info.compress_type != zipfile.ZIP_DEFLATED:
            self._bad(name, f"unsupported compression method {info.compress_type}")
        return self._inflate(name, info)

    def _inflate(self, name, info):
        import zlib
        inflater, out, left, pending = zlib.decompressobj(-15), bytearray(), \
            info.compress_size, b""
        try:
            while not inflater.eof:
                if not pending:
                    if left <= 0:
                        break
                    pending = self._fh.read(min(left, 1 << 20))
                    if not pending:
                        self._bad(name, "the file ends inside the record")
                    left -= len(pending)
                # never more than one byte past the declared size: a bomb stops at once
                out += inflater.decompress(pending, info.file_size + 1 - len(out))
                if len(out) > info.file_size:
                    self._bad(name, f"it inflates past its declared {info.file_size} bytes")
                pending = inflater.unconsumed_tail
        except zlib.error as exc:
            self._bad(name, f"its compressed data are invalid ({exc})")
        if len(out) != info.file_size or not inflater.eof:
            self._bad(name, f"it inflates to {len(out)} bytes, not the declared "
                      f"{info.file_size}")
        return out

    def serialization_id(self):
        if ".data/serialization_id" not in self._infos:
            return ""
        return self.get_record(".data/serialization_id").decode()

    def check_record_size(self, name, numel, dtype):
        """PyTorch's check, before anything is allocated: a record holds exactly the `numel`
        elements of `dtype` that the pickle says its storage has."""
        size = self.get_record_size(name)
        if not isinstance(numel, int) or isinstance(numel, bool) or numel < 0 \
                or numel * dtype.itemsize != size:
            raise RuntimeError(f"record size ({size} bytes) does not match expected size "
                               f"({numel * dtype.itemsize if isinstance(numel, int) else numel} "
                               f"bytes = {numel} elements * {dtype.itemsize} bytes/element) "
                               f"for dtype {dtype}")

    def get_storage_from_record(self, name, numel, dtype):
        """A tensor of size 0 whose storage holds the record's `numel` elements of `dtype`,
        as PyTorch returns it (`.untyped_storage()` reaches the data)."""
        import numpy as np
        from .. import dtypes as _dt
        from .._tensor import Tensor, _make
        from ..device import CPU
        d = _dt.to_dtype(dtype)
        self.check_record_size(name, numel, d)
        arr = np.frombuffer(self._read(name), dtype=d.np, count=numel)
        t = _make(Tensor, arr[:0], CPU)
        t.__dict__["_storage"] = arr
        return t


# ---- TorchScript archives' storage tables ----------------------------------------------------
def _storage_key(storage):
    return (storage.device.type, storage.device.index, storage.data_ptr(), storage.nbytes())


class SerializationStorageContext:
    """Numbers the storages written into an archive: the same memory gets the same number.
    (PyTorch creates it only inside torch.jit.save; ember lets it be made directly.)"""

    def __init__(self):
        self._ids = {}

    def has_storage(self, storage):
        return _storage_key(storage) in self._ids

    def get_or_add_storage(self, storage):
        return self._ids.setdefault(_storage_key(storage), len(self._ids))


class DeserializationStorageContext:
    """The storages read from an archive, by record name; `get_storage(name, dtype)` gives
    a size-0 tensor of that dtype whose storage is the named one."""

    def __init__(self):
        self._storages = {}

    def has_storage(self, name):
        return name in self._storages

    def add_storage(self, name, tensor):
        from .._tensor import Tensor
        if not isinstance(tensor, Tensor):
            raise TypeError("add_storage(): incompatible function arguments: expected (str, "
                            f"Tensor), got ({type(name).__name__}, {type(tensor).__name__})")
        if name in self._storages:
            raise RuntimeError(f"DeserializationStorageContext: a storage named {name!r} was "
                               "added already")
        from .._storage import _flat
        self._storages[name] = (_flat(tensor), tensor.device)

    def get_storage(self, name, dtype):
        if name not in self._storages:
            raise RuntimeError(f"DeserializationStorageContext: no storage named {name!r}")
        from .. import dtypes as _dt
        from .._tensor import Tensor, _make
        flat, device = self._storages[name]
        d = _dt.to_dtype(dtype)
        usable = flat.nbytes - flat.nbytes % d.itemsize
        mem = flat.view("u1")[:usable].view(d.np)
        t = _make(Tensor, mem[:0], device)
        t.__dict__["_storage"] = mem
        return t
