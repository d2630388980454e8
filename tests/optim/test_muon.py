"""torch.optim.Muon (steps, defaults, param-group rules, state_dict, errors) and
swap_in_optimizer_params_and_state, against PyTorch."""
import numpy as np
import pytest

import ember


def _run(lib, steps=3, **group_kwargs):
    rng = np.random.default_rng(0)
    w = lib.nn.Parameter(lib.tensor(rng.standard_normal((7, 3)).astype(np.float32)))
    v = lib.nn.Parameter(lib.tensor(rng.standard_normal((3, 5)).astype(np.float32)))
    opt = lib.optim.Muon([{"params": [w]}, {"params": [v], **group_kwargs}], lr=0.02)
    for _ in range(steps):
        opt.zero_grad()
        ((w @ v).sin() ** 2).sum().backward()
        opt.step()
    return [w.detach().numpy(), v.detach().numpy()], opt


@pytest.mark.parametrize("group_kwargs", [
    {}, {"nesterov": False}, {"adjust_lr_fn": "match_rms_adamw"}, {"adjust_lr_fn": "original"},
    {"momentum": 0.0, "weight_decay": 0.0}, {"ns_steps": 2, "ns_coefficients": (2.0, -1.5, 0.5)}])
def test_steps_match_torch(torch, group_kwargs):
    (ew, ev), eopt = _run(ember, **group_kwargs)
    (tw, tv), topt = _run(torch, **group_kwargs)
    # the Newton-Schulz iteration runs in bfloat16 in both, rounding alike
    np.testing.assert_allclose(ew, tw, atol=1e-5)
    np.testing.assert_allclose(ev, tv, atol=1e-5)
    esd, tsd = eopt.state_dict(), topt.state_dict()
    assert esd["param_groups"] == tsd["param_groups"]
    for k in tsd["state"]:
        np.testing.assert_allclose(esd["state"][k]["momentum_buffer"].numpy(),
                                   tsd["state"][k]["momentum_buffer"].numpy(), atol=1e-6)


def test_defaults_and_state_dict_round_trip():
    p = ember.nn.Parameter(ember.randn(4, 4))
    opt = ember.optim.Muon([p])
    assert {k: v for k, v in opt.param_groups[0].items() if k != "params"} == {
        "lr": 1e-3, "weight_decay": 0.1, "momentum": 0.95, "nesterov": True,
        "ns_coefficients": (3.4445, -4.775, 2.0315), "eps": 1e-07, "ns_steps": 5,
        "adjust_lr_fn": None}
    p.grad = ember.randn(4, 4)
    opt.step()
    other = ember.optim.Muon([ember.nn.Parameter(p.detach().clone())])
    other.load_state_dict(opt.state_dict())
    np.testing.assert_array_equal(other.state_dict()["state"][0]["momentum_buffer"].numpy(),
                                  opt.state_dict()["state"][0]["momentum_buffer"].numpy())


@pytest.mark.parametrize("kwargs,params_shape", [
    ({"lr": -1.0}, (2, 2)), ({"momentum": -0.1}, (2, 2)), ({"weight_decay": -1.0}, (2, 2)),
    ({"adjust_lr_fn": "other"}, (2, 2)), ({}, (3,)), ({}, (2, 2, 2))])
def test_errors_match_torch(torch, kwargs, params_shape):
    with pytest.raises(ValueError) as e:
        ember.optim.Muon([ember.nn.Parameter(ember.zeros(params_shape))], **kwargs)
    with pytest.raises(ValueError) as t:
        torch.optim.Muon([torch.nn.Parameter(torch.zeros(params_shape))], **kwargs)
    assert str(e.value) == str(t.value)


def test_step_errors():
    p = ember.nn.Parameter(ember.zeros(2, 2, dtype=ember.complex64))
    p.grad = ember.zeros(2, 2, dtype=ember.complex64)
    with pytest.raises(RuntimeError, match="Muon does not support complex parameters"):
        ember.optim.Muon([p]).step()
    p = ember.nn.Parameter(ember.zeros(2, 2))
    opt = ember.optim.Muon([p], ns_steps=100)
    p.grad = ember.ones(2, 2)
    with pytest.raises(ValueError, match="must be less than 100"):
        opt.step()


def _swap_case(lib):
    rng = np.random.default_rng(1)
    model = lib.nn.Linear(3, 2)
    with lib.no_grad():
        model.weight.copy_(lib.tensor(rng.standard_normal((2, 3)).astype(np.float32)))
        model.bias.zero_()
    opt = lib.optim.Adam(model.parameters(), lr=0.1)
    model(lib.ones(4, 3)).sum().backward()
    opt.step()
    live = [p.detach().clone() for p in model.parameters()]
    params = {n: p.detach().clone().requires_grad_() for n, p in model.named_parameters()}
    osd = opt.state_dict()
    osd = {"state": {k: {kk: vv.clone() for kk, vv in v.items()} for k, v in osd["state"].items()},
           "param_groups": [dict(g, lr=0.5) for g in osd["param_groups"]]}
    for p in params.values():
        p.grad = lib.ones_like(p)
    groups_before = opt.param_groups[0]["params"]
    with lib.optim.swap_in_optimizer_params_and_state(opt, params, osd):
        assert opt.param_groups[0]["lr"] == 0.5
        opt.step()
    assert opt.param_groups[0]["params"] is groups_before and opt.param_groups[0]["lr"] == 0.1
    for p, before in zip(model.parameters(), live):
        np.testing.assert_array_equal(p.detach().numpy(), before.numpy())  # live model untouched
    return ([p.detach().numpy() for p in params.values()],
            [osd["state"][k]["exp_avg"].numpy() for k in sorted(osd["state"])],
            [osd["state"][k]["step"].item() for k in sorted(osd["state"])])


def test_swap_in_matches_torch(torch):
    e, t = _swap_case(ember), _swap_case(torch)
    for ea, ta in zip(e[0] + e[1], t[0] + t[1]):
        np.testing.assert_allclose(ea, ta, rtol=1e-6, atol=1e-7)
    assert e[2] == t[2] == [2.0, 2.0]   # in-place state updates reached the caller's dict


@pytest.mark.parametrize("case", ["uninitialized", "not_dict", "state_type", "groups_count",
                                  "group_keys", "param_count", "extra_state"])
def test_swap_in_errors_match_torch(torch, case):
    messages = []
    for lib in (ember, torch):
        p = lib.nn.Parameter(lib.ones(2))
        opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
        if case != "uninitialized":
            p.grad = lib.ones(2)
            opt.step()
        osd = opt.state_dict()
        swap = {"p": p.detach().clone()}
        osd = {"not_dict": [], "state_type": dict(osd, state=[]),
               "groups_count": dict(osd, param_groups=[]),
               "group_keys": dict(osd, param_groups=[dict(osd["param_groups"][0], extra=1)]),
               "param_count": dict(osd, param_groups=[dict(osd["param_groups"][0], params=[])]),
               "extra_state": dict(osd, state=dict(osd["state"], **{"7": {}}))}.get(case, osd)
        with pytest.raises(RuntimeError) as info:
            with lib.optim.swap_in_optimizer_params_and_state(opt, swap, osd):
                pass
        messages.append(str(info.value))
    assert messages[0] == messages[1]
