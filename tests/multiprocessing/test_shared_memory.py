"""Tensors in shared memory (`share_memory_()`, `Module.share_memory()`) stay one memory
across processes under every start method, as PyTorch's file_descriptor strategy gives:
Hogwild training under spawn and forkserver (Python 3.14's default on Linux) updates the
parent's weights. Before, spawn and forkserver children got copies and their updates were
lost without a word."""
import os

import pytest

import ember
import ember.multiprocessing as emp

METHODS = [m for m in ("spawn", "forkserver", "fork") if m in emp.get_all_start_methods()]
pytestmark = pytest.mark.skipif(not hasattr(os, "memfd_create"), reason="needs memfds")


def _hogwild_step(rank, model, column):
    """One SGD step (lr 1) with a gradient of ones on every weight; and a write through a
    view of a shared tensor."""
    optimizer = ember.optim.SGD(model.parameters(), lr=1.0)
    for p in model.parameters():
        p.grad = ember.ones_like(p)
    optimizer.step()
    with ember.no_grad():
        column[rank] = 10.0 + rank
    assert all(p.is_shared() for p in model.parameters()) and column.is_shared()


@pytest.mark.parametrize("method", METHODS)
def test_hogwild_children_update_the_parents_weights(method):
    model = ember.nn.Linear(3, 2)
    before = [p.detach().clone() for p in model.parameters()]
    model.share_memory()
    grid = ember.zeros(4, 3).share_memory_()
    emp.spawn(_hogwild_step, args=(model, grid[1:3, 2]), nprocs=2, start_method=method)
    for p, b in zip(model.parameters(), before):
        assert ember.allclose(p.detach(), b - 2)  # both children's steps landed
    assert grid[:, 2].tolist() == [0.0, 10.0, 11.0, 0.0] and grid[:, :2].abs().sum() == 0


def _share_back(queue, done):
    t = ember.zeros(4).share_memory_()
    queue.put(t)
    done.wait(timeout=30)
    queue.put(t.sum().item())


@pytest.mark.parametrize("method", METHODS)
def test_a_child_shares_its_tensor_through_a_queue(method):
    ctx = emp.get_context(method)
    queue, done = ctx.Queue(), ctx.Event()
    child = ctx.Process(target=_share_back, args=(queue, done))
    child.start()
    try:
        t = queue.get(timeout=30)
        assert t.is_shared()
        t.fill_(1.5)  # written here, read there
        done.set()
        assert queue.get(timeout=30) == 6.0
    finally:
        child.join(timeout=30)
    assert child.exitcode == 0


def test_an_unshared_tensor_still_crosses_as_a_copy():
    ctx = emp.get_context("spawn")
    queue = ctx.Queue()
    t = ember.ones(3)
    queue.put(t)
    got = queue.get(timeout=30)
    got.add_(1)
    assert not got.is_shared() and t.tolist() == [1.0, 1.0, 1.0]
