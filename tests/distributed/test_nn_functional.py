"""torch.distributed.nn.functional: collectives that autograd differentiates, run between two
processes; values and gradients as PyTorch defines them (the same script run on PyTorch, when
it is installed, gives the same numbers)."""
import importlib
import multiprocessing
import os
import traceback
import warnings

import pytest

from tests.distributed.test_distributed import _free_port, _launch


def _differentiable(rank, world, lib="ember"):
    """Each collective's result and the gradient it sends back, for losses that weigh each
    rank's and each piece's part differently."""
    torch = importlib.import_module(lib)
    F = importlib.import_module(f"{lib}.distributed.nn.functional")
    out = {}

    def leaf():
        return (torch.tensor([1.0, 2.0]) * (rank + 1)).requires_grad_()

    def grad_of(x, y, scale):
        (y * scale).sum().backward()
        return x.grad.tolist()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = leaf()
        y = F.all_reduce(x)
        out["all_reduce"] = (y.tolist(), grad_of(x, y, rank + 1), x.tolist())
        x = leaf()
        y = F.all_reduce(x, op=torch.distributed.ReduceOp.MAX)
        out["all_reduce_max"] = (y.tolist(), grad_of(x, y, rank + 1))
        x = leaf()
        y = F.broadcast(x, 1)
        out["broadcast"] = (y.tolist(), grad_of(x, y, rank + 1))
        x = leaf()
        ys = F.all_gather(x)
        loss = sum((i + 1 + 10 * rank) * t.sum() for i, t in enumerate(ys))
        loss.backward()
        out["all_gather"] = ([t.tolist() for t in ys], x.grad.tolist())
        x = leaf()
        y = F.reduce_scatter(torch.empty(2), [x * (i + 1) for i in range(world)])
        out["reduce_scatter"] = (y.tolist(), grad_of(x, y, rank + 1))
        x = leaf()
        y = F.all_to_all_single(torch.empty(2), x)
        out["all_to_all_single"] = (y.tolist(), grad_of(x, y, torch.tensor([1.0, 10.0]) *
                                                         (rank + 1)))
    out["warned"] = sorted({str(w.message) for w in caught if w.category is FutureWarning})
    x = leaf()
    ys = F.all_to_all([torch.empty(2) for _ in range(world)], [x * (i + 1) for i in
                                                               range(world)])
    loss = sum((i + 1 + 10 * rank) * t.sum() for i, t in enumerate(ys))
    loss.backward()
    out["all_to_all"] = ([t.tolist() for t in ys], x.grad.tolist())
    x = leaf()
    y = F.reduce(x, 0)
    grad = grad_of(x, y, rank + 1)
    out["reduce"] = (y.tolist() if rank == 0 else None, grad)
    x = leaf()
    ys = F.gather(x, 0)
    # (dense gradients: PyTorch's gather sends an expanded one back as if it were dense)
    weights = torch.tensor([1.0, 3.0])
    loss = sum((i + 1) * (1 if rank == 0 else 10) * (t * weights).sum()
               for i, t in enumerate(ys))
    loss.backward()
    out["gather"] = ([t.tolist() for t in ys], x.grad.tolist())
    x = leaf()
    y = F.scatter([x * (i + 1) for i in range(world)], 0)
    out["scatter"] = (y.tolist(), grad_of(x, y, rank + 1))
    return out


EXPECTED = {
    0: {"all_reduce": ([3.0, 6.0], [3.0, 3.0], [1.0, 2.0]),
        "all_reduce_max": ([2.0, 4.0], [2.0, 2.0]),
        "broadcast": ([2.0, 4.0], [0.0, 0.0]),
        "all_gather": ([[1.0, 2.0], [2.0, 4.0]], [12.0, 12.0]),
        "reduce_scatter": ([3.0, 6.0], [5.0, 5.0]),
        "all_to_all_single": ([1.0, 2.0], [1.0, 2.0]),
        "all_to_all": ([[1.0, 2.0], [2.0, 4.0]], [23.0, 23.0]),
        "reduce": ([3.0, 6.0], [1.0, 1.0]),
        "gather": ([[1.0, 2.0], [2.0, 4.0]], [1.0, 3.0]),
        "scatter": ([1.0, 2.0], [5.0, 5.0])},
    1: {"all_reduce": ([3.0, 6.0], [3.0, 3.0], [2.0, 4.0]),
        "all_reduce_max": ([2.0, 4.0], [2.0, 2.0]),
        "broadcast": ([2.0, 4.0], [3.0, 3.0]),
        "all_gather": ([[1.0, 2.0], [2.0, 4.0]], [14.0, 14.0]),
        "reduce_scatter": ([6.0, 12.0], [5.0, 5.0]),
        "all_to_all_single": ([2.0, 4.0], [10.0, 20.0]),
        "all_to_all": ([[2.0, 4.0], [4.0, 8.0]], [26.0, 26.0]),
        "reduce": (None, [1.0, 1.0]),
        "gather": ([[0.0, 0.0], [0.0, 0.0]], [2.0, 6.0]),
        "scatter": ([2.0, 4.0], [0.0, 0.0])},
}
WARNED = sorted(f"torch.distributed.nn.functional.{name} is deprecated, use "
                f"torch.distributed._functional_collectives.{new} instead."
                for name, new in (("all_reduce", "all_reduce"), ("broadcast", "broadcast"),
                                  ("all_gather", "all_gather_single"),
                                  ("reduce_scatter", "reduce_scatter_single"),
                                  ("all_to_all_single", "all_to_all_single")))


def test_values_and_gradients_between_two_processes():
    results = _launch(_differentiable)
    for rank in (0, 1):
        got = dict(results[rank])
        assert got.pop("warned") == WARNED
        assert got == EXPECTED[rank], rank


def _torch_entry(rank, port, queue):
    try:
        import torch.distributed as dist
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                          WORLD_SIZE="2")
        dist.init_process_group("gloo")
        queue.put((rank, None, _differentiable(rank, 2, "torch")))
        dist.destroy_process_group()
    except BaseException:
        queue.put((rank, traceback.format_exc(), None))


def test_pytorch_gives_the_same_numbers(torch):
    ctx = multiprocessing.get_context("spawn")
    queue, port = ctx.Queue(), _free_port()
    procs = [ctx.Process(target=_torch_entry, args=(r, port, queue)) for r in (0, 1)]
    for p in procs:
        p.start()
    try:
        results = {}
        for _ in procs:
            rank, error, value = queue.get(timeout=120)
            assert error is None, error
            results[rank] = value
    finally:
        for p in procs:
            p.join(30)
            if p.exitcode is None:
                p.kill()
    for rank in (0, 1):
        got = dict(results[rank])
        assert got.pop("warned") == WARNED
        assert got == EXPECTED[rank], rank


def test_the_package_path_and_errors(monkeypatch):
    import ember.distributed.nn as dnn
    from ember.distributed.nn import functional
    assert dnn.all_reduce is functional.all_reduce and "all_to_all_single" in dnn.__all__
    monkeypatch.setattr("ember.compiler.is_compiling", lambda: True)
    with pytest.raises(RuntimeError, match=r"torch.distributed.nn.functional.all_reduce is not "
                                           r"supported under torch.compile. Use torch.distributed"
                                           r"._functional_collectives.all_reduce instead."):
        functional.all_reduce(None)
    with pytest.raises(RuntimeError, match=r"^torch.distributed.nn.functional.gather is not "
                                           r"supported under torch.compile.$"):
        functional.gather(None)
