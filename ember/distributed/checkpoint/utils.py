"""The collectives of a checkpoint step (`torch.distributed.checkpoint.utils`): every rank
runs its local part, the coordinator combines what they gave, and each rank gets its
answer; a failure on any rank becomes the same CheckpointException on every rank, so no
rank is left waiting in a later collective."""
import numpy as np

from .. import distributed_c10d as _c10d
from ._safe_pickle import dumps, loads, sendable
from .api import CheckpointException

__all__ = ["_DistWrapper"]


def _attempt(fn, *args, sent=False):
    """(True, fn(*args)) or (False, the exception it raised, made `sendable` where it is
    `sent` to the other ranks: a rank must not fail in the sending)."""
    try:
        return True, fn(*args)
    except Exception as exc:  # noqa: BLE001 (handed to every rank, raised there)
        return False, sendable(exc) if sent else exc


class _DistWrapper:
    def __init__(self, group, use_dist, coordinator_rank=0):
        self.group, self.use_dist = group, use_dist
        self.rank = _c10d.get_rank(group) if use_dist else 0
        self.world = _c10d.get_world_size(group) if use_dist else 1
        self.coordinator_rank = coordinator_rank
        self.is_coordinator = self.rank == coordinator_rank

    def _all_gather(self, obj):
        """Every rank's `obj` (a checkpoint record), sent as bytes through tensor
        collectives and read back as _safe_pickle reads: a peer's bytes run no code."""
        if not self.use_dist:
            return [obj]
        from ...ops.creation import from_numpy
        device = "cuda" if _c10d.get_backend(self.group) == "nccl" else "cpu"
        mine = np.frombuffer(dumps(obj), np.uint8)
        sizes = [from_numpy(np.zeros(1, np.int64)).to(device) for _ in range(self.world)]
        _c10d.all_gather(sizes, from_numpy(np.array([mine.size], np.int64)).to(device),
                         group=self.group)
        sizes = [int(s.item()) for s in sizes]
        padded = from_numpy(np.pad(mine, (0, max(sizes) - mine.size))).to(device)
        rows = [from_numpy(np.zeros(max(sizes), np.uint8)).to(device) for _ in sizes]
        _c10d.all_gather(rows, padded, group=self.group)
        return [loads(row.cpu().numpy()[:n].tobytes(), f"rank {r}'s checkpoint plan")
                for r, (row, n) in enumerate(zip(rows, sizes))]

    @staticmethod
    def _raise_failures(step, results):
        failures = {rank: value for rank, (ok, value) in enumerate(results) if not ok}
        if failures:
            raise CheckpointException(step, failures)

    def _coordinate(self, step, map_fun, reduce_fun):
        gathered = self._all_gather(_attempt(map_fun, sent=self.use_dist))
        self._raise_failures(step, gathered)
        answer = None
        if self.is_coordinator:
            answer = _attempt(reduce_fun, [v for _, v in gathered], sent=self.use_dist)
        answer = self._all_gather(answer)[self.coordinator_rank]
        self._raise_failures(step, [answer])
        return answer[1]

    def reduce_scatter(self, step, map_fun, reduce_fun):
        """map_fun() on every rank; reduce_fun(all of them) on the coordinator gives one
        value per rank; this rank's is returned."""
        return self._coordinate(step, map_fun, reduce_fun)[self.rank]

    def all_reduce(self, step, map_fun, reduce_fun):
        """map_fun() on every rank; reduce_fun(all of them) on the coordinator, its value
        returned on every rank."""
        return self._coordinate(step, map_fun, reduce_fun)

    def all_gather(self, step, map_fun):
        gathered = self._all_gather(_attempt(map_fun, sent=self.use_dist))
        self._raise_failures(step, gathered)
        return [v for _, v in gathered]
