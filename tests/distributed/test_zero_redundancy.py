"""torch.distributed.optim.ZeroRedundancyOptimizer: each rank steps its share of the
parameters and broadcasts it; training matches a plain optimizer over the averaged gradients,
and the consolidated state is the plain optimizer's."""
import numpy as np
import pytest

import ember
import ember.distributed as dist
from ember.distributed.optim import ZeroRedundancyOptimizer
from ember.nn.parallel import DistributedDataParallel as DDP

from .test_distributed import _launch


def _model():
    ember.manual_seed(0)
    return ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.ReLU(), ember.nn.Linear(8, 3),
                               ember.nn.Linear(3, 3, bias=False))


def _data():
    rng = np.random.default_rng(0)
    return ember.tensor(rng.standard_normal((8, 4)).astype(np.float32))


def _train(optimizer, model, x, steps=3):
    for _ in range(steps):
        optimizer.zero_grad()
        model(x).pow(2).mean().backward()
        optimizer.step()


def _zero(rank, world):
    model = DDP(_model())
    opt = ZeroRedundancyOptimizer(model.parameters(), ember.optim.Adam, lr=0.01)
    owned = [p.numel() for p in model.parameters() if opt._owner[id(p)] == rank]
    x = _data()
    _train(opt, model, x[rank * 4:(rank + 1) * 4])
    opt.consolidate_state_dict(to=0)
    state = opt.state_dict() if rank == 0 else None
    return {"params": [p.detach().numpy() for p in model.parameters()], "owned": owned,
            "local_state": len(opt.optim.state),
            "state": None if state is None else {
                "groups": state["param_groups"],
                "exp_avg": {k: v["exp_avg"].numpy() for k, v in state["state"].items()}}}


def test_zero_training_matches_a_plain_optimizer():
    results = _launch(_zero)
    model, x = _model(), _data()
    plain = ember.optim.Adam(model.parameters(), lr=0.01)
    _train(plain, model, x)  # the mean over all 8 rows: DDP's average of the two halves
    want = [p.detach().numpy() for p in model.parameters()]
    for rank in (0, 1):
        for got, ref in zip(results[rank]["params"], want):
            np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
    # the state is split: each rank holds its share only, the shares cover every parameter
    assert results[0]["local_state"] + results[1]["local_state"] == 5
    assert sorted(results[0]["owned"] + results[1]["owned"]) == sorted(
        p.numel() for p in model.parameters())
    state, reference = results[0]["state"], plain.state_dict()
    assert state["groups"] == reference["param_groups"]
    for k, v in reference["state"].items():
        np.testing.assert_allclose(state["exp_avg"][k], v["exp_avg"].numpy(), rtol=1e-5,
                                   atol=1e-7)


def test_zero_in_a_world_of_one():
    dist.init_process_group(backend="gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        model, x = _model(), _data()
        opt = ZeroRedundancyOptimizer(model.parameters(), ember.optim.SGD, lr=0.1,
                                      momentum=0.9)
        assert opt.param_groups[0]["momentum"] == 0.9  # the local optimizer's settings show
        with pytest.raises(RuntimeError, match="has not been consolidated"):
            opt.state_dict()
        _train(opt, model, x)
        opt.consolidate_state_dict()
        saved = opt.state_dict()
        ref_model = _model()
        plain = ember.optim.SGD(ref_model.parameters(), lr=0.1, momentum=0.9)
        _train(plain, ref_model, x)
        assert all(ember.equal(p, q) for p, q in zip(model.parameters(),
                                                     ref_model.parameters()))
        # a scheduler drives it through param_groups; a saved state loads back
        again = ZeroRedundancyOptimizer(_model().parameters(), ember.optim.SGD, lr=0.5,
                                        momentum=0.9)
        again.load_state_dict(saved)
        assert again.param_groups[0]["lr"] == 0.1 and again.optim.param_groups[0]["lr"] == 0.1
        ember.optim.lr_scheduler.StepLR(opt, 1, 0.5).step()
        assert opt.param_groups[0]["lr"] == 0.05
    finally:
        dist.destroy_process_group()
