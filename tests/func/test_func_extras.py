"""torch.func's functionalize, linearize, stack_module_state, replace_all_batch_norm_modules_,
debug_unwrap and rearrange: values against PyTorch, and the behaviour each promises."""
import numpy as np
import pytest

import ember
from ember import nn
from ember.func import (debug_unwrap, functionalize, grad, linearize, rearrange,
                        replace_all_batch_norm_modules_, stack_module_state, vmap,
                        functional_call)


def test_functionalize_copies_input_mutations_back_and_never_aliases():
    def f(x):
        y = x.view(-1)
        y.add_(1)
        return y, x
    for remove in ("mutations", "mutations_and_views"):
        x = ember.zeros(2, 2)
        y, x_out = functionalize(f, remove=remove)(x)
        assert x.tolist() == [[1.0, 1.0], [1.0, 1.0]]      # the mutation reached the input
        assert x_out is not x and not np.shares_memory(x_out.numpy(), x.numpy())
        assert not np.shares_memory(y.numpy(), x.numpy())
        assert (y._base is None) == (remove == "mutations_and_views")
    out = functionalize(lambda t: t)(x)
    assert out is not x and out.tolist() == x.tolist()


def test_functionalize_keeps_gradients_and_rejects_bad_remove(torch):
    g = grad(functionalize(lambda t: (t * 2).sin().sum()))(ember.ones(3))
    tg = torch.func.grad(torch.func.functionalize(lambda t: (t * 2).sin().sum()))(torch.ones(3))
    np.testing.assert_allclose(g.numpy(), tg.numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError) as e:
        functionalize(lambda t: t, remove="bad")
    with pytest.raises(RuntimeError) as t:
        torch.func.functionalize(lambda t: t, remove="bad")
    assert str(e.value) == str(t.value)


def test_linearize_matches_torch(torch):
    def f(a, b):
        return a.sin() * b, a + b.exp()
    x = np.array([0.3, -1.2, 2.0])
    out, jvp_fn = linearize(f, ember.tensor(x), ember.tensor(x * 3))
    tout, tjvp_fn = torch.func.linearize(f, torch.tensor(x), torch.tensor(x * 3))
    for e, t in zip(out, tout):
        np.testing.assert_allclose(e.numpy(), t.numpy())
    tangents = (np.array([1.0, 0.5, -2.0]), np.array([0.1, 0.0, 3.0]))
    for _ in range(2):  # the function is reusable
        for e, t in zip(jvp_fn(*map(ember.tensor, tangents)), tjvp_fn(*map(torch.tensor, tangents))):
            np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12)
    for bad in ((ember.ones(4), ember.ones(3)),
                (ember.ones(3, dtype=ember.float32), ember.ones(3, dtype=ember.float64))):
        with pytest.raises(RuntimeError, match="tangent:0 with (shape|dtype)"):
            jvp_fn(*bad)
    with pytest.raises(RuntimeError, match="same argspec as the primals"):
        jvp_fn(ember.ones(3, dtype=ember.float64))


def test_stack_module_state_ensembles_with_vmap(torch):
    ember.manual_seed(0)
    models = [nn.Linear(3, 2) for _ in range(4)]
    params, buffers = stack_module_state(models)
    assert set(params) == {"weight", "bias"} and params["weight"].shape == (4, 2, 3)
    assert params["weight"].is_leaf and params["weight"].requires_grad
    x = ember.randn(5, 3)

    def call(p, b, data):
        return functional_call(models[0], (p, b), (data,))
    out = vmap(call, in_dims=(0, 0, None))(params, buffers, x)
    for i, m in enumerate(models):
        np.testing.assert_allclose(out[i].detach().numpy(), m(x).detach().numpy(), rtol=1e-6)
    with pytest.raises(RuntimeError, match="at least one model, got 0"):
        stack_module_state([])
    models[1].eval()
    with pytest.raises(RuntimeError, match="same training/eval mode"):
        stack_module_state(models)
    with pytest.raises(RuntimeError, match="same class"):
        stack_module_state([nn.Linear(3, 2), nn.Bilinear(3, 3, 2)])
    models = [nn.Linear(3, 2) for _ in range(2)]
    models[1].bias.requires_grad_(False)
    with pytest.raises(RuntimeError, match="Expected bias from each model to have the same"):
        stack_module_state(models)


def test_replace_all_batch_norm_modules_():
    net = nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2), nn.Sequential(nn.BatchNorm1d(4)))
    assert replace_all_batch_norm_modules_(net) is net
    for bn in (net[1], net[2][0]):
        assert bn.running_mean is None and bn.running_var is None
        assert bn.num_batches_tracked is None and not bn.track_running_stats
    assert "running_mean" not in dict(net.named_buffers())
    root = nn.BatchNorm1d(3)
    replace_all_batch_norm_modules_(root)
    assert root.running_mean is None
    root.eval()
    x = ember.randn(4, 3)
    y = root(x)   # batch statistics even in eval mode
    np.testing.assert_allclose(y.mean(0).detach().numpy(), 0, atol=1e-6)


def test_debug_unwrap_gives_the_tensor():
    x = ember.ones(2)
    assert debug_unwrap(x) is x and debug_unwrap(x, recurse=False) is x
    seen = []
    vmap(lambda row: seen.append(debug_unwrap(row)) or row)(ember.ones(3, 2))
    assert all(isinstance(t, ember.Tensor) and t.shape == (2,) for t in seen)


PATTERNS = [("a b c -> c a b", {}), ("a b c -> (a b) c", {}), ("a b (c d) -> a (d b) c", {"d": 2}),
            ("a ... -> ... a", {}), ("... c -> c ...", {}), ("a b c -> a 1 b c", {}),
            ("a b c -> a () b c", {}), ("a b c -> a b c 1 1", {}), ("A b c -> A (b c)", {}),
            ("a b c->c b a", {}), ("a ... -> a (...)", {}), ("a b c -> c (b a)", {}),
            ("... -> ...", {}), ("a b ... c -> c ... b a", {}), ("(a b) c d -> a b c d", {"a": 1}),
            ("a b c -> a b c", {"a": 2})]
ERRORS = [("a b c -> a b", {}), ("a b -> a b", {}), ("a a c -> a c", {}), ("a b c", {}),
          ("a b c -> (a b c", {}), ("a b c -> a b c)", {}), ("a ... c -> ... ... c", {}),
          ("a b c -> a b 2", {}), ("a b c -> _ b c", {}), ("a b c -> a b c ...", {}),
          ("a b c -> a (b c) (b)", {})]


@pytest.mark.parametrize("pattern,lengths", PATTERNS)
def test_rearrange_matches_torch(torch, pattern, lengths):
    x = np.arange(24.0).reshape(2, 3, 4)
    e = rearrange(ember.tensor(x), pattern, **lengths)
    t = torch.func.rearrange(torch.tensor(x), pattern, **lengths)
    assert tuple(e.shape) == tuple(t.shape)
    np.testing.assert_array_equal(e.numpy(), t.numpy())


@pytest.mark.parametrize("pattern,lengths", ERRORS)
def test_rearrange_errors_match_torch(torch, pattern, lengths):
    with pytest.raises(ValueError) as e:
        rearrange(ember.ones(2, 3, 4), pattern, **lengths)
    with pytest.raises(ValueError) as t:
        torch.func.rearrange(torch.ones(2, 3, 4), pattern, **lengths)
    assert str(e.value) == str(t.value)


def test_rearrange_stacks_lists_binds_sizes_and_differentiates():
    out = rearrange([ember.ones(2, 3), ember.zeros(2, 3)], "n a b -> a (n b)")
    assert out.tolist() == [[1.0] * 3 + [0.0] * 3] * 2
    x = ember.arange(24.0).reshape(6, 4).requires_grad_()
    y = rearrange(x, "(a b) c -> b a c", a=2)
    assert y.shape == (3, 2, 4) and y[1, 1, 0].item() == 16.0
    (y * ember.arange(24.0).reshape(3, 2, 4)).sum().backward()
    assert x.grad[3, 0].item() == 4.0   # x[3] is y[0, 1], whose weight there is 4
    for kwargs, message in (({}, "cannot infer the sizes of two dimensions"),
                            ({"a": 4}, "does not evenly fit"),
                            ({"a": 2, "b": 4}, r"Dimension sizes to do not match \(6 != 8\)")):
        with pytest.raises(Exception, match=message) as info:
            rearrange(ember.ones(6, 4), "(a b) c -> a b c", **kwargs)
        assert type(info.value).__name__ == "DimensionBindError"
    with pytest.raises(TypeError, match="axis lengths must be integers"):
        rearrange(ember.ones(2, 3), "a b -> a b", a=2.0)
    with pytest.raises(ValueError, match="Identifiers not found"):
        rearrange(ember.ones(2, 3), "a b -> a b", e=2)
