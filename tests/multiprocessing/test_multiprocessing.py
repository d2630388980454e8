"""`ember.multiprocessing` as PyTorch's package: spawn's errors, the sharing strategies, and the
queues and pool that pickle tensors through the reductions."""
import os
import sys

import pytest

import ember
import ember.multiprocessing as emp
from ember.multiprocessing.spawn import ProcessExitedException, ProcessRaisedException

fork = pytest.mark.skipif(os.name != "posix", reason="needs fork")


def _ok(i, path):
    with open(f"{path}.{i}", "w") as fh:
        fh.write(str(i))


def _raise_in_one(i):
    if i == 1:
        raise ValueError("boom from one")


def _exit_in_one(i):
    if i == 0:
        sys.exit(3)


@fork
def test_spawn_runs_fn_with_each_index(tmp_path):
    emp.spawn(_ok, args=(str(tmp_path / "out"),), nprocs=3, start_method="fork")
    assert sorted(p.read_text() for p in tmp_path.iterdir()) == ["0", "1", "2"]


@fork
def test_a_raising_child_comes_back_with_its_traceback():
    with pytest.raises(ProcessRaisedException) as info:
        emp.spawn(_raise_in_one, nprocs=2, start_method="fork")
    assert info.value.error_index == 1
    assert "-- Process 1 terminated with the following error:" in str(info.value)
    assert "ValueError: boom from one" in str(info.value)


@fork
def test_an_exiting_child_is_named_with_its_exit_code():
    with pytest.raises(ProcessExitedException,
                       match="process 0 terminated with exit code 3") as info:
        emp.spawn(_exit_in_one, nprocs=2, start_method="fork")
    assert info.value.exit_code == 3 and info.value.signal_name is None


@fork
def test_join_false_returns_a_context_that_joins():
    ctx = emp.start_processes(_raise_in_one, nprocs=1, join=False, start_method="fork")
    assert len(ctx.pids()) == 1
    while not ctx.join(timeout=5):
        pass


def test_the_spawn_function_and_the_spawn_module():
    assert emp.spawn.__name__ == "spawn"
    assert sys.modules["ember.multiprocessing.spawn"].spawn is emp.spawn
    with pytest.warns(UserWarning, match="renamed to ProcessContext"):
        emp.SpawnContext([], [])


def test_sharing_strategies_match_torch(torch):
    import torch.multiprocessing as tmp
    assert emp.get_all_sharing_strategies() == tmp.get_all_sharing_strategies()
    assert emp.get_sharing_strategy() == tmp.get_sharing_strategy()
    before = emp.get_sharing_strategy()
    try:
        emp.set_sharing_strategy("file_system")
        assert emp.get_sharing_strategy() == "file_system"
    finally:
        emp.set_sharing_strategy(before)
    with pytest.raises(AssertionError, match="invalid sharing strategy 'shm'"):
        emp.set_sharing_strategy("shm")


def test_queues_carry_tensors_by_value_and_refuse_a_graph():
    for queue in (emp.queue.Queue(), emp.queue.SimpleQueue()):
        t = ember.arange(3.0, requires_grad=True)
        queue.put(t)
        got = queue.get()
        assert got.tolist() == [0.0, 1.0, 2.0] and got.requires_grad and got is not t
    with pytest.raises(RuntimeError, match="Cowardly refusing to serialize non-leaf tensor"):
        emp.reductions.reduce_tensor(t * 2)


def _square(x):
    return x * x


@fork
def test_pool_maps_over_tensors():
    with emp.pool.Pool(2) as pool:
        out = pool.map(_square, [ember.tensor(2.0), ember.tensor(3.0)])
    assert [t.item() for t in out] == [4.0, 9.0]
