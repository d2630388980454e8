"""ember.func (grad, grad_and_value, vjp, jvp, jacrev, jacfwd, hessian, vmap, functional_call)
and nn.utils.stateless against torch.func: values, shapes, pytree structure, whether results
carry a graph, and errors."""
import warnings

import numpy as np
import pytest

import ember

RNG = np.random.default_rng(1)
X = RNG.standard_normal(3)
Y = RNG.standard_normal((2, 3))


def _same(a, b, path="result"):
    if isinstance(b, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b), (path, a, b)
        for i, (p, q) in enumerate(zip(a, b)):
            _same(p, q, f"{path}[{i}]")
        return
    if isinstance(b, dict):
        assert isinstance(a, dict) and list(a) == list(b), (path, a, b)
        for k in b:
            _same(a[k], b[k], f"{path}[{k!r}]")
        return
    assert isinstance(a, ember.Tensor), (path, type(a))
    assert tuple(a.shape) == tuple(b.shape), (path, a.shape, b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert a.requires_grad == b.requires_grad, (path, a.requires_grad, b.requires_grad)


def _libs(torch):
    def E(a, **kw):
        return ember.tensor(a, dtype=ember.float64, **kw)

    def T(a, **kw):
        return torch.tensor(a, dtype=torch.float64, **kw)
    return (ember, E), (torch, T)


def _both(torch, build):
    (e, E), (t, T) = _libs(torch)
    _same(build(e, E), build(t, T))


def _error(torch, build):
    got = []
    for lib, M in _libs(torch):
        with pytest.raises(Exception) as info:
            build(lib, M)
        got.append(info)
    assert got[0].type is got[1].type
    assert str(got[0].value) == str(got[1].value)


def _captured(L, M):
    c = M(X, requires_grad=True)
    return L.func.grad(lambda a: (a ** 3).sum() + (a * c).sum())(M(X))


def _vjp_twice(L, M):
    out, fn = L.func.vjp(lambda a, b: (a * b, a.exp()), M(X), M(Y[0]))
    return out, fn((M(Y[1]), M(X))), fn((M(X), M(X)))


def _vjp_aux(L, M):
    out, fn, aux = L.func.vjp(lambda a: (a.sin(), {"k": a * 3}), M(X), has_aux=True)
    return out, fn(M(Y[0])), aux


@pytest.mark.parametrize("build", [
    lambda L, M: L.func.grad(lambda a: (a ** 3).sum())(M(X)),
    lambda L, M: L.func.grad(lambda a: (a ** 3).sum())(M(X, requires_grad=True)),
    lambda L, M: L.func.grad(lambda a, b: (a.sin() * b).sum(), argnums=(0, 1))(M(X), M(Y[0])),
    lambda L, M: L.func.grad(lambda a, b: (a.sin() * b).sum(), argnums=-1)(M(X), M(Y[0])),
    lambda L, M: L.func.grad(lambda d: (d["a"].sin() * d["b"][0]).sum())(
        {"a": M(X), "b": [M(Y[0])]}),
    lambda L, M: L.func.grad(lambda a: ((a ** 2).sum(), a * 2), has_aux=True)(M(X)),
    lambda L, M: L.func.grad_and_value(lambda a: (a ** 3).sum())(M(X)),
    lambda L, M: L.func.grad_and_value(lambda a: ((a ** 3).sum(), {"k": a * 2}),
                                       has_aux=True)(M(X)),
    lambda L, M: L.func.grad(L.func.grad(lambda a: (a ** 3).sin()))(M(1.5)),
    lambda L, M: L.func.grad(lambda a: M(2.0))(M(X)),
    _captured,
    lambda L, M: L.func.jacrev(lambda a: a.sin() * 2)(M(X)),
    lambda L, M: L.func.jacrev(lambda a: a.sin() * 2)(M(X, requires_grad=True)),
    lambda L, M: L.func.jacrev(lambda a, b: {"u": a * b, "v": (a * b).sum()}, argnums=(0, 1))(
        M(X), M(Y[0])),
    lambda L, M: L.func.jacrev(lambda a: (a @ a.T, a.sum()), has_aux=False)(M(Y)),
    lambda L, M: L.func.jacrev(lambda a: (a.exp(), a * 2), has_aux=True)(M(X)),
    lambda L, M: L.func.jacfwd(lambda a, b: a.exp() * b, argnums=1)(M(X), M(Y[0])),
    lambda L, M: L.func.hessian(lambda a: (a ** 3).sum() * a[0])(M(X)),
    lambda L, M: L.func.hessian(lambda a, b: (a * b).exp().sum(), argnums=(0, 1))(M(X), M(X)),
    _vjp_twice,
    _vjp_aux,
    lambda L, M: L.func.jvp(lambda a, b: (a * b).exp(), (M(X), M(Y[0])), (M(Y[1]), M(X))),
    lambda L, M: L.func.jvp(lambda a: ((a ** 2).sum(), a * 2), (M(X),), (M(Y[0]),)),
])
def test_transforms_match_torch(torch, build):
    _both(torch, build)


def test_grad_result_keeps_the_callers_graph():
    x = ember.tensor(X, requires_grad=True)
    g = ember.func.grad(lambda a: (a ** 3).sum())(x)
    g.sum().backward()  # d/dx sum(3x^2) = 6x
    np.testing.assert_allclose(x.grad.numpy(), 6 * X)


@pytest.mark.parametrize("build", [
    lambda L, M: L.func.vmap(lambda a, b: (a * b).sum())(M(Y), M(Y)),
    lambda L, M: L.func.vmap(lambda a, b: a * b, in_dims=(1, None), out_dims=1)(M(Y), M(Y[:, 0])),
    lambda L, M: L.func.vmap(lambda a: a * 2, in_dims=-1)(M(Y)),
    lambda L, M: L.func.vmap(L.func.vmap(lambda a: a.exp().sum()))(M(Y)),
    lambda L, M: L.func.vmap(lambda a: a * 2)(M(np.zeros((0, 3)))),
    lambda L, M: L.func.vmap(lambda a: {"a": a, "b": [a * 2, a.sum()]})(M(Y)),
    lambda L, M: L.func.vmap(lambda a, s: a * s, in_dims=(0, None))(M(Y), 2.0),
    lambda L, M: L.func.vmap(lambda d: d["x"] * d["y"], in_dims=({"x": 0, "y": None},))(
        {"x": M(Y), "y": M(X)}),
    lambda L, M: L.func.vmap(lambda a: (a, a.sum()), out_dims=(1, 0))(M(Y)),
    lambda L, M: L.func.vmap(L.func.grad(lambda w, xi: (w * xi).sin().sum()),
                             in_dims=(None, 0))(M(X), M(Y)),
    lambda L, M: L.func.vmap(L.func.jacrev(lambda a: a.sin()))(M(Y)),
    lambda L, M: L.func.vmap(lambda a: a * 2)(M(Y, requires_grad=True)),
])
def test_vmap_matches_torch(torch, build):
    _both(torch, build)


def test_vmap_randomness():
    x = ember.zeros(4, 3)
    with pytest.raises(RuntimeError, match="called random operation while in randomness error"):
        ember.func.vmap(lambda a: a + ember.rand(3))(x)
    same = ember.func.vmap(lambda a: a + ember.rand(3), randomness="same")(x)
    assert all(bool((same[i] == same[0]).all()) for i in range(4))
    different = ember.func.vmap(lambda a: a + ember.rand(3), randomness="different")(x)
    assert not bool((different[1] == different[0]).all())


@pytest.mark.parametrize("build", [
    lambda L, M: L.func.grad(lambda a: a)(M(X)),
    lambda L, M: L.func.grad(lambda a: 1.0)(M(X)),
    lambda L, M: L.func.grad(lambda a: a.sum(), has_aux=True)(M(X)),
    lambda L, M: L.func.grad(lambda a: a.sum(), argnums=2)(M(X)),
    lambda L, M: L.func.grad(lambda a: a.sum(), argnums=1.0)(M(X)),
    lambda L, M: L.func.grad(lambda a: a.sum(), argnums=())(M(X)),
    lambda L, M: L.func.grad(lambda a: a.sum())(3.0),
    lambda L, M: L.func.grad(lambda a: a.sum())(L.arange(3)),
    lambda L, M: L.func.vjp(lambda a: a.sum(), M(X), has_aux=True),
    lambda L, M: L.func.vjp(lambda a: 3, M(X)),
    lambda L, M: L.func.vjp(lambda a: a * 2, M(X))[1](M(Y[0][:2])),
    lambda L, M: L.func.vjp(lambda a: a * 2, M(X))[1]((M(X),)),
    lambda L, M: L.func.vjp(lambda a: (a * 2, a), M(X))[1](M(X)),
    lambda L, M: L.func.jacrev(lambda a: 3)(M(X)),
    lambda L, M: L.func.jacrev(lambda a: a.to(L.int64))(M(X)),
    lambda L, M: L.func.vmap(lambda a, b: a + b)(M(X), M(Y[0][:2])),
    lambda L, M: L.func.vmap(lambda a: a, in_dims=None)(M(X)),
    lambda L, M: L.func.vmap(lambda a: a, in_dims=(None,))(M(X)),
    lambda L, M: L.func.vmap(lambda a: a, in_dims=2)(M(X)),
    lambda L, M: L.func.vmap(lambda a: 3)(M(X)),
    lambda L, M: L.func.vmap(lambda a: a, out_dims=1)(M(X)),
    lambda L, M: L.func.vmap(lambda a: a, randomness="x")(M(X)),
    lambda L, M: L.func.vmap(lambda a: a)(3.0),
    lambda L, M: L.func.vmap(lambda a: a)(M(2.0)),
])
def test_errors_match_torch(torch, build):
    _error(torch, build)


def _fixed(L, m):
    """The same parameter values in ember and torch (their random inits differ)."""
    rng = np.random.default_rng(5)
    with L.no_grad():
        for _, p in m.named_parameters():
            p.copy_(L.tensor(rng.standard_normal(tuple(p.shape))))
    return m


def _model(L):
    m = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.BatchNorm1d(4), L.nn.Linear(4, 2)).double()
    return _fixed(L, m)


def test_functional_call_matches_torch(torch):
    def build(L, M):
        m = _model(L).eval()  # torch.func refuses BatchNorm's in-place update under grad
        params = {k: v.detach() * 0.5 for k, v in m.named_parameters()}
        out = L.func.functional_call(m, params, (M(Y),))
        split = L.func.functional_call(m, ({"0.weight": params["0.weight"]},
                                           {"2.bias": params["2.bias"]}), M(Y))
        grads = L.func.grad(lambda p, x: L.func.functional_call(m, p, (x,)).sum())(params, M(Y))
        return out, split, grads
    _both(torch, build)


def test_functional_call_restores_even_on_error():
    m = _model(ember)
    before = {k: v for k, v in list(m.named_parameters()) + list(m.named_buffers())}
    swapped = {"0.weight": ember.zeros(4, 3, dtype=ember.float64)}

    def check(*_):
        assert m[0].weight is swapped["0.weight"]
        raise ValueError("boom")
    m[0].register_forward_hook(check)
    with pytest.raises(ValueError, match="boom"):
        ember.func.functional_call(m, swapped, (ember.zeros(2, 3, dtype=ember.float64),))
    after = {k: v for k, v in list(m.named_parameters()) + list(m.named_buffers())}
    assert all(after[k] is before[k] for k in before) and list(after) == list(before)
    assert isinstance(m[0].weight, ember.nn.Parameter)


def test_functional_call_buffer_update_goes_back_to_the_dict():
    m = _model(ember)
    bufs = {"1.running_mean": ember.zeros(4, dtype=ember.float64)}
    ember.func.functional_call(m, bufs, (ember.tensor(Y),))
    assert float(bufs["1.running_mean"].abs().sum()) > 0  # BatchNorm's update of the swapped-in
    assert float(m[1].running_mean.abs().sum()) == 0      # buffer, the module's own untouched


class _Tied:
    def __new__(cls, L):
        m = L.nn.Module()
        m.a = L.nn.Linear(2, 2, bias=False)
        m.b = L.nn.Linear(2, 2, bias=False)
        m.b.weight = m.a.weight
        m.forward = lambda x: m.b(m.a(x))
        return _fixed(L, m.double())


def test_tie_weights_and_strict(torch):
    def build(L, M):
        L.manual_seed(0)
        m = _Tied(L)
        w = M(Y[:, :2])
        x = M(Y)[:, :2]
        return (L.func.functional_call(m, {"a.weight": w}, (x,)),
                L.func.functional_call(m, {"a.weight": w}, (x,), tie_weights=False))
    _both(torch, build)
    _error(torch, lambda L, M: L.func.functional_call(
        _Tied(L), {"a.weight": M(Y[:, :2]), "b.weight": M(Y[:, 1:])}, (M(Y)[:, :2],)))
    _error(torch, lambda L, M: L.func.functional_call(
        L.nn.Linear(2, 2), {"weight": M(Y[:, :2]), "nope": M(X)}, (M(Y)[:, :2],), strict=True))
    _error(torch, lambda L, M: L.func.functional_call(
        L.nn.Linear(2, 2), ({"weight": M(Y[:, :2])}, {"weight": M(Y[:, :2])}), (M(Y)[:, :2],)))


def test_stateless_functional_call_is_deprecated():
    m = ember.nn.Linear(2, 2)
    with pytest.warns(FutureWarning, match="torch.nn.utils.stateless.functional_call` is "
                                           "deprecated"):
        out = ember.nn.utils.stateless.functional_call(
            m, {"weight": ember.zeros(2, 2), "bias": ember.ones(2)}, ember.ones(2))
    assert out.tolist() == [1.0, 1.0]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.func.functional_call(m, {"weight": ember.zeros(2, 2)}, ember.ones(2))


def test_import_torch_func_resolves_to_ember():
    import subprocess
    import sys
    code = ("import ember.compat; ember.compat.install(); import torch.func;"
            " from torch.nn.utils import stateless; import torch;"
            " print(torch.func.__name__, stateless.__name__,"
            " torch.func.vmap(torch.func.grad(lambda a: (a ** 2).sum()))(torch.ones(2, 2))"
            ".tolist())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split(None, 2) == ["ember.func", "ember.nn.utils.stateless",
                                         "[[2.0, 2.0], [2.0, 2.0]]\n"]
