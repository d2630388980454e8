"""torch.futures: Future, collect_all and wait_all; torch.fork/wait hand futures back."""
import threading

import pytest

import ember


def test_future_completes_once_and_chains():
    fut = ember.futures.Future()
    assert not fut.done()
    chained = fut.then(lambda f: f.wait() * 2)
    fut.set_result(21)
    assert fut.done() and fut.value() == 21 and chained.wait() == 42
    with pytest.raises(RuntimeError, match="can only be marked completed once"):
        fut.set_result(1)


def test_collect_all_waits_for_every_future_across_threads():
    futures = [ember.futures.Future() for _ in range(3)]
    combined = ember.futures.collect_all(futures)
    assert not combined.done()
    threads = [threading.Thread(target=f.set_result, args=(i,)) for i, f in enumerate(futures)]
    for t in threads:
        t.start()
    assert combined.wait() == futures
    assert ember.futures.wait_all(futures) == [0, 1, 2]
    assert ember.futures.collect_all([]).wait() == []


def test_wait_all_raises_the_first_error():
    ok, bad = ember.futures.Future(), ember.futures.Future()
    ok.set_result(1)
    bad.set_exception(ValueError("broken"))
    assert ember.futures.collect_all([ok, bad]).done()
    with pytest.raises(ValueError, match="broken"):
        ember.futures.wait_all([ok, bad])
    with pytest.raises(TypeError):
        ember.futures.collect_all([1])


def test_fork_and_wait_at_top_level_and_in_jit():
    fut = ember.fork(lambda x, y: x + y, ember.tensor(1), y=ember.tensor(2))
    assert isinstance(fut, ember.Future) and ember.Future is ember.futures.Future
    assert ember.wait(fut).item() == 3 and ember.jit.wait(fut).item() == 3
    assert ember.jit.fork is ember.fork
