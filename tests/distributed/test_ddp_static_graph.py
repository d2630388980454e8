"""DDP's `static_graph=True`: a layer wrapped by two reentrant checkpoints fires its
parameters' hooks twice per backward; the first iteration counts the firings, later ones wait
for the last of them, so the result equals one process with the whole batch (float64, to
1e-12) and PyTorch's own static-graph DDP. Without it, DDP raises PyTorch's "marked twice"
error instead of reducing a half-accumulated gradient."""
import numpy as np

import ember

from .test_ddp_parity import BATCH, STEPS, torch_gloo_rank

_SHAPES = [(8, 4), (8,), (8, 8), (8,), (2, 8), (2,), (3, 3), (3,)]


def _model(lib):
    g = np.random.default_rng(3)
    checkpoint = lib.utils.checkpoint.checkpoint

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.first = lib.nn.Linear(4, 8)
            self.shared = lib.nn.Linear(8, 8)
            self.head = lib.nn.Linear(8, 2)
            self.unused = lib.nn.Linear(3, 3)

        def forward(self, x):
            x = checkpoint(self.shared, lib.tanh(self.first(x)), use_reentrant=True)
            return self.head(checkpoint(self.shared, lib.tanh(x), use_reentrant=True))

    model = Net().double()
    with lib.no_grad():
        for p, shape in zip(model.parameters(), _SHAPES):
            p.copy_(lib.tensor(g.standard_normal(shape)))
    return model


def train(lib, rank=0, world=1, static_graph=True):
    g = np.random.default_rng(4)
    x, y = g.standard_normal((BATCH, 4)), g.standard_normal((BATCH, 2))
    model = _model(lib)
    if world > 1:
        model = lib.nn.parallel.DistributedDataParallel(model, static_graph=static_graph)
    opt = lib.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    rows = slice(rank * BATCH // world, (rank + 1) * BATCH // world)
    xs, ys = lib.tensor(x[rows]), lib.tensor(y[rows])
    for _ in range(STEPS):
        opt.zero_grad()
        ((model(xs) - ys) ** 2).mean().backward()
        opt.step()
    grads = [p.grad is None for p in model.parameters()]
    return [p.detach().numpy().copy() for p in model.parameters()], grads


def _ember_rank(rank, world):
    return train(ember, rank, world)


def _ember_rank_dynamic(rank, world):
    try:
        train(ember, rank, world, static_graph=False)
    except RuntimeError as e:
        return str(e)
    return None


def _torch_rank(rank, world):
    return torch_gloo_rank(train, rank, world)


def test_static_graph_with_reentrant_checkpoints_equals_one_process():
    from .test_distributed import _launch
    single, _ = train(ember)
    results = _launch(_ember_rank, world=2)
    for rank in (0, 1):
        params, grad_is_none = results[rank]
        for got, want in zip(params, single):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
        assert grad_is_none == [False] * 6 + [True] * 2  # the unused layer keeps .grad None


def test_static_graph_equals_pytorchs(torch):
    from .test_distributed import _launch
    ours = _launch(_ember_rank, world=2)[0]
    theirs = _launch(_torch_rank, world=2, init=False)[0]
    for got, want in zip(ours[0], theirs[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert ours[1] == theirs[1]


def test_without_static_graph_a_second_firing_raises():
    from .test_distributed import _launch
    for message in _launch(_ember_rank_dynamic, world=2).values():
        assert message is not None and message.startswith(
            "Expected to mark a variable ready only once.")
        assert "Parameter at index 3 with name shared.bias has been marked as ready twice" \
            in message
