"""torch.special's Bessel-family functions and orthogonal polynomials over wide float64 ranges:
parity with PyTorch on dense grids (the op table holds the float32-friendly samples), accuracy
against SciPy where PyTorch itself is off, and behaviour that needs neither (no derivative,
computed with NumPy alone)."""
import sys

import numpy as np
import pytest

import ember

UNARY = ["airy_ai", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
         "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
         "scaled_modified_bessel_k1", "spherical_bessel_j0"]
POLYNOMIALS = ["chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
               "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
               "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
               "shifted_chebyshev_polynomial_w", "hermite_polynomial_h", "hermite_polynomial_he",
               "laguerre_polynomial_l", "legendre_polynomial_p"]
WIDE = np.concatenate([np.linspace(-80.0, 120.0, 4001), -np.geomspace(80.0, 1e4, 50),
                       np.geomspace(120.0, 1e5, 50), np.geomspace(1e-300, 1e-3, 30),
                       [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-320, 700.0, 710.0, -710.0]])


def _assert_same(e, t, atol, rtol):
    assert e.dtype == t.dtype
    np.testing.assert_array_equal(np.isnan(e), np.isnan(t))
    np.testing.assert_array_equal(np.isinf(e), np.isinf(t))
    finite = np.isfinite(t)
    np.testing.assert_array_equal(e[~finite & ~np.isnan(t)], t[~finite & ~np.isnan(t)])
    np.testing.assert_allclose(e[finite], t[finite], atol=atol, rtol=rtol)


@pytest.mark.parametrize("name", UNARY)
def test_unary_wide_range_matches_torch(torch, name):
    e = getattr(ember.special, name)(ember.tensor(WIDE)).numpy()
    t = getattr(torch.special, name)(torch.tensor(WIDE)).numpy()
    # PyTorch's own rational fits are off by up to 3e-6 (Ai just below -2.09, Y0 and Y1 just
    # above 5); ember's values there agree with SciPy to 1e-12 (test below)
    _assert_same(e, t, atol=5e-6, rtol=1e-9)


@pytest.mark.parametrize("name", POLYNOMIALS)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_polynomial_grid_matches_torch(torch, name, dtype):
    x = np.concatenate([np.linspace(-1.5, 1.5, 61), [np.inf, -np.inf, 0.0, 1.0, -1.0, 0.9999999,
                                                     1.0000001, 3.7, -3.7, 1e3, -50.0]])
    n = np.array([-3, -1, 0, 1, 2, 3, 6, 7, 8, 9, 13, 31, 64, 100, 127, 128, 129, 300, 511, 512,
                  513, 2.5, -0.5, 6.9, np.nan, np.inf, -np.inf, 1e20])
    grid_x, grid_n = (a.astype(dtype) for a in np.meshgrid(x, n))
    e = getattr(ember.special, name)(ember.tensor(grid_x), ember.tensor(grid_n)).numpy()
    t = getattr(torch.special, name)(torch.tensor(grid_x), torch.tensor(grid_n)).numpy()
    if dtype == "float64":
        _assert_same(e, t, atol=1e-6, rtol=1e-9)
        return
    # float32 recurrences round at every step, and PyTorch's AVX-512 vector kernel rounds
    # otherwise than its scalar one (3e-5 apart at n = 512): the infinities and NaNs are
    # PyTorch's, and each finite value is as close to the exact (float64) one as PyTorch's,
    # give or take a few roundings per step of the recurrence (or n times acos's, in the
    # trigonometric forms)
    _assert_same(e, t, atol=np.inf, rtol=np.inf)
    exact = getattr(torch.special, name)(torch.tensor(grid_x.astype(np.float64)),
                                         torch.tensor(grid_n.astype(np.float64))).numpy()
    finite = np.isfinite(t) & np.isfinite(exact)
    steps = np.nan_to_num(np.clip(np.abs(grid_n), 1, 1e4), nan=1.0)
    slack = 2.5e-7 * steps * (1 + np.abs(exact))  # 4 float32 ulps a step
    assert (np.abs(e - exact) <= 2 * np.abs(t - exact) + slack)[finite].all()


@pytest.mark.parametrize("name,reference", [
    ("bessel_y0", "y0"), ("bessel_y1", "y1"), ("modified_bessel_k0", "k0"),
    ("modified_bessel_k1", "k1"), ("scaled_modified_bessel_k0", "k0e"),
    ("scaled_modified_bessel_k1", "k1e"), ("modified_bessel_i0", "i0"),
    ("modified_bessel_i1", "i1")])
def test_bessel_accuracy_against_scipy(name, reference):
    special = pytest.importorskip("scipy.special")
    x = np.concatenate([np.linspace(1e-6, 60.0, 6001), np.geomspace(60.0, 1e4, 200)])
    e = getattr(ember.special, name)(ember.tensor(x)).numpy()
    expected = getattr(special, reference)(x)
    np.testing.assert_allclose(e, expected, rtol=1e-13, atol=1e-14)


def test_airy_accuracy_against_scipy():
    special = pytest.importorskip("scipy.special")
    x = np.linspace(-60.0, 90.0, 15001)
    np.testing.assert_allclose(ember.special.airy_ai(ember.tensor(x)).numpy(),
                               special.airy(x)[0], rtol=1e-9, atol=2e-12)


def test_values_without_scipy(monkeypatch):
    """The kernels are NumPy's alone: with SciPy unimportable they give the known values."""
    for module in [m for m in sys.modules if m == "scipy" or m.startswith("scipy.")]:
        monkeypatch.delitem(sys.modules, module)
    monkeypatch.setitem(sys.modules, "scipy", None)
    x = ember.tensor([0.5, 1.0, 3.0], dtype=ember.float64)
    known = {  # from tables (Abramowitz and Stegun), to 10 digits
        "bessel_y0": [-0.4445187335, 0.0882569642, 0.3768500100],
        "bessel_y1": [-1.4714723927, -0.7812128213, 0.3246744248],
        "modified_bessel_k0": [0.9244190712, 0.4210244382, 0.0347395044],
        "modified_bessel_k1": [1.6564411200, 0.6019072302, 0.0401564311],
        "airy_ai": [0.2316936065, 0.1352924163, 0.0065911394],
    }
    for name, values in known.items():
        np.testing.assert_allclose(getattr(ember.special, name)(x).numpy(), values, atol=2e-10)
    p = ember.special.legendre_polynomial_p(x, 3)
    np.testing.assert_allclose(p.numpy(), (5 * x.numpy() ** 3 - 3 * x.numpy()) / 2)


@pytest.mark.parametrize("name", UNARY + POLYNOMIALS)
def test_no_derivative(name):
    x = ember.tensor([0.3, 0.7], requires_grad=True)
    fn = getattr(ember.special, name)
    y = fn(x, 3) if name in POLYNOMIALS else fn(x)
    assert y.grad_fn is None and not y.requires_grad


def test_keywords_and_out():
    x = ember.tensor([0.25, 0.5])
    out = ember.empty(2)
    res = ember.special.chebyshev_polynomial_t(x=x, n=ember.tensor([2, 3]), out=out)
    assert res is out
    np.testing.assert_allclose(out.numpy(), [2 * 0.25 ** 2 - 1, 4 * 0.5 ** 3 - 3 * 0.5])
    assert ember.special.bessel_y0(input=x).shape == (2,)
    assert ember.special.hermite_polynomial_h(ember.tensor(0.5), 2).shape == ()
