"""nn.Bilinear beside PyTorch's: same weights -> same outputs and gradients (inputs,
weight, bias), second derivatives through the bilinear form, and the module's repr."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("batch", [(5,), (2, 3), ()])
def test_bilinear_module_matches_torch(bias, batch):
    rng = np.random.default_rng(0)
    em = ember.nn.Bilinear(3, 4, 2, bias=bias).double()
    tm = torch.nn.Bilinear(3, 4, 2, bias=bias).double()
    with ember.no_grad():
        em.weight.copy_(ember.tensor(tm.weight.detach().numpy()))
        if bias:
            em.bias.copy_(ember.tensor(tm.bias.detach().numpy()))
    a, b = rng.standard_normal(batch + (3,)), rng.standard_normal(batch + (4,))
    ea, eb = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ey, ty = em(ea, eb), tm(ta, tb)
    assert tuple(ey.shape) == tuple(ty.shape)
    np.testing.assert_allclose(ey.detach().numpy(), ty.detach().numpy(), rtol=1e-12, atol=1e-12)
    gy = rng.standard_normal(tuple(ty.shape))
    ey.backward(ember.tensor(gy))
    ty.backward(torch.tensor(gy))
    pairs = [(ea.grad, ta.grad), (eb.grad, tb.grad), (em.weight.grad, tm.weight.grad)]
    if bias:
        pairs.append((em.bias.grad, tm.bias.grad))
    for e, t in pairs:
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)
    assert repr(em) == repr(tm)


def test_bilinear_second_derivative_matches_torch():
    rng = np.random.default_rng(1)
    a, b, w = rng.standard_normal((4, 3)), rng.standard_normal((4, 2)), rng.standard_normal((5, 3, 2))
    grads = []
    for lib in (ember, torch):
        ta, tb, tw = (lib.tensor(v, requires_grad=True) for v in (a, b, w))
        y = lib.nn.functional.bilinear(ta, tb, tw)
        (ga,) = lib.autograd.grad((y ** 2).sum(), ta, create_graph=True)
        ga.sum().backward()
        grads.append([t.grad.numpy() for t in (tb, tw)])
    for e, t in zip(*grads):
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=1e-12)


def test_bilinear_module_float32_default_init_shapes():
    m = ember.nn.Bilinear(3, 4, 6)
    y = m(ember.randn(7, 3), ember.randn(7, 4))
    assert tuple(y.shape) == (7, 6) and y.dtype is ember.float32
    assert y.grad_fn.name() == "AddBackward0"
