"""`Timer`: timeit's machinery (the statement compiled into a timing loop), sized in blocks
long enough that the timer's own overhead does not count, run with the thread count asked
for. `torch` in the statement's globals is ember, so PyTorch snippets time as written."""
import enum
import sys
import textwrap
import time
import timeit

import numpy as np

from . import common

__all__ = ["Timer", "timer", "Language"]


def timer():
    """The clock Timer reads: perf_counter, after the accelerator has finished its work."""
    from .... import accelerator
    if accelerator.is_available():
        accelerator.synchronize()
    return time.perf_counter()


class Language(enum.Enum):
    PYTHON = 0
    CPP = 1


def _clean(code):
    code = textwrap.dedent(code)
    return (code[1:] if code and code[0] == "\n" else code).rstrip()


class Timer:
    """Times `stmt` after running `setup` once, in a namespace holding `globals` (and `torch`).
    `label`, `sub_label`, `description` and `env` say where the result goes in a Compare
    table; `num_threads` is the intra-op thread count while timing."""

    def __init__(self, stmt="pass", setup="pass", global_setup="", timer=timer, globals=None,
                 label=None, sub_label=None, description=None, env=None, num_threads=1,
                 language=Language.PYTHON):
        if not isinstance(stmt, str):
            raise ValueError("Currently only a `str` stmt is supported.")
        if language in (Language.CPP, "cpp", "c++"):
            raise NotImplementedError("ember has no C++ frontend: Timer times Python "
                                      "statements only (language=Language.PYTHON)")
        if language not in (Language.PYTHON, "py", "python"):
            raise ValueError(f"Invalid language `{language}`.")
        if global_setup:
            raise ValueError(f"global_setup is C++ only, got `{global_setup}`. Most likely "
                             "this code can simply be moved to `setup`.")
        self._globals = dict(globals or {})
        # the package itself (loaded before any of its submodules): a lookup, since an
        # import of the public face from floor 5 would point upwards
        self._globals.setdefault("torch", sys.modules["ember"])
        self._language = Language.PYTHON
        stmt, setup = _clean(stmt), _clean(setup)
        self._timer = timeit.Timer(stmt=stmt, setup=setup, timer=timer, globals=self._globals)
        self._task_spec = common.TaskSpec(stmt=stmt, setup=setup, global_setup=global_setup,
                                          label=label, sub_label=sub_label,
                                          description=description, env=env,
                                          num_threads=num_threads)

    def _timeit(self, number):
        # a block never reads as zero time: the statistics divide by it
        return max(self._timer.timeit(number), 1e-9)

    def timeit(self, number=1000000):
        """One block of `number` runs, after a warm-up of a hundredth of that."""
        with common.set_torch_threads(self._task_spec.num_threads):
            self._timeit(number=max(int(number // 100), 2))
            return common.Measurement(number_per_run=number,
                                      raw_times=[self._timeit(number=number)],
                                      task_spec=self._task_spec)

    def repeat(self, repeat=-1, number=-1):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def autorange(self, callback=None):
        raise NotImplementedError("See `Timer.blocked_autorange.`")

    def _measure_blocks(self, number, stop, min_run_time, max_run_time=None, callback=None):
        """Blocks of `number` runs until `min_run_time` has passed and `stop(times)` agrees
        (or `max_run_time` has passed)."""
        total, times = 0.0, []
        with common.set_torch_threads(self._task_spec.num_threads):
            while True:
                spent = self._timeit(number)
                times.append(spent)
                total += spent
                if callback:
                    callback(number, spent)
                can_stop = stop(times)
                if max_run_time and total > max_run_time:
                    break
                if total >= min_run_time and can_stop:
                    break
        return times

    def _estimate_block_size(self, min_run_time):
        """The smallest power of ten of runs whose time dwarfs the timer's own overhead
        (10,000 times) and is at least a thousandth of `min_run_time`."""
        with common.set_torch_threads(self._task_spec.num_threads):
            overhead = float(np.median([self._timeit(0) for _ in range(5)]))
            number = 1
            while True:
                taken = self._timeit(number)
                if overhead / taken <= 1e-4 and taken >= min_run_time / 1000:
                    break
                if taken > min_run_time or number * 10 > 2 ** 31 - 1:
                    break
                number *= 10
        return number

    def blocked_autorange(self, callback=None, min_run_time=0.2):
        """Blocks of a size found first, repeated for at least `min_run_time` seconds."""
        number = self._estimate_block_size(min_run_time)
        times = self._measure_blocks(number, lambda times: True, min_run_time,
                                     callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)

    def adaptive_autorange(self, threshold=0.1, *, min_run_time=0.01, max_run_time=10.0,
                           callback=None):
        """Blocks until their IQR is under `threshold` of the median (at least four blocks
        and `min_run_time`, at most `max_run_time` seconds)."""
        number = self._estimate_block_size(min_run_time=0.05)

        def confident(times):
            return len(times) > 3 and common.Measurement(
                number_per_run=number, raw_times=times,
                task_spec=self._task_spec).meets_confidence(threshold=threshold)
        times = self._measure_blocks(number, confident, min_run_time, max_run_time,
                                     callback=callback)
        return common.Measurement(number_per_run=number, raw_times=times,
                                  task_spec=self._task_spec)
