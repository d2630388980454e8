"""The collectives of a checkpoint step (`torch.distributed.checkpoint.utils`): every rank
runs its local part, the coordinator combines what they gave, and each rank gets its
answer; a failure on any rank becomes the same CheckpointException on every rank, so no
rank is left waiting in a later collective."""
import pickle

from .. import distributed_c10d as _c10d
from .api import CheckpointException

__all__ = ["_DistWrapper"]


def _attempt(fn, *args, sent=False):
    """(True, fn(*args)) or (False, the exception it raised); one to be `sent` to the other
    ranks loses its traceback (which does not pickle), or, if it does not pickle itself,
    becomes a RuntimeError saying what it was (a rank must not fail in the sending)."""
    try:
        return True, fn(*args)
    except Exception as exc:  # noqa: BLE001 (handed to every rank, raised there)
        if not sent:
            return False, exc
        exc.__traceback__ = None
        try:
            pickle.dumps(exc)
        except Exception:  # noqa: BLE001
            exc = RuntimeError(f"{type(exc).__name__}: {exc}")
        return False, exc


class _DistWrapper:
    def __init__(self, group, use_dist, coordinator_rank=0):
        self.group, self.use_dist = group, use_dist
        self.rank = _c10d.get_rank(group) if use_dist else 0
        self.world = _c10d.get_world_size(group) if use_dist else 1
        self.coordinator_rank = coordinator_rank
        self.is_coordinator = self.rank == coordinator_rank

    def _all_gather(self, obj):
        if not self.use_dist:
            return [obj]
        out = [None] * self.world
        _c10d.all_gather_object(out, obj, group=self.group)
        return out

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
