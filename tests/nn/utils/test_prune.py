"""nn.utils.prune against PyTorch: same reparametrisation (`<name>_orig` parameter,
`<name>_mask` buffer, a forward pre-hook), same masks for the deterministic methods from the
same weights, right counts and structure for the random ones, iterative pruning through a
PruningContainer, and `remove` making it permanent."""
import importlib

import numpy as np
import pytest

import ember
import ember.nn.utils.prune as prune


def _pair(torch, shape=(6, 5), seed=0):
    """An ember and a torch Linear/Conv holding the same distinct weights."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal(shape).astype(np.float32)
    b = rng.standard_normal(shape[0]).astype(np.float32)
    mods = []
    for lib in (ember, torch):
        m = lib.nn.Linear(shape[1], shape[0]) if len(shape) == 2 else \
            lib.nn.Conv2d(shape[1], shape[0], shape[2:])
        with lib.no_grad():
            m.weight.copy_(lib.tensor(w))
            m.bias.copy_(lib.tensor(b))
        mods.append(m)
    return mods


@pytest.fixture
def tprune(torch):
    return importlib.import_module("torch.nn.utils.prune")


def _np(t):
    return t.detach().numpy()


@pytest.mark.parametrize("steps", [
    [("l1_unstructured", dict(amount=0.3))],
    [("l1_unstructured", dict(amount=7))],
    [("ln_structured", dict(amount=0.5, n=2, dim=0))],
    [("ln_structured", dict(amount=2, n=1, dim=-1))],
    [("ln_structured", dict(amount=1, n=float("inf"), dim=1))],
    [("l1_unstructured", dict(amount=0.2)), ("ln_structured", dict(amount=2, n=1, dim=0)),
     ("l1_unstructured", dict(amount=0.5))],
    [("ln_structured", dict(amount=1, n=2, dim=0)), ("ln_structured", dict(amount=0.4, n=2,
                                                                          dim=0))],
    [("identity", {}), ("l1_unstructured", dict(amount=3))],
])
def test_deterministic_pruning_matches_torch(torch, tprune, steps):
    ours, theirs = _pair(torch)
    for fn, kw in steps:
        getattr(prune, fn)(ours, "weight", **kw)
        getattr(tprune, fn)(theirs, "weight", **kw)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    np.testing.assert_array_equal(_np(ours.weight_mask), _np(theirs.weight_mask))
    np.testing.assert_array_equal(_np(ours.weight), _np(theirs.weight))
    assert [type(h).__name__ for h in ours._forward_pre_hooks.values()] == \
        [type(h).__name__ for h in theirs._forward_pre_hooks.values()]
    x = np.ones((2, 5), np.float32)
    np.testing.assert_allclose(_np(ours(ember.tensor(x))), _np(theirs(torch.tensor(x))),
                               rtol=1e-5, atol=1e-6)


def test_importance_scores_and_conv_weights_match_torch(torch, tprune):
    ours, theirs = _pair(torch, shape=(4, 3, 2, 2))
    scores = np.arange(48, dtype=np.float32).reshape(4, 3, 2, 2)[::-1].copy()
    prune.ln_structured(ours, "weight", 0.5, 1, 0, importance_scores=ember.tensor(scores))
    tprune.ln_structured(theirs, "weight", 0.5, 1, 0,
                                       importance_scores=torch.tensor(scores))
    np.testing.assert_array_equal(_np(ours.weight_mask), _np(theirs.weight_mask))
    prune.l1_unstructured(ours, "bias", 2, importance_scores=ember.tensor([4., 3., 2., 1.]))
    assert ours.bias_mask.tolist() == [1.0, 1.0, 0.0, 0.0]


def test_random_methods_prune_the_right_count_and_structure():
    ember.manual_seed(0)
    lin = ember.nn.Linear(10, 8)
    prune.random_unstructured(lin, "weight", amount=0.25)
    assert int((lin.weight_mask == 0).sum()) == 20
    conv = ember.nn.Conv2d(3, 6, 3)
    prune.random_structured(conv, "weight", amount=0.5, dim=0)
    per_channel = conv.weight_mask.sum(dim=(1, 2, 3)).tolist()
    assert sorted(per_channel) == [0.0] * 3 + [27.0] * 3
    # a second random structured pass prunes among the channels still alive
    prune.random_structured(conv, "weight", amount=1, dim=0)
    per_channel = conv.weight_mask.sum(dim=(1, 2, 3)).tolist()
    assert sorted(per_channel) == [0.0] * 4 + [27.0] * 2
    assert isinstance(conv._forward_pre_hooks[next(iter(conv._forward_pre_hooks))],
                      prune.PruningContainer)


def test_global_unstructured_matches_torch(torch, tprune):
    (a, ta), (b, tb) = _pair(torch, seed=1), _pair(torch, shape=(3, 5), seed=2)
    prune.l1_unstructured(a, "bias", 2)
    tprune.l1_unstructured(ta, "bias", 2)
    prune.global_unstructured([(a, "weight"), (b, "weight"), (a, "bias")],
                              pruning_method=prune.L1Unstructured, amount=0.4)
    tprune.global_unstructured(
        [(ta, "weight"), (tb, "weight"), (ta, "bias")],
        pruning_method=tprune.L1Unstructured, amount=0.4)
    for ours, theirs in ((a.weight_mask, ta.weight_mask), (b.weight_mask, tb.weight_mask),
                         (a.bias_mask, ta.bias_mask)):
        np.testing.assert_array_equal(_np(ours), _np(theirs))
    with pytest.raises(TypeError, match='Only "unstructured" PRUNING_TYPE supported'):
        prune.global_unstructured([(b, "bias")], prune.RandomStructured, amount=1)
    with pytest.raises(TypeError, match="parameters is not an Iterable"):
        prune.global_unstructured(3, prune.L1Unstructured, amount=1)


def test_forward_reapplies_the_mask_and_gradients_are_masked():
    lin = ember.nn.Linear(4, 2)
    prune.custom_from_mask(lin, "weight", ember.tensor([[1., 0., 1., 0.], [0., 0., 1., 1.]]))
    with ember.no_grad():
        lin.weight_orig.fill_(2.0)  # the hook recomputes `weight` at the next call
    out = lin(ember.ones(1, 4))
    assert lin.weight.tolist() == [[2., 0., 2., 0.], [0., 0., 2., 2.]]
    out.sum().backward()
    assert lin.weight_orig.grad.tolist() == [[1., 0., 1., 0.], [0., 0., 1., 1.]]
    assert prune.is_pruned(ember.nn.Sequential(lin)) and not prune.is_pruned(ember.nn.ReLU())


def test_remove_makes_pruning_permanent(torch, tprune):
    ours, theirs = _pair(torch)
    prune.l1_unstructured(ours, "weight", 0.5)
    tprune.l1_unstructured(theirs, "weight", 0.5)
    prune.remove(ours, "weight")
    tprune.remove(theirs, "weight")
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["bias", "weight"]
    assert isinstance(ours.weight, ember.nn.Parameter) and not ours._forward_pre_hooks
    np.testing.assert_array_equal(_np(ours.weight), _np(theirs.weight))
    assert not prune.is_pruned(ours)
    with pytest.raises(ValueError, match="Parameter 'weight' of module .* has to be pruned"):
        prune.remove(ours, "weight")


def test_pruned_state_dict_loads_into_torch(torch, tprune):
    ours, theirs = _pair(torch)
    prune.ln_structured(ours, "weight", 2, 1, 0)
    fresh = torch.nn.Linear(5, 6)
    tprune.identity(fresh, "weight")
    fresh.load_state_dict({k: torch.tensor(_np(v)) for k, v in ours.state_dict().items()})
    fresh(torch.ones(1, 5))  # its pre-hook recomputes `weight` from the loaded mask
    np.testing.assert_array_equal(fresh.weight.detach().numpy(), _np(ours.weight))


@pytest.mark.parametrize("call, exc, match", [
    (lambda: prune.L1Unstructured(-1), ValueError, "amount=-1 should either be a float"),
    (lambda: prune.L1Unstructured(1.5), ValueError, "in the range \\[0, 1\\]"),
    (lambda: prune.L1Unstructured("a"), TypeError, "Invalid type for amount: a"),
    (lambda: prune.l1_unstructured(ember.nn.Linear(2, 2), "weight", 5), ValueError,
     "amount=5 should be smaller than the number of parameters to prune=4"),
    (lambda: prune.ln_structured(ember.nn.Linear(2, 2), "bias", 1, 2, 0), ValueError,
     "Structured pruning can only be applied to multidimensional tensors"),
    (lambda: prune.ln_structured(ember.nn.Linear(2, 2), "weight", 1, 2, 2), IndexError,
     "Invalid index 2 for tensor of size"),
    (lambda: prune.PruningContainer().add_pruning_method(3), TypeError,
     "is not a BasePruningMethod subclass"),
])
def test_errors_as_torch(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_failed_pruning_puts_the_parameter_back(torch, tprune):
    for lib, pr in ((ember, prune), (torch, tprune)):
        lin = lib.nn.Linear(2, 2)
        with pytest.raises(ValueError):
            pr.l1_unstructured(lin, "weight", 5)
        # re-registered last, as PyTorch does
        assert list(lin.state_dict()) == ["bias", "weight"] and not lin._forward_pre_hooks


def test_container_refuses_a_method_for_another_tensor():
    a, b = prune.Identity(), prune.Identity()
    a._tensor_name, b._tensor_name = "weight", "bias"
    with pytest.raises(ValueError, match="Can only add pruning methods acting on the parameter "
                                         "named 'weight'"):
        prune.PruningContainer(a).add_pruning_method(b)
    container = prune.PruningContainer(a)
    container.add_pruning_method(a)
    assert len(container) == 2 and list(container) == [a, a] and container[1] is a


def test_prune_method_on_a_bare_tensor():
    t = ember.tensor([[1., -5.], [0.5, 3.]])
    assert prune.L1Unstructured(2).prune(t).tolist() == [[0., -5.], [0., 3.]]
