"""ember.utils.checkpoint: gradients equal to the un-checkpointed ones (dropout included, by
replaying the RNG state), no graph kept through the checkpointed forward, and PyTorch's
warnings and errors."""
import warnings

import numpy as np
import pytest

import ember
from ember.utils.checkpoint import checkpoint, checkpoint_sequential


def _model():
    ember.manual_seed(0)
    return ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Tanh(), ember.nn.Dropout(0.5),
                               ember.nn.Linear(8, 6), ember.nn.ReLU(), ember.nn.Linear(6, 3))


def _grads(model, x, run):
    model.zero_grad()
    x.grad = None
    ember.manual_seed(7)
    y = run(model, x)
    (y ** 2).sum().backward()
    return [y.detach(), x.grad] + [p.grad for p in model.parameters()]


@pytest.mark.parametrize("use_reentrant", [True, False])
def test_gradients_equal_the_plain_ones_with_dropout(use_reentrant):
    model = _model()
    x = ember.randn(5, 4, requires_grad=True)
    plain = _grads(model, x, lambda m, t: m(t))
    ck = _grads(model, x, lambda m, t: checkpoint(m, t, use_reentrant=use_reentrant))
    seq = _grads(model, x, lambda m, t: checkpoint_sequential(m, 3, t,
                                                              use_reentrant=use_reentrant))
    for a, b, c in zip(plain, ck, seq):
        np.testing.assert_allclose(b.numpy(), a.numpy(), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(c.numpy(), a.numpy(), rtol=1e-6, atol=1e-7)


def test_without_rng_preservation_dropout_masks_differ():
    model = _model()
    x = ember.randn(64, 4, requires_grad=True)
    plain = _grads(model, x, lambda m, t: m(t))
    ck = _grads(model, x, lambda m, t: checkpoint(m, t, use_reentrant=True,
                                                  preserve_rng_state=False))
    assert not np.allclose(ck[1].numpy(), plain[1].numpy())


def test_reentrant_forward_keeps_no_graph_of_the_function():
    x = ember.randn(3, requires_grad=True)
    seen = []

    def f(t):
        seen.append(ember.is_grad_enabled())
        return t.sin().exp()
    y = checkpoint(f, x, use_reentrant=True)
    assert type(y.grad_fn).__name__ == "CheckpointFunctionBackward"
    y.sum().backward()
    assert seen == [False, True]  # forward without a graph, recomputation with one
    np.testing.assert_allclose(x.grad.numpy(), (x.cos() * x.sin().exp()).detach().numpy(),
                               rtol=1e-6)


def test_non_reentrant_works_with_autograd_grad_and_kwargs():
    lin = ember.nn.Linear(3, 2)
    x = ember.randn(4, 3, requires_grad=True)

    def f(t, scale=1.0):
        return lin(t).tanh() * scale
    y = checkpoint(f, x, use_reentrant=False, scale=3.0)
    gx, gw = ember.autograd.grad(y.sum(), (x, lin.weight), create_graph=True)
    ref_x, ref_w = ember.autograd.grad(f(x, scale=3.0).sum(), (x, lin.weight))
    np.testing.assert_allclose(gx.detach().numpy(), ref_x.numpy(), rtol=1e-6)
    np.testing.assert_allclose(gw.detach().numpy(), ref_w.numpy(), rtol=1e-6)
    assert gx.requires_grad  # a graph of the recomputation: double backward works
    (gx ** 2).sum().backward()
    assert x.grad is not None and lin.weight.grad is not None


def test_non_reentrant_parameters_get_grads_when_the_input_does_not_require_grad():
    lin = ember.nn.Linear(3, 2)
    x = ember.randn(4, 3)
    checkpoint(lin, x, use_reentrant=False).sum().backward()
    np.testing.assert_allclose(lin.weight.grad.numpy(), np.tile(x.sum(0).numpy(), (2, 1)),
                               rtol=1e-6)


def _warnings_of(lib, call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call(lib)
    return [(w.category, str(w.message)) for w in caught]


@pytest.mark.parametrize("call", [
    lambda L: L.utils.checkpoint.checkpoint(lambda t: t * 2, L.ones(2, requires_grad=True)),
    lambda L: L.utils.checkpoint.checkpoint_sequential(
        L.nn.Sequential(L.nn.Identity(), L.nn.Identity()), 2, L.ones(2, requires_grad=True)),
    lambda L: L.utils.checkpoint.checkpoint(lambda t: t * 2, L.ones(2), use_reentrant=True),
    lambda L: L.utils.checkpoint.checkpoint(lambda t: t * 2, L.ones(2), use_reentrant=False),
])
def test_warnings_match_torch(torch, call):
    import torch.utils.checkpoint  # noqa: F401
    assert _warnings_of(ember, call) == _warnings_of(torch, call)


@pytest.mark.parametrize("call", [
    lambda L: L.utils.checkpoint.checkpoint(lambda t, k: t * k, L.ones(2), use_reentrant=True,
                                            k=2),
    lambda L: L.utils.checkpoint.checkpoint(lambda t: t, L.ones(2), use_reentrant=True,
                                            debug=True),
    lambda L: L.utils.checkpoint.checkpoint_sequential(
        L.nn.Sequential(L.nn.Identity()), 1, L.ones(2), use_reentrant=False, k=2),
])
def test_errors_match_torch(torch, call):
    import torch.utils.checkpoint  # noqa: F401
    with pytest.raises(Exception) as mine:
        call(ember)
    with pytest.raises(Exception) as theirs:
        call(torch)
    assert mine.type is theirs.type and str(mine.value) == str(theirs.value)


def test_backward_without_differentiable_output_raises_as_torch():
    x = ember.ones(2, requires_grad=True)
    y = checkpoint(lambda t: t.detach() * 3, x, use_reentrant=True)
    assert y.requires_grad  # every output of the checkpoint node is marked, as in torch
    with pytest.raises(RuntimeError, match="none of output has requires_grad=True, this "
                                           "checkpoint\\(\\) is not necessary"):
        y.sum().backward()


def test_import_torch_utils_checkpoint_resolves_to_ember():
    import subprocess
    import sys
    code = ("import ember.compat; ember.compat.install(); import torch;"
            " from torch.utils.checkpoint import checkpoint; x = torch.ones(2, requires_grad=True);"
            " checkpoint(lambda t: (t ** 2).sum(), x, use_reentrant=False).backward();"
            " print(checkpoint.__module__, x.grad.tolist())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split(None, 1) == ["ember.utils.checkpoint", "[2.0, 2.0]\n"]
