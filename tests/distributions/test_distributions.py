"""ember.distributions against PyTorch's torch.distributions: densities, CDFs, moments,
entropies and KL divergences with their gradients (float64, exactly as PyTorch), sample
shapes/dtypes and moments (random streams differ, so draws are judged statistically),
validation errors and reprs."""
import math

import numpy as np
import pytest

import ember

from ._helpers import CONT, draws, outcome, tensors

D = ember.distributions
R = np.random.default_rng(0)
_pos, _real, _unit, _simplex = draws(R)


def _spd(n, batch=()):
    a = R.normal(size=batch + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _tril(n, batch=()):
    return np.linalg.cholesky(_spd(n, batch))


# name -> (constructor(lib, **params), params, values in the support, methods)
CASES = {
    "Normal": (lambda d, p: d.Normal(p["loc"], p["scale"]),
               {"loc": _real(3), "scale": _pos(3)}, _real(2, 3), CONT),
    "Uniform": (lambda d, p: d.Uniform(p["low"], p["low"] + p["width"]),
                {"low": _real(3), "width": _pos(3)}, None, CONT),
    "Exponential": (lambda d, p: d.Exponential(p["rate"]), {"rate": _pos(3)}, _pos(2, 3), CONT),
    "Laplace": (lambda d, p: d.Laplace(p["loc"], p["scale"]),
                {"loc": _real(3), "scale": _pos(3)}, _real(2, 3), CONT),
    "Cauchy": (lambda d, p: d.Cauchy(p["loc"], p["scale"]),
               {"loc": _real(3), "scale": _pos(3)}, _real(2, 3), CONT),
    "LogNormal": (lambda d, p: d.LogNormal(p["loc"], p["scale"]),
                  {"loc": _real(3), "scale": _pos(3)}, _pos(2, 3), CONT),
    "Gamma": (lambda d, p: d.Gamma(p["concentration"], p["rate"]),
              {"concentration": _pos(3) + 1, "rate": _pos(3)}, _pos(2, 3),
              ("log_prob", "entropy", "mean", "mode", "variance", "stddev")),
    "Chi2": (lambda d, p: d.Chi2(p["df"]), {"df": _pos(3) + 2}, _pos(2, 3),
             ("log_prob", "entropy", "mean", "mode", "variance")),
    "Beta": (lambda d, p: d.Beta(p["c1"], p["c0"]), {"c1": _pos(3) + 1, "c0": _pos(3) + 1},
             _unit(2, 3), ("log_prob", "entropy", "mean", "mode", "variance")),
    "Dirichlet": (lambda d, p: d.Dirichlet(p["concentration"]),
                  {"concentration": _pos(2, 4) + 1}, _simplex(3, 2, 4),
                  ("log_prob", "entropy", "mean", "mode", "variance")),
    "StudentT": (lambda d, p: d.StudentT(p["df"], p["loc"], p["scale"]),
                 {"df": np.array([0.7, 1.5, 3.0]), "loc": _real(3), "scale": _pos(3)},
                 _real(2, 3), ("log_prob", "entropy", "mean", "mode", "variance")),
    "Bernoulli": (lambda d, p: d.Bernoulli(probs=p["probs"]), {"probs": _unit(3)},
                  np.array([[0., 1., 1.], [1., 0., 0.]]),
                  ("log_prob", "entropy", "mean", "variance", "mode", "enumerate_support")),
    "BernoulliLogits": (lambda d, p: d.Bernoulli(logits=p["logits"]), {"logits": _real(3)},
                        np.array([[0., 1., 1.]]), ("log_prob", "entropy", "mean", "variance")),
    "Categorical": (lambda d, p: d.Categorical(probs=p["probs"]), {"probs": _simplex(2, 4)},
                    np.array([[0, 3], [2, 1], [1, 1]]),
                    ("log_prob", "entropy", "mean", "variance", "mode", "enumerate_support")),
    "CategoricalLogits": (lambda d, p: d.Categorical(logits=p["logits"]),
                          {"logits": _real(2, 4)}, np.array([3, 0]), ("log_prob", "entropy")),
    "OneHotCategorical": (lambda d, p: d.OneHotCategorical(probs=p["probs"]),
                          {"probs": _simplex(2, 3)}, np.eye(3)[[0, 2]],
                          ("log_prob", "entropy", "mean", "variance", "mode",
                           "enumerate_support")),
    "Poisson": (lambda d, p: d.Poisson(p["rate"]), {"rate": _pos(3)},
                np.array([[0., 2., 5.]]), ("log_prob", "mean", "mode", "variance")),
    "Geometric": (lambda d, p: d.Geometric(probs=p["probs"]), {"probs": _unit(3)},
                  np.array([[0., 2., 5.]]), ("log_prob", "entropy", "mean", "mode", "variance")),
    "GeometricLogits": (lambda d, p: d.Geometric(logits=p["logits"]), {"logits": _real(3)},
                        np.array([[0., 2., 5.]]), ("log_prob", "entropy", "mean", "variance")),
    "Binomial": (lambda d, p: d.Binomial(5, probs=p["probs"]), {"probs": _unit(3)},
                 np.array([[0., 2., 5.]]),
                 ("log_prob", "entropy", "mean", "mode", "variance", "enumerate_support")),
    "BinomialLogits": (lambda d, p: d.Binomial(4, logits=p["logits"]), {"logits": _real(3)},
                       np.array([[0., 2., 4.]]), ("log_prob", "mean", "variance")),
    "MVNCov": (lambda d, p: d.MultivariateNormal(p["loc"], covariance_matrix=p["cov"]),
               {"loc": _real(2, 3), "cov": _spd(3)}, _real(4, 2, 3),
               ("log_prob", "entropy", "mean", "variance", "covariance_matrix",
                "precision_matrix", "scale_tril")),
    "MVNPrec": (lambda d, p: d.MultivariateNormal(p["loc"], precision_matrix=p["prec"]),
                {"loc": _real(3), "prec": _spd(3, (2,))}, _real(2, 3),
                ("log_prob", "entropy", "variance", "covariance_matrix", "scale_tril")),
    "MVNTril": (lambda d, p: d.MultivariateNormal(p["loc"], scale_tril=p["tril"]),
                {"loc": _real(3), "tril": _tril(3)}, _real(2, 3),
                ("log_prob", "entropy", "variance", "covariance_matrix", "precision_matrix")),
    "IndependentNormal": (lambda d, p: d.Independent(d.Normal(p["loc"], p["scale"]), 1),
                          {"loc": _real(2, 3), "scale": _pos(2, 3)}, _real(4, 2, 3),
                          ("log_prob", "entropy", "mean", "variance")),
    "TanhNormal": (lambda d, p: d.TransformedDistribution(
        d.Normal(p["loc"], p["scale"]), [d.TanhTransform(), d.AffineTransform(1.0, 2.0)]),
        {"loc": _real(3), "scale": _pos(3)}, R.uniform(-0.9, 2.9, (2, 3)),
        ("log_prob", "cdf", "icdf")),
    "SigmoidAffineNegative": (lambda d, p: d.TransformedDistribution(
        d.Normal(p["loc"], p["scale"]), [d.AffineTransform(p["shift"], -1.5),
                                         d.SigmoidTransform()]),
        {"loc": _real(3), "scale": _pos(3), "shift": _real(3)}, _unit(2, 3),
        ("log_prob", "cdf", "icdf")),
    "RelaxedBernoulli": (lambda d, p: d.RelaxedBernoulli(p["temp"], probs=p["probs"]),
                         {"temp": _pos(3), "probs": _unit(3)}, _unit(2, 3), ("log_prob",)),
    "RelaxedBernoulliLogits": (lambda d, p: d.RelaxedBernoulli(p["temp"], logits=p["logits"]),
                               {"temp": _pos(), "logits": _real(3)}, _unit(2, 3),
                               ("log_prob",)),
    "RelaxedOneHotCategorical": (
        lambda d, p: d.RelaxedOneHotCategorical(p["temp"], logits=p["logits"]),
        {"temp": _pos(), "logits": _real(2, 4)}, _simplex(3, 2, 4), ("log_prob",)),
    "HalfCauchy": (lambda d, p: d.HalfCauchy(p["scale"]), {"scale": _pos(3)}, _pos(2, 3),
                   ("log_prob", "cdf", "icdf", "entropy", "mean", "variance")),
    "InverseGamma": (lambda d, p: d.InverseGamma(p["concentration"], p["rate"]),
                     {"concentration": np.array([0.5, 1.5, 3.0]), "rate": _pos(3)},
                     _pos(2, 3), ("log_prob", "entropy", "mean", "mode", "variance")),
    "GeneralizedPareto": (lambda d, p: d.GeneralizedPareto(p["loc"], p["scale"], p["conc"]),
                          {"loc": np.array([0.1, -0.2, 0.3]), "scale": _pos(3) + 1,
                           "conc": np.array([-0.3, 0.0, 0.4])}, _unit(2, 3) + 0.3,
                          # PyTorch's log_prob and cdf fail on float64 (they compare with a
                          # float32 zero): test_more_families.py checks them in float32
                          ("icdf", "entropy", "mean", "variance", "mode")),
    "OneHotCategoricalStraightThrough": (
        lambda d, p: d.OneHotCategoricalStraightThrough(probs=p["probs"]),
        {"probs": _simplex(2, 3)}, np.eye(3)[[1, 2]], ("log_prob", "entropy", "mean", "mode")),
    "ExpPower": (lambda d, p: d.TransformedDistribution(
        d.Exponential(p["rate"]), [d.PowerTransform(p["k"]), d.ExpTransform()]),
        {"rate": _pos(3), "k": _pos(3)}, _pos(2, 3) + 1.0, ("log_prob", "cdf")),
}


def _evaluate(lib, name, method, requires_grad=True):
    build, params, values, _ = CASES[name]
    p = tensors(lib, params, requires_grad)
    dist = build(lib.distributions, p)
    if values is None:  # Uniform: points inside [low, high)
        values = params["low"] + params["width"] * _unit(2, 3)
    if method == "icdf":
        values = np.clip(_unit(*np.shape(values)), 0.05, 0.95)
    value = lib.tensor(values, dtype=lib.int64 if name.startswith("Categorical")
                       else lib.float64)
    try:
        if method in ("log_prob", "cdf", "icdf"):
            out = getattr(dist, method)(value)
        elif method in ("entropy", "enumerate_support"):
            out = getattr(dist, method)()
        else:
            out = getattr(dist, method)
    except NotImplementedError as e:
        return ("NotImplementedError", str(e).replace("torch.distributions", "D")
                .replace("ember.distributions", "D")), None
    weights = np.linspace(0.3, 1.7, out.numel()).reshape(tuple(out.shape))
    grads = None
    if out.dtype == lib.float64 and out.requires_grad:
        finite = lib.isfinite(out)
        loss = (out * lib.tensor(weights))[finite].sum()
        leaves = list(p.values())
        got = lib.autograd.grad(loss, leaves, allow_unused=True)
        grads = [None if g is None else g.detach().numpy() for g in got]
    return out.detach().numpy(), grads


@pytest.mark.parametrize("name,method", [(n, m) for n, c in CASES.items() for m in c[3]])
def test_values_and_gradients_match_pytorch(torch, name, method):
    np.random.seed(1)
    state = R.bit_generator.state
    want, want_grads = _evaluate(torch, name, method)
    R.bit_generator.state = state
    got, got_grads = _evaluate(ember, name, method)
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and got[0] == want[0]
        return
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12, equal_nan=True)
    assert (got_grads is None) == (want_grads is None)
    for g, w in zip(got_grads or [], want_grads or []):
        assert (g is None) == (w is None)
        if w is not None:
            np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-12, equal_nan=True)


# ---- KL divergences ----------------------------------------------------------------------
KL_PAIRS = {
    "Normal": lambda d, a, b: (d.Normal(a, b), d.Normal(b - 1, a.abs() + 0.5)),
    "Laplace": lambda d, a, b: (d.Laplace(a, b), d.Laplace(b, a.abs() + 0.5)),
    "Exponential": lambda d, a, b: (d.Exponential(b), d.Exponential(a.abs() + 0.1)),
    "Gamma": lambda d, a, b: (d.Gamma(b, a.abs() + 0.1), d.Gamma(a.abs() + 1, b)),
    "Beta": lambda d, a, b: (d.Beta(b, a.abs() + 0.1), d.Beta(a.abs() + 1, b)),
    "Uniform": lambda d, a, b: (d.Uniform(a, a + b), d.Uniform(a - b, a + 2 * b)),
    "UniformOutside": lambda d, a, b: (d.Uniform(a - b, a + b), d.Uniform(a, a + 2 * b)),
    "Bernoulli": lambda d, a, b: (d.Bernoulli(logits=a), d.Bernoulli(probs=b / 3)),
    "Categorical": lambda d, a, b: (d.Categorical(logits=a.unsqueeze(0) * b.unsqueeze(1)),
                                    d.Categorical(probs=b.unsqueeze(0) * b.unsqueeze(1))),
    "OneHotCategorical": lambda d, a, b: (d.OneHotCategorical(logits=a),
                                          d.OneHotCategorical(probs=b)),
    "Dirichlet": lambda d, a, b: (d.Dirichlet(b), d.Dirichlet(a.abs() + 0.3)),
    "Poisson": lambda d, a, b: (d.Poisson(b), d.Poisson(a.abs() + 0.1)),
    "Geometric": lambda d, a, b: (d.Geometric(probs=b / 3), d.Geometric(logits=a)),
    "Binomial": lambda d, a, b: (d.Binomial(t_count(a, [5., 4., 3.]), logits=a),
                                 d.Binomial(t_count(a, [5., 3., 3.]), probs=b / 3)),
    "Independent": lambda d, a, b: (d.Independent(d.Normal(a, b), 1),
                                    d.Independent(d.Normal(b, b + a.abs()), 1)),
    "LogNormal": lambda d, a, b: (d.LogNormal(a, b), d.LogNormal(b, a.abs() + 0.2)),
    "MultivariateNormal": lambda d, a, b: (
        d.MultivariateNormal(a, scale_tril=d_tril(d, b)),
        d.MultivariateNormal(b.expand(2, 3), covariance_matrix=d_cov(d, a, b))),
}


def t_count(a, counts):
    return (a.detach() * 0 + a.new_tensor(counts))


def d_tril(d, b):
    return (b.unsqueeze(-1) * b.unsqueeze(0) + 1).tril() + 0.5 * _eye_like(b)


def d_cov(d, a, b):
    m = a.unsqueeze(-1) * b.unsqueeze(0)
    return m @ m.mT + 2.0 * _eye_like(b)


def _eye_like(b):
    lib = ember if isinstance(b, ember.Tensor) else __import__("torch")
    return lib.eye(b.shape[-1], dtype=b.dtype)


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
        ga, gb = lib.autograd.grad(kl[finite].sum(), [ta, tb], allow_unused=True)
        results.append((kl.detach().numpy(), ga, gb))
    (kt, gat, gbt), (ke, gae, gbe) = results
    assert ke.shape == kt.shape
    np.testing.assert_allclose(ke, kt, rtol=1e-10, atol=1e-12)
    for ge, gt in ((gae, gat), (gbe, gbt)):
        assert (ge is None) == (gt is None)
        if gt is not None:
            np.testing.assert_allclose(ge.numpy(), gt.numpy(), rtol=1e-9, atol=1e-12)


def test_register_kl_dispatches_to_the_most_specific_pair():
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 2.0)
    assert float(D.kl_divergence(p, q)) == pytest.approx(float(D.kl_divergence(D.Normal(0., 1.),
                                                                               q)))

    @D.register_kl(MyNormal, D.Normal)
    def _mine(p, q):
        return ember.tensor(42.0)

    assert float(D.kl_divergence(p, q)) == 42.0
    with pytest.raises(NotImplementedError, match="No KL\\(p \\|\\| q\\) is implemented for p "
                                                  "type Normal and q type Cauchy"):
        D.kl_divergence(D.Normal(0., 1.), D.Cauchy(0., 1.0))


# ---- sampling ----------------------------------------------------------------------------
_z, _w = np.polynomial.hermite_e.hermegauss(80)
_TANH2 = float((np.tanh(_z) ** 2 * _w).sum() / _w.sum())  # E[tanh(Z)^2], Z ~ N(0, 1)

SAMPLERS = {  # name -> (constructor(distributions, lib), mean, variance; None: dist's own)
    "Normal": (lambda d, t: d.Normal(t.tensor([1.0, -2.0]), t.tensor([0.5, 2.0])),
               [1.0, -2.0], [0.25, 4.0]),
    "Uniform": (lambda d, t: d.Uniform(t.tensor([0.0, 2.0]), t.tensor([1.0, 5.0])),
                [0.5, 3.5], [1 / 12, 0.75]),
    "Exponential": (lambda d, t: d.Exponential(t.tensor([0.5, 2.0])), [2.0, 0.5], [4.0, 0.25]),
    "Laplace": (lambda d, t: d.Laplace(t.tensor([1.0, 0.0]), t.tensor([1.0, 0.5])),
                [1.0, 0.0], [2.0, 0.5]),
    "Cauchy": (lambda d, t: d.Cauchy(t.tensor([1.0, 0.0]), t.tensor([1.0, 0.5])), "median",
               None),
    "LogNormal": (lambda d, t: d.LogNormal(t.tensor([0.0, 0.5]), t.tensor([0.25, 0.5])),
                  None, None),
    "Gamma": (lambda d, t: d.Gamma(t.tensor([2.0, 0.5]), t.tensor([1.0, 2.0])), None, None),
    "Chi2": (lambda d, t: d.Chi2(t.tensor([2.0, 5.0])), None, None),
    "Beta": (lambda d, t: d.Beta(t.tensor([2.0, 0.5]), t.tensor([3.0, 0.5])), None, None),
    "StudentT": (lambda d, t: d.StudentT(t.tensor([5.0, 8.0])), None, None),
    "Bernoulli": (lambda d, t: d.Bernoulli(t.tensor([0.2, 0.7])), None, None),
    "Categorical": (lambda d, t: d.Categorical(t.tensor([[0.2, 0.3, 0.5], [0.9, 0.05, 0.05]])),
                    [1.3, 0.15], [0.61, 0.2275]),
    "OneHotCategorical": (lambda d, t: d.OneHotCategorical(t.tensor([0.2, 0.3, 0.5])),
                          None, None),
    "Poisson": (lambda d, t: d.Poisson(t.tensor([0.5, 4.0])), None, None),
    "Geometric": (lambda d, t: d.Geometric(t.tensor([0.3, 0.8])), None, None),
    "Binomial": (lambda d, t: d.Binomial(t.tensor([10.0, 3.0]), t.tensor([0.3, 0.5])),
                 None, None),
    "MultivariateNormal": (lambda d, t: d.MultivariateNormal(
        t.tensor([1.0, -1.0]), t.tensor([[2.0, 0.5], [0.5, 1.0]])), None, None),
    "Dirichlet": (lambda d, t: d.Dirichlet(t.tensor([1.0, 2.0, 3.0])), None, None),
    "Independent": (lambda d, t: d.Independent(d.Normal(t.zeros(2, 3), t.ones(2, 3)), 2),
                    None, None),
    "InverseGamma": (lambda d, t: d.InverseGamma(t.tensor([5.0, 8.0]), t.tensor([1.0, 2.0])),
                     None, None),
    "GeneralizedPareto": (lambda d, t: d.GeneralizedPareto(
        t.tensor([0.0, 1.0]), t.tensor([1.0, 2.0]), t.tensor([-0.5, 0.1])), None, None),
    "RelaxedBernoulli": (lambda d, t: d.RelaxedBernoulli(t.tensor(0.5), t.tensor([0.2, 0.9])),
                         "probs", None),
    "RelaxedOneHotCategorical": (lambda d, t: d.RelaxedOneHotCategorical(
        t.tensor(0.5), t.tensor([0.2, 0.3, 0.5])), "probs", None),
    "TransformedTanh": (lambda d, t: d.TransformedDistribution(
        d.Normal(t.zeros(2), t.ones(2)), [d.TanhTransform(), d.AffineTransform(1.0, 2.0)]),
        [1.0, 1.0], [4 * _TANH2] * 2),
}


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_samples_have_pytorchs_shapes_dtypes_and_moments(torch, name):
    make, mean, var = SAMPLERS[name]
    ember.manual_seed(3)
    dist = make(D, ember)
    x = dist.sample((4000,))
    ember.manual_seed(3)
    assert ember.equal(make(D, ember).sample((4000,)), x)  # reproducible under manual_seed
    assert not ember.equal(make(D, ember).sample((4000,)), x)
    tdist = make(torch.distributions, torch)
    want = tdist.sample((4000,))
    assert x.shape == want.shape and str(x.dtype) == str(want.dtype)
    assert make(D, ember).sample().shape == tdist.sample().shape
    assert bool(dist.support.check(x).all())
    xf = x.double()
    if mean == "median":
        assert bool(((xf.median(0).values - dist.loc).abs() < 0.15).all())
        return
    if mean == "probs":  # a relaxation lands near the corner its probabilities favour
        corner = (xf > 0.5).double().mean(0)
        assert bool(((corner - dist.probs).abs() < 0.1).all())
        return
    want_mean = dist.mean if mean is None else ember.tensor(mean)
    want_var = dist.variance if var is None else ember.tensor(var)
    sd = want_var.double().sqrt()
    assert bool(((xf.mean(0) - want_mean.double()).abs() <= 6 * sd / math.sqrt(4000)).all())
    assert bool(((xf.var(0) - want_var.double()).abs() <= 0.25 * want_var.double() + 1e-3).all())
    assert dist.has_rsample == tdist.has_rsample
    if dist.has_rsample:
        r = make(D, ember).rsample((3,))
        assert r.shape == tdist.rsample((3,)).shape


@pytest.mark.parametrize("name", ["Normal", "Uniform", "Exponential", "Laplace", "Cauchy",
                                  "LogNormal", "MultivariateNormal", "TransformedTanh",
                                  "RelaxedBernoulli"])
def test_rsample_is_reparameterised(torch, name):
    """rsample joins the graph (finite gradients of the parameters' shapes); sample does
    not. (Values of the gradients are PyTorch's by construction: rsample is ember ops on the
    parameters and fixed noise; Normal's is checked exactly below.)"""
    dist = SAMPLERS[name][0](D, ember)
    params = [v for v in vars(dist).values() if isinstance(v, ember.Tensor)]
    base = getattr(dist, "base_dist", None)
    if base is not None:
        params = [v for v in vars(base).values() if isinstance(v, ember.Tensor)]
    leaves = [p.detach().requires_grad_() for p in params]
    for obj in (dist, base):
        if obj is None:
            continue
        for k, v in list(vars(obj).items()):
            for p, leaf in zip(params, leaves):
                if v is p:
                    setattr(obj, k, leaf)
    if name == "MultivariateNormal":
        dist._unbroadcasted_scale_tril = dist._unbroadcasted_scale_tril.detach().requires_grad_()
        leaves.append(dist._unbroadcasted_scale_tril)
    x = dist.rsample((5,))
    assert x.requires_grad
    grads = ember.autograd.grad(x.sum(), leaves, allow_unused=True)
    assert any(g is not None for g in grads)
    for g, leaf in zip(grads, leaves):
        if g is not None:
            assert g.shape == leaf.shape and bool(ember.isfinite(g).all())
    assert not dist.sample((5,)).requires_grad


def test_normal_rsample_gradient_is_the_reparameterisation():
    loc = ember.tensor([0.5, -1.0], dtype=ember.float64, requires_grad=True)
    scale = ember.tensor([2.0, 0.5], dtype=ember.float64, requires_grad=True)
    ember.manual_seed(0)
    x = D.Normal(loc, scale).rsample((7,))
    eps = (x - loc) / scale
    gl, gs = ember.autograd.grad(x.sum(), [loc, scale])
    assert np.allclose(gl.numpy(), [7.0, 7.0])
    assert np.allclose(gs.numpy(), eps.detach().sum(0).numpy())


def test_gamma_rsample_gradient_is_the_implicit_reparameterisation(torch):
    """dx/d concentration keeps the Gamma CDF at x fixed: checked against a finite
    difference of the regularised incomplete gamma (SciPy), and against PyTorch's own
    approximation (good to a few percent, which is all PyTorch's is)."""
    special = pytest.importorskip("scipy.special")
    from ember.distributions.utils import _StandardGammaGrad
    for a in (0.05, 0.7, 3.0, 40.0, 500.0):
        x = torch._standard_gamma(torch.full((20,), a, dtype=torch.float64)).numpy()
        x = np.concatenate([x, [a * 0.01 + 1e-3, a + 3 * a ** 0.5 + 3.1, a * 3 + 10]])
        got = _StandardGammaGrad.apply(ember.tensor(np.full_like(x, a)), ember.tensor(x))
        h = 1e-6 * a
        dP = (special.gammainc(a + h, x) - special.gammainc(a - h, x)) / (2 * h)
        log_density = (a - 1) * np.log(x) - x - special.gammaln(a)
        want = -dP / np.exp(log_density)
        ok = np.abs(dP) > 1e-6  # where the finite difference itself has digits
        np.testing.assert_allclose(got.numpy()[ok], want[ok], rtol=1e-4)
        theirs = torch._standard_gamma_grad(torch.full((len(x),), a, dtype=torch.float64),
                                            torch.tensor(x)).numpy()
        np.testing.assert_allclose(got.numpy(), theirs, rtol=0.05)


@pytest.mark.parametrize("name", ["Gamma", "Beta", "Dirichlet", "Chi2", "StudentT"])
def test_gamma_family_rsample_gradients_are_unbiased(name):
    """The mean of many reparameterised gradients is the gradient of the mean."""
    ember.manual_seed(0)
    a = ember.tensor([0.5, 2.0, 6.0], dtype=ember.float64, requires_grad=True)
    if name == "Gamma":
        dist, want = D.Gamma(a, 2.0), 0.5 * ember.ones(3, dtype=ember.float64)
    elif name == "Chi2":
        dist, want = D.Chi2(a), ember.ones(3, dtype=ember.float64)
    elif name == "Beta":  # d/da of a / (a + 1.5)
        dist, want = D.Beta(a, 1.5), 1.5 / (a.detach() + 1.5) ** 2
    elif name == "Dirichlet":  # d/da_i of sum_i i * a_i / sum(a)
        dist = D.Dirichlet(a)
        w = ember.tensor([0.0, 1.0, 2.0], dtype=ember.float64)
        total = a.detach().sum()
        want = (w * total - (w * a.detach()).sum()) / total ** 2
    else:  # E[|t|] for large df has a known derivative; use E[t^2] = df / (df - 2)
        a = ember.tensor([4.0, 6.0, 9.0], dtype=ember.float64, requires_grad=True)
        dist, want = D.StudentT(a), -2 / (a.detach() - 2) ** 2
    x = dist.rsample((20000,))
    if name == "Dirichlet":
        x = x * w
    if name == "StudentT":
        x = x.clamp(-30, 30) ** 2
    (grad,) = ember.autograd.grad(x.mean(0).sum(), [a])
    tol = 0.25 if name == "StudentT" else 0.05
    np.testing.assert_allclose(grad.numpy(), want.numpy(), rtol=tol, atol=0.01)


def test_gamma_rsample_double_backward_raises_as_pytorch():
    c = ember.tensor([2.0, 3.0], requires_grad=True)
    x = D.Gamma(c, 1.0).rsample()
    (g,) = ember.autograd.grad(x.sum(), [c], create_graph=True)
    with pytest.raises(NotImplementedError, match="_standard_gamma_grad"):
        g.sum().backward()


# ---- validation errors, reprs, expand ----------------------------------------------------
ERRORS = [
    "D.Normal(t.tensor([0., 1.]), t.tensor([1., -1.]))",
    "D.Normal(t.tensor([0., float('nan')]), 1.0)",
    "D.Normal(0.0, 1.0).log_prob(1.0)",
    "D.Normal(t.zeros(3), 1.0).log_prob(t.zeros(2))",
    "D.Normal('a', 1.0)",
    "D.Exponential(t.tensor([1., 2.])).log_prob(t.tensor([-1., 1.]))",
    "D.Exponential(t.tensor(-1.))",
    "D.Uniform(t.tensor([0., 1.]), t.tensor([1., 0.5]))",
    "D.Uniform(0., 1.).log_prob(t.tensor(2.))",
    "D.Laplace(0., t.tensor(0.))",
    "D.Bernoulli()",
    "D.Bernoulli(probs=t.tensor(0.5), logits=t.tensor(0.))",
    "D.Bernoulli(t.tensor([0.2, 1.5]))",
    "D.Bernoulli(t.tensor([0.2, 0.5])).log_prob(t.tensor([0.5, 1.]))",
    "D.Categorical(t.tensor(0.5))",
    "D.Categorical(logits=t.tensor(0.5))",
    "D.Categorical(t.tensor([0.2, -0.5]))",
    "D.Categorical(t.tensor([0.2, 0.8])).log_prob(t.tensor([2]))",
    "D.OneHotCategorical(t.tensor([0.2, 0.8])).log_prob(t.tensor([1., 1.]))",
    "D.OneHotCategorical(t.tensor([0.2, 0.8])).log_prob(t.tensor([1., 0., 0.]))",
    "D.Poisson(t.tensor([1.])).log_prob(t.tensor([0.5]))",
    "D.Geometric(t.tensor([0., 0.5]))",
    "D.Binomial(t.tensor([2.5]), t.tensor([0.5]))",
    "D.Binomial(3, t.tensor([0.5])).log_prob(t.tensor([4.]))",
    "D.Binomial(t.tensor([2., 3.]), t.tensor([0.5, 0.5])).entropy()",
    "D.Gamma(t.tensor([1.]), t.tensor([-1.]))",
    "D.Beta(t.tensor([1.]), t.tensor([-1.]))",
    "D.Dirichlet(t.tensor(1.))",
    "D.Dirichlet(t.tensor([1., 0.]))",
    "D.Dirichlet(t.tensor([1., 2.])).log_prob(t.tensor([0.5, 0.6]))",
    "D.StudentT(t.tensor([-1.]))",
    "D.Independent(D.Normal(t.zeros(2), 1.), 2)",
    "D.Independent(D.Normal(t.zeros(2, 3), 1.), 2).enumerate_support()",
    "D.MultivariateNormal(t.tensor(0.), t.eye(2))",
    "D.MultivariateNormal(t.zeros(2))",
    "D.MultivariateNormal(t.zeros(2), t.eye(2), scale_tril=t.eye(2))",
    "D.MultivariateNormal(t.zeros(2), t.ones(2))",
    "D.MultivariateNormal(t.zeros(2), scale_tril=t.ones(2))",
    "D.MultivariateNormal(t.zeros(2), precision_matrix=t.ones(2))",
    "D.MultivariateNormal(t.zeros(2), t.tensor([[1., 2.], [2., 1.]]))",
    "D.MultivariateNormal(t.zeros(2), t.tensor([[1., 2.], [0., 1.]]))",
    "D.MultivariateNormal(t.zeros(2), scale_tril=t.tensor([[1., 2.], [0., 1.]]))",
    "D.MultivariateNormal(t.zeros(2), scale_tril=t.tensor([[1., 0.], [2., -1.]]))",
    "D.MultivariateNormal(t.zeros(2), t.eye(2)).log_prob(t.zeros(3))",
    "D.kl_divergence(D.MultivariateNormal(t.zeros(2), t.eye(2)), "
    "D.MultivariateNormal(t.zeros(3), t.eye(3)))",
    "D.kl_divergence(D.Normal(0., 1.), D.Categorical(t.ones(2)))",
    "D.kl_divergence(D.Binomial(2, t.tensor([0.5])), D.Binomial(3, t.tensor([0.5])))",
    "D.TransformedDistribution(D.Normal(0., 1.), 'exp')",
    "D.TransformedDistribution(D.Normal(0., 1.), [D.ExpTransform(), 1])",
    "D.LogNormal(0., 1.).log_prob(t.tensor(-1.))",
    "D.RelaxedBernoulli(t.tensor(0.5))",
    "D.RelaxedBernoulli(t.tensor(0.5), t.tensor([1.5]))",
    "D.RelaxedBernoulli(t.tensor(0.5), t.tensor([0.5])).log_prob(t.tensor([1.5]))",
    "D.RelaxedOneHotCategorical(t.tensor(0.5), t.tensor([0.5, -0.5]))",
    "D.LogNormal(0., -1.)",
    "D.Normal(0., 1.).enumerate_support()",
    "D.Distribution().mean",
    "D.Distribution().sample()",
    "D.Distribution.set_default_validate_args(3)",
    "D.constraints.independent(D.constraints.real, 2).check(t.tensor(1.))",
    "D.constraints.dependent.check(t.tensor(1.))",
    "D.ExpTransform(cache_size=2)",
    "D.Normal(0., 1.).log_prob(t.tensor([1.])) and D.Normal(t.zeros(2), 1.).expand([3])",
    "D.Normal(t.zeros(2), 1.).expand([3, 2]).log_prob(t.zeros(4, 2))",
]


@pytest.mark.parametrize("src", ERRORS)
def test_errors_match_pytorch(torch, src):
    assert outcome(ember, src) == outcome(torch, src)


REPRS = [
    "D.Normal(t.zeros(2), t.ones(2))",
    "D.Normal(0., 1.)",
    "D.Bernoulli(t.tensor([0.3, 0.4]))",
    "D.Bernoulli(logits=t.tensor(0.3))",
    "D.Categorical(logits=t.zeros(2, 3))",
    "D.OneHotCategorical(t.ones(3))",
    "D.Uniform(0., 2.)",
    "D.LogNormal(0., 1.)",
    "D.Independent(D.Normal(t.zeros(2, 3), 1.), 1)",
    "D.MultivariateNormal(t.zeros(2), t.eye(2))",
    "D.MultivariateNormal(t.zeros(3, 2), scale_tril=t.eye(2))",
    "D.Beta(1., 2.)",
    "D.Dirichlet(t.ones(3))",
    "D.StudentT(3.)",
    "D.Binomial(4, t.tensor([0.5, 0.2]))",
    "D.Normal(t.zeros(2), 1.).support",
    "D.Uniform(0., 2.).support",
    "D.Categorical(t.ones(4)).support",
    "D.Binomial(t.tensor([3., 4.]), t.tensor([0.5, 0.2])).support",
    "D.Dirichlet(t.ones(3)).support",
    "D.Independent(D.Exponential(t.ones(2, 3)), 2).support",
    "D.MultivariateNormal(t.zeros(2), t.eye(2)).arg_constraints",
    "D.Uniform(0., 1.).arg_constraints",
    "D.Categorical.arg_constraints",
    "D.TransformedDistribution(D.Normal(0., 1.), [D.TanhTransform()]).support",
    "D.ComposeTransform([D.ExpTransform(), D.AffineTransform(0., 2.)])",
    "D.ExpTransform().inv",
    "(D.Normal(0., 1.).batch_shape, D.Dirichlet(t.ones(2, 3)).event_shape, "
    "D.Dirichlet(t.ones(2, 3)).batch_shape)",
    "(D.TransformedDistribution(D.Normal(t.zeros(3), 1.), [D.AffineTransform(t.zeros(2, 3), "
    "1.)]).batch_shape)",
    "D.Normal(t.zeros(2), 1.).expand([3, 2])",
    "D.Normal(t.zeros(2), 1.).expand([3, 2]).batch_shape",
    "D.Categorical(t.ones(2, 3)).expand([4, 2]).probs.shape",
    "D.MultivariateNormal(t.zeros(2), t.eye(2)).expand([3]).covariance_matrix.shape",
    "D.Independent(D.Normal(t.zeros(2, 3), 1.), 1).expand([5, 2]).event_shape",
    "D.LogNormal(t.zeros(2), 1.).expand([3, 2]).batch_shape",
    "D.Beta(t.ones(2), 1.).expand([3, 2]).batch_shape",
    "D.Bernoulli(t.tensor([0.3, 0.4])).enumerate_support()",
    "D.Categorical(t.ones(2, 3)).enumerate_support(expand=False).shape",
    "D.Binomial(2, t.tensor([0.5, 0.2])).enumerate_support()",
    "D.OneHotCategorical(t.ones(2, 3)).enumerate_support().shape",
    "D.Normal(t.tensor([0.5, 2.]), 1.).perplexity()",
    "D.Bernoulli(t.tensor([0.3, 0.5, 0.9])).mode",
    "D.Dirichlet(t.tensor([[0.5, 0.7], [2., 3.]])).mode",
    "D.Uniform(0., 2.).mode",
    "D.Categorical(t.tensor([0.1, 0.7, 0.2])).mode",
    "D.kl_divergence(D.Bernoulli(t.tensor([0., 1., 0.5])), D.Bernoulli(t.tensor([0.5, 0., 1.])))",
    "D.kl_divergence(D.Categorical(t.tensor([0., 1.])), D.Categorical(t.tensor([0.5, 0.5])))",
    "D.Normal(0., 1.).has_rsample, D.Bernoulli(0.5).has_enumerate_support",
    "[c.is_discrete for c in (D.constraints.real, D.constraints.boolean, "
    "D.constraints.nonnegative_integer)]",
    "D.constraints.lower_cholesky.check(t.tensor([[[1., 0.], [1., 1.]], [[1., 1.], [0., 1.]]]))",
    "D.constraints.positive_definite.check(t.tensor([[2., 1.], [1., 2.]]))",
    "D.constraints.simplex.check(t.tensor([[0.5, 0.5], [0.6, 0.6]]))",
]


@pytest.mark.parametrize("src", REPRS)
def test_reprs_shapes_and_constraints_match_pytorch(torch, src):
    assert outcome(ember, src) == outcome(torch, src)


def test_validate_args_switch_and_default(torch):
    assert D.Distribution._validate_args is True
    D.Normal(0.0, -1.0, validate_args=False)  # no check when asked not to
    try:
        D.Distribution.set_default_validate_args(False)
        d = D.Normal(0.0, -1.0)
        assert math.isnan(float(d.log_prob(ember.tensor(0.0))))
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError):
        D.Normal(0.0, -1.0)


def test_lazy_parameters_join_the_graph():
    logits = ember.tensor([0.3, -1.2], requires_grad=True)
    with ember.no_grad():
        d = D.Bernoulli(logits=logits)
        probs = d.probs  # computed lazily, with grad enabled as in PyTorch
    assert probs.requires_grad
    assert "probs" in vars(d)
    assert repr(d) == "Bernoulli(probs: torch.Size([2]), logits: torch.Size([2]))"


def test_transform_caching_and_inverse():
    t = D.TanhTransform(cache_size=1)
    x = ember.tensor([30.0])
    y = t(x)
    assert t.inv(y) is x  # the cache returns the exact input though atanh(1) is inf
    assert D.ExpTransform().inv.inv == D.ExpTransform()
    assert D.ComposeTransform([D.ExpTransform()]).inv.parts[0].inv == D.ExpTransform()


# GeneralizedPareto's float64 log_prob fails in PyTorch: test_more_families.py expands it
@pytest.mark.parametrize("name", [n for n in CASES if n != "GeneralizedPareto"])
def test_expand_matches_pytorch(torch, name):
    build, params, values, _ = CASES[name]
    if values is None:
        values = params["low"] + params["width"] * 0.5
    values = np.asarray(values)
    values = values[:1] if values.ndim > 1 else values  # broadcasts against the new batch
    out = []
    for lib in (torch, ember):
        dist = build(lib.distributions, tensors(lib, params, False))
        big = dist.expand((2,) + tuple(dist.batch_shape))
        value = lib.tensor(values, dtype=lib.int64 if name.startswith("Categorical")
                           else lib.float64)
        out.append((tuple(big.batch_shape), tuple(big.event_shape), type(big).__name__,
                    big.log_prob(value).numpy()))
    assert out[0][:3] == out[1][:3]
    np.testing.assert_allclose(out[1][3], out[0][3], rtol=1e-10, atol=1e-12)


def test_package_names_are_pytorchs(torch):
    # d2l's "lookup API" section prints dir(torch.distributions): ember's helper modules and
    # the classes PyTorch keeps in their own modules must not show there
    assert sorted(dir(D)) == sorted(dir(torch.distributions))
    assert sorted(D.__all__) == sorted(torch.distributions.__all__)
    from ember.distributions.relaxed_bernoulli import LogitRelaxedBernoulli  # noqa: F401
    from ember.distributions.relaxed_categorical import ExpRelaxedCategorical  # noqa: F401
