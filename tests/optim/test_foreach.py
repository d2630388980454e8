"""The foreach form of SGD, Adam/AdamW and RMSprop (ember/optim/_foreach.py) gives the
per-parameter loop's results bit for bit, bumps the same version counters, keeps the same
state_dict, and is taken exactly where it should be (foreach=None or True, fused=True; not
foreach=False nor differentiable=True)."""
import numpy as np
import pytest

import ember
from ember import optim
from ember.optim import _foreach

CONFIGS = [
    (optim.SGD, dict(lr=0.1)),
    (optim.SGD, dict(lr=0.1, momentum=0.9, weight_decay=0.01)),
    (optim.SGD, dict(lr=0.1, momentum=0.9, nesterov=True, maximize=True)),
    (optim.SGD, dict(lr=0.05, momentum=0.5, dampening=0.3)),
    (optim.Adam, dict(lr=0.01)),
    (optim.Adam, dict(lr=0.01, weight_decay=0.1, amsgrad=True, maximize=True)),
    (optim.Adam, dict(lr=0.01, betas=(0.3, 0.6))),      # lerp's other branch
    (optim.AdamW, dict(lr=0.01, weight_decay=0.1)),
    (optim.AdamW, dict(lr=0.01, amsgrad=True)),
    (optim.RMSprop, dict(lr=0.01)),
    (optim.RMSprop, dict(lr=0.01, momentum=0.9, centered=True, weight_decay=0.1)),
    (optim.RMSprop, dict(lr=0.01, alpha=0.3, centered=True, maximize=True)),
]
SHAPES = [(3, 4), (5,), (), (2, 3, 2)]


def _params(dtype, seed=0):
    rng = np.random.default_rng(seed)
    return [ember.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True)
            for s in SHAPES]


def _grads(step, dtype):
    rng = np.random.default_rng(100 + step)
    out = []
    for s in SHAPES:
        g = rng.standard_normal(s + (2,)).astype(dtype)
        out.append(ember.tensor(g)[..., 0] if s else ember.tensor(g[..., 0]))  # non-contiguous
    return out


def _run(cls, kw, dtype, steps=4, **extra):
    params = _params(dtype)
    opt = cls(params, **kw, **extra)
    for step in range(steps):
        for p, g in zip(params, _grads(step, dtype)):
            p.grad = g if step != 2 or p.dim() != 1 else None  # a parameter without a grad
        opt.step()
    return params, opt


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cls,kw", CONFIGS)
def test_same_bits_as_the_loop(cls, kw, dtype, monkeypatch):
    calls = []
    name = {optim.AdamW: "adam"}.get(cls, cls.__name__.lower())
    real = getattr(_foreach, name)
    monkeypatch.setattr(_foreach, name, lambda *a, **k: calls.append(1) or real(*a, **k))
    fast, fast_opt = _run(cls, kw, dtype)
    assert calls
    del calls[:]
    slow, slow_opt = _run(cls, kw, dtype, foreach=False)
    assert not calls
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())
        assert a._version == b._version
    fs, ss = fast_opt.state_dict(), slow_opt.state_dict()
    assert fs["state"].keys() == ss["state"].keys()
    for k in fs["state"]:
        assert fs["state"][k].keys() == ss["state"][k].keys()
        for name_, v in fs["state"][k].items():
            w = ss["state"][k][name_]
            np.testing.assert_array_equal(v.numpy(), w.numpy(), err_msg=name_)
            assert v.dtype == w.dtype and v._version == w._version, name_
    # a state saved by one path continues on the other
    slow_opt.load_state_dict(fs)
    fast_opt.load_state_dict(ss)


@pytest.mark.parametrize("cls,kw", [CONFIGS[1], CONFIGS[5], CONFIGS[10]])
def test_foreach_and_fused_flags(cls, kw, monkeypatch):
    taken = []
    monkeypatch.setattr(_foreach, "usable",
                        lambda *a, _real=_foreach.usable: taken.append(_real(*a)) or taken[-1])
    _run(cls, kw, "float32", steps=1, foreach=True)
    _run(cls, kw, "float32", steps=1, differentiable=True)
    assert taken == [True, False]
    if cls is not optim.RMSprop:
        _run(cls, kw, "float32", steps=1, foreach=False, fused=True)
        assert taken[-1] is True


def test_functional_forms_with_grad_mode_keep_the_loop():
    # params requiring grad, grad mode on: the loop's error (in-place on a leaf), not a silent
    # write into the array
    p = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        optim.sgd.sgd([p], [ember.ones(3)], [None], weight_decay=0, momentum=0, lr=0.1,
                      dampening=0, nesterov=False, maximize=False)


def test_torch_state_dict_loads(torch):
    t_p = torch.nn.Parameter(torch.ones(3))
    t_opt = torch.optim.Adam([t_p], lr=0.1, amsgrad=True)
    t_p.grad = torch.tensor([0.1, -0.2, 0.3])
    t_opt.step()
    e_p = ember.ones(3, requires_grad=True)
    e_opt = optim.Adam([e_p], lr=0.1, amsgrad=True)
    e_opt.load_state_dict({"state": {0: {k: ember.tensor(v.numpy())
                                         for k, v in t_opt.state_dict()["state"][0].items()}},
                           "param_groups": t_opt.state_dict()["param_groups"]})
    e_p.data = ember.tensor(t_p.detach().numpy())
    for _ in range(2):
        t_p.grad = torch.tensor([0.1, -0.2, 0.3])
        e_p.grad = ember.tensor([0.1, -0.2, 0.3])
        t_opt.step()
        e_opt.step()
    np.testing.assert_allclose(e_p.detach().numpy(), t_p.detach().numpy(), rtol=1e-6)


@pytest.mark.parametrize("cls,kw", [CONFIGS[1], CONFIGS[4], CONFIGS[7]])
def test_flat_form_on_the_host_only_for_few_numbers(cls, kw, monkeypatch):
    """On the CPU the flat buffers serve small parameter lists (their bits are the loop's:
    test_same_bits_as_the_loop runs them); past CPU_MAX_NUMBERS the loop runs."""
    taken = []
    name = "_sgd_flat" if cls is optim.SGD else "_adam_flat"
    real = getattr(_foreach, name)
    monkeypatch.setattr(_foreach, name, lambda *a, **k: taken.append(1) or real(*a, **k))
    _run(cls, kw, "float32", steps=2)
    assert len(taken) == 2
    monkeypatch.setattr(_foreach._Flat, "CPU_MAX_NUMBERS", sum(map(np.prod, SHAPES)) - 1)
    del taken[:]
    _run(cls, kw, "float32", steps=2)
    assert not taken


# ---- the flat form on a device (strict CuPy stand-in) -------------------------------------------
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cls,kw", [c for c in CONFIGS if c[0] in (optim.Adam, optim.AdamW)
                                    or c[0] is optim.SGD and c[1].get("momentum")])
def test_flat_form_on_a_device_gives_the_loops_bits(cls, kw, dtype, fake_cuda, monkeypatch):
    """Flat buffers on 'cuda': the same parameters, state and versions as the loop, through a
    step where one parameter has no gradient (the layout is made afresh, twice) and a
    state_dict loaded mid-run (the loaded state is laid out again)."""
    taken = []
    name = "_sgd_flat" if cls is optim.SGD else "_adam_flat"
    real = getattr(_foreach, name)
    monkeypatch.setattr(_foreach, name, lambda *a, **k: taken.append(1) or real(*a, **k))
    from ember._tensor import xp_of
    from ember.ops import _device_kernels
    one = ember.ones(1, dtype=getattr(ember, dtype), device="cuda")
    _device_kernels.usable(xp_of(one), one._array)  # every kernel compiled (and run) first
    made, inner = [], _device_kernels._compiled  # the kernels called from here on, by name
    monkeypatch.setattr(_device_kernels, "_compiled",
                        lambda xp, kernel: made.append(kernel.name) or inner(xp, kernel))

    def run(**extra):
        params = [ember.tensor(p.detach().numpy(), device="cuda", requires_grad=True)
                  for p in _params(dtype)]
        opt = cls(params, **kw, **extra)
        for step in range(5):
            for p, g in zip(params, _grads(step, dtype)):
                p.grad = g.to("cuda") if step != 2 or p.dim() != 1 else None
            opt.step()
            if step == 3:
                opt.load_state_dict(opt.state_dict())
        return params, opt

    fast, fast_opt = run()
    # Adam's step counts part after the step without a gradient: the loop takes over then
    expected = 5 if cls is optim.SGD else 3
    assert len(taken) == expected
    # the formulas run as one kernel where it applies (not nesterov, amsgrad or lerp's other
    # branch), else as array calls
    # with the parameters' writes in the same launch (each through its address)
    kernel = {optim.SGD: "ember_sgd_momentum", optim.Adam: "ember_adam",
              optim.AdamW: "ember_adamw" if kw.get("weight_decay") else "ember_adam"}[cls]
    fused = not (kw.get("nesterov") or kw.get("amsgrad") or kw.get("betas", (0.9,))[0] < 0.5)
    assert (kernel + "_each" in made) == fused and kernel not in made
    # where not, every parameter takes its update in one launch of its own (AdamW's decay
    # makes it a write of the new values); SGD's first step makes its buffers, not a kernel
    each = "ember_set_each" if cls is optim.AdamW else "ember_add_each"
    assert made.count(each) == (1 if cls is optim.SGD else 0) if fused else expected
    # and no scratch buffer as large as the parameters is kept between steps
    first_state = next(iter(fast_opt.state[fast[0]].values()))
    if first_state.dim() == 0:  # Adam's step count comes first
        first_state = fast_opt.state[fast[0]]["exp_avg"]
    assert _foreach._Flat._kept[id(first_state)][1]._update is None
    slow, slow_opt = run(foreach=False)
    assert len(taken) == expected
    for a, b in zip(fast, slow):
        np.testing.assert_array_equal(a.detach().cpu().numpy(), b.detach().cpu().numpy())
        assert a._version == b._version
    fs, ss = fast_opt.state_dict()["state"], slow_opt.state_dict()["state"]
    for k in ss:
        for name_, w in ss[k].items():
            v = fs[k][name_]
            np.testing.assert_array_equal(v.cpu().numpy(), w.cpu().numpy(), err_msg=name_)
            assert v._version == w._version and v.device == w.device, name_


@pytest.mark.parametrize("cls,kw", [CONFIGS[1], CONFIGS[4], CONFIGS[7]])
def test_parameters_a_launch_cannot_write_take_the_loops_writes(cls, kw, fake_cuda, monkeypatch):
    """The one-launch update (`_Targets`) is not taken for parameters that overlap (two
    threads would write one address: the stand-in fails such a kernel as a race) or are not
    contiguous; those not taken give the loop's bits (overlapping parameters give no loop's
    bits to compare with: the flat form computes every update before it writes, as
    PyTorch's foreach form does)."""
    from ember._tensor import xp_of
    from ember.ops import _device_kernels
    one = ember.ones(1, device="cuda")
    _device_kernels.usable(xp_of(one), one._array)  # every kernel compiled (and run) first
    made, inner = [], _device_kernels._compiled
    monkeypatch.setattr(_device_kernels, "_compiled",
                        lambda xp, kernel: made.append(kernel.name) or inner(xp, kernel))

    def run(layout, **extra):
        base = ember.tensor(np.linspace(-1, 1, 24, dtype=np.float32), device="cuda")
        params = [ember.nn.Parameter(v) for v in layout(base)]
        opt = cls(params, **kw, **extra)
        for step in range(3):
            for p in params:
                p.grad = ember.full_like(p, 0.25 * (step + 1))
            opt.step()
        return base.cpu().numpy()

    layouts = {"overlapping": lambda b: [b[:10], b[6:16].view(2, 5)],
               "strided": lambda b: [b[:12].view(3, 4).t(), b[12:]],
               "apart": lambda b: [b[:10], b[12:].view(3, 4)]}
    for name, layout in layouts.items():
        del made[:]
        fast = run(layout)
        assert any(k.endswith("_each") for k in made) == (name == "apart"), name
        if name != "overlapping":
            np.testing.assert_array_equal(fast, run(layout, foreach=False), err_msg=name)
