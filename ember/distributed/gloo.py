"""The "gloo" backend in pure Python: collectives on host (NumPy) arrays over a `Mesh`.

Every rank sends its contribution straight to the ranks that need it and reduces what it
receives in rank order, so all ranks compute the same bits. Operations run one at a time,
in call order, on a worker thread per process group; `async_op=True` returns the `Work`
before it finishes. A subgroup shares the world's connections and tells its messages apart
by a group id and a per-group sequence number (every rank issues collectives in the same
order, as PyTorch requires)."""
import math

import numpy as np

from .. import dtypes
from ._group import ProcessGroup, Work
from ._transport import FAILED
from .store import DistBackendError, DistNetworkError

__all__ = ["ProcessGroupGloo", "Work", "reduce_arrays"]  # (Work: the one of _group)


def _reducer(op):
    name = op.name
    return {"SUM": np.add, "AVG": np.add, "PRODUCT": np.multiply, "MIN": np.minimum,
            "MAX": np.maximum, "BAND": np.bitwise_and, "BOR": np.bitwise_or,
            "BXOR": np.bitwise_xor}[name]


def check_same(got, like, peer):
    """A RuntimeError unless the array rank `peer` sent has the dtype and shape of `like`,
    this rank's own: ranks that disagree on them called mismatched collectives."""
    if got.dtype != like.dtype or got.shape != like.shape:
        raise RuntimeError(
            f"[gloo] Rank {peer} sent a {_described(got)} tensor where this rank has a "
            f"{_described(like)} one. Is there a distributed collective mismatch in your code? "
            "Every rank must call the same collectives, in the same order, with tensors of "
            "the same size and dtype.")


def _described(arr):
    return f"{dtypes.FROM_NUMPY[arr.dtype]} {list(arr.shape)}"


def reduce_arrays(arrays, op):
    """Reduce same-shaped arrays (rank i's at index i) in rank order."""
    for peer, arr in enumerate(arrays):
        check_same(arr, arrays[0], peer)
    fn = _reducer(op)
    out = np.array(arrays[0], copy=True)
    for a in arrays[1:]:
        fn(out, a, out=out)
    if op.name == "AVG":
        _divide(out, len(arrays))
    return out


def _divide(out, n):
    if out.dtype.kind in "fc" or out.dtype.name == "bfloat16":
        out /= n
    else:
        out //= n


# Below this many bytes an all-reduce sends the whole array to every peer (one round trip);
# above it, the ring's 2(n-1) steps of 1/n of the data each are the cheaper schedule.
RING_MIN_BYTES = 64 * 1024
_SEGMENT_BYTES = 1 << 21  # a ring step's unit on the wire


def _segments(chunk):
    """`chunk` (1-d) cut into views of about _SEGMENT_BYTES, the same for equal sizes."""
    step = max(1, _SEGMENT_BYTES // max(chunk.itemsize, 1))
    return [chunk[i:i + step] for i in range(0, chunk.size, step)]


def _payload(arr):
    if not arr.flags.c_contiguous:  # (np.ascontiguousarray would make a 0-d array 1-d)
        arr = arr.copy(order="C")
    return (dtypes.FROM_NUMPY[arr.dtype].name, arr.shape), \
        memoryview(arr.reshape(-1).view(np.uint8))


def _array(meta, payload):
    """The array a peer's (dtype name, shape) header and payload describe, checked first: an
    ember dtype, a shape of sizes >= 0 and exactly the bytes they need."""
    try:
        name, shape = meta
        dtype = getattr(dtypes, name, None) if isinstance(name, str) else None
        ok = (isinstance(dtype, dtypes.dtype) and isinstance(shape, tuple)
              and all(type(n) is int and n >= 0 for n in shape)
              and len(payload) == dtype.itemsize * math.prod(shape))
    except (TypeError, ValueError):
        ok = False
    if not ok:
        raise DistBackendError(f"[gloo] a peer sent an array header {meta!r} that does not "
                               f"describe its {len(payload)}-byte payload")
    return np.frombuffer(payload, dtype=dtype.np).reshape(shape)


class ProcessGroupGloo(ProcessGroup):
    """The ranks `ranks` (global ranks, in group order) of a job talking over `mesh`."""

    def __init__(self, mesh, ranks, group_id, backend="gloo"):
        super().__init__(ranks, group_id, mesh.rank, backend)
        self.mesh = mesh
        self.recv_timeout = None  # seconds a receive waits (None: the job's timeout)
        self._scratch = np.empty(0, np.uint8)

    def subgroup(self, ranks, group_id):
        """The group of `ranks` (every rank calls this; non-members get None)."""
        if self.mesh.rank not in ranks:
            return None
        return ProcessGroupGloo(self.mesh, ranks, group_id, backend=self.backend)

    # ---- point to point on group ranks ---------------------------------------------------
    def send_array(self, dst, key, arr):
        meta, payload = _payload(arr)
        self.mesh.send(self.ranks[dst], key, meta, payload)

    def recv_array(self, src, key, timeout=None, like=None):
        """(group rank of the sender, its array); with `like`, the array must have like's
        dtype and shape (what this rank passed to the same collective)."""
        peer, meta, payload = self.mesh.recv(None if src is None else self.ranks[src], key,
                                             self.recv_timeout if timeout is None else timeout)
        arr = _array(meta, payload)
        if like is not None:
            check_same(arr, like, peer)
        return self.ranks.index(peer), arr

    def tell_failed(self, key, error):
        note = f"{type(error).__name__}: {error}"[:2000]
        for p in self._peers():
            try:
                self.mesh.send(self.ranks[p], (FAILED,) + key, note)
            except DistNetworkError:  # (that rank is gone: it waits for nothing)
                pass

    # ---- collectives on arrays -------------------------------------------------------
    def all_reduce(self, key, arr, op):
        """`arr` reduced over the group, the same bits on every rank. Large arrays go round a
        ring: a reduce-scatter (after n-1 steps each rank holds its chunk reduced), then an
        all-gather of the chunks; each step moves and reduces 1/n of the data, the
        bandwidth-optimal schedule. The result is `arr` itself when it is contiguous."""
        n = self.size()
        if n == 1 or arr.nbytes < RING_MIN_BYTES:
            return reduce_arrays(self.exchange(key, arr), op)
        if arr.flags.c_contiguous and arr.flags.writeable:  # in place, as PyTorch's is
            flat = arr.reshape(-1)
        else:
            flat = np.array(arr, copy=True, order="C").reshape(-1)
        chunks = np.array_split(flat, n)  # views into flat
        self._ring_reduce_scatter(key, chunks, op)
        r = self._rank
        for s in range(n - 1):
            self._ring_step(key + ("gather", s), chunks[(r - s) % n], chunks[(r - s - 1) % n],
                            np.copyto)
        return flat.reshape(arr.shape)

    def _ring_step(self, key, send, into, combine, landing=None):
        """Send `send` to the next rank while `into` gets the previous rank's data through
        `combine(into_part, received)`, in segments, so each received segment is combined
        while the next ones are on the wire. (The previous rank sends the chunk we receive
        into, so both sides cut it into the same segments.) Received bytes are read straight
        into `landing` (a scratch array shaped like `into`), or into `into` itself when
        `landing` is None, whenever they arrive after this step began."""
        n, r = self.size(), self._rank
        out, parts = _segments(send), _segments(into)
        lands = parts if landing is None else _segments(landing)
        prev = self.ranks[(r - 1) % n]
        for k, part in enumerate(lands):
            if part.size:
                self.mesh.post(prev, key + (k,), memoryview(part.view(np.uint8)))
        if out:
            self.send_array((r + 1) % n, key + (0,), out[0])
        for k in range(max(len(out), len(parts))):
            if k + 1 < len(out):
                self.send_array((r + 1) % n, key + (k + 1,), out[k + 1])
            if k < len(parts):
                got = self.recv_array((r - 1) % n, key + (k,), like=parts[k])[1]
                if landing is not None or not np.may_share_memory(got, parts[k]):
                    combine(parts[k], got.reshape(parts[k].shape))

    def _scratch_like(self, arr):
        """A reused buffer of `arr`'s dtype and size, where a ring step's incoming data lands
        before it is reduced into `arr`."""
        nbytes = arr.size * arr.itemsize
        if self._scratch.nbytes < nbytes:
            self._scratch = np.empty(nbytes, np.uint8)
        return self._scratch[:nbytes].view(arr.dtype)

    def reduce_scatter(self, key, chunks, op):
        """Chunk `rank` of every rank's `chunks` reduced, by the ring's first half."""
        chunks = [np.array(c, copy=True) for c in chunks]
        self._ring_reduce_scatter(key, chunks, op)
        return chunks[self._rank]

    def _ring_reduce_scatter(self, key, chunks, op):
        """Reduce `chunks` in place round the ring until this rank's own chunk holds the
        group's result (AVG divided); the others are left partial."""
        n, r, fn = self.size(), self._rank, _reducer(op)
        for s in range(n - 1):
            into = chunks[(r - s - 2) % n]
            self._ring_step(key + ("scatter", s), chunks[(r - s - 1) % n], into,
                            lambda mine, got: fn(mine, got, out=mine), self._scratch_like(into))
        if op.name == "AVG":
            _divide(chunks[r], n)

    def exchange(self, key, arr, timeout=None):
        """Every rank's `arr`, in rank order (all_gather); each receive waits at most
        `timeout` seconds (None: the group's timeout)."""
        for p in self._peers():
            self.send_array(p, key, arr)
        out = [None] * self.size()
        out[self._rank] = arr
        for p in self._peers():
            out[p] = self.recv_array(p, key, timeout, like=arr)[1]
        return out

    def gather(self, key, arr, root):
        if self._rank != root:
            self.send_array(root, key, arr)
            return None
        out = [None] * self.size()
        out[root] = arr
        for p in self._peers():
            out[p] = self.recv_array(p, key, like=arr)[1]
        return out

    def scatter(self, key, arrays, root, like=None):
        if self._rank == root:
            for p in self._peers():
                self.send_array(p, key, arrays[p])
            return arrays[root]
        return self.recv_array(root, key, like=like)[1]

    def broadcast(self, key, arr, root):
        if self._rank == root:
            for p in self._peers():
                self.send_array(p, key, arr)
            return arr
        return self.recv_array(root, key, like=arr)[1]

    def exchange_objects(self, key, obj):
        for p in self._peers():
            self.send_object(p, key, obj)
        return [obj if p == self._rank else self.recv_object(p, key)
                for p in range(self.size())]

    def reduce(self, key, arr, op, root):
        arrays = self.gather(key, arr, root)
        return None if arrays is None else reduce_arrays(arrays, op)
