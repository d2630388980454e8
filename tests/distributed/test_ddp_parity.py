"""DDP across 2 and 4 processes equals one process training on the whole batch (float64, to
1e-12), and equals PyTorch's own DDP over its gloo on the same weights and data. (The mpi
backend's run of the same program is in test_mpi.py.)"""
import numpy as np
import pytest

import ember


STEPS, BATCH = 3, 16


def _weights_and_data():
    g = np.random.default_rng(0)
    weights = [g.standard_normal(s) for s in [(8, 4), (8,), (2, 8), (2,)]]
    return weights, g.standard_normal((BATCH, 4)), g.standard_normal((BATCH, 2))


def train(lib, rank=0, world=1):
    """The parameters after STEPS of SGD with momentum: this rank's share of each batch, the
    gradients averaged by DDP when world > 1."""
    weights, x, y = _weights_and_data()
    model = lib.nn.Sequential(lib.nn.Linear(4, 8), lib.nn.Tanh(), lib.nn.Linear(8, 2)).double()
    with lib.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(lib.tensor(w))
    if world > 1:
        model = lib.nn.parallel.DistributedDataParallel(model)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rows = slice(rank * BATCH // world, (rank + 1) * BATCH // world)
    xs, ys = lib.tensor(x[rows]), lib.tensor(y[rows])
    for _ in range(STEPS):
        opt.zero_grad()
        ((model(xs) - ys) ** 2).mean().backward()
        opt.step()
    return [p.detach().numpy().copy() for p in model.parameters()]


def _ember_rank(rank, world):
    return train(ember, rank, world)


def torch_gloo_rank(train_fn, rank, world):
    """`train_fn(torch, rank, world)` in a rank of PyTorch's own gloo process group."""
    import datetime

    import torch
    import torch.distributed as tdist
    tdist.init_process_group("gloo", timeout=datetime.timedelta(seconds=30))
    try:
        return train_fn(torch, rank, world)
    finally:
        tdist.destroy_process_group()


def _torch_rank(rank, world):
    return torch_gloo_rank(train, rank, world)


@pytest.mark.parametrize("world", [2, 4])
def test_ddp_equals_one_process_with_the_whole_batch(world):
    from .test_distributed import _launch  # (here: mpiexec's ranks import this file alone)
    single = train(ember)
    results = _launch(_ember_rank, world=world)
    for rank in range(world):
        for got, want in zip(results[rank], single):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_ddp_equals_pytorchs(torch):
    from .test_distributed import _launch
    ours = _launch(_ember_rank, world=2)[0]
    theirs = _launch(_torch_rank, world=2, init=False)
    for rank in (0, 1):
        for got, want in zip(ours, theirs[rank]):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def _uneven_data():
    weights = _weights_and_data()[0]
    g = np.random.default_rng(5)
    return weights, g.standard_normal((20, 4)), g.standard_normal((20, 2))


def _uneven(rank, world, throw=False):
    from ember.nn.parallel import DistributedDataParallel as DDP
    weights, x, y = _uneven_data()
    model = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Tanh(),
                                ember.nn.Linear(8, 2)).double()
    with ember.no_grad():
        for p, w in zip(model.parameters(), weights):
            p.copy_(ember.tensor(w))
    ddp = DDP(model)
    opt = ember.optim.SGD(ddp.parameters(), lr=0.1)
    batches = 3 if rank == 0 else 5  # rank 0 runs out first
    done = 0
    try:
        with ddp.join(throw_on_early_termination=throw):
            for i in range(batches):
                rows = slice(4 * i + 2 * rank, 4 * i + 2 * rank + 2)
                opt.zero_grad()
                ((ddp(ember.tensor(x[rows])) - ember.tensor(y[rows])) ** 2).mean().backward()
                opt.step()
                done += 1
    except RuntimeError as e:
        return done, str(e)
    return done, [p.detach().numpy().copy() for p in model.parameters()]


def _uneven_throwing(rank, world):
    return _uneven(rank, world, throw=True)


def test_ddp_join_with_uneven_inputs():
    from .test_distributed import _launch
    results = _launch(_uneven)
    assert [results[r][0] for r in (0, 1)] == [3, 5]
    # the same steps in one process: both ranks' halves while both train, then rank 1's
    # alone, still divided by the initial world size (PyTorch's default)
    weights, x, y = _uneven_data()
    params = [ember.tensor(w, requires_grad=True) for w in weights]
    for i in range(5):
        loss = 0
        for rank in ((0, 1) if i < 3 else (1,)):
            rows = slice(4 * i + 2 * rank, 4 * i + 2 * rank + 2)
            h = ember.tanh(ember.tensor(x[rows]) @ params[0].T + params[1])
            loss = loss + ((h @ params[2].T + params[3] - ember.tensor(y[rows])) ** 2).mean() / 2
        grads = ember.autograd.grad(loss, params)
        with ember.no_grad():
            for p, g in zip(params, grads):
                p -= 0.1 * g
    for rank in (0, 1):
        for got, want in zip(results[rank][1], params):
            np.testing.assert_allclose(got, want.detach().numpy(), rtol=1e-12, atol=1e-12)


def test_ddp_join_can_throw_on_early_termination():
    from .test_distributed import _launch
    results = _launch(_uneven_throwing)
    message = "Detected at least one rank that exhausted inputs. Throwing across all ranks."
    assert results[0] == (3, message) and results[1] == (3, message)
