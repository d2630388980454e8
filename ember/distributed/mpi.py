"""The "mpi" backend: MPI's own collectives (mpi4py's buffer methods: Allreduce, Bcast,
Allgather, Gather, Scatter, Reduce, Reduce_scatter_block, Alltoall, Send/Recv) on the
arrays' contiguous memory; nothing is pickled. Launch with `mpiexec -n N python train.py`:
ranks and world size come from MPI, as with PyTorch's MPI backend.

A dtype MPI has no reduction for (bfloat16, float16, the float8s, bool) is all-gathered as
bytes and reduced here in rank order, so every rank still computes the same bits. Every group
has its own communicators (collectives, and point-to-point on a duplicate so a user's tags
never meet a collective's). An exception that nothing catches calls MPI_Abort, so one failed
rank ends the job instead of leaving the others waiting in a collective."""
import sys
import threading
import time

import numpy as np

from . import _wire
from ._group import ProcessGroup
from .gloo import _array, _divide, _payload, reduce_arrays
from .store import DistBackendError

__all__ = ["ProcessGroupMPI", "world_group"]

_NATIVE_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))  # (not float16, ml_dtypes')


def _mpi():
    from mpi4py import MPI
    return MPI


def _op(MPI, op):
    return {"SUM": MPI.SUM, "AVG": MPI.SUM, "PRODUCT": MPI.PROD, "MIN": MPI.MIN,
            "MAX": MPI.MAX, "BAND": MPI.BAND, "BOR": MPI.BOR, "BXOR": MPI.BXOR}[op.name]


def _native(arr, op):
    """Whether MPI reduces this dtype with this op itself."""
    d = arr.dtype
    if d.kind == "c":
        return op.name in ("SUM", "AVG", "PRODUCT")
    if d.kind == "f":
        return d in _NATIVE_FLOATS
    return d.kind in "iu"


def _contiguous(arr, writeable=False):
    if arr.flags.c_contiguous and (arr.flags.writeable or not writeable):
        return arr
    return arr.copy(order="C")


def _bytes(arr):
    return arr.reshape(-1).view(np.uint8) if arr.size else np.empty(0, np.uint8)


def world_group(timeout):
    """The group of every rank of the MPI job (COMM_WORLD, duplicated)."""
    MPI = _mpi()
    if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
        raise RuntimeError("The MPI backend needs an MPI library initialised with "
                           "MPI_THREAD_MULTIPLE")
    _abort_on_uncaught_exceptions(MPI)
    comm = MPI.COMM_WORLD.Dup()
    return ProcessGroupMPI(comm, range(comm.Get_size()), 0, comm.Get_rank(), timeout)


def _abort_on_uncaught_exceptions(MPI):
    previous = sys.excepthook
    if getattr(previous, "_ember_mpi_abort", False):
        return

    def hook(kind, value, tb):
        previous(kind, value, tb)
        sys.stdout.flush()
        sys.stderr.flush()
        if MPI.Is_initialized() and not MPI.Is_finalized() and MPI.COMM_WORLD.Get_size() > 1:
            time.sleep(0.5)  # the launcher forwards our stderr: let the traceback reach it
            MPI.COMM_WORLD.Abort(1)
    hook._ember_mpi_abort = True
    sys.excepthook = hook


class ProcessGroupMPI(ProcessGroup):
    def __init__(self, comm, ranks, group_id, global_rank, timeout):
        super().__init__(ranks, group_id, global_rank, "mpi")
        self.comm, self.p2p, self.timeout = comm, comm.Dup(), timeout
        self._MPI = _mpi()
        self._recv_lock = threading.Lock()

    def subgroup(self, ranks, group_id):
        """The group of global `ranks`: a split of this group's communicator, which every
        rank of this group must call (in the order of its other collectives)."""
        me = self.ranks[self._rank]

        def split(key):
            member = me in ranks
            color = 0 if member else self._MPI.UNDEFINED
            return self.comm.Split(color, ranks.index(me) if member else 0), -1
        work = self.submit(split, wait=True)
        work.wait()
        comm = work._result
        return None if comm == self._MPI.COMM_NULL else \
            ProcessGroupMPI(comm, ranks, group_id, me, self.timeout)

    def shutdown(self):
        super().shutdown()
        self._worker.join(self.timeout)
        for comm in (self.p2p, self.comm):
            if not self._MPI.Is_finalized():
                comm.Free()

    def _wait(self, request, timeout=None):
        """Wait for a nonblocking MPI call, at most the group's timeout (MPI's blocking calls
        cannot be given one). It polls as MPI_Wait itself does: MPI makes progress only
        inside its calls, so a sleep between tests would stall the transfer."""
        timeout = self.timeout if timeout is None else timeout
        deadline = time.monotonic() + timeout
        polls = 0
        while not request.Test():
            polls += 1
            if polls % 1024 == 0 and time.monotonic() > deadline:
                raise RuntimeError(f"[mpi] Timed out waiting {round(timeout * 1000)}ms "
                                   "for a collective or point-to-point operation to complete")

    # ---- collectives ----------------------------------------------------------------------
    def exchange(self, key, arr, timeout=None):
        arr = _contiguous(arr)
        out = np.empty((self.size(),) + arr.shape, arr.dtype)
        self._wait(self.comm.Iallgather(_bytes(arr), _bytes(out)), timeout)
        return list(out)

    def all_reduce(self, key, arr, op):
        if not _native(arr, op):
            return reduce_arrays(self.exchange(key, arr), op)
        buf = _contiguous(arr, writeable=True)
        self._wait(self.comm.Iallreduce(self._MPI.IN_PLACE, buf, _op(self._MPI, op)))
        if op.name == "AVG":
            _divide(buf, self.size())
        return buf

    def reduce(self, key, arr, op, root):
        if not _native(arr, op):
            arrays = self.gather(key, arr, root)
            return None if arrays is None else reduce_arrays(arrays, op)
        arr = _contiguous(arr)
        out = np.empty_like(arr) if self._rank == root else None
        self._wait(self.comm.Ireduce(arr, out, _op(self._MPI, op), root))
        if out is not None and op.name == "AVG":
            _divide(out, self.size())
        return out

    def reduce_scatter(self, key, chunks, op):
        send = np.ascontiguousarray(np.stack(chunks))
        if not _native(send, op):
            mine = np.empty_like(send)
            self._wait(self.comm.Ialltoall(_bytes(send), _bytes(mine)))
            return reduce_arrays(list(mine), op)
        out = np.empty_like(send[0])
        self._wait(self.comm.Ireduce_scatter_block(send, out, _op(self._MPI, op)))
        if op.name == "AVG":
            _divide(out, self.size())
        return out

    def broadcast(self, key, arr, root):
        buf = _contiguous(arr, writeable=True) if self._rank == root else np.empty_like(arr)
        self._wait(self.comm.Ibcast(_bytes(buf), root))
        return buf

    def gather(self, key, arr, root):
        arr = _contiguous(arr)
        out = np.empty((self.size(),) + arr.shape, arr.dtype) if self._rank == root else None
        self._wait(self.comm.Igather(_bytes(arr), None if out is None else _bytes(out), root))
        return None if out is None else list(out)

    def scatter(self, key, arrays, root, like=None):
        send = np.ascontiguousarray(np.stack(arrays)) if self._rank == root else None
        out = np.empty_like(like if send is None else send[0])
        self._wait(self.comm.Iscatter(None if send is None else _bytes(send), _bytes(out),
                                      root))
        return out

    def exchange_objects(self, key, obj):
        import pickle
        data = np.frombuffer(pickle.dumps(obj), np.uint8)
        sizes = np.empty(self.size(), np.int64)
        self._wait(self.comm.Iallgather(np.array([len(data)], np.int64), sizes))
        out = np.empty(int(sizes.sum()), np.uint8)
        self._wait(self.comm.Iallgatherv(data, [out, sizes]))
        ends = np.cumsum(sizes)
        return [pickle.loads(out[e - n:e].tobytes()) for e, n in zip(ends, sizes)]

    # ---- point to point -------------------------------------------------------------------
    def submit_keyed(self, key, fn, inline):
        return super().submit_keyed(key, fn, False)  # a large Send waits for its Recv

    def _tag(self, key):
        tag = key[-1] if isinstance(key[-1], int) else 0
        return tag % (self._MPI.COMM_WORLD.Get_attr(self._MPI.TAG_UB) + 1)

    def send_array(self, dst, key, arr):
        meta, payload = _payload(arr)
        tag = self._tag(key)
        self._wait(self.p2p.Isend(np.frombuffer(_wire.encode(meta), np.uint8), dst, tag))
        self._wait(self.p2p.Isend(np.frombuffer(payload, np.uint8), dst, tag))

    def _probe(self, src, tag):
        """The status of the next message from `src` under `tag`, waited for as `_wait` does."""
        status, deadline = self._MPI.Status(), time.monotonic() + self.timeout
        while not self.p2p.Iprobe(src, tag, status):
            if time.monotonic() > deadline:
                raise RuntimeError(f"[mpi] Timed out waiting {round(self.timeout * 1000)}ms "
                                   "for recv operation to complete")
            time.sleep(1e-4)
        return status

    def recv_array(self, src, key):
        MPI, tag = self._MPI, self._tag(key)
        with self._recv_lock:  # a header and its payload, from one sender, together
            status = self._probe(MPI.ANY_SOURCE if src is None else src, tag)
            peer = status.Get_source()
            head = np.empty(status.Get_count(MPI.BYTE), np.uint8)
            self._wait(self.p2p.Irecv(head, peer, tag))
            payload = np.empty(self._probe(peer, tag).Get_count(MPI.BYTE), np.uint8)
            self._wait(self.p2p.Irecv(payload, peer, tag))
        try:
            meta = _wire.decode(head.tobytes())
        except _wire.WireError as e:
            raise DistBackendError(f"[mpi] rank {peer} sent a malformed header: {e}") from None
        return peer, _array(meta, payload.data)
