"""The further families of ember.distributions against PyTorch's (float64): HalfNormal,
HalfCauchy, Gumbel, Weibull, Pareto, Kumaraswamy, FisherSnedecor, VonMises,
ContinuousBernoulli, NegativeBinomial, Multinomial, MixtureSameFamily,
LowRankMultivariateNormal, LogisticNormal; Gamma/Chi2 cdf; ExponentialFamily's Bregman
entropy and KL; the KL pairs across families; the event-level transforms and the
biject_to / transform_to registries."""
import math

import numpy as np
import pytest

import ember

D = ember.distributions
R = np.random.default_rng(7)


def _pos(*shape):
    return R.uniform(0.5, 2.0, shape)


def _real(*shape):
    return R.normal(size=shape)


def _unit(*shape):
    return R.uniform(0.1, 0.9, shape)


def _simplex(*shape):
    p = R.uniform(0.1, 1.0, shape)
    return p / p.sum(-1, keepdims=True)


CONT = ("log_prob", "cdf", "icdf", "entropy", "mean", "mode", "variance", "stddev")
# name -> (constructor(distributions, params), params, values, methods)
CASES = {
    "HalfNormal": (lambda d, p: d.HalfNormal(p["scale"]), {"scale": _pos(3)}, _pos(2, 3), CONT),
    "HalfCauchy": (lambda d, p: d.HalfCauchy(p["scale"]), {"scale": _pos(3)}, _pos(2, 3), CONT),
    "Gumbel": (lambda d, p: d.Gumbel(p["loc"], p["scale"]), {"loc": _real(3), "scale": _pos(3)},
               _real(2, 3), CONT),
    "Weibull": (lambda d, p: d.Weibull(p["scale"], p["k"]), {"scale": _pos(3), "k": _pos(3) + 0.6},
                _pos(2, 3), CONT),
    "Pareto": (lambda d, p: d.Pareto(p["scale"], p["alpha"]),
               {"scale": _pos(3) * 0.4, "alpha": np.array([0.7, 1.5, 3.0])}, _pos(2, 3) + 0.8,
               CONT),
    "Kumaraswamy": (lambda d, p: d.Kumaraswamy(p["a"], p["b"]),
                    {"a": _pos(3) + 0.5, "b": np.array([0.5, 0.9, 0.3])}, _unit(2, 3), CONT),
    "FisherSnedecor": (lambda d, p: d.FisherSnedecor(p["df1"], p["df2"]),
                       {"df1": np.array([1.5, 3.0, 6.0]), "df2": np.array([1.5, 4.5, 9.0])},
                       _pos(2, 3), ("log_prob", "mean", "mode", "variance")),
    "VonMises": (lambda d, p: d.VonMises(p["loc"], p["k"]),
                 {"loc": _real(3), "k": np.array([0.5, 3.0, 8.0])}, _real(2, 3),
                 ("log_prob", "mean", "mode", "variance")),
    "ContinuousBernoulli": (lambda d, p: d.ContinuousBernoulli(probs=p["probs"]),
                            {"probs": np.array([0.2, 0.4995, 0.8])}, _unit(2, 3), CONT),
    "ContinuousBernoulliLogits": (lambda d, p: d.ContinuousBernoulli(logits=p["logits"]),
                                  {"logits": np.array([-1.2, 0.0, 2.0])}, _unit(2, 3),
                                  ("log_prob", "cdf", "entropy", "mean", "variance")),
    "NegativeBinomial": (lambda d, p: d.NegativeBinomial(p["count"], probs=p["probs"]),
                         {"count": np.array([0.5, 2.0, 4.0]), "probs": _unit(3)},
                         np.array([[0., 2., 5.], [1., 0., 3.]]),
                         ("log_prob", "mean", "mode", "variance")),
    "NegativeBinomialLogits": (lambda d, p: d.NegativeBinomial(3.0, logits=p["logits"]),
                               {"logits": _real(3)}, np.array([[0., 2., 5.]]),
                               ("log_prob", "mean", "variance")),
    "Multinomial": (lambda d, p: d.Multinomial(4, probs=p["probs"]), {"probs": _simplex(2, 3)},
                    np.array([[[1., 2., 1.], [0., 0., 4.]]]),
                    ("log_prob", "entropy", "mean", "variance")),
    "MultinomialLogits": (lambda d, p: d.Multinomial(3, logits=p["logits"]),
                          {"logits": _real(3)}, np.array([[1., 2., 0.], [3., 0., 0.]]),
                          ("log_prob", "entropy", "mean")),
    "MixtureNormal": (lambda d, p: d.MixtureSameFamily(
        d.Categorical(logits=p["w"]), d.Normal(p["loc"], p["scale"])),
        {"w": _real(2, 4), "loc": _real(2, 4), "scale": _pos(2, 4)}, _real(3, 2),
        ("log_prob", "cdf", "mean", "variance")),
    "MixtureMVN": (lambda d, p: d.MixtureSameFamily(
        d.Categorical(probs=p["w"]), d.Independent(d.Normal(p["loc"], p["scale"]), 1)),
        {"w": _simplex(3), "loc": _real(2, 3, 2), "scale": _pos(2, 3, 2)}, _real(4, 2, 2),
        ("log_prob", "mean", "variance")),
    "LowRankMVN": (lambda d, p: d.LowRankMultivariateNormal(p["loc"], p["W"], p["diag"]),
                   {"loc": _real(2, 3), "W": _real(3, 2), "diag": _pos(3)}, _real(4, 2, 3),
                   ("log_prob", "entropy", "mean", "variance", "covariance_matrix",
                    "precision_matrix", "scale_tril")),
    "LogisticNormal": (lambda d, p: d.LogisticNormal(p["loc"], p["scale"]),
                       {"loc": _real(2, 3), "scale": _pos(2, 3)}, _simplex(5, 2, 4),
                       ("log_prob",)),
    "GammaCdf": (lambda d, p: d.Gamma(p["c"].detach(), p["rate"]),
                 {"c": _pos(3) + 0.3, "rate": _pos(3)}, _pos(2, 3), ("cdf",)),
    "Chi2Cdf": (lambda d, p: d.Chi2(p["df"].detach() * 3), {"df": _pos(3)}, _pos(2, 3) * 2,
                ("cdf",)),
    "GammaBregmanEntropy": (lambda d, p: _ExpFamilyEntropy(d.Gamma(p["c"], p["rate"])),
                            {"c": _pos(3), "rate": _pos(3)}, None, ("entropy",)),
    "NormalBregmanEntropy": (lambda d, p: _ExpFamilyEntropy(d.Normal(p["loc"], p["scale"])),
                             {"loc": _real(3), "scale": _pos(3)}, None, ("entropy",)),
    "ContinuousBernoulliBregmanEntropy": (
        lambda d, p: _ExpFamilyEntropy(d.ContinuousBernoulli(logits=p["logits"])),
        {"logits": np.array([-2.0, 0.0005, 1.0])}, None, ("entropy",)),
}


class _ExpFamilyEntropy:
    """The base class's (Bregman) entropy of an exponential family member, bypassing the
    member's own closed form."""

    def __init__(self, dist):
        self.dist = dist

    def entropy(self):
        lib = ember if isinstance(self.dist, ember.distributions.Distribution) else \
            __import__("torch")
        return lib.distributions.ExponentialFamily.entropy(self.dist)


def _tensors(lib, params, requires_grad=True):
    return {k: lib.tensor(v, dtype=lib.float64, requires_grad=requires_grad)
            for k, v in params.items()}


def _evaluate(lib, name, method):
    build, params, values, _ = CASES[name]
    p = _tensors(lib, params)
    dist = build(lib.distributions, p)
    if method == "icdf":
        values = np.clip(_unit(2, 3), 0.05, 0.95)
    try:
        if method in ("log_prob", "cdf", "icdf"):
            out = getattr(dist, method)(lib.tensor(values, dtype=lib.float64))
        elif method == "entropy":
            out = dist.entropy()
        else:
            out = getattr(dist, method)
    except NotImplementedError as e:
        return ("NotImplementedError", str(e).replace("torch.distributions", "D")
                .replace("ember.distributions", "D")), None
    grads = None
    if out.requires_grad:
        weights = lib.tensor(np.linspace(0.3, 1.7, out.numel()).reshape(tuple(out.shape)))
        loss = (out * weights)[lib.isfinite(out)].sum()
        got = lib.autograd.grad(loss, list(p.values()), allow_unused=True)
        grads = [None if g is None else g.detach().numpy() for g in got]
    return out.detach().numpy(), grads


@pytest.mark.parametrize("name,method", [(n, m) for n, c in CASES.items() for m in c[3]])
def test_values_and_gradients_match_pytorch(torch, name, method):
    state = R.bit_generator.state
    want, want_grads = _evaluate(torch, name, method)
    R.bit_generator.state = state
    got, got_grads = _evaluate(ember, name, method)
    if isinstance(want, tuple):
        assert got == want
        return
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, equal_nan=True)
    assert (got_grads is None) == (want_grads is None)
    for g, w in zip(got_grads or [], want_grads or []):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, equal_nan=True)


def test_gamma_cdf_concentration_gradient_is_not_implemented_as_in_pytorch(torch):
    for lib in (torch, ember):
        c = lib.tensor([1.5, 2.0], dtype=lib.float64, requires_grad=True)
        y = lib.distributions.Gamma(c, 1.0).cdf(lib.tensor([0.5, 1.0], dtype=lib.float64))
        with pytest.raises(NotImplementedError, match="igamma: input"):
            y.sum().backward()


# ---- KL divergences ------------------------------------------------------------------------
def _lowrank(d, a, b, shift=0.0):
    W = (a.unsqueeze(-1) * b.unsqueeze(0))[:, :2] + shift
    return d.LowRankMultivariateNormal(a, W, b + 0.3)


def _mvn(d, a, b):
    eye = (ember if isinstance(a, ember.Tensor) else __import__("torch")).eye(3, dtype=a.dtype)
    return d.MultivariateNormal(b, scale_tril=(b.unsqueeze(-1) * a.unsqueeze(0)).tril(-1)
                                + eye * (b + 0.5))


# name -> lambda distributions, a (reals), b (positive, < 2) -> (p, q)
KL_PAIRS = {
    "Gumbel": lambda d, a, b: (d.Gumbel(a, b), d.Gumbel(b, a.abs() + 0.5)),
    "HalfNormal": lambda d, a, b: (d.HalfNormal(b), d.HalfNormal(a.abs() + 0.5)),
    "Pareto": lambda d, a, b: (d.Pareto(b, a.abs() + 0.5), d.Pareto(b * 0.9 + 0.05 * a, b)),
    "Cauchy": lambda d, a, b: (d.Cauchy(a, b), d.Cauchy(b, a.abs() + 0.5)),
    "ContinuousBernoulli": lambda d, a, b: (d.ContinuousBernoulli(logits=a),
                                            d.ContinuousBernoulli(probs=b / 2.1)),
    "Poisson": lambda d, a, b: (d.Poisson(b), d.Poisson(a.abs() + 0.1)),
    "LowRank-LowRank": lambda d, a, b: (_lowrank(d, a, b), _lowrank(d, b, a.abs(), 0.3)),
    "MVN-LowRank": lambda d, a, b: (_mvn(d, a, b), _lowrank(d, b, a.abs(), 0.3)),
    "LowRank-MVN": lambda d, a, b: (_lowrank(d, a, b), _mvn(d, b - 1, a.abs())),
    "Bernoulli-Poisson": lambda d, a, b: (d.Bernoulli(b / 2.1), d.Poisson(a.abs() + 0.1)),
    "Beta-ContinuousBernoulli": lambda d, a, b: (d.Beta(b, a.abs() + 0.3),
                                                 d.ContinuousBernoulli(logits=a)),
    "Beta-Exponential": lambda d, a, b: (d.Beta(b, a.abs() + 0.3), d.Exponential(b)),
    "Beta-Gamma": lambda d, a, b: (d.Beta(b, a.abs() + 0.3), d.Gamma(b + 0.2, a.abs() + 0.3)),
    "Beta-Normal": lambda d, a, b: (d.Beta(b, a.abs() + 0.3), d.Normal(a, b)),
    "Beta-Uniform": lambda d, a, b: (d.Beta(b, a.abs() + 0.3),
                                     d.Uniform(a * 0 + a.new_tensor([-0.5, 0.0, 0.2]),
                                               b * 0.1 + a.new_tensor([1.0, 1.5, 0.8]))),
    "Beta-Pareto": lambda d, a, b: (d.Beta(b, b), d.Pareto(b, b)),
    "ContinuousBernoulli-Exponential": lambda d, a, b: (d.ContinuousBernoulli(probs=b / 2.1),
                                                        d.Exponential(b)),
    "ContinuousBernoulli-Normal": lambda d, a, b: (d.ContinuousBernoulli(logits=a),
                                                   d.Normal(a, b)),
    "ContinuousBernoulli-Uniform": lambda d, a, b: (
        d.ContinuousBernoulli(probs=b / 2.1),
        d.Uniform(a * 0 + a.new_tensor([-0.5, 0.0, 0.2]),
                  b * 0.1 + a.new_tensor([1.5, 1.5, 0.8]))),
    "Exponential-Gamma": lambda d, a, b: (d.Exponential(b), d.Gamma(a.abs() + 0.3, b)),
    "Exponential-Gumbel": lambda d, a, b: (d.Exponential(b), d.Gumbel(a, b)),
    "Exponential-Normal": lambda d, a, b: (d.Exponential(b), d.Normal(a, b)),
    "Exponential-Uniform": lambda d, a, b: (d.Exponential(b), d.Uniform(a, a + b)),
    "Gamma-Exponential": lambda d, a, b: (d.Gamma(a.abs() + 0.3, b), d.Exponential(b)),
    "Gamma-Gumbel": lambda d, a, b: (d.Gamma(a.abs() + 0.3, b), d.Gumbel(a, b)),
    "Gamma-Normal": lambda d, a, b: (d.Gamma(a.abs() + 0.3, b), d.Normal(a, b)),
    "Gamma-Beta": lambda d, a, b: (d.Gamma(b, b), d.Beta(b, b)),
    "Gumbel-Normal": lambda d, a, b: (d.Gumbel(a, b), d.Normal(b, a.abs() + 0.2)),
    "Gumbel-Exponential": lambda d, a, b: (d.Gumbel(a, b), d.Exponential(b)),
    "Laplace-Normal": lambda d, a, b: (d.Laplace(a, b), d.Normal(b, a.abs() + 0.2)),
    "Laplace-Gamma": lambda d, a, b: (d.Laplace(a, b), d.Gamma(b, b)),
    "Normal-Gumbel": lambda d, a, b: (d.Normal(a, b), d.Gumbel(b, a.abs() + 0.2)),
    "Normal-Laplace": lambda d, a, b: (d.Normal(a, b), d.Laplace(b, a.abs() + 0.2)),
    "Normal-Pareto": lambda d, a, b: (d.Normal(a, b), d.Pareto(b, b)),
    "Pareto-Exponential": lambda d, a, b: (d.Pareto(b, a.abs() + 0.5), d.Exponential(b)),
    "Pareto-Gamma": lambda d, a, b: (d.Pareto(b, a.abs() + 0.5), d.Gamma(b, a.abs() + 0.1)),
    "Pareto-Normal": lambda d, a, b: (d.Pareto(b, a.abs() + 1.0), d.Normal(a, b)),
    "Pareto-Uniform": lambda d, a, b: (d.Pareto(b, b), d.Uniform(a, a + b)),
    "Poisson-Bernoulli": lambda d, a, b: (d.Poisson(b), d.Bernoulli(b / 2.1)),
    "Poisson-Binomial": lambda d, a, b: (d.Poisson(b), d.Binomial(3, b / 2.1)),
    "Uniform-Beta": lambda d, a, b: (d.Uniform(b * 0.2, b * 0.2 + 0.5 + 0.1 * a),
                                     d.Beta(b, a.abs() + 0.3)),
    "Uniform-ContinuousBernoulli": lambda d, a, b: (d.Uniform(b * 0.2 - 0.1, b * 0.2 + 0.5),
                                                    d.ContinuousBernoulli(logits=a)),
    "Uniform-Exponential": lambda d, a, b: (d.Uniform(a, a + b), d.Exponential(b)),
    "Uniform-Gamma": lambda d, a, b: (d.Uniform(a, a + b), d.Gamma(b, a.abs() + 0.3)),
    "Uniform-Gumbel": lambda d, a, b: (d.Uniform(a, a + b), d.Gumbel(b, a.abs() + 0.3)),
    "Uniform-Normal": lambda d, a, b: (d.Uniform(a, a + b), d.Normal(b, a.abs() + 0.3)),
    "Uniform-Pareto": lambda d, a, b: (d.Uniform(b * 0.5 + a * 0.1, b + 1),
                                       d.Pareto(b * 0.3, a.abs() + 0.5)),
    "ExpFamily-Subclass": lambda d, a, b: (_sub(d, "Gamma")(b, a.abs() + 0.2),
                                           _sub(d, "Gamma")(a.abs() + 0.5, b)),
    "ExpFamily-ContinuousBernoulliSub": lambda d, a, b: (
        _sub(d, "ContinuousBernoulli")(logits=a), _sub(d, "ContinuousBernoulli")(probs=b / 2.1)),
}

_SUBCLASSES = {}


def _sub(d, name):
    """A subclass without its own KL registration: dispatch falls back to
    ExponentialFamily's Bregman divergence."""
    key = (d.__name__, name)
    if key not in _SUBCLASSES:
        _SUBCLASSES[key] = type("My" + name, (getattr(d, name),), {})
    return _SUBCLASSES[key]


@pytest.mark.parametrize("name", list(KL_PAIRS))
def test_kl_divergence_matches_pytorch(torch, name):
    a, b = R.normal(size=3), R.uniform(0.2, 2.0, 3)
    results = []
    for lib in (torch, ember):
        ta = lib.tensor(a, dtype=lib.float64, requires_grad=True)
        tb = lib.tensor(b, dtype=lib.float64, requires_grad=True)
        p, q = KL_PAIRS[name](lib.distributions, ta, tb)
        kl = lib.distributions.kl_divergence(p, q)
        finite = lib.isfinite(kl)
        grads = None
        if kl.requires_grad and bool(finite.any()):
            grads = lib.autograd.grad(kl[finite].sum(), [ta, tb], allow_unused=True)
        results.append((kl.detach().numpy(), grads))
    (kt, gt), (ke, ge) = results
    assert ke.shape == kt.shape
    np.testing.assert_allclose(ke, kt, rtol=1e-10, atol=1e-12)
    assert (ge is None) == (gt is None)
    for g, w in zip(ge or [], gt or []):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-9, atol=1e-12)
