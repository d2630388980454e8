"""Optimisers and schedulers follow PyTorch's trajectories (parity), and the seeds' SGD
facts hold without PyTorch (lr=1: new weight = old weight - grad)."""
import math
import warnings

import numpy as np
import pytest

import ember
from ember import nn


def _problem(lib, seed=0):
    rng = np.random.default_rng(seed)
    w = lib.tensor(rng.standard_normal((3, 4)).astype(np.float32), requires_grad=True)
    b = lib.tensor(rng.standard_normal(3).astype(np.float32), requires_grad=True)
    x = lib.tensor(rng.standard_normal((8, 4)).astype(np.float32))
    y = lib.tensor(rng.standard_normal((8, 3)).astype(np.float32))

    def loss():
        return ((x @ w.t() + b - y) ** 2).mean()
    return [w, b], loss


OPTIMIZERS = [
    ("SGD", dict(lr=0.1)),
    ("SGD", dict(lr=0.1, momentum=0.9)),
    ("SGD", dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    ("SGD", dict(lr=0.1, momentum=0.5, dampening=0.1, maximize=True)),
    ("Adam", dict(lr=0.01)),
    ("Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.01, maximize=True)),
    ("AdamW", dict(lr=0.01)),
    ("AdamW", dict(lr=0.01, amsgrad=True)),
    ("Adamax", dict(lr=0.01, weight_decay=0.1)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.9, weight_decay=0.1)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, weight_decay=0.1, initial_accumulator_value=0.1)),
    ("Adadelta", dict(lr=1.0, weight_decay=0.1)),
    ("NAdam", dict(lr=0.01)),
    ("NAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.01)),
    ("RAdam", dict(lr=0.01, weight_decay=0.1, decoupled_weight_decay=True)),
]


@pytest.mark.parametrize("name,kwargs", OPTIMIZERS, ids=[f"{n}-{i}" for i, (n, _) in
                                                        enumerate(OPTIMIZERS)])
def test_optimizer_trajectory_matches_torch(torch, name, kwargs):
    results = []
    for lib in (ember, torch):
        params, loss = _problem(lib)
        opt = getattr(lib.optim, name)(params, **kwargs)
        for _ in range(20):
            opt.zero_grad()
            loss().backward()
            opt.step()
        results.append([p.detach().numpy().copy() for p in params])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


def test_optimizer_state_dict_layout_matches_torch(torch):
    dicts = []
    for lib in (ember, torch):
        params, loss = _problem(lib)
        opt = lib.optim.Adam(params, lr=0.01)
        loss().backward()
        opt.step()
        dicts.append(opt.state_dict())
    ours, theirs = dicts
    assert ours["param_groups"][0].keys() == theirs["param_groups"][0].keys()
    assert ours["state"].keys() == theirs["state"].keys()
    assert ours["state"][0].keys() == theirs["state"][0].keys()


def test_torch_optimizer_state_loads_into_ember(torch):
    params_t, loss_t = _problem(torch)
    opt_t = torch.optim.SGD(params_t, lr=0.1, momentum=0.9)
    loss_t().backward()
    opt_t.step()
    state = opt_t.state_dict()
    converted = {"state": {k: {n: ember.tensor(v.numpy()) for n, v in s.items()}
                           for k, s in state["state"].items()},
                 "param_groups": state["param_groups"]}
    params_e, _ = _problem(ember)
    opt_e = ember.optim.SGD(params_e, lr=0.5)
    opt_e.load_state_dict(converted)
    assert opt_e.param_groups[0]["lr"] == 0.1
    np.testing.assert_allclose(opt_e.state[params_e[0]]["momentum_buffer"].numpy(),
                               state["state"][0]["momentum_buffer"].numpy())


def test_sgd_lr_one_subtracts_the_gradient_and_grads_accumulate():
    model = nn.Linear(4, 2)
    opt = ember.optim.SGD(model.parameters(), lr=1.0)
    x = ember.ones(3, 4)
    model(x).sum().backward()
    g1 = model.weight.grad.clone()
    model(x).sum().backward()
    np.testing.assert_allclose(model.weight.grad.numpy(), 2 * g1.numpy())
    before = model.weight.detach().clone()
    opt.step()
    np.testing.assert_allclose(model.weight.detach().numpy(),
                               (before - model.weight.grad).numpy())
    opt.zero_grad()
    assert model.weight.grad is None
    model(x).sum().backward()
    opt.zero_grad(set_to_none=False)
    assert model.weight.grad is not None and float(model.weight.grad.abs().sum()) == 0


def test_param_groups_and_errors():
    a, b = nn.Parameter(ember.ones(2)), nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1, momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.5]
    with pytest.raises(ValueError, match="more than one parameter group"):
        opt.add_param_group({"params": [a]})
    with pytest.raises(ValueError, match="empty parameter list"):
        ember.optim.SGD([], lr=0.1)
    with pytest.raises(ValueError, match="Invalid learning rate"):
        ember.optim.Adam([a], lr=-1)


SCHEDULERS = [
    ("StepLR", dict(step_size=3, gamma=0.5)),
    ("MultiStepLR", dict(milestones=[2, 5, 5, 9], gamma=0.5)),
    ("ConstantLR", dict(factor=0.5, total_iters=4)),
    ("LinearLR", dict(start_factor=0.25, end_factor=1.0, total_iters=6)),
    ("ExponentialLR", dict(gamma=0.9)),
    ("PolynomialLR", dict(total_iters=8, power=2.0)),
    ("CosineAnnealingLR", dict(T_max=7, eta_min=0.01)),
    ("CosineAnnealingWarmRestarts", dict(T_0=4, T_mult=2, eta_min=0.001)),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=3, mode="triangular2")),
    ("CyclicLR", dict(base_lr=0.01, max_lr=0.1, step_size_up=2, mode="exp_range", gamma=0.9)),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=30)),
    ("OneCycleLR", dict(max_lr=0.5, total_steps=30, three_phase=True, anneal_strategy="linear")),
    ("LambdaLR", dict(lr_lambda=lambda e: 0.95 ** e)),
    ("MultiplicativeLR", dict(lr_lambda=lambda e: 0.9)),
]


def _lr_trace(lib, name, kwargs, steps=25, extra=None):
    p = lib.nn.Parameter(lib.ones(2))
    opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
    sched = extra(lib, opt) if extra else getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
    trace = []
    for _ in range(steps):
        opt.step()
        sched.step()
        trace.append((sched.get_last_lr()[0], opt.param_groups[0]["momentum"]))
    return trace


@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=[f"{n}-{i}" for i, (n, _) in
                                                        enumerate(SCHEDULERS)])
def test_scheduler_matches_torch(torch, name, kwargs):
    np.testing.assert_allclose(_lr_trace(ember, name, kwargs), _lr_trace(torch, name, kwargs),
                               rtol=1e-10, atol=1e-12)


def test_sequential_and_chained_match_torch(torch):
    def sequential(lib, opt):
        s = lib.optim.lr_scheduler
        return s.SequentialLR(opt, [s.LinearLR(opt, 0.1, total_iters=3),
                                    s.ExponentialLR(opt, 0.9)], milestones=[3])

    def chained(lib, opt):
        s = lib.optim.lr_scheduler
        return s.ChainedScheduler([s.ConstantLR(opt, 0.5, total_iters=4),
                                   s.ExponentialLR(opt, 0.9)])
    for build in (sequential, chained):
        np.testing.assert_allclose(_lr_trace(ember, None, None, extra=build),
                                   _lr_trace(torch, None, None, extra=build), rtol=1e-10)


def test_reduce_on_plateau_matches_torch(torch):
    traces = []
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=1.0)
        sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, patience=2, cooldown=1, factor=0.5)
        trace = []
        for metric in [5, 4, 4, 4, 4, 4, 3, 3, 3, 3, 3, 3, 3]:
            sched.step(metric)
            trace.append(opt.param_groups[0]["lr"])
        traces.append(trace)
    assert traces[0] == traces[1]


@pytest.mark.parametrize("name,kwargs", SCHEDULERS + [("ReduceLROnPlateau", {})],
                         ids=[f"{n}-{i}" for i, (n, _) in enumerate(SCHEDULERS)] + ["plateau"])
def test_scheduler_state_dict_keys_and_get_lr_warning_as_torch(torch, name, kwargs):
    """A scheduler's state_dict holds PyTorch's keys in PyTorch's order (its step flags
    included), and get_lr() called outside step() warns as PyTorch's does."""
    seen = []
    for lib in (ember, torch):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1, momentum=0.9)
        sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
        opt.step()
        sched.step(1.0) if name == "ReduceLROnPlateau" else sched.step()
        caught = []
        if name != "ReduceLROnPlateau":
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                sched.get_lr()
        seen.append((list(sched.state_dict()), [str(w.message) for w in caught]))
    assert seen[0] == seen[1]


def _rounded(value):
    if isinstance(value, float):
        return round(value, 12)
    if isinstance(value, (list, tuple)):
        return type(value)(_rounded(v) for v in value)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize("name,kwargs", SCHEDULERS, ids=[f"{n}-{i}" for i, (n, _) in
                                                        enumerate(SCHEDULERS)])
def test_scheduler_state_and_optimizer_print_as_torch(torch, name, kwargs):
    """After a few steps, the scheduler's state_dict values and the optimizer's repr are
    PyTorch's (CyclicLR's groups hold their momentum bounds; CosineAnnealingWarmRestarts
    keeps _step_count at 0)."""
    seen = []
    for lib in (ember, torch):
        sched = _stepped_scheduler(lib, name, kwargs, 3)
        state = {k: v for k, v in sched.state_dict().items() if k != "lr_lambdas"}
        seen.append((_rounded(state), repr(sched.optimizer)))
    assert seen[0] == seen[1]


def _stepped_scheduler(lib, name, kwargs, steps):
    """Scheduler `name` over SGD with momentum on one parameter, after `steps` steps."""
    opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1, momentum=0.9)
    sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
    for _ in range(steps):
        opt.step()
        sched.step()
    return sched


def test_scheduler_state_dict_roundtrip():
    p = nn.Parameter(ember.ones(2))
    opt = ember.optim.SGD([p], lr=0.1)
    sched = ember.optim.lr_scheduler.StepLR(opt, step_size=2)
    for _ in range(3):
        opt.step()
        sched.step()
    state = sched.state_dict()
    fresh = ember.optim.lr_scheduler.StepLR(ember.optim.SGD([p], lr=0.1), step_size=2)
    fresh.load_state_dict(state)
    assert fresh.last_epoch == 3 and math.isclose(fresh.get_last_lr()[0], sched.get_last_lr()[0])


@pytest.mark.parametrize("name,kwargs", SCHEDULERS[-6:-2])  # CyclicLR, OneCycleLR: their lr
# is a function of the step alone, so a fresh optimizer resumes it
def test_scheduler_state_saves_and_crosses_to_torch(torch, name, kwargs):
    # torch.save writes pickle protocol 2: a scheduler's state must be plain data (OneCycleLR
    # kept its annealing function and could not be saved); a checkpoint written by one
    # library resumes the schedule in the other
    import io
    states = {}
    for lib in (ember, torch):
        buf = io.BytesIO()
        lib.save(_stepped_scheduler(lib, name, kwargs, 4).state_dict(), buf)
        states[lib.__name__] = buf.getvalue()
    for saved_by, lib in (("ember", torch), ("torch", ember)):
        opt = lib.optim.SGD([lib.nn.Parameter(lib.ones(2))], lr=0.1, momentum=0.9)
        sched = getattr(lib.optim.lr_scheduler, name)(opt, **kwargs)
        sched.load_state_dict(lib.load(io.BytesIO(states[saved_by]), weights_only=False))
        other = _stepped_scheduler(lib, name, kwargs, 4)
        for _ in range(5):
            opt.step()
            sched.step()
            other.optimizer.step()
            other.step()
            assert sched.get_last_lr() == pytest.approx(other.get_last_lr(), rel=1e-12)


@pytest.mark.parametrize("kwargs", [dict(lr=1), dict(lr=0.5, history_size=3, max_iter=5),
                                    dict(lr=1, line_search_fn="strong_wolfe")])
def test_lbfgs_matches_torch(torch, kwargs):
    results = []
    for lib in (ember, torch):
        params, loss = _problem(lib)
        params = [p.double().detach().requires_grad_() for p in params]
        rng = np.random.default_rng(1)
        x = lib.tensor(rng.standard_normal((8, 4)))
        y = lib.tensor(rng.standard_normal((8, 3)))
        w, b = params
        opt = lib.optim.LBFGS(params, **kwargs)

        def closure():
            opt.zero_grad()
            value = ((x @ w.t() + b - y) ** 2).mean() + (w ** 4).sum() * 0.01
            value.backward()
            return value
        for _ in range(4):
            opt.step(closure)
        results.append([p.detach().numpy().copy() for p in params])
    for ours, theirs in zip(*results):
        np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_untracked_ternary_inplace_rounds_as_out_of_place(dtype):
    # lerp_/addcmul_/addcdiv_ update self's memory directly when autograd does not record
    # them (optimiser steps); the values must be those of the out-of-place ops, bit for bit
    rng = np.random.default_rng(1)
    a, b = (rng.standard_normal((4, 5)).astype(dtype) for _ in range(2))
    c = (rng.random(5) + 0.5).astype(dtype)
    e = {k: ember.tensor(v) for k, v in dict(a=a, b=b, c=c).items()}
    for w in (0.1, 0.9):
        x = e["a"].clone()
        assert x.lerp_(e["b"], w) is x
        assert np.array_equal(x.numpy(), ember.lerp(e["a"], e["b"], w).numpy())
    for op in ("addcmul", "addcdiv"):
        x = e["a"].clone()
        version = x._version
        getattr(x, op + "_")(e["b"], e["c"], value=-0.3)
        assert x._version == version + 1
        assert np.array_equal(x.numpy(), getattr(ember, op)(e["a"], e["b"], e["c"], value=-0.3).numpy())


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta",
                                  "Adamax", "NAdam", "RAdam", "ASGD", "Rprop", "Adafactor"])
def test_optimizer_state_dict_layout_as_torch(torch, name):
    """state_dict()'s param_groups hold PyTorch's keys and defaults in its order, and each
    parameter's state PyTorch's entries (tensors of the same dtype and shape)."""
    def layout(lib):
        p = lib.nn.Parameter(lib.ones(3))
        opt = getattr(lib.optim, name)([p], lr=0.1)
        p.grad = lib.full((3,), 0.5)
        opt.step()
        sd = opt.state_dict()
        state = {k: (str(v.dtype), tuple(v.shape)) if hasattr(v, "dtype") else type(v).__name__
                 for k, v in sd["state"].get(0, {}).items()}
        return list(sd), list(sd["param_groups"][0].items()), state
    assert layout(ember) == layout(torch)
