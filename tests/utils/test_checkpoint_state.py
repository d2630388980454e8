"""torch.utils.checkpoint's helpers around the checkpoint itself (policies, device RNG
states, the debug switch, graph execution groups) and torch.utils.hooks.BackwardHook."""
import warnings

import pytest

import ember
from ember.utils import checkpoint as ckpt


def test_policy_and_context_match_torch(torch):
    theirs = torch.utils.checkpoint
    assert [(p.name, p.value) for p in ckpt.CheckpointPolicy] == \
        [(p.name, p.value) for p in theirs.CheckpointPolicy]
    for lib in (ckpt, theirs):
        ctx = lib.SelectiveCheckpointContext(is_recompute=True)
        assert ctx.is_recompute is True and ctx.op_output is None
        with pytest.raises(TypeError):
            lib.SelectiveCheckpointContext(True)


def test_check_backward_validity_warns_as_torch(torch):
    for lib in (ember, torch):
        with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
            lib.utils.checkpoint.check_backward_validity([lib.ones(2), 3])
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            lib.utils.checkpoint.check_backward_validity([lib.ones(2, requires_grad=True)])


def test_device_states_round_trip(fake_cuda):
    x = ember.ones(2, device="cuda")
    ids, states = ckpt.get_device_states(x, [ember.ones(1)], "text")
    assert ids == [0] and len(states) == 1
    first = ember.rand(3, device="cuda")
    ckpt.set_device_states(ids, states, device_type="cuda")
    assert ember.equal(first, ember.rand(3, device="cuda"))
    assert ckpt.get_device_states(ember.ones(2)) == ([], [])
    ckpt.DefaultDeviceType._default_device_type = None  # found with the stand-in: forget it


def test_default_device_type(torch):
    for lib in (ckpt, torch.utils.checkpoint):
        assert lib.DefaultDeviceType.get_device_type() == "cpu"
        lib.DefaultDeviceType.set_device_type("cuda")
        assert lib.DefaultDeviceType.get_device_type() == "cuda"
        lib.DefaultDeviceType.set_device_type("cpu")


def test_graph_exec_group_does_not_nest(torch):
    for lib in (ckpt, torch.utils.checkpoint):
        with lib.GraphExecGroup() as group:
            assert lib.GraphExecGroup._get_current_group() is group
            with pytest.raises(RuntimeError, match="GraphExecGroup contexts cannot be nested"):
                with lib.GraphExecGroup():
                    pass
        assert lib.GraphExecGroup._get_current_group() is None


def test_set_checkpoint_debug_enabled_restores():
    with ckpt.set_checkpoint_debug_enabled(True):
        assert ckpt._checkpoint_debug_enabled is True
        with ckpt.set_checkpoint_debug_enabled(False):
            assert ckpt._checkpoint_debug_enabled is False
        x = ember.ones(3, requires_grad=True)
        ckpt.checkpoint(lambda t: t.sin(), x, use_reentrant=False).sum().backward()
    assert ckpt._checkpoint_debug_enabled is None
    assert ember.allclose(x.grad, ember.ones(3).cos())


def _hooked(lib):
    seen = []
    module = lib.nn.Linear(2, 2)
    with lib.no_grad():
        module.weight.copy_(lib.tensor([[1.0, 2.0], [3.0, 4.0]]))
        module.bias.zero_()
    hook = lib.utils.hooks.BackwardHook(
        module, [lambda m, gi, go: seen.append(("hook", gi[0].tolist(), go[0].tolist()))],
        [lambda m, go: seen.append(("pre", go[0].tolist()))])
    x = lib.tensor([[1.0, -1.0]], requires_grad=True)
    args = hook.setup_input_hook((x,))
    out = hook.setup_output_hook(module(*args))
    (out * lib.tensor([[1.0, 2.0]])).sum().backward()
    return seen


def test_backward_hook_matches_torch(torch):
    assert _hooked(ember) == _hooked(torch)
