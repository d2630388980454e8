"""The DataLoader's worker processes: batches in order, worker info and seeding, init functions,
persistent workers, prefetching, exceptions with the worker's traceback, dead workers, timeouts,
iterable datasets sharded per worker. The tests are small: the suite runs on 2 cores."""
import math
import multiprocessing
import os
import random
import time

import numpy as np
import pytest

import ember
from ember.utils.data import DataLoader, Dataset, TensorDataset, get_worker_info

from ._shared import IterRange, Range, _order, deadline


class PidDataset(Range):
    def __getitem__(self, i):
        return os.getpid()


class InfoDataset(Range):
    def __getitem__(self, i):
        info = get_worker_info()
        return {"i": i, "id": info.id, "num_workers": info.num_workers, "seed": info.seed,
                "same_dataset": type(info.dataset).__name__, "init": _INIT_MARK,
                "py": random.random(), "np": float(np.random.rand()),
                "ember": ember.rand(1).item()}


_INIT_MARK = None


def _init_fn(worker_id):
    global _INIT_MARK
    _INIT_MARK = 1000 + worker_id


def test_workers_give_the_same_batches_in_order():
    ds = TensorDataset(ember.arange(46.0).reshape(23, 2), ember.arange(23))
    with deadline(20):
        for kwargs in ({"batch_size": 3}, {"batch_size": 4, "drop_last": True},
                       {"batch_size": None}):
            single = list(DataLoader(ds, **kwargs))
            multi = list(DataLoader(ds, num_workers=2, **kwargs))
            assert len(multi) == len(single)
            for a, b in zip(multi, single):
                assert a[0].tolist() == b[0].tolist() and a[1].tolist() == b[1].tolist()
        # a seeded shuffle: the same generator draws (base seed, then the sampler's) either way
        single = _order(DataLoader(range(30), batch_size=4, shuffle=True,
                                   generator=ember.Generator().manual_seed(9)))
        multi = _order(DataLoader(range(30), batch_size=4, shuffle=True, num_workers=2,
                                  generator=ember.Generator().manual_seed(9)))
        assert multi == single and sorted(multi) == list(range(30))


def test_worker_info_seeding_and_init_fn():
    base = int(ember.empty((), dtype=ember.int64).random_(
        generator=ember.Generator().manual_seed(42)).item())
    loader = DataLoader(InfoDataset(6), batch_size=None, num_workers=2, worker_init_fn=_init_fn,
                        generator=ember.Generator().manual_seed(42))
    with deadline(20):
        rows = list(loader)
    assert [r["i"] for r in rows] == list(range(6))
    assert [r["id"] for r in rows] == [0, 1, 0, 1, 0, 1]  # round robin
    for r in rows:
        assert r["num_workers"] == 2 and r["same_dataset"] == "InfoDataset"
        assert r["seed"] == base + r["id"]
        assert r["init"] == 1000 + r["id"]
    # each worker's first draws come from generators seeded as PyTorch seeds them
    from ember.utils.data._utils.worker import _generate_state
    for wid in (0, 1):
        first = rows[wid]
        seed = base + wid
        assert first["py"] == random.Random(seed).random()
        assert first["np"] == np.random.RandomState(_generate_state(base, wid)).rand()
        with ember.random.fork_rng():
            ember.manual_seed(seed)
            assert first["ember"] == ember.rand(1).item()
    assert rows[0]["ember"] != rows[1]["ember"]
    assert get_worker_info() is None and _INIT_MARK is None  # nothing leaks into the main process


class _ThreadsDataset(Dataset):
    def __len__(self):
        return 2

    def __getitem__(self, i):
        return ember.get_num_threads()


def test_workers_run_one_intra_op_thread_each():
    # PyTorch's workers call set_num_threads(1): two processes of a machine's threads each
    # would fight over its cores
    with deadline(20):
        assert list(DataLoader(_ThreadsDataset(), batch_size=None, num_workers=2)) == [1, 1]


def test_worker_info_is_frozen():
    import dataclasses

    class D(Range):
        def __getitem__(self, i):
            info = get_worker_info()
            try:
                info.id = 5
            except dataclasses.FrozenInstanceError:
                return "frozen"
            return "mutable"
    with deadline(20):
        assert list(DataLoader(D(1), batch_size=None, num_workers=1)) == ["frozen"]


def test_persistent_workers_reuse_processes():
    with deadline(25):
        loader = DataLoader(PidDataset(6), batch_size=2, num_workers=2, persistent_workers=True)
        e1 = {p for b in loader for p in b.tolist()}
        e2 = {p for b in loader for p in b.tolist()}
        assert len(e1) == 2 and e1 == e2 and os.getpid() not in e1
        assert {w.pid for w in loader._iterator._workers} == e1
        # an epoch abandoned half way does not leak its batches into the next one
        it = iter(loader)
        next(it)
        assert len(list(loader)) == 3
        ordered = DataLoader(Range(7), batch_size=2, num_workers=2, persistent_workers=True)
        first = [b.tolist() for b in ordered]
        it = iter(ordered)
        next(it)
        assert [b.tolist() for b in ordered] == first == [[0, 1], [2, 3], [4, 5], [6]]
        # without persistence each epoch starts new processes
        plain = DataLoader(PidDataset(4), batch_size=2, num_workers=2)
        p1 = {p for b in plain for p in b.tolist()}
        p2 = {p for b in plain for p in b.tolist()}
        assert p1.isdisjoint(p2)


def test_persistent_workers_with_iterable_dataset():
    with deadline(20):
        loader = DataLoader(IterRange(0, 7), batch_size=2, num_workers=2, persistent_workers=True)
        first = [b.tolist() for b in loader]
        assert [b.tolist() for b in loader] == first
        assert sorted(i for b in first for i in b) == list(range(7))


def test_prefetch_factor_bounds_outstanding_work():
    class Counting(Range):
        def __init__(self, n, counter):
            super().__init__(n)
            self.counter = counter

        def __getitem__(self, i):
            with self.counter.get_lock():
                self.counter.value += 1
            return i

    def settled(counter, expected):
        end = time.monotonic() + 5
        while counter.value < expected and time.monotonic() < end:
            time.sleep(0.02)
        time.sleep(0.2)
        return counter.value

    with deadline(20):
        for prefetch in (1, 3):
            counter = multiprocessing.Value("i", 0)
            it = iter(DataLoader(Counting(20, counter), batch_size=None, num_workers=1,
                                 prefetch_factor=prefetch))
            assert settled(counter, prefetch) == prefetch  # the initial tasks only
            assert next(it) == 0
            assert settled(counter, prefetch + 1) == prefetch + 1  # one more per batch taken
            assert list(it) == list(range(1, 20))
    loader = DataLoader(range(3), num_workers=1)
    assert loader.prefetch_factor == 2


class Failing(Range):
    def __getitem__(self, i):
        if i == 3:
            raise ValueError(f"sample {i} is broken")
        return i


def test_worker_exception_reraises_with_traceback():
    with deadline(20):
        loader = DataLoader(Failing(8), batch_size=2, num_workers=2)
        got = []
        with pytest.raises(ValueError) as info:
            for batch in loader:
                got.append(batch.tolist())
        assert got == [[0, 1]]
        msg = str(info.value)
        assert "Caught ValueError in DataLoader worker process 1" in msg
        assert "Original Traceback (most recent call last)" in msg
        assert 'raise ValueError(f"sample {i} is broken")' in msg and "__getitem__" in msg
        assert "sample 3 is broken" in msg
        # as in PyTorch the iterator survives: the next batches still come
        it = iter(DataLoader(Failing(8), batch_size=2, num_workers=2))
        assert next(it).tolist() == [0, 1]
        with pytest.raises(ValueError):
            next(it)
        assert [b.tolist() for b in it] == [[4, 5], [6, 7]]


def test_worker_exception_types_kept():
    class Missing(Range):
        def __getitem__(self, i):
            return {}["nope"]

    class TwoArgs(Exception):
        def __init__(self, a, b):
            super().__init__(a, b)

    class Odd(Range):
        def __getitem__(self, i):
            raise TwoArgs(1, 2)

    def bad_init(worker_id):
        raise OSError("init failed")

    with deadline(20):
        with pytest.raises(KeyError, match="Caught KeyError in DataLoader worker process 0"):
            list(DataLoader(Missing(2), num_workers=1))
        with pytest.raises(RuntimeError, match="Caught TwoArgs"):
            list(DataLoader(Odd(2), num_workers=1))
        with pytest.raises(AttributeError, match="could not be pickled"):
            list(DataLoader([lambda: 0], batch_size=None, num_workers=1))
        with pytest.raises(OSError, match="init failed") as info:
            list(DataLoader(Range(2), num_workers=1, worker_init_fn=bad_init))
        assert "bad_init" in str(info.value)


def test_dead_worker_is_reported_not_a_hang():
    class Dies(Range):
        def __getitem__(self, i):
            if i == 2:
                os._exit(1)
            return i
    start = time.monotonic()
    with deadline(15):
        with pytest.raises(RuntimeError, match=r"DataLoader worker \(pid\(s\) \d+\) exited "
                                               r"unexpectedly"):
            list(DataLoader(Dies(8), batch_size=None, num_workers=2))
    assert time.monotonic() - start < 10


def test_timeout_raises():
    class Slow(Range):
        def __getitem__(self, i):
            time.sleep(1.0)
            return i
    start = time.monotonic()
    with deadline(15):
        with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.2 seconds"):
            list(DataLoader(Slow(4), num_workers=1, timeout=0.2))
    assert time.monotonic() - start < 8
    with pytest.raises(AssertionError):  # timeout needs workers, as in torch
        iter(DataLoader(range(2), timeout=1))


def test_timeout_raises_before_the_workers_are_shut_down():
    """The error comes when the timeout passes; the worker (still inside the dataset) is shut
    down with the iterator afterwards, as in PyTorch, not waited for before raising."""
    class Slow(Range):
        def __getitem__(self, i):
            time.sleep(1.0)
            return i
    it = iter(DataLoader(Slow(2), num_workers=1, timeout=0.2))
    with deadline(15):
        with pytest.raises(RuntimeError, match=r"DataLoader timed out after 0.2 seconds"):
            next(it)
        assert it._workers[0].is_alive()
        it._shutdown_workers()


def test_iterable_dataset_with_workers(torch):
    with deadline(25):
        got = [b.tolist() for b in DataLoader(IterRange(3, 10), batch_size=2, num_workers=2)]
        dropped = [b.tolist() for b in DataLoader(IterRange(3, 10), batch_size=2, num_workers=2,
                                                  drop_last=True)]
        unbatched = list(DataLoader(IterRange(3, 10), batch_size=None, num_workers=2))
        # each worker yields its own shard: worker 0 -> 3..6, worker 1 -> 7..9, interleaved
        assert got == [[3, 4], [7, 8], [5, 6], [9]]
        assert dropped == [[3, 4], [7, 8], [5, 6]]
        assert unbatched == [3, 7, 4, 8, 5, 9, 6]

        class TorchIterRange(torch.utils.data.IterableDataset):
            def __iter__(self):
                info = torch.utils.data.get_worker_info()
                per_worker = int(math.ceil(7 / float(info.num_workers)))
                lo = 3 + info.id * per_worker
                return iter(range(lo, min(lo + per_worker, 10)))
        exp = [b.tolist() for b in torch.utils.data.DataLoader(TorchIterRange(), batch_size=2,
                                                               num_workers=2)]
        assert got == exp


def test_in_order_false_yields_every_batch():
    with deadline(20):
        got = [b.tolist() for b in DataLoader(range(9), batch_size=2, num_workers=2,
                                              in_order=False)]
    assert sorted(got) == [[0, 1], [2, 3], [4, 5], [6, 7], [8]]
