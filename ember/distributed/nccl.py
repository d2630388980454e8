"""The "nccl" backend: collectives on CUDA tensors' device memory through CuPy's NCCL
bindings (`cupy.cuda.nccl`), enqueued on ember's current CUDA stream (CuPy's current stream,
where ember's own CUDA ops run), so no copy through the host and no extra stream to order.

A group's communicator is made on its first collective (or at once with `device_id=`), as
PyTorch's: the group's rank 0 asks NCCL for a unique id and puts its raw bytes in the store;
the others read them there. A collective returns a `WorkNCCL` holding a CUDA event recorded
after the call: `wait()` makes the current stream wait for it (the host goes on),
`synchronize()` blocks the host. A watchdog thread per group watches the pending works: one
that has not finished within the group's timeout aborts the communicator (which ends its
kernels), and that work, every later call on the group and every wait raise PyTorch's
"Watchdog caught collective operation timeout" as a DistBackendError.

`device_group(pg, tensors)` is the dispatch of the collectives in distributed_c10d: the NCCL
group that runs an operation on these tensors, or None when the host backend does."""
import pickle
import threading
import time

import numpy as np

from ._group import ProcessGroup, Work
from .store import DistBackendError

__all__ = ["ProcessGroupNCCL", "WorkNCCL", "device_group", "is_available"]

# ember dtype -> (the cupy.cuda.nccl constant, elements per tensor element)
_DTYPES = {"int8": ("NCCL_INT8", 1), "uint8": ("NCCL_UINT8", 1), "bool": ("NCCL_UINT8", 1),
           "int32": ("NCCL_INT32", 1), "int64": ("NCCL_INT64", 1),
           "float16": ("NCCL_FLOAT16", 1), "float32": ("NCCL_FLOAT32", 1),
           "float64": ("NCCL_FLOAT64", 1), "bfloat16": ("NCCL_BFLOAT16", 1),
           "complex64": ("NCCL_FLOAT32", 2), "complex128": ("NCCL_FLOAT64", 2)}
# c10's names of the dtypes NCCL has no type for, as PyTorch's error names them
_C10_NAMES = {"int16": "Short", "uint16": "UInt16", "uint32": "UInt32", "uint64": "UInt64",
              "complex32": "ComplexHalf", "float8_e4m3fn": "Float8_e4m3fn",
              "float8_e5m2": "Float8_e5m2", "float8_e4m3fnuz": "Float8_e4m3fnuz",
              "float8_e5m2fnuz": "Float8_e5m2fnuz", "float8_e8m0fnu": "Float8_e8m0fnu"}
_OPS = {"SUM": "NCCL_SUM", "PRODUCT": "NCCL_PROD", "MIN": "NCCL_MIN", "MAX": "NCCL_MAX",
        "AVG": "NCCL_AVG"}


def _nccl():
    from cupy.cuda import nccl
    return nccl


def _cupy():
    from ..device import backend_of, device
    return backend_of(device("cuda")).xp


def is_available():
    """Whether CuPy (or the tests' stand-in) has NCCL: PyTorch's "built with NCCL"."""
    try:
        _cupy()
        return bool(getattr(_nccl(), "available", True))
    except (ImportError, AssertionError, AttributeError):
        return False


def device_group(pg, tensors):
    """The NCCL group that runs a collective of `pg` on `tensors`, or None when `pg`'s host
    backend does. PyTorch's dispatch: the tensors' device type picks the backend (cuda when
    any tensor is on cuda), and a group without one for that type refuses."""
    cuda = any(t.is_cuda for t in tensors)
    if isinstance(pg, ProcessGroupNCCL):
        if not cuda:
            raise RuntimeError("No backend type associated with device type cpu")
        return pg
    nccl = getattr(pg, "cuda_group", None)
    return nccl if cuda and nccl is not None else None


class WorkNCCL(Work):
    """One NCCL call: done when the event recorded after it on its stream is."""

    def __init__(self, group, op_type, numel_in, numel_out, outputs, source=-1):
        super().__init__()
        group._nccl_seq += 1  # (PyTorch's SeqNum: the group's NCCL calls, counted)
        self._seq, self._op_type, self._group = group._nccl_seq, op_type, group
        self._numel = (numel_in, numel_out)
        self._result, self._source = list(outputs), source
        self._event, self._started = None, time.monotonic()

    def _poll(self):
        if not self._done.is_set() and self._event is not None and self._event.done:
            self._settle(None)

    def _settle(self, error):
        with self._lock:
            if self._done.is_set():
                return
            self._exception = error
            self._done.set()
            futures, self._futures = self._futures, []
        for future in futures:
            self._complete(future)

    def get_future(self):
        self._poll()
        return super().get_future()

    def wait(self, timeout=None):
        """The current stream waits for the NCCL call (the host does not), as PyTorch's."""
        self._poll()
        if self._exception is not None:
            raise self._exception
        if self._event is not None and not self._done.is_set():
            _cupy().cuda.get_current_stream().wait_event(self._event)
        return True

    def synchronize(self):
        """Block the host until the call finished (or the watchdog failed it)."""
        pause = 1e-5
        while True:
            self._poll()
            if self._done.is_set():
                break
            time.sleep(pause)
            pause = min(pause * 2, 1e-3)
        if self._exception is not None:
            raise self._exception

    def is_completed(self):
        self._poll()
        return self._done.is_set()

    def is_success(self):
        self._poll()
        return super().is_success()

    def describe(self):
        return (f"WorkNCCL(SeqNum={self._seq}, OpType={self._op_type}, "
                f"NumelIn={self._numel[0]}, NumelOut={self._numel[1]}, "
                f"Timeout(ms)={round(self._group.timeout * 1000)})")


class ProcessGroupNCCL(ProcessGroup):
    """The ranks `ranks` (global ranks, in group order) on one CUDA device each; `store`
    carries the unique id of the group's communicator."""

    def __init__(self, store, ranks, group_id, global_rank, timeout, device_id=None):
        super().__init__(ranks, group_id, global_rank, "nccl")
        self.store, self.timeout = store, timeout
        self._comm, self._device, self._error, self._nccl_seq = None, None, None, 0
        self._watching, self._watch = [], threading.Condition()
        self._watchdog, self._closed = None, False
        if device_id is not None:  # eager: the communicator now, on that device
            index = device_id.index if hasattr(device_id, "index") else int(device_id)
            with _cupy().cuda.Device(index or 0):
                self._communicator(index or 0)

    def subgroup(self, ranks, group_id):
        me = self.ranks[self._rank]
        if me not in ranks:
            return None
        return ProcessGroupNCCL(self.store, ranks, group_id, me, self.timeout)

    def shutdown(self):
        super().shutdown()
        with self._watch:
            self._closed = True
            self._watch.notify_all()
        if self._comm is not None and self._error is None:
            self._comm.destroy()
        self._comm = None

    # ---- the communicator and the watchdog ---------------------------------------------------
    def _communicator(self, device):
        if self._comm is not None:
            if device != self._device:
                raise ValueError(f"this NCCL process group's communicator is on cuda:"
                                 f"{self._device}; a tensor on cuda:{device} cannot join it")
            return self._comm
        nccl, key = _nccl(), f"nccl/{self.group_id}/unique_id"
        if self._rank == 0:
            uid = nccl.get_unique_id()
            self.store.set(key, uid)
        else:
            uid = self.store.get(key)
        self._comm = nccl.NcclCommunicator(self.size(), bytes(uid), self._rank)
        self._device = device
        return self._comm

    def _watched(self, work):
        with self._watch:
            self._watching.append(work)
            if self._watchdog is None:
                self._watchdog = threading.Thread(target=self._watchdog_loop, daemon=True,
                                                  name=f"ember-nccl-watchdog-{self.group_id}")
                self._watchdog.start()
            self._watch.notify_all()

    def _watchdog_loop(self):
        while True:
            with self._watch:
                while not self._watching and not self._closed:
                    self._watch.wait()
                if self._closed:
                    return
                pending = list(self._watching)
            now = time.monotonic()
            for work in pending:
                work._poll()
                if now - work._started > self.timeout and not work._done.is_set():
                    self._time_out(work, now)
                    break
            with self._watch:
                self._watching = [w for w in self._watching if not w._done.is_set()]
                self._watch.wait(0.01)

    def _time_out(self, work, now):
        """PyTorch's watchdog: the work and the group fail, the communicator is aborted."""
        self._error = DistBackendError(
            f"[Rank {self._rank}] Watchdog caught collective operation timeout: "
            f"{work.describe()} ran for {round((now - work._started) * 1000)} milliseconds "
            "before timing out.")
        if self._comm is not None:
            self._comm.abort()
        with self._watch:
            pending, self._watching = self._watching, []
        for w in pending:
            w._settle(self._error)

    # ---- one NCCL call -------------------------------------------------------------------------
    def _launch(self, op_type, tensors, numel, outputs, body, async_op, source=-1):
        """Run `body(comm, stream_ptr)` on the tensors' device and current stream, watched;
        the Work when `async_op`, else None once the current stream waits for it."""
        if self._error is not None:
            raise self._error
        device = _device_of(tensors)
        cp = _cupy()
        with cp.cuda.Device(device):
            work = WorkNCCL(self, op_type, numel[0], numel[1], outputs, source)
            self._watched(work)  # before the call: creating the communicator waits for peers
            try:
                comm = self._communicator(device)
                stream = cp.cuda.get_current_stream()
                body(comm, stream.ptr)
            except _nccl().NcclError as e:
                failure = self._error or DistBackendError(
                    f"NCCL error in {op_type} on rank {self._rank}: {e}")
                work._settle(failure)
                raise failure from None
            except BaseException as e:
                work._settle(e)
                raise
            work._event = stream.record()
            work._poll()
        if async_op:
            return work
        work.wait()
        return None

    # ---- collectives -----------------------------------------------------------------------------
    def all_reduce(self, tensor, op, async_op):
        code, count = _buffer_of(tensor)
        nccl_op, average = _reduce_op(op, tensor)

        def body(comm, stream):
            ptr = _ptr(tensor)
            comm.allReduce(ptr, ptr, count, code, nccl_op, stream)
            if average:
                _divide(tensor, self.size())
        return self._launch("ALLREDUCE", [tensor], (tensor.numel(),) * 2, [tensor], body,
                            async_op)

    def broadcast(self, tensor, root, async_op):
        code, count = _buffer_of(tensor)
        return self._launch("BROADCAST", [tensor], (tensor.numel(),) * 2, [tensor],
                            lambda comm, s: comm.bcast(_ptr(tensor), count, code, root, s),
                            async_op)

    def reduce(self, tensor, root, op, async_op):
        code, count = _buffer_of(tensor)
        nccl_op, average = _reduce_op(op, tensor)

        def body(comm, stream):
            ptr = _ptr(tensor)
            comm.reduce(ptr, ptr, count, code, nccl_op, root, stream)
            if average and self._rank == root:
                _divide(tensor, self.size())
        return self._launch("REDUCE", [tensor], (tensor.numel(),) * 2, [tensor], body,
                            async_op)

    def all_gather_into_tensor(self, output, input, async_op):
        code, count = _buffer_of(input)
        _buffer_of(output)
        return self._launch(
            "_ALLGATHER_BASE", [output, input], (input.numel(), output.numel()), [output],
            lambda comm, s: comm.allGather(_ptr(input), _ptr(output), count, code, s), async_op)

    def all_gather(self, outputs, input, async_op):
        code, count = _buffer_of(input)
        n = self.size()
        flat = _scratch(input, n)

        def body(comm, stream):
            comm.allGather(_ptr(input), flat.data.ptr, count, code, stream)
            _unpack(flat, outputs)
        return self._launch("ALLGATHER", outputs + [input], (input.numel(), input.numel() * n),
                            outputs, body, async_op)

    def reduce_scatter_tensor(self, output, input, op, async_op):
        code, count = _buffer_of(output)
        _buffer_of(input)
        nccl_op, average = _reduce_op(op, input)

        def body(comm, stream):
            comm.reduceScatter(_ptr(input), _ptr(output), count, code, nccl_op, stream)
            if average:
                _divide(output, self.size())
        return self._launch("_REDUCE_SCATTER_BASE", [output, input],
                            (input.numel(), output.numel()), [output], body, async_op)

    def reduce_scatter(self, output, inputs, op, async_op):
        code, count = _buffer_of(output)
        nccl_op, average = _reduce_op(op, output)
        cp = _cupy()

        def body(comm, stream):
            flat = cp.concatenate([_bytes(t) for t in inputs])
            comm.reduceScatter(flat.data.ptr, _ptr(output), count, code, nccl_op, stream)
            if average:
                _divide(output, self.size())
        return self._launch("REDUCE_SCATTER", [output] + inputs,
                            (output.numel() * len(inputs), output.numel()), [output], body,
                            async_op)

    def all_to_all(self, outputs, inputs, async_op):
        for t in outputs + inputs:
            _buffer_of(t)
        nccl = _nccl()

        def body(comm, stream):
            nccl.groupStart()
            try:
                for peer in range(self.size()):
                    code, count = _buffer_of(inputs[peer])
                    comm.send(_ptr(inputs[peer]), count, code, peer, stream)
                    code, count = _buffer_of(outputs[peer])
                    comm.recv(_ptr(outputs[peer]), count, code, peer, stream)
            finally:
                nccl.groupEnd()
        numel_in = sum(t.numel() for t in inputs)
        return self._launch("ALLTOALL", outputs + inputs,
                            (numel_in, sum(t.numel() for t in outputs)), outputs, body, async_op)

    def gather(self, tensor, outputs, root, async_op):
        code, count = _buffer_of(tensor)
        nccl = _nccl()

        def body(comm, stream):
            nccl.groupStart()
            try:
                if self._rank != root:
                    comm.send(_ptr(tensor), count, code, root, stream)
                else:
                    for peer, out in enumerate(outputs):
                        if peer != root:
                            comm.recv(_ptr(out), count, code, peer, stream)
            finally:
                nccl.groupEnd()
            if self._rank == root:
                outputs[root]._array[...] = tensor._array
        return self._launch("GATHER", [tensor] + outputs,
                            (tensor.numel(), tensor.numel() * len(outputs)), outputs, body,
                            async_op)

    def scatter(self, tensor, inputs, root, async_op):
        code, count = _buffer_of(tensor)
        nccl = _nccl()

        def body(comm, stream):
            nccl.groupStart()
            try:
                if self._rank != root:
                    comm.recv(_ptr(tensor), count, code, root, stream)
                else:
                    for peer, t in enumerate(inputs):
                        if peer != root:
                            comm.send(_ptr(t), count, code, peer, stream)
            finally:
                nccl.groupEnd()
            if self._rank == root:
                tensor._array[...] = inputs[root]._array
        return self._launch("SCATTER", [tensor] + inputs,
                            (tensor.numel() * max(len(inputs), 1), tensor.numel()), [tensor],
                            body, async_op)

    def barrier(self, device_ids=None, async_op=False):
        """An all-reduce of one byte, waited for by the host (PyTorch's NCCL barrier)."""
        from .. import cuda
        cp = _cupy()
        index = device_ids[0] if device_ids else \
            (self._device if self._device is not None else cuda.current_device())
        with cp.cuda.Device(index):
            one = cp.zeros(1, cp.uint8)
        nccl = _nccl()
        work = self._launch("BARRIER", [_DeviceBuffer(one, index)], (1, 1), [], lambda comm, s:
                            comm.allReduce(one.data.ptr, one.data.ptr, 1, nccl.NCCL_UINT8,
                                           nccl.NCCL_SUM, s), True)
        if async_op:
            return work
        work.synchronize()
        return None

    # ---- point to point --------------------------------------------------------------------------
    def send(self, tensor, peer, async_op=True):
        code, count = _buffer_of(tensor)
        return self._launch("SEND", [tensor], (tensor.numel(),) * 2, [tensor],
                            lambda comm, s: comm.send(_ptr(tensor), count, code, peer, s),
                            async_op)

    def recv(self, tensor, peer, async_op=True):
        if peer is None:
            raise RuntimeError("ProcessGroupNCCL does not support recvAnysource")
        code, count = _buffer_of(tensor)
        return self._launch("RECV", [tensor], (tensor.numel(),) * 2, [tensor],
                            lambda comm, s: comm.recv(_ptr(tensor), count, code, peer, s),
                            async_op, source=self.ranks[peer])

    def batch_isend_irecv(self, ops):
        """(is_send, tensor, group peer) triples, as one NCCL group; a Work for each, in order,
        all done together."""
        tensors = [t for _, t, _ in ops]
        for is_send, t, peer in ops:
            _buffer_of(t)
        nccl = _nccl()

        def body(comm, stream):
            nccl.groupStart()
            try:
                for is_send, t, peer in ops:
                    code, count = _buffer_of(t)
                    (comm.send if is_send else comm.recv)(_ptr(t), count, code, peer, stream)
            finally:
                nccl.groupEnd()
        numel = sum(t.numel() for t in tensors)
        work = self._launch("COALESCED", tensors, (numel, numel), tensors, body, True)
        return [work] * len(ops)

    # ---- Python objects: pickled bytes through device memory -------------------------------------
    def _object_device(self):
        from .. import cuda
        return self._device if self._device is not None else cuda.current_device()

    def _on_device(self, data):
        cp, index = _cupy(), self._object_device()
        with cp.cuda.Device(index):
            return _DeviceBuffer(cp.asarray(np.ascontiguousarray(data)), index)

    def send_array(self, dst, key, arr):
        """A 1-d byte array to `dst` (the `*_object` collectives' pickles): its length, then
        its bytes."""
        data = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
        self.send(self._on_device(np.array([data.size], np.int64)), dst, False)
        if data.size:
            self.send(self._on_device(data), dst, False)

    def recv_array(self, src, key, timeout=None):
        length = self._on_device(np.zeros(1, np.int64))
        self.recv(length, src, True).synchronize()
        n = int(length.array.get()[0])
        data = self._on_device(np.zeros(n, np.uint8))
        if n:
            self.recv(data, src, True).synchronize()
        return src, data.array.get()

    def exchange_objects(self, key, obj):
        mine = np.frombuffer(pickle.dumps(obj), np.uint8)
        n = self.size()
        size = self._on_device(np.array([mine.size], np.int64))
        sizes = self._on_device(np.zeros(n, np.int64))
        self.all_gather_into_tensor(sizes, size, True).synchronize()
        sizes = sizes.array.get()
        longest = int(sizes.max())
        padded = self._on_device(np.pad(mine, (0, longest - mine.size)))
        everyone = self._on_device(np.zeros(longest * n, np.uint8))
        self.all_gather_into_tensor(everyone, padded, True).synchronize()
        rows = everyone.array.get().reshape(n, longest)
        return [pickle.loads(rows[r, :sizes[r]].tobytes()) for r in range(n)]


class _DeviceBuffer:
    """A CuPy array in the shape of a tensor, for the group's own messages."""

    is_cuda = True

    def __init__(self, array, index):
        from .. import dtypes
        self.array, self._array, self.index = array, array, index
        self.dtype = dtypes.FROM_NUMPY[array.dtype]

    def numel(self):
        return self.array.size

    def is_contiguous(self):
        return True

    def get_device(self):
        return self.index


# ---- tensors as NCCL buffers ------------------------------------------------------------
def _device_of(tensors):
    devices = set()
    for t in tensors:
        if not t.is_cuda:
            raise ValueError("Tensors must be CUDA and dense")
        devices.add(t.get_device())
    if len(devices) > 1:
        raise ValueError(f"Tensors must be on the same device (got cuda:"
                         f"{', cuda:'.join(map(str, sorted(devices)))})")
    return devices.pop()


def _buffer_of(tensor):
    """(NCCL datatype code, element count) of a contiguous CUDA tensor."""
    if not tensor.is_cuda or getattr(tensor, "is_sparse", False):
        raise ValueError("Tensors must be CUDA and dense")
    if not tensor.is_contiguous():
        raise ValueError("Tensors must be contiguous")
    name = tensor.dtype.name
    if name not in _DTYPES:
        raise TypeError(f"Input tensor data type is not supported for NCCL process group: "
                        f"{_C10_NAMES.get(name, name)}")
    constant, per_element = _DTYPES[name]
    return getattr(_nccl(), constant), tensor.numel() * per_element


def _ptr(tensor):
    return tensor._array.data.ptr


def _bytes(tensor):
    return tensor._array.reshape(-1).view(_cupy().uint8)


def _scratch(tensor, n):
    """Device bytes for `n` copies of `tensor`'s data."""
    cp = _cupy()
    with cp.cuda.Device(tensor.get_device()):
        return cp.empty(n * tensor._array.nbytes, cp.uint8)


def _unpack(flat, outputs):
    """Each output gets its slice of `flat` (device bytes), on the current stream."""
    offset = 0
    for t in outputs:
        n = t._array.nbytes
        t._array[...] = flat[offset:offset + n].view(t._array.dtype).reshape(t._array.shape)
        offset += n


def _divide(tensor, n):
    """AVG where NCCL has none: the sum divided, in place on the current stream."""
    arr = tensor._array
    if tensor.dtype.is_floating_point or tensor.dtype.is_complex:
        arr /= n
    else:  # as NCCL's integer average: C's division, toward zero
        cp = _cupy()
        arr[...] = cp.sign(arr) * (cp.abs(arr) // n)


def _reduce_op(op, tensor):
    """(the NCCL op code, whether the result is to be divided by the group size afterwards:
    AVG on a CuPy whose NCCL bindings have no NCCL_AVG)."""
    from .distributed_c10d import RedOpType
    if not isinstance(op, RedOpType):
        raise TypeError(f"incompatible function arguments: op must be a "
                        f"torch.distributed.ReduceOp, got {op!r}")
    name = op.name
    if tensor.dtype.is_complex and name not in ("SUM", "AVG"):  # (PyTorch's Python checks)
        raise ValueError(f"all_reduce does not support {op} on complex tensors")
    if name in ("BAND", "BOR", "BXOR"):
        raise ValueError(f"Cannot use ReduceOp.{name} with NCCL")
    if name == "PREMUL_SUM":
        raise ValueError("PreMulSum requires a scale factor (_make_nccl_premul_sum)")
    if tensor.dtype.name == "bool":
        if name == "SUM":
            name = "MAX"  # a logical or: a sum of bytes could overflow
        elif name == "AVG":
            raise TypeError("Cannot use ReduceOp.AVG with boolean inputs")
    nccl = _nccl()
    if name == "AVG" and not hasattr(nccl, "NCCL_AVG"):
        return nccl.NCCL_SUM, True
    return getattr(nccl, _OPS[name]), False
