"""ASGD, Rprop and Adafactor follow PyTorch's trajectories; swa_utils (AveragedModel with each
averaging function, SWALR, update_bn) matches torch.optim.swa_utils step for step."""
import numpy as np
import pytest

import ember
from ember import nn



def _problem(lib, dtype):
    rng = np.random.default_rng(0)
    dt = getattr(lib, dtype)
    w = lib.tensor(rng.standard_normal((3, 4)), dtype=dt, requires_grad=True)
    b = lib.tensor(rng.standard_normal(3), dtype=dt, requires_grad=True)
    x = lib.tensor(rng.standard_normal((8, 4)), dtype=dt)
    y = lib.tensor(rng.standard_normal((8, 3)), dtype=dt)

    def loss():
        return ((x @ w.t() + b - y) ** 2).mean()
    return [w, b], loss


OPTIMIZERS = [
    ("ASGD", dict()),
    ("ASGD", dict(lr=0.05, lambd=1e-2, alpha=0.5, t0=5, weight_decay=0.1)),
    ("ASGD", dict(lr=0.05, t0=3, maximize=True)),
    ("Rprop", dict()),
    ("Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2), maximize=True)),
    ("Adafactor", dict()),
    ("Adafactor", dict(lr=0.05, beta2_decay=-0.5, eps=(1e-20, 1e-2), d=1.5, weight_decay=0.1)),
    ("Adafactor", dict(lr=0.05, maximize=True)),
]


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS,
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(OPTIMIZERS)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_trajectory_matches_torch(torch, name, kwargs, dtype):
    results, states = [], []
    for lib in (ember, torch):
        params, loss = _problem(lib, dtype)
        opt = getattr(lib.optim, name)(params, **kwargs)
        for _ in range(20):
            opt.zero_grad()
            loss().backward()
            opt.step()
        results.append([p.detach().numpy().copy() for p in params])
        states.append(opt.state_dict())
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-10, atol=1e-12)
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, **tol)
    ours, theirs = states
    assert ours["param_groups"] == theirs["param_groups"]
    for i, st in theirs["state"].items():
        assert ours["state"][i].keys() == st.keys()
        for k, v in st.items():
            assert str(ours["state"][i][k].dtype) == str(v.dtype), k
            assert tuple(ours["state"][i][k].shape) == tuple(v.shape), k
            np.testing.assert_allclose(ours["state"][i][k].numpy(), v.numpy(), **tol)


@pytest.mark.parametrize("name,kwargs,msg", [
    ("ASGD", dict(lr=-1), "Invalid learning rate: -1"),
    ("ASGD", dict(weight_decay=-1), "Invalid weight_decay value: -1"),
    ("Rprop", dict(lr=-1), "Invalid learning rate: -1"),
    ("Rprop", dict(etas=(1.5, 1.2)), "Invalid eta values: 1.5, 1.2"),
    ("Adafactor", dict(lr=-1), "Learning rate should be >= 0 but is: -1"),
    ("Adafactor", dict(beta2_decay=0.5), "beta2_decay should be <= 0 but is: 0.5"),
    ("Adafactor", dict(eps=(-1, 1e-3)), "epsilon1 should be >= 0 but is: -1"),
    ("Adafactor", dict(eps=(None, -1)), "epsilon2 should be >= 0 but is: -1"),
    ("Adafactor", dict(d=0.5), "Clipping threshold d should be >= 1 but is: 0.5"),
    ("Adafactor", dict(weight_decay=-1), "weight_decay should be >= 0 but is: -1"),
])
def test_constructor_errors_match_torch(torch, name, kwargs, msg):
    for lib in (ember, torch):
        with pytest.raises(ValueError, match=msg.replace("(", r"\(")):
            getattr(lib.optim, name)([lib.zeros(2, requires_grad=True)], **kwargs)


@pytest.mark.parametrize("name", ["ASGD", "Rprop", "Adafactor"])
def test_defaults_and_repr_match_torch(torch, name):
    ours = getattr(ember.optim, name)([ember.zeros(2, requires_grad=True)])
    theirs = getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)])
    assert ours.defaults == theirs.defaults
    assert repr(ours) == repr(theirs)


# ---- swa_utils --------------------------------------------------------------------------------
def _net(lib):
    lib.manual_seed(0)
    return lib.nn.Sequential(lib.nn.Linear(4, 5), lib.nn.BatchNorm1d(5), lib.nn.ReLU(),
                             lib.nn.Linear(5, 2))


def _copy_weights(src, dst):
    import torch as T
    with T.no_grad():
        for (n, t), (m, e) in zip(dst.state_dict().items(), src.state_dict().items()):
            assert n == m
            t.copy_(T.from_numpy(e.numpy().copy()))


AVERAGERS = [
    ("default", lambda su: {}),
    ("ema_multi", lambda su: dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.9))),
    ("swa_multi", lambda su: dict(multi_avg_fn=su.get_swa_multi_avg_fn())),
    ("ema", lambda su: dict(avg_fn=su.get_ema_avg_fn(0.8))),
    ("swa", lambda su: dict(avg_fn=su.get_swa_avg_fn())),
    ("ema_buffers", lambda su: dict(multi_avg_fn=su.get_ema_multi_avg_fn(0.9),
                                    use_buffers=True)),
    ("default_buffers", lambda su: dict(use_buffers=True)),
]


@pytest.mark.parametrize("kind,make", AVERAGERS, ids=[a[0] for a in AVERAGERS])
def test_averaged_model_matches_torch(torch, kind, make):
    rng = np.random.default_rng(1)
    xs = [rng.standard_normal((6, 4)).astype(np.float32) for _ in range(6)]
    runs = []
    net_e = _net(ember)
    net_t = _net(torch)
    _copy_weights(net_e, net_t)
    for lib, net in ((ember, net_e), (torch, net_t)):
        avg = lib.optim.swa_utils.AveragedModel(net, **make(lib.optim.swa_utils))
        opt = lib.optim.SGD(net.parameters(), lr=0.1, momentum=0.5)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=0.02, anneal_epochs=3)
        lrs = []
        for x in xs:
            opt.zero_grad()
            net(lib.tensor(x)).pow(2).mean().backward()
            opt.step()
            avg.update_parameters(net)
            sched.step()
            lrs.append(sched.get_last_lr())
        out = avg(lib.tensor(xs[0])).detach().numpy()
        sd = {k: v.numpy().copy() for k, v in avg.state_dict().items()}
        runs.append((lrs, out, sd))
    (lrs_e, out_e, sd_e), (lrs_t, out_t, sd_t) = runs
    np.testing.assert_allclose(lrs_e, lrs_t, rtol=1e-12)
    assert list(sd_e) == list(sd_t)
    for k in sd_t:
        assert sd_e[k].dtype == sd_t[k].dtype, k
        np.testing.assert_allclose(sd_e[k], sd_t[k], rtol=1e-5, atol=1e-6, err_msg=k)
    np.testing.assert_allclose(out_e, out_t, rtol=1e-5, atol=1e-6)


def test_averaged_model_rejects_both_functions():
    su = ember.optim.swa_utils
    with pytest.raises(AssertionError, match="Only one of avg_fn and multi_avg_fn"):
        su.AveragedModel(nn.Linear(2, 2), avg_fn=su.get_swa_avg_fn(),
                         multi_avg_fn=su.get_swa_multi_avg_fn())


def test_ema_decay_checked_as_torch(torch):
    for lib in (ember, torch):
        for fn in (lib.optim.swa_utils.get_ema_avg_fn, lib.optim.swa_utils.get_ema_multi_avg_fn):
            with pytest.raises(ValueError, match=r"Invalid decay value 1.5 provided. Please "
                                                 r"provide a value in \[0,1\] range."):
                fn(1.5)


def test_list_averages_on_integer_tensors_match_torch(torch):
    results = []
    for lib in (ember, torch):
        su = lib.optim.swa_utils
        c = [lib.tensor([14, 0, 40])]
        got = []
        for fn, n in ((su.get_swa_multi_avg_fn(), lib.tensor(3)), (su.get_swa_multi_avg_fn(), 3),
                      (su.get_ema_multi_avg_fn(0.5), 3)):
            a = [lib.tensor([10, 20, 31])]
            try:
                fn(a, c, n)
                got.append(a[0].tolist())
            except RuntimeError as e:
                got.append(type(e))
        results.append(got)
    assert results[0] == results[1]


@pytest.mark.parametrize("strategy,epochs", [("cos", 5), ("linear", 4), ("cos", 0)])
def test_swalr_matches_torch(torch, strategy, epochs):
    lrs = []
    for lib in (ember, torch):
        w = lib.zeros(2, requires_grad=True)
        b = lib.zeros(2, requires_grad=True)
        opt = lib.optim.SGD([{"params": [w]}, {"params": [b], "lr": 0.5}], lr=0.1)
        sched = lib.optim.swa_utils.SWALR(opt, swa_lr=[0.01, 0.2], anneal_epochs=epochs,
                                          anneal_strategy=strategy)
        seen = [sched.get_last_lr()]
        for _ in range(8):
            opt.step()
            sched.step()
            seen.append(sched.get_last_lr())
        sd = sched.state_dict()
        assert "anneal_func" not in sd and sd["_anneal_strategy"] == strategy
        lrs.append(seen)
    np.testing.assert_allclose(lrs[0], lrs[1], rtol=1e-12)


def test_swalr_errors_match_torch(torch):
    for lib in (ember, torch):
        opt = lib.optim.SGD([lib.zeros(2, requires_grad=True)], lr=0.1)
        with pytest.raises(ValueError, match="anneal_strategy must be one of 'cos' or 'linear', "
                                             "instead got exp"):
            lib.optim.swa_utils.SWALR(opt, 0.1, anneal_strategy="exp")
        with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0, "
                                             "got -1"):
            lib.optim.swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)
        with pytest.raises(ValueError, match="swa_lr must have the same length"):
            lib.optim.swa_utils.SWALR(opt, [0.1, 0.2])


def test_update_bn_matches_torch(torch):
    rng = np.random.default_rng(2)
    batches = [rng.standard_normal((5, 4)).astype(np.float32) for _ in range(4)]
    net_e, net_t = _net(ember), _net(torch)
    _copy_weights(net_e, net_t)
    sds = []
    for lib, net in ((ember, net_e), (torch, net_t)):
        net.eval()
        loader = [(lib.tensor(b), lib.zeros(5)) for b in batches[:2]] + \
            [lib.tensor(b) for b in batches[2:]]
        lib.optim.swa_utils.update_bn(loader, net)
        assert not net.training
        assert net[1].momentum == 0.1
        sds.append({k: v.numpy().copy() for k, v in net.state_dict().items()})
    for k in sds[1]:
        np.testing.assert_allclose(sds[0][k], sds[1][k], rtol=1e-5, atol=1e-6, err_msg=k)
