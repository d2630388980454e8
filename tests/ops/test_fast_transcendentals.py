"""The fast paths of erf / erfc / erfinv / lgamma / digamma and GELU against PyTorch: the
SciPy-served kernels and the NumPy ones alone (special.USE_SCIPY off), float32 and float64,
on grids with the edge values (signed zeros, infinities, NaN, subnormals, huge values, the
poles of lgamma and digamma)."""
import numpy as np
import pytest

import ember
from ember import _dnnl
from ember.ops.unary import special as _special

_EDGES = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, -1e-300, 5e-324, 1e-45, 1e-38, 3e38,
          -3e38, 1e300, -1e300, 0.5, -0.5, 0.46875, 3.92, 4.0, 26.5, 27.3, 30.0, -30.0]
_LINE = np.concatenate([np.linspace(-8, 8, 4001), np.geomspace(1e-40, 10, 400),
                        -np.geomspace(1e-40, 10, 400)])
_POLES = np.concatenate([np.arange(-12.0, 13.0), np.arange(-12.0, 13.0) + 1e-6,
                         np.arange(-12.0, 13.0) - 1e-6])
GRIDS = {
    "erf": np.concatenate([_EDGES, _LINE]),
    "erfc": np.concatenate([_EDGES, _LINE, np.linspace(0, 27, 2001)]),
    "erfinv": np.concatenate([np.tanh(_LINE), [1.0, -1.0, 1.5, -1.5, 0.0, -0.0, np.nan,
                                               1e-300, 0.9999999, -0.9999999]]),
    "lgamma": np.concatenate([_EDGES, _LINE, _POLES, np.geomspace(1e-10, 1e10, 300)]),
    "digamma": np.concatenate([_EDGES, _LINE, _POLES, [1e17, 1e20]]),
}


@pytest.fixture(params=[True, False], ids=["scipy", "numpy"])
def path(request, monkeypatch):
    """ember's own kernels, with SciPy's or without: MKL's vector math (where installed)
    is left out here, and checked against PyTorch by test_mkl_vector_math_is_pytorchs."""
    if request.param:
        pytest.importorskip("scipy.special")
    monkeypatch.setattr(_special, "USE_SCIPY", request.param)
    monkeypatch.setattr(_special, "vml_function", lambda name, x: None)
    return request.param


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name", ["erf", "erfc", "erfinv"])
def test_mkl_vector_math_is_pytorchs(torch, name, dtype):
    """Where MKL is installed its VML serves these, as PyTorch's CPU kernels: its bits."""
    from ember import _vml
    if _vml.library() is None:
        pytest.skip("MKL is not installed")
    x = GRIDS[name].astype(dtype)
    with np.errstate(all="ignore"):
        got = getattr(ember, name)(ember.tensor(x)).numpy()
    want = getattr(torch, name)(torch.from_numpy(x)).numpy()
    np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))


def _compare(got, want, rtol, atol, zero_signs=True):
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    inf = np.isinf(want)
    np.testing.assert_array_equal(got[inf], want[inf])
    fin = np.isfinite(want)
    np.testing.assert_allclose(got[fin], want[fin], rtol=rtol, atol=atol)
    zero = (want == 0) & zero_signs
    np.testing.assert_array_equal(np.signbit(got[zero]), np.signbit(want[zero]))


@pytest.mark.parametrize("name", sorted(GRIDS))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_special_matches_torch(torch, path, name, dtype):
    with np.errstate(over="ignore"):
        x = GRIDS[name].astype(dtype)
    got = getattr(ember, name)(ember.tensor(x)).numpy()
    want = getattr(torch, name)(torch.from_numpy(x)).numpy()
    assert got.dtype == want.dtype
    if dtype == "float64":
        rtol, atol = 1e-14, 1e-300
    else:
        rtol, atol = 2.5e-7, 1e-37
    if name in ("lgamma", "digamma"):  # relative accuracy is lost beside their zeros
        atol = 1e-13 if dtype == "float64" else 2e-6
        if dtype == "float32":  # PyTorch computes these in float32: a few ulp of its own
            rtol = 2e-6
    _compare(got, want, rtol, atol)


def test_float32_erf_within_an_ulp(torch, path):
    x = np.concatenate([np.linspace(-6, 6, 200001), np.geomspace(1e-44, 1, 3000)]).astype(
        np.float32)
    got = ember.erf(ember.tensor(x)).numpy().astype(np.float64)
    exact = torch.erf(torch.from_numpy(x.astype(np.float64))).numpy()
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    assert (np.abs(got - exact) / ulp).max() < 0.6


def test_float32_erfinv_within_an_ulp_and_a_bit(torch):
    """The float32 kernel (a polynomial in log((1 - x)(1 + x)), a second one in the tails)
    against float64, over uniform draws (a block of 32K with a few tail elements, as
    trunc_normal_ draws) and every float32 from 0.9966 to the last below 1."""
    tail = np.arange(np.float32(0.9966).view(np.int32), np.float32(1).view(np.int32),
                     dtype=np.int32).view(np.float32)
    x = np.concatenate([np.random.default_rng(0).uniform(-1, 1, 300_000).astype(np.float32),
                        tail, -tail, np.geomspace(1e-44, 0.99, 3000).astype(np.float32)])
    got = ember.erfinv(ember.tensor(x)).numpy().astype(np.float64)
    exact = torch.erfinv(torch.from_numpy(x.astype(np.float64))).numpy()
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    assert (np.abs(got - exact) / ulp).max() < 1.2


def test_float32_erfc_within_an_ulp(torch, monkeypatch):
    """The float32 kernel (exp(-x^2) times a polynomial for erfcx) against float64, on both
    sides of 0, into the subnormal results before erfc rounds to 0, and past them."""
    x = np.concatenate([np.linspace(-11, 11, 400001), np.geomspace(1e-44, 1, 3000),
                        -np.geomspace(1e-44, 1, 3000), [-np.inf, np.inf, np.nan]]).astype(
        np.float32)
    monkeypatch.setattr(_special, "vml_function", lambda name, x: None)  # ember's kernel
    got = ember.erfc(ember.tensor(x)).numpy().astype(np.float64)
    exact = torch.erfc(torch.from_numpy(x.astype(np.float64))).numpy()
    finite = np.isfinite(x)
    ulp = np.spacing(np.abs(exact[finite]).astype(np.float32)).astype(np.float64)
    assert (np.abs(got[finite] - exact[finite]) / ulp).max() < 0.6
    assert got[-3] == 2 and got[-2] == 0 and np.isnan(got[-1])


@pytest.mark.parametrize("name", ["lgamma", "digamma"])
def test_float32_lgamma_digamma_round_correctly(torch, path, name):
    """The float32 kernels (a shift by eight and the asymptotic series, in float64) against
    float64 values: within half an ulp of the exact value (PyTorch's own float32 lgamma is
    within 0.83 ulp, its digamma loses accuracy beside its zero), lgamma's zeros exact."""
    x = np.concatenate([np.random.default_rng(0).uniform(0, 30, 200_000),
                        np.geomspace(1e-44, 1e36, 5000), np.linspace(0.9, 2.1, 50001),
                        [1.0, 2.0]]).astype(np.float32)
    got = getattr(ember, name)(ember.tensor(x)).numpy().astype(np.float64)
    exact = getattr(torch, name)(torch.from_numpy(x.astype(np.float64))).numpy()
    with np.errstate(over="ignore"):
        fits = np.isfinite(exact.astype(np.float32))  # (digamma(1e-44) is past float32's range)
    ulp = np.spacing(np.abs(exact[fits]).astype(np.float32)).astype(np.float64)
    assert (np.abs(got[fits] - exact[fits]) / ulp).max() <= 0.5 + 1e-6
    assert np.array_equal(got[~fits], exact[~fits].astype(np.float32))  # +-inf
    if name == "lgamma":
        assert not np.signbit(got[-2:]).any() and (got[-2:] == 0).all()


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape", [(1, 2, 3), (), (0, 3), (257, 129)])
def test_gelu_forward_backward(torch, approximate, dtype, shape):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(shape) * 4).astype(dtype)
    if x.size >= 7:
        x.reshape(-1)[:7] = [0.0, -0.0, 10.0, -10.0, np.inf, -np.inf, np.nan]
    g = rng.standard_normal(shape).astype(dtype)
    a, b = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ya = ember.nn.functional.gelu(a, approximate=approximate)
    yb = torch.nn.functional.gelu(b, approximate=approximate)
    ya.backward(ember.tensor(g))
    yb.backward(torch.tensor(g))
    tol = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-12}[dtype]
    got, want = ya.detach().numpy(), yb.detach().numpy()
    # gelu(+inf) is +inf, as PyTorch's scalar kernel gives; its AVX-512 vector kernel gives NaN
    at_inf = x == np.inf
    assert np.all(got[at_inf] == np.inf) and np.all(np.isnan(want[at_inf]) | (want[at_inf] == np.inf))
    want = np.where(at_inf, np.inf, want)
    # PyTorch's zeros of gelu far left have either sign (its vector and scalar kernels differ)
    _compare(got, want, tol, tol, zero_signs=False)
    _compare(a.grad.numpy(), b.grad.numpy(), tol, tol * 4, zero_signs=False)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_float32_noncontiguous_and_second_derivative(torch, approximate):
    x = np.random.default_rng(1).standard_normal((40, 30)).astype(np.float32)
    a = ember.tensor(x, requires_grad=True)
    b = torch.tensor(x, requires_grad=True)
    ga, = ember.autograd.grad(
        ember.nn.functional.gelu(a.t(), approximate=approximate).sum(), a, create_graph=True)
    gb, = torch.autograd.grad(
        torch.nn.functional.gelu(b.t(), approximate=approximate).sum(), b, create_graph=True)
    np.testing.assert_allclose(ga.detach().numpy(), gb.detach().numpy(), rtol=1e-6, atol=1e-6)
    (ga * ga).sum().backward()
    (gb * gb).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_gelu_without_grad_keeps_nothing():
    x = ember.randn(5, 3)
    assert ember.nn.functional.gelu(x).grad_fn is None


def test_float32_gelu_accuracy_beside_pytorchs(torch):
    """The float32 GELU (its normal CDF a float32 rational): for x > 0 within 4 ulp of the
    exact value (PyTorch's own kernel: about 7; oneDNN's, where it is installed: 4.7),
    elsewhere an absolute error of the order of PyTorch's own, including around the clamp
    where Phi rounds to 0 or 1."""
    x = np.concatenate([np.linspace(-9, 9, 300001), np.linspace(5.4, 5.9, 5001),
                        -np.linspace(5.4, 5.9, 5001), np.geomspace(1e-38, 1, 500),
                        -np.geomspace(1e-38, 1, 500)]).astype(np.float32)
    exact = torch.nn.functional.gelu(torch.from_numpy(x.astype(np.float64))).numpy()
    got = ember.nn.functional.gelu(ember.tensor(x)).numpy().astype(np.float64)
    theirs = torch.nn.functional.gelu(torch.from_numpy(x)).numpy().astype(np.float64)
    ulp = np.spacing(np.abs(exact).astype(np.float32)).astype(np.float64)
    ulps = (np.abs(got - exact) / ulp)[x > 0].max()
    if _dnnl.library() is None:
        assert ulps < 4
    else:  # oneDNN's kernel: PyTorch's accuracy (its own vector kernel's bits on AVX-512)
        assert ulps < max(5.0, (np.abs(theirs - exact) / ulp)[x > 0].max())
    assert np.abs(got - exact).max() < 4 * np.abs(theirs - exact).max()
    far_left = x < -3  # from erfc in float64: no less accurate than PyTorch's there
    assert np.abs(got - exact)[far_left].max() <= np.abs(theirs - exact)[far_left].max()
