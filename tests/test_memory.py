"""A tensor's memory from outside: share_memory_ puts it where a forked process's writes are
seen by the parent (and only then); storages share memory with their tensors."""
import multiprocessing
import os
import warnings

import pytest

import ember

fork = pytest.mark.skipif(os.name != "posix" or "fork" not in multiprocessing.get_all_start_methods(),
                          reason="needs fork")


def _child_writes(t):
    t[1] = 42.0
    os._exit(0)


def _run_child(t):
    ctx = multiprocessing.get_context("fork")
    p = ctx.Process(target=_child_writes, args=(t,))
    p.start()
    p.join(30)
    assert p.exitcode == 0


@fork
def test_shared_memory_is_seen_across_fork():
    t = ember.zeros(4)
    assert not t.is_shared()
    assert t.share_memory_() is t and t.is_shared()
    _run_child(t)
    assert t.tolist() == [0.0, 42.0, 0.0, 0.0]


@fork
def test_private_memory_is_not_seen_across_fork():
    t = ember.zeros(4)
    _run_child(t)
    assert t.tolist() == [0.0, 0.0, 0.0, 0.0]


def test_share_memory_keeps_values_layout_and_graph_fields():
    base = ember.arange(6.0).reshape(2, 3).t()
    base.share_memory_()
    assert base.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
    assert base.stride() == (1, 3) and base.is_shared()
    base[0, 1] = -1.0
    assert base.untyped_storage().data_ptr() == base.data_ptr()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert base.storage()[3] == -1.0


def test_module_share_memory_shares_parameters():
    m = ember.nn.Linear(2, 3)
    m.share_memory()
    assert all(p.is_shared() for p in m.parameters())
