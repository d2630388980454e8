"""The families with a module of their own since issue 10 (generalized_pareto, half_cauchy,
inverse_gamma) and OneHotCategoricalStraightThrough: their module paths, GeneralizedPareto's
densities in float32 (PyTorch's fail on float64), and the straight-through gradient."""
import importlib

import numpy as np
import pytest

import ember


@pytest.mark.parametrize("module,name", [("generalized_pareto", "GeneralizedPareto"),
                                         ("half_cauchy", "HalfCauchy"),
                                         ("inverse_gamma", "InverseGamma"),
                                         ("one_hot_categorical",
                                          "OneHotCategoricalStraightThrough")])
def test_each_family_lives_in_pytorchs_module(module, name):
    cls = getattr(importlib.import_module(f"ember.distributions.{module}"), name)
    assert cls is getattr(ember.distributions, name)
    assert cls.__module__ == f"ember.distributions.{module}"


@pytest.mark.parametrize("method", ["log_prob", "cdf", "log_cdf", "log_survival_function"])
def test_generalized_pareto_densities_match_torch_in_float32(torch, method):
    loc, scale, conc = [0.1, -0.2, 0.3], [1.5, 2.0, 1.2], [-0.3, 0.0, 0.4]
    values = [[0.5, 0.1, 0.9], [1.2, 2.0, 0.35]]
    out = []
    for lib in (torch, ember):
        d = lib.distributions.GeneralizedPareto(lib.tensor(loc), lib.tensor(scale),
                                                lib.tensor(conc))
        out.append(getattr(d, method)(lib.tensor(values)).numpy())
    np.testing.assert_allclose(out[1], out[0], rtol=1e-5, atol=1e-6)


def test_generalized_pareto_expands_as_torch(torch):
    out = []
    for lib in (torch, ember):
        d = lib.distributions.GeneralizedPareto(lib.tensor([0.1, -0.2]), lib.tensor([1.5, 2.0]),
                                                lib.tensor([-0.3, 0.4]))
        big = d.expand((3, 2))
        out.append((tuple(big.batch_shape), big.log_prob(lib.tensor([0.5, 0.1])).numpy()))
    assert out[0][0] == out[1][0]
    np.testing.assert_allclose(out[1][1], out[0][1], rtol=1e-5)


def test_generalized_pareto_support_and_sampling():
    ember.manual_seed(0)
    d = ember.distributions.GeneralizedPareto(ember.tensor([0.0, 1.0]), ember.tensor([1.0, 2.0]),
                                              ember.tensor([-0.5, 0.0]))
    x = d.sample((2000,))
    assert bool(d.support.check(x).all()) and x.shape == (2000, 2)
    assert bool((x[:, 0] <= 2.0).all())  # loc - scale / concentration
    assert abs(x[:, 1].mean().item() - 3.0) < 0.3  # exponential: loc + scale


def test_straight_through_rsample_is_one_hot_with_the_probabilities_gradient(torch):
    probs = ember.tensor([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]], requires_grad=True)
    d = ember.distributions.OneHotCategoricalStraightThrough(probs=probs)
    x = d.rsample((4,))
    assert x.shape == (4, 2, 3) and bool((x.detach().sum(-1) == 1).all())
    weights = ember.arange(24.0).reshape(4, 2, 3)
    (grad,) = ember.autograd.grad((x * weights).sum(), probs)
    tprobs = torch.tensor(probs.tolist(), requires_grad=True)
    tx = torch.distributions.OneHotCategoricalStraightThrough(probs=tprobs).rsample((4,))
    (tgrad,) = torch.autograd.grad((tx * torch.arange(24.0).reshape(4, 2, 3)).sum(), tprobs)
    np.testing.assert_allclose(grad.numpy(), tgrad.numpy(), rtol=1e-6)
