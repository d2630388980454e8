"""The Jacobian helpers of torch.autograd.gradcheck: values, structure, deprecation warnings
and errors against PyTorch."""
import sys
import warnings

import numpy as np
import pytest

import ember

G = sys.modules["ember.autograd.gradcheck"]


def _torch_g(torch):
    return sys.modules["torch.autograd.gradcheck"]


def _inputs(lib, dtype="float64"):
    x = lib.tensor(np.array([1.0, 2.0, 3.0]), dtype=getattr(lib, dtype), requires_grad=True)
    y = lib.tensor(np.array([[0.5, -1.0]]), dtype=getattr(lib, dtype), requires_grad=True)
    return x, y


def _f(a, b):
    return a.sin()[:2] * b.sum(), a * 2


def _same(e, t, tol=1e-6):
    assert len(e) == len(t)
    for ea, ta in zip(e, t):
        assert tuple(ea.shape) == tuple(ta.shape) and str(ea.dtype) == str(ta.dtype)
        np.testing.assert_allclose(ea.numpy(), ta.numpy(), atol=tol)


def _caught(call):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        result = call()
    return result, [(x.category, str(x.message)) for x in w]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_get_numerical_jacobian(torch, dtype):
    results = []
    for lib, mod in ((ember, G), (torch, _torch_g(torch))):
        x, y = _inputs(lib, dtype)
        results.append([_caught(lambda: mod.get_numerical_jacobian(
                            lambda inp: _f(*inp)[0], (x, y))),
                        _caught(lambda: mod.get_numerical_jacobian(
                            lambda inp: _f(*inp), (x, y), target=(y,), eps=1e-6))])
    for (e, ew), (t, tw) in zip(*results):
        _same(e, t, 1e-6 if dtype == "float64" else 2e-3)
        assert ew == tw and ew[0][0] is FutureWarning


def test_get_numerical_jacobian_wrt_specific_input(torch):
    out = []
    for lib, mod in ((ember, G), (torch, _torch_g(torch))):
        x, y = _inputs(lib)
        outputs = _f(x, y)
        out.append([mod.get_numerical_jacobian_wrt_specific_input(_f, i, (x, y), outputs, 1e-6)
                    for i in (0, 1)])
        with pytest.raises(AssertionError, match="Expected input to have requires_grad=True"):
            mod.get_numerical_jacobian_wrt_specific_input(_f, 0, (x.detach(), y), outputs, 1e-6)
    for e, t in zip(*out):
        _same(e, t)


def test_get_analytical_jacobian(torch):
    results = []
    for lib, mod in ((ember, G), (torch, _torch_g(torch))):
        x, y = _inputs(lib)
        results.append(_caught(lambda: mod.get_analytical_jacobian((x, y), _f(x, y)[0])))
    (e, ew), (t, tw) = results
    _same(e[0], t[0])
    assert e[1:] == t[1:] == (True, True, True)
    assert ew == tw


@pytest.mark.parametrize("call", [
    lambda mod, lib, x: mod.get_numerical_jacobian(lambda i: i[0], (x,), grad_out=2.0),
    lambda mod, lib, x: mod.get_analytical_jacobian((x,), x * 2, grad_out=2.0),
    lambda mod, lib, x: mod.get_analytical_jacobian((x,), (x * 2).to(lib.complex128))])
def test_errors_match_torch(torch, call):
    messages = []
    for lib, mod in ((ember, G), (torch, _torch_g(torch))):
        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            with pytest.raises(ValueError) as info:
                call(mod, lib, x)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
