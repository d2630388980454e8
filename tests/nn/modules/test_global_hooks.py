"""`torch.nn.modules.module`'s global hooks: registered once, run for every module, in
PyTorch's order (global before the module's own), removable through their handles."""
import pytest

import ember
from ember.nn.modules import module as M


@pytest.fixture(params=["ember", "torch"])
def lib(request):
    if request.param == "torch":
        return pytest.importorskip("torch")
    return ember


def _events(lib):
    """The calls a small model's forward and backward make to every kind of global hook."""
    mm = lib.nn.modules.module
    log = []
    handles = [
        mm.register_module_forward_pre_hook(lambda m, a: log.append(("pre", type(m).__name__))),
        mm.register_module_forward_hook(lambda m, a, o: log.append(("fwd", type(m).__name__))),
        mm.register_module_forward_hook(
            lambda m, a, k, o: log.append(("fwd_kw", type(m).__name__, sorted(k))),
            with_kwargs=True),
        mm.register_module_full_backward_pre_hook(
            lambda m, go: log.append(("bw_pre", type(m).__name__, len(go)))),
        mm.register_module_full_backward_hook(
            lambda m, gi, go: log.append(("bw", type(m).__name__, len(gi)))),
    ]
    try:
        model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.Tanh())
        own = model[0].register_forward_hook(lambda m, a, o: log.append(("own", "Linear")))
        x = lib.ones(4, 3, requires_grad=True)
        model(x).sum().backward()
        own.remove()
    finally:
        for h in handles:
            h.remove()
    model(x)  # removed: no more events
    return log


def test_forward_and_backward_global_hooks_match_torch(torch):
    assert _events(ember) == _events(torch)


def test_global_forward_hook_can_replace_output_and_runs_before_own(lib):
    mm = lib.nn.modules.module
    lin = lib.nn.Linear(2, 2)
    order = []
    lin.register_forward_hook(lambda m, a, o: order.append("own"))
    h = mm.register_module_forward_hook(lambda m, a, o: order.append("global") or o * 0)
    try:
        out = lin(lib.ones(1, 2))
    finally:
        h.remove()
    assert order == ["global", "own"] and out.abs().sum().item() == 0


def _registrations(lib):
    mm = lib.nn.modules.module
    seen = []

    def on_param(module, name, param):
        seen.append(("param", type(module).__name__, name))

    def on_buffer(module, name, buf):
        seen.append(("buffer", type(module).__name__, name))
        return buf + 1 if buf is not None else None

    def on_module(module, name, sub):
        seen.append(("module", type(module).__name__, name))
        return lib.nn.Identity() if isinstance(sub, lib.nn.ReLU) else None

    handles = [mm.register_module_parameter_registration_hook(on_param),
               mm.register_module_buffer_registration_hook(on_buffer),
               mm.register_module_module_registration_hook(on_module)]
    try:
        model = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU())
        bn = lib.nn.BatchNorm1d(2)
        model.extra = lib.nn.ReLU()
        model.register_buffer("scale", lib.zeros(1))
    finally:
        for h in handles:
            h.remove()
    assert isinstance(model[1], lib.nn.Identity) and isinstance(model.extra, lib.nn.Identity)
    assert model.scale.item() == 1.0
    assert bn.running_mean.tolist() == [0.0, 0.0]  # reset_parameters zeroed it after the hook
    lib.nn.Linear(1, 1)
    return seen


def test_registration_hooks_see_and_may_replace_what_is_registered(lib):
    assert ("buffer", "BatchNorm1d", "num_batches_tracked") in _registrations(lib)


def test_registration_hook_events_match_torch(torch):
    assert _registrations(ember) == _registrations(torch)


def test_backward_hook_kinds_cannot_be_mixed(lib):
    mm = lib.nn.modules.module
    saved = mm._global_is_full_backward_hook
    try:
        h = mm.register_module_full_backward_hook(lambda m, gi, go: None)
        h.remove()
        with pytest.raises(RuntimeError, match="Cannot use both regular backward hooks and full"):
            mm.register_module_backward_hook(lambda m, gi, go: None)
    finally:
        mm._global_is_full_backward_hook = saved


def test_always_call_hook_runs_when_a_later_hook_raises():
    calls = []

    def boom(m, a, o):
        raise ValueError("boom")

    h1 = M.register_module_forward_hook(boom)
    h2 = M.register_module_forward_hook(lambda m, a, o: calls.append("always"), always_call=True)
    try:
        with pytest.raises(ValueError, match="boom"):
            ember.nn.Identity()(ember.ones(1))
    finally:
        h1.remove()
        h2.remove()
    assert calls == ["always"]
    assert not M._global_forward_hooks_always_called
