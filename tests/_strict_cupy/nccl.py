"""The stand-in's `cupy.cuda.nccl`: CuPy 14's names (NAMES, read from the wheel's
cupy_backends/cuda/libs/nccl module) with their signatures, and a communicator whose ranks
are processes, each its own stand-in GPU.

The unique id (128 bytes, as NCCL's) names a rendezvous directory under the temp folder.
A collective is one round: every rank writes its send buffer and the call's arguments to a
file of its own for that round (written whole, then renamed, so a reader never sees half),
waits for every other rank's file, and computes its own result from them in rank order, so
all ranks get the same bits. A rank deletes its file of round k once every rank has posted
round k + 1 (they have all read round k by then); the last rank to leave (destroy or
abort) removes the directory. A send is a file for its receiver, which
the receiver deletes once read; sends never wait, receives do. Between `groupStart` and
`groupEnd` calls are queued and run at `groupEnd`, the sends first (NCCL runs a group's
calls together). Every wait is bounded (EMBER_FAKE_NCCL_TIMEOUT seconds, 60 by default) and
ends at once when the communicator is aborted from another thread.

It refuses what NCCL refuses: a host (non-device) pointer, a pointer or count that runs past
its allocation, an unknown datatype or op code, ranks that disagree on a collective's
arguments, calls on a destroyed or aborted communicator."""
import json
import os
import shutil
import struct
import tempfile
import threading
import time
import types

import numpy as np

from . import array as array_parts

# Every public name of cupy_backends.cuda.libs.nccl in cupy_cuda12x 14.2.0 (its module table:
# functions, classes and the ncclDataType_t / ncclRedOp_t constants).
NAMES = sorted([
    "NCCL_AVG", "NCCL_BFLOAT16", "NCCL_CHAR", "NCCL_DOUBLE", "NCCL_FLOAT", "NCCL_FLOAT16",
    "NCCL_FLOAT32", "NCCL_FLOAT64", "NCCL_HALF", "NCCL_INT", "NCCL_INT32", "NCCL_INT64",
    "NCCL_INT8", "NCCL_MAX", "NCCL_MIN", "NCCL_PROD", "NCCL_SUM", "NCCL_UINT32",
    "NCCL_UINT64", "NCCL_UINT8", "NcclCommunicator", "NcclConfig", "NcclError",
    "check_status", "get_build_version", "get_unique_id", "get_version", "groupEnd",
    "groupStart"])

_DTYPES = {0: "int8", 1: "uint8", 2: "int32", 3: "uint32", 4: "int64", 5: "uint64",
           6: "float16", 7: "float32", 8: "float64", 9: "bfloat16"}
_OPS = {0: "sum", 1: "prod", 2: "max", 3: "min", 4: "avg"}
_ERRORS = {1: ("NCCL_ERROR_UNHANDLED_CUDA_ERROR",
               "unhandled cuda error (run with NCCL_DEBUG=INFO for details)"),
           2: ("NCCL_ERROR_SYSTEM_ERROR",
               "unhandled system error (run with NCCL_DEBUG=INFO for details)"),
           3: ("NCCL_ERROR_INTERNAL_ERROR",
               "internal error - please report this issue to the NCCL developers"),
           4: ("NCCL_ERROR_INVALID_ARGUMENT",
               "invalid argument (run with NCCL_DEBUG=WARN for details)"),
           5: ("NCCL_ERROR_INVALID_USAGE",
               "invalid usage (run with NCCL_DEBUG=WARN for details)"),
           6: ("NCCL_ERROR_REMOTE_ERROR",
               "remote process exited or there was a network error")}
_INVALID_ARGUMENT, _INVALID_USAGE, _REMOTE_ERROR, _CUDA_ERROR = 4, 5, 6, 1
_MAGIC = b"ember-fake-nccl\0"
_HEADER = struct.Struct("!I")


def _np_dtype(code):
    if code == 9:
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    return np.dtype(_DTYPES[code])


class NcclError(RuntimeError):
    def __init__(self, status):
        self.status = status
        name, text = _ERRORS.get(status, ("NCCL_ERROR_UNKNOWN", "unknown result code"))
        super().__init__(f"{name}: {text}")

    def __reduce__(self):
        return type(self), (self.status,)


def check_status(status):
    if status != 0:
        raise NcclError(status)


def get_version():
    return 22703


def get_build_version():
    return 22703


def get_unique_id():
    """A new id: the magic, 16 random bytes naming the rendezvous, zeros to 128 bytes."""
    return (_MAGIC + os.urandom(16)).ljust(128, b"\0")


class NcclConfig:
    def __init__(self, split_share=0):
        self.split_share = split_share


# ---- groups ------------------------------------------------------------------------------------
_group = threading.local()


def _queue():
    if not hasattr(_group, "depth"):
        _group.depth, _group.calls = 0, []
    return _group


def groupStart():  # noqa: N802 (CuPy's name)
    _queue().depth += 1


def groupEnd():  # noqa: N802
    q = _queue()
    if q.depth == 0:
        raise NcclError(_INVALID_USAGE)
    q.depth -= 1
    if q.depth:
        return
    calls, q.calls = q.calls, []
    for call in [c for c in calls if c[0] == "send"] + [c for c in calls if c[0] != "send"]:
        call[1]()


def _later(kind, fn):
    """Run `fn` now, or at the outermost groupEnd when a group is open."""
    q = _queue()
    if q.depth:
        q.calls.append((kind, fn))
    else:
        fn()


# ---- device memory --------------------------------------------------------------------------
def _device_bytes(ptr, nbytes):
    """The `nbytes` of device memory at `ptr` (a writable uint8 NumPy view), which must lie
    inside one live stand-in device allocation."""
    if not isinstance(ptr, int) or isinstance(ptr, bool):
        raise TypeError(f"an integer is required (got type {type(ptr).__name__})")
    if nbytes == 0:
        return np.empty(0, np.uint8)
    found = array_parts.allocation_at(ptr)
    if found is not None:
        start, flat = found
        if ptr + nbytes > start + flat.size:
            raise NcclError(_CUDA_ERROR)  # an illegal address on a GPU
        return flat[ptr - start:ptr - start + nbytes]
    raise NcclError(_INVALID_ARGUMENT)  # NCCL's check: not device memory


def _timeout():
    return float(os.environ.get("EMBER_FAKE_NCCL_TIMEOUT", "60"))


def _write(path, header, payload):
    head = json.dumps(header).encode()
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as f:
        f.write(_HEADER.pack(len(head)) + head)
        f.write(payload)
    os.replace(tmp, path)


def _read(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = _HEADER.unpack_from(data)
    return json.loads(data[4:4 + n]), memoryview(data)[4 + n:]


class NcclCommunicator:
    """Rank `rank` of `ndev` in the clique of `commId`."""

    def __init__(self, ndev, commId, rank, config=None):  # noqa: N803 (CuPy's names)
        if not isinstance(commId, bytes):
            raise TypeError(f"Argument 'commId' has incorrect type (expected bytes, got "
                            f"{type(commId).__name__})")
        if len(commId) != 128 or not commId.startswith(_MAGIC) or \
                not 0 <= int(rank) < int(ndev):
            raise NcclError(_INVALID_ARGUMENT)
        self._size, self._rank = int(ndev), int(rank)
        self._dir = os.path.join(tempfile.gettempdir(),
                                 "ember-fake-nccl-" + commId[16:32].hex())
        self._round, self._sent, self._received, self._to_self = 0, {}, {}, []
        self._aborted = threading.Event()
        self._alive = True
        if self._size > 1:
            os.makedirs(self._dir, exist_ok=True)
            _write(self._path("member", self._rank), {}, b"")
            self._wait_for([self._path("member", r) for r in range(self._size)])

    @classmethod
    def initAll(cls, devices):  # noqa: N802
        """One communicator per listed device of this process (the stand-in has device 0)."""
        devices = list(range(devices)) if isinstance(devices, int) else list(devices)
        if devices != [0]:
            raise NcclError(_INVALID_ARGUMENT)
        return [cls(1, get_unique_id(), 0)]

    @property
    def comm(self):
        return id(self)

    def _path(self, *parts):
        return os.path.join(self._dir, "_".join(map(str, parts)))

    def _check(self):
        if self._aborted.is_set() or not self._alive:
            raise NcclError(_INVALID_ARGUMENT)  # NCCL given a freed communicator

    def _wait_for(self, paths):
        deadline, pause = time.monotonic() + _timeout(), 1e-5
        missing = [p for p in paths if not os.path.exists(p)]
        while missing:
            if self._aborted.is_set():
                raise NcclError(_REMOTE_ERROR)
            if time.monotonic() > deadline:
                raise NcclError(_REMOTE_ERROR)
            time.sleep(pause)
            pause = min(pause * 2, 2e-3)
            missing = [p for p in missing if not os.path.exists(p)]

    # ---- the identity ----------------------------------------------------------------------
    def device_id(self):
        return 0

    def rank_id(self):
        return self._rank

    def size(self):
        return self._size

    def check_async_error(self):
        self._check()

    def destroy(self):
        if self._alive:
            self._alive = False
            self._cleanup()

    def abort(self):
        self._aborted.set()
        if self._alive:
            self._alive = False
            self._cleanup()

    def _cleanup(self):
        """Say this rank left; the last to leave removes the rendezvous (a rank's last
        files may still be read by slower ranks until they leave too)."""
        if self._size == 1:
            return
        try:
            _write(self._path("left", self._rank), {}, b"")
            if all(os.path.exists(self._path("left", r)) for r in range(self._size)):
                shutil.rmtree(self._dir, ignore_errors=True)
        except OSError:
            pass

    # ---- one collective round ----------------------------------------------------------------
    def _round_of(self, args, send):
        """Every rank's (arguments, bytes) of the next round, in rank order."""
        self._check()
        if self._size == 1:
            return [(args, send.tobytes())]
        k = self._round
        self._round += 1
        _write(self._path("c", k, self._rank), args, send.tobytes())
        paths = [self._path("c", k, r) for r in range(self._size)]
        self._wait_for(paths)
        got = [_read(p) for p in paths]
        if k > 0:  # every rank posted round k, so all have read round k - 1
            try:
                os.remove(self._path("c", k - 1, self._rank))
            except OSError:
                pass
        for theirs, _ in got:
            if theirs != args:
                raise NcclError(_INVALID_USAGE)
        return got

    def _arrays(self, got, code, count):
        dtype = _np_dtype(code)
        return [np.frombuffer(payload, dtype, count) for _, payload in got]

    @staticmethod
    def _codes(datatype, op=0):
        if datatype not in _DTYPES or op not in _OPS:
            raise NcclError(_INVALID_ARGUMENT)
        return _np_dtype(datatype).itemsize

    def _reduce(self, arrays, op):
        out = np.array(arrays[0], copy=True)
        fn = {"sum": np.add, "avg": np.add, "prod": np.multiply, "max": np.maximum,
              "min": np.minimum}[_OPS[op]]
        for a in arrays[1:]:
            fn(out, a, out=out)
        if _OPS[op] == "avg":
            if out.dtype.kind in "iu":  # NCCL divides integers as C does: toward zero
                out = np.sign(out) * (np.abs(out) // len(arrays))
            else:
                out /= len(arrays)
        return out

    def allReduce(self, sendbuf, recvbuf, count, datatype, op, stream):  # noqa: N802
        def run():
            size = self._codes(datatype, op)
            send, recv = _device_bytes(sendbuf, count * size), _device_bytes(recvbuf, count * size)
            got = self._round_of(["allReduce", count, datatype, op], send)
            recv[:] = self._reduce(self._arrays(got, datatype, count), op).view(np.uint8)
        _later("coll", run)

    def reduce(self, sendbuf, recvbuf, count, datatype, op, root, stream):
        def run():
            size = self._codes(datatype, op)
            send = _device_bytes(sendbuf, count * size)
            recv = _device_bytes(recvbuf, count * size) if self._rank == root else None
            got = self._round_of(["reduce", count, datatype, op, root], send)
            if recv is not None:
                recv[:] = self._reduce(self._arrays(got, datatype, count), op).view(np.uint8)
        _later("coll", run)

    def broadcast(self, sendbuff, recvbuff, count, datatype, root, stream):
        def run():
            size = self._codes(datatype)
            send = _device_bytes(sendbuff, count * size) if self._rank == root else \
                np.empty(0, np.uint8)
            recv = _device_bytes(recvbuff, count * size)
            got = self._round_of(["broadcast", count, datatype, root], send)
            recv[:] = np.frombuffer(got[root][1], np.uint8)
        _later("coll", run)

    def bcast(self, buff, count, datatype, root, stream):
        self.broadcast(buff, buff, count, datatype, root, stream)

    def reduceScatter(self, sendbuf, recvbuf, recvcount, datatype, op, stream):  # noqa: N802
        def run():
            size = self._codes(datatype, op)
            send = _device_bytes(sendbuf, recvcount * size * self._size)
            recv = _device_bytes(recvbuf, recvcount * size)
            got = self._round_of(["reduceScatter", recvcount, datatype, op], send)
            arrays = self._arrays(got, datatype, recvcount * self._size)
            mine = slice(self._rank * recvcount, (self._rank + 1) * recvcount)
            recv[:] = self._reduce([a[mine] for a in arrays], op).view(np.uint8)
        _later("coll", run)

    def allGather(self, sendbuf, recvbuf, count, datatype, stream):  # noqa: N802
        def run():
            size = self._codes(datatype)
            send = _device_bytes(sendbuf, count * size)
            recv = _device_bytes(recvbuf, count * size * self._size)
            got = self._round_of(["allGather", count, datatype], send)
            recv[:] = np.concatenate([np.frombuffer(p, np.uint8) for _, p in got])
        _later("coll", run)

    # ---- point to point ----------------------------------------------------------------------
    def send(self, sendbuf, count, datatype, peer, stream):
        def run():
            self._check()
            size = self._codes(datatype)
            if not 0 <= peer < self._size:
                raise NcclError(_INVALID_ARGUMENT)
            data = _device_bytes(sendbuf, count * size).tobytes()
            if peer == self._rank:  # to itself: in memory (a group's recv takes it)
                self._to_self.append(([count, datatype], data))
                return
            n = self._sent.get(peer, 0)
            self._sent[peer] = n + 1
            _write(self._path("p", self._rank, peer, n), [count, datatype], data)
        _later("send", run)

    def recv(self, recvbuf, count, datatype, peer, stream):
        def run():
            self._check()
            size = self._codes(datatype)
            if not 0 <= peer < self._size:
                raise NcclError(_INVALID_ARGUMENT)
            recv = _device_bytes(recvbuf, count * size)
            if peer == self._rank:
                if not self._to_self:  # NCCL would wait forever: no send to itself queued
                    raise NcclError(_INVALID_USAGE)
                args, payload = self._to_self.pop(0)
            else:
                n = self._received.get(peer, 0)
                self._received[peer] = n + 1
                path = self._path("p", peer, self._rank, n)
                self._wait_for([path])
                args, payload = _read(path)
                os.remove(path)
            if args != [count, datatype]:
                raise NcclError(_INVALID_USAGE)
            recv[:] = np.frombuffer(payload, np.uint8)
        _later("recv", run)


def build():
    """A fresh `cupy.cuda.nccl` module (its group state is per thread, as NCCL's)."""
    module = types.ModuleType("cupy.cuda.nccl")
    constants = {"NCCL_INT8": 0, "NCCL_CHAR": 0, "NCCL_UINT8": 1, "NCCL_INT32": 2,
                 "NCCL_INT": 2, "NCCL_UINT32": 3, "NCCL_INT64": 4, "NCCL_UINT64": 5,
                 "NCCL_FLOAT16": 6, "NCCL_HALF": 6, "NCCL_FLOAT32": 7, "NCCL_FLOAT": 7,
                 "NCCL_FLOAT64": 8, "NCCL_DOUBLE": 8, "NCCL_BFLOAT16": 9, "NCCL_SUM": 0,
                 "NCCL_PROD": 1, "NCCL_MAX": 2, "NCCL_MIN": 3, "NCCL_AVG": 4}
    vars(module).update(constants)
    for name in ("NcclCommunicator", "NcclConfig", "NcclError", "check_status",
                 "get_build_version", "get_unique_id", "get_version", "groupEnd",
                 "groupStart"):
        setattr(module, name, globals()[name])
    module.available = True  # (cupy/cuda/nccl.py's own flag, beside the star import)
    assert sorted(n for n in vars(module) if not n.startswith("_") and n != "available") \
        == NAMES
    return module
