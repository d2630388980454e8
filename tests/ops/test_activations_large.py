"""Activations and `where` over arrays large enough for their fast paths (`_select.select`,
the exp-based sigmoid family), with the edge values (signed zeros, infinities, NaN, far
tails), against PyTorch: forward and backward, float16/32/64."""
import numpy as np
import pytest

import ember
from ember._select import SELECT_MIN

EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -1e-30, 88.0, -88.0, 89.0, -89.0,
         11.0, -11.0, 12.0, -12.0, 20.0, 20.5, -20.0]
CASES = [("sigmoid", {}), ("silu", {}), ("softplus", {}),
         ("softplus", {"beta": 2.0, "threshold": 5.0}), ("mish", {}), ("elu", {}),
         ("elu", {"alpha": 0.5}), ("selu", {}), ("celu", {"alpha": 2.0}), ("leaky_relu", {}),
         ("leaky_relu", {"negative_slope": 0.2}), ("hardshrink", {}), ("softshrink", {}),
         ("threshold", {"threshold": 0.1, "value": 20.0}), ("glu", {}), ("logsigmoid", {})]
# PyTorch's gradient at a NaN input depends on which of its kernels ran: its scalar loop (small
# tensors) gives the linear side's slope, as ember does; its vector loop gives NaN (the ELU
# family) or 0 (the shrinks)
NAN_GRAD_BY_KERNEL = {"elu", "selu", "celu", "hardshrink", "softshrink"}
TOL = {"float16": (2e-3, 2e-3), "float32": (2e-6, 1e-6), "float64": (1e-13, 1e-13)}


def _input(dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(2 * SELECT_MIN + 6) * 8
    x[:len(EDGES)] = EDGES
    with np.errstate(over="ignore"):
        return x.astype(dtype)


def _close(got, want, dtype):
    rtol, atol = TOL[dtype]
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(got[np.isinf(want)], want[np.isinf(want)])
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=atol)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("name,kwargs", CASES, ids=[f"{n}{k or ''}" for n, k in CASES])
def test_activation_matches_torch(torch, name, kwargs, dtype):
    x = _input(dtype)
    g = np.random.default_rng(1).standard_normal(x.shape).astype(dtype)
    if name == "glu":
        g = g[:len(g) // 2]
    a, b = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya = getattr(ember.nn.functional, name)(a, **kwargs)
    yb = getattr(torch.nn.functional, name)(b, **kwargs)
    assert ya.dtype == getattr(ember, dtype)
    _close(ya.detach().numpy(), yb.detach().numpy(), dtype)
    if dtype == "float16":
        return  # PyTorch's half backward formulas round differently in places; forward only
    ya.backward(ember.tensor(g))
    yb.backward(torch.tensor(g))
    got, want = a.grad.numpy(), b.grad.numpy()
    if name in NAN_GRAD_BY_KERNEL:
        got, want = got[~np.isnan(x)], want[~np.isnan(x)]
    _close(got, want, dtype)


def test_sigmoid_ends_and_complex(torch):
    x = np.array([-200.0, -104.0, -88.7, 0.0, 17.0, 200.0] * SELECT_MIN, np.float32)
    np.testing.assert_array_equal(ember.sigmoid(ember.tensor(x)).numpy(),
                                  torch.sigmoid(torch.from_numpy(x)).numpy())
    z = np.array([1 + 2j, -3 + 0.5j, -100 + 1j, 50 - 3j], np.complex64)
    np.testing.assert_allclose(ember.sigmoid(ember.tensor(z)).numpy(),
                               torch.sigmoid(torch.from_numpy(z)).numpy(), rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64", "int64", "float16"])
def test_where_large_with_broadcast_and_numbers(torch, dtype):
    rng = np.random.default_rng(2)
    x = _input("float64")[:2 * SELECT_MIN].reshape(64, -1)
    if dtype == "int64":
        x = np.nan_to_num(x, posinf=7, neginf=-7).astype(np.int64)
    else:
        with np.errstate(over="ignore"):
            x = x.astype(dtype)
    row = x[:1] * 2
    cond = rng.random(x.shape) < 0.5
    for lib, to in ((ember, ember.tensor), (torch, torch.tensor)):
        c, t, r = to(cond), to(x), to(row)
        got = [lib.where(c, t, r), lib.where(c, t, 0.5), lib.where(c[:1], 3, t),
               t.where(c, -t)]
        if lib is ember:
            mine = [v.numpy() for v in got]
        else:
            theirs = [v.numpy() for v in got]
    for m, t in zip(mine, theirs):
        assert m.dtype == t.dtype
        np.testing.assert_array_equal(m, t)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name,kwargs", CASES + [("tanh", {}), ("hardswish", {})],
                         ids=[f"{n}{k or ''}" for n, k in CASES + [("tanh", {}), ("hardswish", {})]])
def test_backward_on_arrays_gives_the_formulas_bits(name, kwargs, dtype):
    """Without create_graph the backward formulas run on the arrays in place; with it, on
    tensors (differentiable): the same passes, so the same bits."""
    x = _input(dtype)
    g = ember.tensor(np.random.default_rng(3).standard_normal(
        x.shape[0] // 2 if name == "glu" else x.shape[0]).astype(dtype))
    fn = getattr(ember.nn.functional, name, None) or getattr(ember, name)
    grads = []
    for create_graph in (False, True):
        a = ember.tensor(x, requires_grad=True)
        (d,) = ember.autograd.grad(fn(a, **kwargs), a, g, create_graph=create_graph)
        grads.append(d.detach().numpy())
    np.testing.assert_array_equal(grads[0], grads[1])
