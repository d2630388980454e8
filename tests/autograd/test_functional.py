"""ember.autograd.functional against torch.autograd.functional: values, shapes, tuple
structure, requires_grad of results, and strict-mode and validation errors."""
import numpy as np
import pytest

import ember
from ember.autograd import functional as F

RNG = np.random.default_rng(0)
X = RNG.standard_normal(3)
Y = RNG.standard_normal((2, 3))
V = RNG.standard_normal(3)


def _same(a, b, path="result"):
    if isinstance(b, tuple):
        assert isinstance(a, tuple) and len(a) == len(b), (path, a, b)
        for i, (p, q) in enumerate(zip(a, b)):
            _same(p, q, f"{path}[{i}]")
        return
    assert isinstance(a, ember.Tensor), (path, type(a))
    assert tuple(a.shape) == tuple(b.shape), (path, a.shape, b.shape)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert a.requires_grad == b.requires_grad, (path, a.requires_grad, b.requires_grad)


def _both(torch, build):
    def E(a, **kw):
        return ember.tensor(a, dtype=ember.float64, **kw)

    def T(a, **kw):
        return torch.tensor(a, dtype=torch.float64, **kw)
    _same(build(ember, E), build(torch, T))


def _error(torch, build):
    got = {}
    for name, lib in (("ember", ember), ("torch", torch)):
        def M(a, lib=lib):
            return lib.tensor(a, dtype=lib.float64)
        with pytest.raises(Exception) as info:
            build(lib, M)
        got[name] = info
    assert got["ember"].type is got["torch"].type
    assert str(got["ember"].value) == str(got["torch"].value)


def _two_outputs(a, b):
    return (a.exp() * b).sum(0), (a ** 2).sum() * b


@pytest.mark.parametrize("create_graph", [False, True])
def test_jacobian_structures(torch, create_graph):
    def build(L, M):
        a, b = M(X, requires_grad=True), M(Y)
        return (L.autograd.functional.jacobian(_two_outputs, (a, b), create_graph=create_graph),
                L.autograd.functional.jacobian(lambda t: t.sin() * 2, a,
                                               create_graph=create_graph),
                L.autograd.functional.jacobian(lambda t: (t.sin(), t.sum()), a),
                L.autograd.functional.jacobian(lambda t, u: t @ u.T, (M(Y), M(Y)),
                                               vectorize=True))
    _both(torch, build)


@pytest.mark.parametrize("create_graph", [False, True])
def test_hessian_vhp_hvp(torch, create_graph):
    def scalar(a, b):
        return (a.sin() * b).sum() + (a ** 3).sum() * b[0]

    def build(L, M):
        fn = L.autograd.functional
        a, b = M(X, requires_grad=True), M(Y[0])
        va, vb = M(Y[1]), M(V)
        return (fn.hessian(scalar, (a, b), create_graph=create_graph),
                fn.hessian(lambda t: (t ** 3).prod(), a, create_graph=create_graph),
                fn.vhp(scalar, (a, b), (va, vb), create_graph=create_graph),
                fn.hvp(scalar, (a, b), (va, vb), create_graph=create_graph),
                fn.hvp(lambda t: (t ** 3).sum(), a, va, create_graph=create_graph),
                fn.vhp(lambda t: (t ** 4).sum(), M([2.0])))
    _both(torch, build)


@pytest.mark.parametrize("create_graph", [False, True])
def test_vjp_jvp(torch, create_graph):
    def build(L, M):
        fn = L.autograd.functional
        a, b = M(X, requires_grad=True), M(Y[0])
        return (fn.vjp(lambda t: (t.exp(), t * 2), a, (M(Y[0]), M(Y[1])),
                       create_graph=create_graph),
                fn.vjp(lambda t, u: (t * u).sum(), (a, b), create_graph=create_graph),
                fn.jvp(lambda t, u: (t.exp() * u, t * 2), (a, b), (M(Y[0]), M(Y[1])),
                       create_graph=create_graph),
                fn.jvp(lambda t: t.exp().sum(), a, M(V), create_graph=create_graph),
                fn.jvp(lambda t: t.sin(), M([0.5])))
    _both(torch, build)


def test_second_order_through_create_graph():
    x = ember.tensor(X, requires_grad=True)
    _, g = F.vjp(lambda t: (t ** 3).sum(), x, create_graph=True)
    g.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * X)


def test_jvp_equals_jacobian_times_v():
    x = ember.tensor(X)
    jac = F.jacobian(lambda t: t.sin() * t.sum(), x)
    _, jv = F.jvp(lambda t: t.sin() * t.sum(), x, ember.tensor(V))
    np.testing.assert_allclose(jv.numpy(), jac.numpy() @ V, rtol=1e-12)


def test_unused_input_gives_zeros_not_strict(torch):
    def build(L, M):
        fn = L.autograd.functional
        return (fn.jacobian(lambda a, b: a * 2, (M(X), M(Y[0]))),
                fn.vjp(lambda a, b: a.sum(), (M(X), M(Y[0])))[1],
                fn.hessian(lambda a, b: (a ** 2).sum(), (M(X), M(Y[0]))))
    _both(torch, build)


@pytest.mark.parametrize("case", [
    lambda L, M: L.autograd.functional.jacobian(lambda a, b: a * 2, (M(X), M(Y[0])),
                                                strict=True),
    lambda L, M: L.autograd.functional.jacobian(lambda a: M(Y[0]), M(X), strict=True),
    lambda L, M: L.autograd.functional.jacobian(lambda a: a * 2, M(X), strict=True,
                                                vectorize=True),
    lambda L, M: L.autograd.functional.jacobian(lambda a: a * 2, M(X), create_graph=True,
                                                strict=True),
    lambda L, M: L.autograd.functional.vjp(lambda a, b: a.sum(), (M(X), M(Y[0])), strict=True),
    lambda L, M: L.autograd.functional.jvp(lambda a: a.detach() * 2, M(X), M(V), strict=True),
    lambda L, M: L.autograd.functional.jvp(lambda a, b: a * 2, (M(X), M(X)), (M(V), M(V)),
                                           strict=True),
    lambda L, M: L.autograd.functional.hessian(lambda a: a.sum(), M(X), strict=True),
    lambda L, M: L.autograd.functional.vhp(lambda a, b: (a ** 2).sum(), (M(X), M(X)),
                                           (M(V), M(V)), strict=True),
    lambda L, M: L.autograd.functional.hvp(lambda a: (a * 3).sum(), M(X), M(V), strict=True),
    lambda L, M: L.autograd.functional.vhp(lambda a: a.sum(), M(X), M(V), strict=True),
])
def test_strict_errors(torch, case):
    _error(torch, case)


@pytest.mark.parametrize("case", [
    lambda L, M: L.autograd.functional.jacobian(lambda a: a, [M(X)]),
    lambda L, M: L.autograd.functional.jacobian(lambda a: a, (M(X), 3)),
    lambda L, M: L.autograd.functional.jacobian(lambda a: 3.0, M(X)),
    lambda L, M: L.autograd.functional.jacobian(lambda a: a, M(X), strategy="forward-mode"),
    lambda L, M: L.autograd.functional.jacobian(lambda a: a, M(X), strategy="forward-mode",
                                                create_graph=True),
    lambda L, M: L.autograd.functional.vjp(lambda a: a * 2, M(X)),
    lambda L, M: L.autograd.functional.vjp(lambda a: a * 2, M(X), M(Y)),
    lambda L, M: L.autograd.functional.vjp(lambda a: (a, a), M(X), (M(X),)),
    lambda L, M: L.autograd.functional.vjp(lambda a: (a, a), M(X), (M(X), M(Y))),
    lambda L, M: L.autograd.functional.vjp(lambda a: a, M(X), (M(X), M(X))),
    lambda L, M: L.autograd.functional.jvp(lambda a: a * 2, M(X)),
    lambda L, M: L.autograd.functional.hessian(lambda a: a * 2, M(X)),
    lambda L, M: L.autograd.functional.hessian(lambda a: (a, a), M(X)),
    lambda L, M: L.autograd.functional.hvp(lambda a: a * 2, M(X), M(V)),
    lambda L, M: L.autograd.functional.vhp(lambda a: (a.sum(), a.sum()), M(X), M(V)),
    lambda L, M: L.autograd.functional.hvp(lambda a: a.sum(), M(X)),
])
def test_validation_errors(torch, case):
    _error(torch, case)


def test_available_through_compat():
    import subprocess
    import sys
    code = ("import ember.compat; ember.compat.install(); import torch.autograd.functional as F;"
            " import torch; x = torch.ones(2);"
            " print(F.__name__, F.hessian(lambda t: (t ** 3).sum(), x).tolist())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split(None, 1) == ["ember.autograd.functional",
                                         "[[6.0, 0.0], [0.0, 6.0]]\n"]
