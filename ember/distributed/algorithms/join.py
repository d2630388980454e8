"""`Join`: training with uneven inputs. A rank that runs out of batches leaves the `with
Join([...])` block and from then on shadows the collectives the ranks still training make
each iteration (each joinable's `JoinHook.main_hook`), so they never wait for it; when every
rank has joined, the post-hooks run.

Each iteration a joinable calls `Join.notify_join_context(self)`, which all-reduces a one on
its process group; a joined rank all-reduces a zero in its place, so the sum is the number
of ranks still training."""
import warnings

from .. import distributed_c10d as dist

__all__ = ["Join", "Joinable", "JoinHook"]


class JoinHook:
    """What a joined rank does for a joinable: `main_hook` once per iteration the others
    still train, `post_hook(is_last_joiner)` once all ranks have joined."""

    def main_hook(self):
        pass

    def post_hook(self, is_last_joiner):
        pass


class _JoinConfig:
    def __init__(self, enable=True, throw_on_early_termination=False, is_first_joinable=False):
        self.enable, self.throw_on_early_termination = enable, throw_on_early_termination
        self.is_first_joinable = is_first_joinable


class Joinable:
    """A class that takes part in `Join`: `join_hook(**kwargs)`, `join_device` and
    `join_process_group`; its constructor must call `Joinable.__init__`."""

    def __init__(self):
        self._join_config = _JoinConfig(enable=False)

    def join_hook(self, **kwargs):
        raise NotImplementedError

    @property
    def join_device(self):
        raise NotImplementedError

    @property
    def join_process_group(self):
        raise NotImplementedError


class Join:
    def __init__(self, joinables, enable=True, throw_on_early_termination=False, **kwargs):
        if len(joinables) == 0:
            raise ValueError("The join context manager requires at least one joinable")
        self._joinables, self._enable = list(joinables), enable
        self._throw = throw_on_early_termination
        self._hooks = [j.join_hook(**kwargs) for j in self._joinables]
        self._set_configs(enable)
        group = self._joinables[0].join_process_group
        self._group, self._device = group, self._joinables[0].join_device
        if len({id(j.join_process_group) for j in self._joinables}) > 1:
            raise ValueError("Using join context manager with multiple process groups")

    def _set_configs(self, enable):
        for i, j in enumerate(self._joinables):
            j._join_config = _JoinConfig(enable, self._throw, is_first_joinable=i == 0)

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback):
        try:
            if not self._enable or kind is not None:
                return  # the block's own exception goes on as it is
            is_last_joiner, rounds = True, 0
            while self._nonjoined() > 0:
                if self._throw:
                    self._notify_terminate()
                if rounds == 1000:
                    warnings.warn(f"Detected uneven input skew of greater than 1000. This means "
                                  f"that rank {dist.get_rank(self._group)} has at least 1000 "
                                  "fewer inputs than other currently-active ranks. This level "
                                  "of skew could lead to performance degradation during "
                                  "training.", stacklevel=2)
                for hook in self._hooks:
                    hook.main_hook()
                is_last_joiner, rounds = False, rounds + 1
            for hook in self._hooks:
                hook.post_hook(is_last_joiner)
        finally:
            self._set_configs(False)

    def _nonjoined(self):
        from ... import ops
        count = ops.zeros(1, device=self._device)
        dist.all_reduce(count, group=self._group)
        return int(count.item())

    def _notify_terminate(self):
        from ... import ops
        dist.all_reduce(ops.ones(1, device=self._device), group=self._group)
        raise RuntimeError("Detected at least one rank that exhausted inputs. Throwing across "
                           "all ranks.")

    @staticmethod
    def notify_join_context(joinable):
        """For a joinable each iteration: all-reduce a one (this rank still trains); with
        `throw_on_early_termination`, raise once some rank has joined."""
        from ... import ops
        if not hasattr(joinable, "_join_config"):
            raise AssertionError(f"Check that the {type(joinable)} constructor calls the "
                                 "``Joinable`` constructor")
        config = joinable._join_config
        if not config.is_first_joinable or not config.enable:
            return None
        group, device = joinable.join_process_group, joinable.join_device
        work = dist.all_reduce(ops.ones(1, device=device), group=group, async_op=True)
        if config.throw_on_early_termination:
            flag = ops.zeros(1, device=device)
            dist.all_reduce(flag, group=group)
            if flag.item():
                raise RuntimeError("Detected at least one rank that exhausted inputs. "
                                   "Throwing across all ranks.")
        return work
