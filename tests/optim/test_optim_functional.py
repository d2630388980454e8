"""The functional forms (`optim.adam.adam`, `optim.sgd.sgd` ...) do the optimizer's update on
lists of parameters and state, as PyTorch's do; the global step hooks of `optim.optimizer`."""
import importlib

import numpy as np
import pytest

import ember

_B = dict(beta1=0.9, beta2=0.999)
# (module, function, names of the state lists after params and grads, keyword options,
#  how to make each state list's initial value: "zeros", "ones", "lr", "step", "none")
FUNCTIONAL = [
    ("adam", "adam", ["zeros", "zeros", "zeros", "step"],
     dict(amsgrad=True, lr=0.01, weight_decay=0.1, eps=1e-8, maximize=False, **_B)),
    ("adam", "adam", ["zeros", "zeros", "zeros", "step"],
     dict(amsgrad=False, lr=0.01, weight_decay=0.1, eps=1e-8, maximize=True,
          decoupled_weight_decay=True, **_B)),
    ("adamw", "adamw", ["zeros", "zeros", "zeros", "step"],
     dict(amsgrad=False, lr=0.01, weight_decay=0.1, eps=1e-8, maximize=False, **_B)),
    ("adamax", "adamax", ["zeros", "zeros", "step"],
     dict(lr=0.01, weight_decay=0.1, eps=1e-8, **_B)),
    ("sgd", "sgd", ["none"], dict(weight_decay=0.1, momentum=0.9, lr=0.1, dampening=0.0,
                                  nesterov=True, maximize=False)),
    ("rmsprop", "rmsprop", ["zeros", "zeros", "zeros", "step"],
     dict(lr=0.01, alpha=0.99, eps=1e-8, weight_decay=0.1, momentum=0.9, centered=True)),
    ("adagrad", "adagrad", ["zeros", "step"],
     dict(lr=0.1, weight_decay=0.1, lr_decay=0.01, eps=1e-10, maximize=True)),
    ("adadelta", "adadelta", ["zeros", "zeros", "step"],
     dict(lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.1, maximize=False)),
    ("nadam", "nadam", ["zeros", "zeros", "ones", "step"],
     dict(lr=0.01, weight_decay=0.1, momentum_decay=4e-3, eps=1e-8, **_B)),
    ("radam", "radam", ["zeros", "zeros", "step"],
     dict(lr=0.01, weight_decay=0.1, eps=1e-8, **_B)),
    ("asgd", "asgd", ["zeros", "ones", "lr", "step"],
     dict(lambd=1e-4, lr=0.01, t0=1e6, alpha=0.75, weight_decay=0.1)),
    ("rprop", "rprop", ["zeros", "lr", "step"],
     dict(step_size_min=1e-6, step_size_max=50, etaminus=0.5, etaplus=1.2)),
]


def _state(lib, kind, like):
    if kind == "zeros":
        return lib.zeros_like(like)
    if kind == "ones":
        return lib.ones((), dtype=lib.float32)
    if kind == "lr":
        return lib.full_like(like, 0.01) if like.dim() else lib.tensor(0.01)
    if kind == "step":
        return lib.zeros((), dtype=lib.float32)
    return None


def _run(lib, module, function, kinds, options, steps=3):
    rng = np.random.default_rng(0)
    params = [lib.tensor(rng.standard_normal(s).astype(np.float32)) for s in ((3, 4), (5,))]
    states = [[_state(lib, kind, p) if not (kind == "ones" and module == "asgd")
               else lib.ones((), dtype=lib.float32) for p in params] for kind in kinds]
    if module == "asgd":  # eta is a scalar tensor
        states[2] = [lib.tensor(0.01, dtype=lib.float32) for _ in params]
    update = getattr(importlib.import_module(f"{lib.__name__}.optim.{module}"), function)
    for _ in range(steps):
        grads = [lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32))
                 for p in params]
        update(params, grads, *states, **options)
    return [p.numpy() for p in params], [[s.numpy() if s is not None else None for s in lst]
                                         for lst in states]


@pytest.mark.parametrize("module,function,kinds,options", FUNCTIONAL,
                         ids=[f"{m}-{i}" for i, (m, *_) in enumerate(FUNCTIONAL)])
def test_functional_form_matches_torch(torch, module, function, kinds, options):
    ours, our_states = _run(ember, module, function, kinds, options)
    theirs, their_states = _run(torch, module, function, kinds, options)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    for lst_a, lst_b in zip(our_states, their_states):
        for a, b in zip(lst_a, lst_b):
            if a is not None:
                np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("module,name", [("adam", "Adam"), ("adamw", "AdamW"),
                                         ("adamax", "Adamax"), ("sgd", "SGD"),
                                         ("rmsprop", "RMSprop"), ("adagrad", "Adagrad"),
                                         ("adadelta", "Adadelta"), ("nadam", "NAdam"),
                                         ("radam", "RAdam"), ("asgd", "ASGD"),
                                         ("rprop", "Rprop")])
def test_optimizer_step_runs_its_functional_form(monkeypatch, module, name):
    """One update formula: the class's step hands its lists to the module's function."""
    mod = importlib.import_module(f"ember.optim.{module}")
    assert getattr(mod, name) is getattr(ember.optim, name)
    calls = []
    # AdamW is Adam with decoupled decay: its step runs `adam`
    target, function = (importlib.import_module("ember.optim.adam"), "adam") \
        if module == "adamw" else (mod, module)
    real = getattr(target, function)
    monkeypatch.setattr(target, function,
                        lambda *a, **k: calls.append(len(a[0])) or real(*a, **k))
    p = ember.zeros(3, requires_grad=True)
    p.grad = ember.ones(3)
    getattr(ember.optim, name)([p, ember.zeros(2, requires_grad=True)], lr=0.1).step()
    assert calls == [1] and not np.array_equal(p.detach().numpy(), np.zeros(3))


def test_functional_sgd_fills_the_momentum_buffer_list():
    p = ember.tensor([1.0, 2.0])
    buffers = [None]
    ember.optim.sgd.sgd([p], [ember.tensor([0.5, -1.0])], buffers, weight_decay=0.0,
                        momentum=0.9, lr=1.0, dampening=0.0, nesterov=False, maximize=False)
    assert buffers[0].tolist() == [0.5, -1.0] and p.tolist() == [0.5, 3.0]


def test_global_step_hooks_run_around_every_optimizer_and_can_be_removed():
    from ember.optim.optimizer import (register_optimizer_step_post_hook,
                                       register_optimizer_step_pre_hook)
    calls = []
    p = ember.zeros(2, requires_grad=True)
    p.grad = ember.ones(2)
    opt = ember.optim.SGD([p], lr=1.0)
    opt.register_step_pre_hook(lambda o, a, k: calls.append("own pre"))
    opt.register_step_post_hook(lambda o, a, k: calls.append("own post"))
    pre = register_optimizer_step_pre_hook(lambda o, a, k: calls.append(("pre", o is opt)))
    post = register_optimizer_step_post_hook(lambda o, a, k: calls.append("post"))
    try:
        opt.step()
    finally:
        pre.remove()
        post.remove()
    assert calls == [("pre", True), "own pre", "own post", "post"]
    calls.clear()
    opt.step()
    assert calls == ["own pre", "own post"] and p.tolist() == [-2.0, -2.0]


def test_a_pre_hook_may_replace_the_closure_and_a_bad_return_raises():
    p = ember.zeros(1, requires_grad=True)
    p.grad = ember.ones(1)
    opt = ember.optim.SGD([p], lr=1.0)
    handle = opt.register_step_pre_hook(lambda o, args, kwargs: (args[:1], {"closure":
                                                                            lambda: 7}))
    assert opt.step() == 7
    handle.remove()
    opt.register_step_pre_hook(lambda o, args, kwargs: 3)
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step()
