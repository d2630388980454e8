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

from ._helpers import CONT, draws, outcome, tensors

D = ember.distributions
R = np.random.default_rng(7)
_pos, _real, _unit, _simplex = draws(R)


def _spd_of(a):
    """A positive definite matrix from any square one (differentiably)."""
    lib = ember if isinstance(a, ember.Tensor) else __import__("torch")
    return a @ a.mT + lib.eye(a.shape[-1], dtype=a.dtype)


def _spd_values():
    a = R.normal(size=(2, 3, 3))
    return a @ np.swapaxes(a, -1, -2) + np.eye(3)


def _corr_values():
    s = _spd_values()
    d = np.sqrt(np.diagonal(s, axis1=-2, axis2=-1))
    return s / d[..., :, None] / d[..., None, :]


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
    "Wishart": (lambda d, p: d.Wishart(p["df"], covariance_matrix=_spd_of(p["A"])),
                {"df": np.array([3.5, 6.0]), "A": _real(3, 3)}, _spd_values(),
                ("log_prob", "entropy", "mean", "mode", "variance", "precision_matrix")),
    "WishartTril": (lambda d, p: d.Wishart(4.0, scale_tril=_spd_of(p["A"]).tril()),
                    {"A": _real(2, 3, 3)}, _spd_values(), ("log_prob", "entropy")),
    "WishartPrecision": (lambda d, p: d.Wishart(p["df"], precision_matrix=_spd_of(p["A"])),
                         {"df": np.array(2.5), "A": _real(3, 3)}, _spd_values(),
                         ("log_prob", "entropy", "mean", "covariance_matrix")),
    "WishartBregmanEntropy": (lambda d, p: _ExpFamilyEntropy(
        d.Wishart(p["df"], covariance_matrix=_spd_of(p["A"]))),
        {"df": np.array([3.5, 6.0]), "A": _real(3, 3)}, None, ("entropy",)),
    "LKJCholesky": (lambda d, p: d.LKJCholesky(3, p["c"]), {"c": np.array([0.5, 3.0])},
                    np.linalg.cholesky(_corr_values()), ("log_prob",)),
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


def _evaluate(lib, name, method):
    build, params, values, _ = CASES[name]
    p = tensors(lib, params)
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
    "Wishart-Wishart": lambda d, a, b: (
        d.Wishart(b + 2, covariance_matrix=_spd_of(a.unsqueeze(-1) * b)),
        d.Wishart(a.abs() + 2.5, scale_tril=_spd_of(a.unsqueeze(-1) * a).tril())),
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


# ---- sampling ----------------------------------------------------------------------------
SAMPLERS = {  # name -> constructor(distributions, lib); moments are the distribution's own
    "HalfNormal": lambda d, t: d.HalfNormal(t.tensor([0.5, 2.0])),
    "Gumbel": lambda d, t: d.Gumbel(t.tensor([1.0, -2.0]), t.tensor([0.5, 2.0])),
    "Weibull": lambda d, t: d.Weibull(t.tensor([1.0, 2.0]), t.tensor([1.5, 3.0])),
    "Pareto": lambda d, t: d.Pareto(t.tensor([1.0, 0.5]), t.tensor([5.0, 6.0])),
    "Kumaraswamy": lambda d, t: d.Kumaraswamy(t.tensor([2.0, 0.7]), t.tensor([3.0, 1.5])),
    "FisherSnedecor": lambda d, t: d.FisherSnedecor(t.tensor([5.0, 10.0]),
                                                    t.tensor([12.0, 20.0])),
    "ContinuousBernoulli": lambda d, t: d.ContinuousBernoulli(t.tensor([0.2, 0.5, 0.9])),
    "NegativeBinomial": lambda d, t: d.NegativeBinomial(t.tensor([3.0, 10.0]),
                                                        t.tensor([0.3, 0.6])),
    "Multinomial": lambda d, t: d.Multinomial(6, t.tensor([[0.2, 0.3, 0.5], [0.6, 0.2, 0.2]])),
    "MixtureSameFamily": lambda d, t: d.MixtureSameFamily(
        d.Categorical(t.tensor([0.3, 0.7])), d.Normal(t.tensor([-2.0, 3.0]), t.tensor([0.5, 1.0]))),
    "LowRankMultivariateNormal": lambda d, t: d.LowRankMultivariateNormal(
        t.tensor([1.0, -1.0, 0.0]), t.tensor([[1.0], [0.5], [-1.0]]), t.tensor([0.5, 1.0, 2.0])),
    "LogisticNormal": lambda d, t: d.LogisticNormal(t.tensor([0.0, 1.0]), t.tensor([0.5, 0.3])),
    "VonMises": lambda d, t: d.VonMises(t.tensor([0.5, -2.5]), t.tensor([2.0, 8.0])),
    "Wishart": lambda d, t: d.Wishart(t.tensor([4.0, 7.0]), t.tensor([[2.0, 0.5], [0.5, 1.0]])),
    "LKJCholesky": lambda d, t: d.LKJCholesky(3, t.tensor([1.0, 4.0])),
}


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_samples_have_pytorchs_shapes_dtypes_and_moments(torch, name):
    make = SAMPLERS[name]
    ember.manual_seed(5)
    dist = make(D, ember)
    x = dist.sample((4000,))
    ember.manual_seed(5)
    assert ember.equal(make(D, ember).sample((4000,)), x)  # reproducible under manual_seed
    tdist = make(torch.distributions, torch)
    want = tdist.sample((4000,))
    assert x.shape == want.shape and str(x.dtype) == str(want.dtype)
    assert make(D, ember).sample().shape == tdist.sample().shape
    assert bool(dist.support.check(x).all())
    assert dist.has_rsample == tdist.has_rsample
    if dist.has_rsample:
        assert make(D, ember).rsample((3,)).shape == tdist.rsample((3,)).shape
    xf = x.double()
    if name == "VonMises":  # circular: the mean direction and 1 - mean resultant length
        c, s = xf.cos().mean(0), xf.sin().mean(0)
        angle_err = ember.atan2(s, c) - dist.loc.double()
        assert bool((ember.atan2(angle_err.sin(), angle_err.cos()).abs() < 0.05).all())
        np.testing.assert_allclose((1 - (c ** 2 + s ** 2).sqrt()).numpy(),
                                   dist.variance.double().numpy(), rtol=0.1)
        return
    if name == "LKJCholesky":  # correlations of LKJ(eta) in dim 3: mean 0, var 1/(2 eta + 1)
        corr = x.double() @ x.double().mT
        off = corr[..., 1, 0]
        assert bool((off.mean(0).abs() < 0.05).all())
        np.testing.assert_allclose(off.var(0).numpy(), [1 / 4, 1 / 10], rtol=0.1)
        return
    if name == "LogisticNormal":  # no closed-form moments: compare with PyTorch's draws
        np.testing.assert_allclose(xf.mean(0).numpy(), want.double().mean(0).numpy(), atol=0.02)
        return
    if name == "Multinomial":
        assert bool((x.sum(-1) == 6).all())
    mean, var = dist.mean.double(), dist.variance.double()
    assert bool(((xf.mean(0) - mean).abs() <= 6 * var.sqrt() / math.sqrt(4000)).all())
    assert bool(((xf.var(0) - var).abs() <= 0.3 * var + 1e-3).all())


@pytest.mark.parametrize("name", ["HalfNormal", "Gumbel", "Weibull", "Pareto", "Kumaraswamy",
                                  "FisherSnedecor", "ContinuousBernoulli",
                                  "LowRankMultivariateNormal", "LogisticNormal"])
def test_rsample_joins_the_graph(name):
    leaves = []

    class _Leaves:  # builds the parameters as leaves that require grad
        @staticmethod
        def tensor(data):
            leaves.append(ember.tensor(data, requires_grad=True))
            return leaves[-1]

    dist = SAMPLERS[name](D, _Leaves)
    x = dist.rsample((5,))
    assert x.requires_grad
    grads = ember.autograd.grad(x.sum(), leaves, allow_unused=True)
    assert all(g is not None and bool(ember.isfinite(g).all()) for g in grads)
    assert not dist.sample((5,)).requires_grad


# ---- validation errors, reprs, expand ----------------------------------------------------
ERRORS = [
    "D.HalfCauchy(2.).log_prob(1.0)",
    "D.HalfCauchy(2., validate_args=False).log_prob(1.0)",
    "D.HalfNormal(t.tensor([1., -1.]))",
    "D.HalfNormal(t.tensor([1.])).log_prob(t.tensor([-1.]))",
    "D.HalfCauchy(t.tensor(0.))",
    "D.Gumbel(0., t.tensor(-1.))",
    "D.Weibull(t.tensor([1.]), t.tensor([-1.]))",
    "D.Weibull(1., 1.).log_prob(t.tensor(-1.))",
    "D.Pareto(t.tensor([1.]), t.tensor([0.]))",
    "D.Pareto(t.tensor([1.]), t.tensor([2.])).log_prob(t.tensor([0.5]))",
    "D.Kumaraswamy(t.tensor([1.]), t.tensor([-1.]))",
    "D.Kumaraswamy(1., 1.).log_prob(t.tensor(1.5))",
    "D.FisherSnedecor(t.tensor([1.]), t.tensor([-1.]))",
    "D.VonMises(t.tensor([0.]), t.tensor([-1.]))",
    "D.ContinuousBernoulli()",
    "D.ContinuousBernoulli(t.tensor([0.5]), t.tensor([0.]))",
    "D.ContinuousBernoulli(t.tensor([1.5]), validate_args=True)",
    "D.ContinuousBernoulli(t.tensor([0.5])).log_prob(t.tensor([1.5]))",
    "D.NegativeBinomial(3.)",
    "D.NegativeBinomial(t.tensor([-1.]), t.tensor([0.5]))",
    "D.NegativeBinomial(t.tensor([2.]), t.tensor([1.]))",
    "D.NegativeBinomial(2., t.tensor([0.5])).log_prob(t.tensor([0.5]))",
    "D.Multinomial(t.tensor(3), t.tensor([0.5, 0.5]))",
    "D.Multinomial(3)",
    "D.Multinomial(3, t.tensor([0.5, 0.5])).log_prob(t.tensor([1., 1.]))",
    "D.Multinomial(3, t.tensor([0.5, 0.5])).log_prob(t.tensor([1., 1., 1.]))",
    "D.MixtureSameFamily(D.Normal(0., 1.), D.Normal(t.zeros(2), 1.))",
    "D.MixtureSameFamily(D.Categorical(t.ones(2)), 3)",
    "D.MixtureSameFamily(D.Categorical(t.ones(3, 2)), D.Normal(t.zeros(4, 2), 1.))",
    "D.MixtureSameFamily(D.Categorical(t.ones(3)), D.Normal(t.zeros(2), 1.))",
    "D.kl_divergence(D.MixtureSameFamily(D.Categorical(t.ones(2)), D.Normal(t.zeros(2), 1.)), "
    "D.MixtureSameFamily(D.Categorical(t.ones(2)), D.Normal(t.zeros(2), 1.)))",
    "D.LowRankMultivariateNormal(t.tensor(0.), t.ones(1, 1), t.ones(1))",
    "D.LowRankMultivariateNormal(t.zeros(2), t.ones(2), t.ones(2))",
    "D.LowRankMultivariateNormal(t.zeros(2), t.ones(3, 1), t.ones(2))",
    "D.LowRankMultivariateNormal(t.zeros(2), t.ones(2, 1), t.ones(3))",
    "D.LowRankMultivariateNormal(t.zeros(3, 2), t.ones(4, 2, 1), t.ones(2))",
    "D.LowRankMultivariateNormal(t.zeros(2), t.ones(2, 1), -t.ones(2))",
    "D.kl_divergence(D.LowRankMultivariateNormal(t.zeros(2), t.ones(2, 1), t.ones(2)), "
    "D.LowRankMultivariateNormal(t.zeros(3), t.ones(3, 1), t.ones(3)))",
    "D.kl_divergence(D.MultivariateNormal(t.zeros(2), t.eye(2)), "
    "D.LowRankMultivariateNormal(t.zeros(3), t.ones(3, 1), t.ones(3)))",
    "D.kl_divergence(D.LowRankMultivariateNormal(t.zeros(2), t.ones(2, 1), t.ones(2)), "
    "D.MultivariateNormal(t.zeros(3), t.eye(3)))",
    "D.kl_divergence(D.Gamma(1., 1.), D.Normal(0., 1.)) and "
    "D.kl_divergence(D.Poisson(t.ones(2)), D.Geometric(t.tensor([0.5, 0.5])))",
    "D.kl_divergence(D.Poisson(t.ones(2)), D.Exponential(t.ones(2)))",
    "D.LogisticNormal(t.zeros(2), -t.ones(2))",
    "D.LogisticNormal(t.zeros(2), t.ones(2)).log_prob(t.tensor([0.5, 0.6, 0.1]))",
    "D.Gamma(t.ones(2), 1.).cdf(t.tensor([-1., 1.]))",
    "D.biject_to(D.constraints.boolean)",
    "D.transform_to(D.constraints.lower_cholesky) and D.biject_to(D.constraints.lower_cholesky)",
    "D.biject_to.register(3, lambda c: None)",
    "D.ReshapeTransform((2, 3), (4,))",
    "D.ReshapeTransform((2, 3), (6,)).forward_shape((3, 2))",
    "D.StickBreakingTransform().forward_shape(())",
    "D.CorrCholeskyTransform().forward_shape((4,))",
    "D.CorrCholeskyTransform().inverse_shape((3, 2))",
    "D.IndependentTransform(D.ExpTransform(), 2)(t.ones(3))",
    "D.CatTransform([D.ExpTransform()], lengths=[1, 2])",
    "D.CatTransform([D.ExpTransform(), D.ExpTransform()], 0, [1, 2])(t.ones(2))",
    "D.StackTransform([D.ExpTransform()], 1)(t.ones(2, 2))",
    "D.StackTransform([D.ExpTransform()], 3)(t.ones(2, 2))",
    "D.CatTransform([1])",
    "D.constraints.cat([D.constraints.real], 0, [1, 2])",
    "D.Multinomial(2, t.tensor([0.5, 0.5])).entropy() and D.NegativeBinomial(2., "
    "t.tensor([0.5])).entropy()",
    "D.VonMises(0., 1.).rsample()",
    "D.Wishart(3.)",
    "D.Wishart(3., t.eye(2), scale_tril=t.eye(2))",
    "D.Wishart(3., t.ones(2))",
    "D.Wishart(0.5, t.eye(2))",
    "D.Wishart(t.tensor([3., 0.5]), t.eye(2))",
    "D.Wishart(t.tensor([3., 4.]), t.eye(2).expand(3, 2, 2))",
    "D.Wishart(3., t.tensor([[1., 2.], [2., 1.]]))",
    "D.Wishart(3., t.eye(2)).log_prob(t.tensor([[1., 2.], [2., 1.]]))",
    "D.LKJCholesky(1)",
    "D.Wishart(4., scale_tril=t.eye(2).expand(3, 2, 2)).variance",
    "D.LKJCholesky(3, t.tensor([-1.]))",
    "D.LKJCholesky(2).log_prob(t.tensor([[1., 0.], [0.5, 0.5]]))",
]


@pytest.mark.parametrize("src", ERRORS)
def test_errors_match_pytorch(torch, src):
    assert outcome(ember, src) == outcome(torch, src)


REPRS = [
    "D.HalfNormal(t.ones(2))",
    "D.HalfCauchy(2.)",
    "D.Gumbel(0., 1.)",
    "D.Weibull(t.ones(2), 2.)",
    "D.Pareto(1., t.ones(2))",
    "D.Pareto(t.tensor([1., 2.]), 3.).support",
    "D.Kumaraswamy(1., 2.)",
    "D.FisherSnedecor(1., 2.)",
    "D.VonMises(t.zeros(3), 1.)",
    "D.ContinuousBernoulli(t.tensor([0.3, 0.6]))",
    "D.ContinuousBernoulli(logits=t.tensor(0.3))",
    "D.NegativeBinomial(3., t.tensor([0.3, 0.6]))",
    "D.NegativeBinomial(3., logits=t.zeros(2)).param_shape",
    "D.Multinomial(4, t.ones(2, 3))",
    "D.Multinomial(4, t.ones(2, 3)).support",
    "(D.Multinomial(4, t.ones(2, 3)).batch_shape, D.Multinomial(4, t.ones(2, 3)).event_shape)",
    "D.MixtureSameFamily(D.Categorical(t.ones(2)), D.Normal(t.zeros(2), 1.))",
    "D.MixtureSameFamily(D.Categorical(t.ones(2)), D.Normal(t.zeros(2), 1.)).support",
    "D.MixtureSameFamily(D.Categorical(t.ones(3, 2)), "
    "D.Independent(D.Normal(t.zeros(3, 2, 4), 1.), 1)).expand([5, 3]).event_shape",
    "D.LowRankMultivariateNormal(t.zeros(3), t.ones(3, 1), t.ones(3))",
    "D.LowRankMultivariateNormal(t.zeros(2, 3), t.ones(3, 1), t.ones(3)).batch_shape",
    "D.LowRankMultivariateNormal(t.zeros(3), t.ones(3, 1), t.ones(3)).expand([2])"
    ".covariance_matrix.shape",
    "D.LogisticNormal(t.zeros(3), 1.)",
    "(D.LogisticNormal(0., 1.).batch_shape, D.LogisticNormal(0., 1.).event_shape, "
    "D.LogisticNormal(t.zeros(2, 3), 1.).event_shape)",
    "D.Gumbel(t.zeros(2), 1.).expand([3, 2]).batch_shape",
    "D.Weibull(t.ones(2), 2.).expand([3, 2])",
    "D.VonMises(t.zeros(2), 1.).expand([3, 2])",
    "D.Kumaraswamy(t.tensor([0.5, 2.]), t.tensor([2., 0.5])).mode",
    "D.HalfCauchy(t.ones(2)).mean",
    "D.FisherSnedecor(t.tensor([1., 3.]), t.tensor([2., 5.])).mean",
    "D.Pareto(1., t.tensor([0.5, 1.5, 3.])).variance",
    "isinstance(D.Normal(0., 1.), D.ExponentialFamily), "
    "isinstance(D.ContinuousBernoulli(0.3), D.ExponentialFamily), "
    "isinstance(D.Laplace(0., 1.), D.ExponentialFamily)",
    "[D.biject_to(c) for c in (D.constraints.real, D.constraints.positive, "
    "D.constraints.greater_than(2.), D.constraints.less_than(1.), D.constraints.unit_interval, "
    "D.constraints.interval(-1., 1.), D.constraints.simplex, D.constraints.real_vector, "
    "D.constraints.corr_cholesky, D.constraints.nonnegative, D.constraints.half_open_interval(0., 1.))]",
    "[D.transform_to(c) for c in (D.constraints.simplex, D.constraints.lower_cholesky, "
    "D.constraints.positive_definite, D.constraints.positive_semidefinite, "
    "D.constraints.independent(D.constraints.positive, 1))]",
    "D.biject_to(D.constraints.cat([D.constraints.real, D.constraints.positive], 0, [1, 2]))"
    ".codomain",
    "D.transform_to(D.constraints.stack([D.constraints.real, D.constraints.unit_interval], 1))"
    ".domain",
    "D.biject_to(D.constraints.simplex).bijective, D.transform_to(D.constraints.simplex).bijective",
    "D.IndependentTransform(D.ExpTransform(), 1)",
    "D.ReshapeTransform((2, 3), (6,)).forward_shape((4, 2, 3))",
    "D.CorrCholeskyTransform().forward_shape((5, 6)), "
    "D.CorrCholeskyTransform().inverse_shape((5, 4, 4))",
    "D.StickBreakingTransform().inverse_shape((2, 4))",
    "D.StickBreakingTransform() == D.StickBreakingTransform(), "
    "D.SoftmaxTransform() == D.StickBreakingTransform()",
    "D.CatTransform([D.ExpTransform(), D.AffineTransform(0., 2.)], 0, [1, 2]).event_dim",
    "D.StackTransform([D.ExpTransform()], 0).codomain.event_dim",
    "D.CumulativeDistributionTransform(D.Normal(0., 1.)).domain",
    "D.constraints.stack([D.constraints.positive, D.constraints.real], -1)"
    ".check(t.tensor([[1., -2.], [-1., 3.]]))",
    "D.constraints.cat([D.constraints.positive, D.constraints.real], -1, [1, 2])"
    ".check(t.tensor([[1., -2., 5.], [-1., 3., 2.]]))",
    "D.Wishart(t.tensor([3., 4.]), t.eye(2))",
    "D.Wishart(3., precision_matrix=t.eye(2)).arg_constraints",
    "D.Wishart(t.tensor([3., 4.]), t.eye(2)).expand([5, 2]).batch_shape",
    "D.Wishart(t.tensor([3., 4.]), t.eye(2)).expand([5, 2]).covariance_matrix.shape",
    "D.Wishart(t.tensor([1.5, 4.]), t.eye(2)).mode",
    "D.LKJCholesky(3, t.tensor([1., 2.]))",
    "D.LKJCholesky(3, 2.).expand([4]).batch_shape, D.LKJCholesky(3, 2.).event_shape",
    "D.constraints.MixtureSameFamilyConstraint(D.constraints.positive)"
    ".check(t.tensor([1., -1.]))",
]


@pytest.mark.parametrize("src", REPRS)
def test_reprs_shapes_and_constraints_match_pytorch(torch, src):
    assert outcome(ember, src) == outcome(torch, src)


# ---- transforms: values, inverses, log-det-Jacobians and their gradients ----------------
def _transforms(d, lib):
    return {
        "Softmax": (d.SoftmaxTransform(), _real(2, 4)),
        "StickBreaking": (d.StickBreakingTransform(), _real(2, 3)),
        "LowerCholesky": (d.LowerCholeskyTransform(), _real(2, 3, 3)),
        "PositiveDefinite": (d.PositiveDefiniteTransform(), _real(3, 3)),
        "CorrCholesky": (d.CorrCholeskyTransform(), _real(2, 6)),
        "Reshape": (d.ReshapeTransform((2, 3), (3, 2)), _real(4, 2, 3)),
        "Independent": (d.IndependentTransform(d.ExpTransform(), 2), _real(4, 2, 3)),
        "Cat": (d.CatTransform([d.ExpTransform(), d.AffineTransform(1.0, -2.0),
                                d.SigmoidTransform()], 1, [1, 2, 2]), _real(3, 5)),
        "CatNegativeDim": (d.CatTransform([d.ExpTransform(), d.TanhTransform()], -1, [2, 1]),
                           _real(2, 3)),
        "CatEvent": (d.CatTransform([d.IndependentTransform(d.ExpTransform(), 1),
                                     d.IndependentTransform(d.TanhTransform(), 1)], 0, [2, 2]),
                     _real(4, 3)),
        "Stack": (d.StackTransform([d.ExpTransform(), d.SoftplusTransform(),
                                    d.AffineTransform(0.5, 3.0)], 1), _real(4, 3)),
        "CDF": (d.CumulativeDistributionTransform(d.Normal(lib.tensor(0.5, dtype=lib.float64),
                                                           lib.tensor(2.0, dtype=lib.float64))),
                _real(5)),
        "BijectCorr": (d.biject_to(d.constraints.corr_cholesky), _real(3)),
        "BijectInterval": (d.biject_to(d.constraints.interval(-1.0, 3.0)), _real(4)),
        "BijectGreater": (d.biject_to(d.constraints.greater_than(2.0)), _real(4)),
        "TransformLessThan": (d.transform_to(d.constraints.less_than(-1.0)), _real(4)),
    }


TRANSFORM_NAMES = list(_transforms(D, ember))


@pytest.mark.parametrize("name", TRANSFORM_NAMES)
def test_transforms_match_pytorch(torch, name):
    state = R.bit_generator.state
    out = []
    for lib in (torch, ember):
        R.bit_generator.state = state
        t, x = _transforms(lib.distributions, lib)[name]
        x = lib.tensor(x, dtype=lib.float64, requires_grad=True)
        y = t(x)
        x_back = t.inv(y.detach())
        res = {"y": y, "x_back": x_back, "shape": (tuple(t.forward_shape(x.shape)),
                                                   tuple(t.inverse_shape(y.shape)))}
        try:
            ladj = t.log_abs_det_jacobian(x, y)
        except NotImplementedError:
            ladj = None
        res["ladj"] = ladj
        loss = (y * lib.tensor(np.linspace(0.2, 1.8, y.numel()).reshape(tuple(y.shape)))).sum()
        if ladj is not None:
            loss = loss + ladj.sum()
        (res["grad"],) = lib.autograd.grad(loss, [x])
        try:
            event_dim = t.event_dim
        except ValueError as e:  # domain and codomain differ
            event_dim = str(e)
        res["meta"] = (t.bijective, event_dim, t.domain.event_dim, t.codomain.event_dim, repr(t.domain),
                       repr(t.codomain), bool(t.codomain.check(y.detach()).all()))
        out.append(res)
    want, got = out
    assert got["shape"] == want["shape"] and got["meta"] == want["meta"]
    assert (got["ladj"] is None) == (want["ladj"] is None)
    for key in ("y", "x_back", "ladj", "grad"):
        if want[key] is None:
            continue
        w, g = want[key].detach().numpy(), got[key].detach().numpy()
        assert g.shape == w.shape, key
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11, err_msg=key)


def test_transformed_distributions_through_new_transforms(torch):
    """log_prob through event-changing transforms (the change of variables with
    StickBreaking, CorrCholesky and Independent), compared with PyTorch."""
    x = R.normal(size=(4, 3))
    vals = []
    for lib in (torch, ember):
        d = lib.distributions
        base = d.Independent(d.Normal(lib.zeros(3, dtype=lib.float64),
                                      lib.ones(3, dtype=lib.float64)), 1)
        for t in (d.StickBreakingTransform(), d.CorrCholeskyTransform()):
            dist = d.TransformedDistribution(base, [t])
            y = t(lib.tensor(x, dtype=lib.float64))
            vals.append((tuple(dist.batch_shape), tuple(dist.event_shape),
                         dist.log_prob(y).numpy()))
    n = len(vals) // 2
    for w, g in zip(vals[:n], vals[n:]):
        assert g[:2] == w[:2]
        np.testing.assert_allclose(g[2], w[2], rtol=1e-10)


def test_transform_caching_and_with_cache():
    x = ember.tensor(R.normal(size=(2, 3)))
    for t in (D.StickBreakingTransform(cache_size=1), D.CorrCholeskyTransform(cache_size=1),
              D.CatTransform([D.ExpTransform()] * 3, 1, cache_size=1),
              D.StackTransform([D.ExpTransform()] * 3, 1).with_cache(1),
              D.IndependentTransform(D.ExpTransform(), 1).with_cache(1),
              D.ReshapeTransform((3,), (3, 1)).with_cache(1)):
        y = t(x)
        assert t.inv(y) is x


def test_wishart_rsample_as_pytorch(torch):
    """Bartlett draws join the graph (df and the scale); PyTorch's singular-sample check
    holds the support check itself, so every draw warns and is redrawn once: the same
    warning here. With a sample shape, PyTorch's backward fails (its redraw modifies a
    saved mask in place); ember's fails too."""
    for lib in (torch, ember):
        df = lib.tensor([4.0, 6.0], dtype=lib.float64, requires_grad=True)
        cov = lib.tensor([[2.0, 0.3], [0.3, 1.0]], dtype=lib.float64, requires_grad=True)
        w = lib.distributions.Wishart(df, covariance_matrix=cov)
        with pytest.warns(UserWarning, match="Singular sample detected."):
            x = w.rsample()
        assert tuple(x.shape) == (2, 2, 2)
        g_df, g_cov = lib.autograd.grad(x.sum(), [df, cov])
        assert bool(lib.isfinite(g_df).all()) and bool(lib.isfinite(g_cov).all())
        with pytest.warns(UserWarning, match="Singular sample detected."):
            y = w.rsample((3,))
        with pytest.raises(RuntimeError):
            lib.autograd.grad(y.sum(), [df, cov])


EXPANDABLE = [n for n, c in CASES.items() if c[2] is not None and "log_prob" in c[3]]


@pytest.mark.parametrize("name", EXPANDABLE)
def test_expand_matches_pytorch(torch, name):
    build, params, values, _ = CASES[name]
    values = np.asarray(values)
    out = []
    for lib in (torch, ember):
        dist = build(lib.distributions, tensors(lib, params, False))
        big = dist.expand((2,) + tuple(dist.batch_shape))
        value = lib.tensor(values[:1], dtype=lib.float64)
        out.append((tuple(big.batch_shape), tuple(big.event_shape), type(big).__name__,
                    big.log_prob(value).numpy()))
    assert out[0][:3] == out[1][:3]
    np.testing.assert_allclose(out[1][3], out[0][3], rtol=1e-10, atol=1e-12)


# ---- users' subclasses: expand names the family, as each of PyTorch's does ----------------
SUBCLASSED = [
    ("Normal", "t.zeros(2), 1."), ("Laplace", "0., 1."), ("Cauchy", "t.zeros(2), 1."),
    ("Uniform", "0., 1."), ("Gamma", "t.ones(2), 1."), ("Exponential", "t.ones(2)"),
    ("Poisson", "2."), ("StudentT", "t.ones(2)"), ("FisherSnedecor", "3., 5."),
    ("Dirichlet", "t.ones(2, 3)"), ("Bernoulli", "t.tensor([0.3, 0.6])"),
    ("Geometric", "logits=t.zeros(2)"), ("Binomial", "5, t.tensor([0.3, 0.6])"),
    ("NegativeBinomial", "3., logits=t.zeros(2)"), ("ContinuousBernoulli", "0.3"),
    ("Categorical", "t.ones(2, 3)"), ("OneHotCategorical", "logits=t.zeros(3)"),
    ("Multinomial", "4, t.ones(3)"), ("RelaxedBernoulli", "t.tensor(0.5), t.tensor([0.3])"),
    ("RelaxedOneHotCategorical", "t.tensor(0.5), t.ones(3)"), ("Gumbel", "t.zeros(2), 1."),
    ("Kumaraswamy", "t.ones(2), 2."), ("Pareto", "1., t.ones(2)"), ("LogNormal", "0., 1."),
    ("LogisticNormal", "t.zeros(2), 1."), ("HalfNormal", "t.ones(2)"), ("HalfCauchy", "1."),
]


def _subclass_expand(lib, name, args, custom_init):
    family = getattr(lib.distributions, name)
    body = {}
    if custom_init:
        def __init__(self, *a, **k):
            family.__init__(self, *a, **k)
        body["__init__"] = __init__
    sub = type("Sub", (family,), body)
    dist = eval(f"Sub({args})", {"Sub": sub, "t": lib})
    try:
        big = dist.expand((4,) + tuple(dist.batch_shape))
    except NotImplementedError as e:
        return "NotImplementedError", str(e)
    return type(big).__name__, tuple(big.batch_shape), sorted(vars(big))


@pytest.mark.parametrize("custom_init", [False, True])
@pytest.mark.parametrize("name,args", SUBCLASSED)
def test_subclass_expand_matches_pytorch(torch, name, args, custom_init):
    assert (_subclass_expand(ember, name, args, custom_init)
            == _subclass_expand(torch, name, args, custom_init))


@pytest.mark.parametrize("name,args", [
    ("Bernoulli", (0.3,)), ("Binomial", (4, 0.3)), ("Categorical", ([0.2, 0.8],)),
    ("ContinuousBernoulli", (0.3,)), ("NegativeBinomial", (3, 0.4)),
    ("Multinomial", (3, [0.2, 0.8])), ("OneHotCategorical", ([0.2, 0.8],)),
])
def test_new_makes_tensors_like_the_parameter(torch, name, args):
    """`_new` (PyTorch's: a new tensor of the parameter's dtype and device) on every family
    that has one; Multinomial and OneHotCategorical ask their Categorical."""
    def build(lib):
        values = [lib.tensor(a, dtype=lib.float64) if isinstance(a, (float, list)) else a
                  for a in args]
        return getattr(lib.distributions, name)(*values)
    ours, theirs = build(ember)._new((2, 3)), build(torch)._new((2, 3))
    assert ours.tolist() == theirs.tolist() and str(ours.dtype) == str(theirs.dtype)
