"""Behaviour and parity tests for ember/ops/unary/ beyond the op table: the special
functions against PyTorch on wide float64 grids (tight tolerances), result dtypes and errors
for every input dtype, grad_fn names, in-place and out= forms, and known values that need no
PyTorch."""
import math

import ml_dtypes
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

UNARY = ("exp2 expm1 log2 log10 log1p rsqrt tan asin acos atan sinh cosh asinh acosh atanh "
         "arcsin arccos arctan arcsinh arccosh arctanh logit erf erfc erfinv lgamma digamma "
         "reciprocal square floor ceil round trunc fix frac nan_to_num isnan isinf isfinite "
         "isposinf isneginf isreal signbit deg2rad rad2deg sinc positive angle").split()
DTYPES = ("bool", "uint8", "int32", "int64", "float16", "bfloat16", "float32", "float64",
          "complex64")


def _e(arr):
    return ember.tensor(np.asarray(arr))


def _np(t):
    if t.dtype is ember.bfloat16:
        t = t.float()
    return np.asarray(t.detach()._array)


# ---- known values (no PyTorch needed) ----------------------------------------------------------
def test_special_known_values():
    x = _e(np.array([0.0, 0.5, 1.0, 2.0, 3.0, 10.0]))
    np.testing.assert_allclose(_np(ember.lgamma(x))[1:],
                               [math.lgamma(v) for v in (0.5, 1.0, 2.0, 3.0, 10.0)],
                               rtol=1e-15, atol=1e-16)
    assert _np(ember.lgamma(x))[0] == np.inf
    np.testing.assert_allclose(_np(ember.erf(x)), [math.erf(v) for v in _np(x)], rtol=1e-15)
    np.testing.assert_allclose(_np(ember.erfc(x)), [math.erfc(v) for v in _np(x)], rtol=1e-14)
    np.testing.assert_allclose(_np(ember.digamma(_e(np.array([1.0, 0.5])))),
                               [-0.5772156649015329, -1.9635100260214235], rtol=1e-15)
    y = np.linspace(-0.99, 0.99, 101)
    np.testing.assert_allclose(_np(ember.erf(ember.erfinv(_e(y)))), y, rtol=1e-15, atol=1e-16)
    assert _np(ember.erfinv(_e(np.array([1.0, -1.0, 1.5]))))[:2].tolist() == [np.inf, -np.inf]
    assert np.isnan(_np(ember.erfinv(_e(np.array([1.5]))))).all()


def test_lgamma_matches_math_on_a_wide_grid():
    x = np.concatenate([np.linspace(-20.3, 30, 4001), np.geomspace(1e-8, 1e6, 500),
                        [0.9999999, 1.0000001, 1.9999999, 2.0000001]])
    x = x[(x > 0) | (x != np.floor(x))]
    expected = np.array([math.lgamma(v) for v in x])
    got = _np(ember.lgamma(_e(x)))
    near_zero = np.abs(expected) < 1e-2  # beside the zeros of lgamma: absolute accuracy
    np.testing.assert_allclose(got[~near_zero], expected[~near_zero], rtol=1e-13)
    np.testing.assert_allclose(got[near_zero], expected[near_zero], atol=1e-14)


def test_rounding_and_predicates_without_torch():
    x = _e(np.array([-1.5, -0.5, 0.5, 1.5, 2.5]))
    assert _np(ember.round(x)).tolist() == [-2.0, -0.0, 0.0, 2.0, 2.0]
    assert _np(ember.floor(x)).tolist() == [-2.0, -1.0, 0.0, 1.0, 2.0]
    assert _np(ember.frac(x)).tolist() == [-0.5, -0.5, 0.5, 0.5, 0.5]
    assert ember.floor(_e(np.array([3, -2]))).dtype is ember.int64
    special = _e(np.array([np.nan, np.inf, -np.inf, 1.0]))
    assert _np(ember.isnan(special)).tolist() == [True, False, False, False]
    assert _np(ember.isposinf(special)).tolist() == [False, True, False, False]
    assert _np(ember.nan_to_num(special, nan=5.0)).tolist() == [
        5.0, np.finfo(np.float64).max, np.finfo(np.float64).min, 1.0]


def test_grad_fn_names():
    x = _e(np.array([0.3, 0.6])).requires_grad_()
    names = {
        "exp2": "Exp2Backward0", "expm1": "Expm1Backward0", "log1p": "Log1PBackward0",
        "rsqrt": "RsqrtBackward0", "arcsinh": "AsinhBackward0", "erfinv": "ErfinvBackward0",
        "lgamma": "LgammaBackward0", "digamma": "DigammaBackward0", "square": "PowBackward0",
        "fix": "TruncBackward0", "frac": "FracBackward0", "sinc": "SincBackward0",
        "nan_to_num": "NanToNumBackward0", "angle": "AngleBackward0", "logit": "LogitBackward0",
        "deg2rad": "Deg2RadBackward0", "reciprocal": "ReciprocalBackward0",
    }
    for fn, name in names.items():
        assert type(getattr(ember, fn)(x).grad_fn).__name__ == name, fn
    assert type(ember.round(x, decimals=1).grad_fn).__name__ == "RoundBackward1"
    assert type(ember.xlogy(2.0, x).grad_fn).__name__ == "XlogyBackward1"
    assert type(ember.xlogy(x, 2.0).grad_fn).__name__ == "XlogyBackward2"
    assert type(ember.copysign(x, -1.0).grad_fn).__name__ == "CopysignBackward1"
    assert type(ember.fmod(x, x).grad_fn).__name__ == "FmodBackward1"
    assert type(ember.lerp(x, x, 0.5).grad_fn).__name__ == "LerpBackward0"
    assert type(ember.lerp(x, x, x).grad_fn).__name__ == "LerpBackward1"
    assert type(ember.heaviside(x, x).grad_fn).__name__ == "NotImplemented"
    assert type(ember.float_power(x, 2).grad_fn).__name__ == "PowBackward0"
    assert ember.positive(x) is x


def test_gradients_of_the_special_functions():
    x = _e(np.array([0.3, 1.7, 4.2])).requires_grad_()
    for f in (ember.lgamma, ember.digamma, ember.erf, ember.erfc):
        assert gradcheck(f, (x,))
        assert gradgradcheck(f, (x,))
    y = _e(np.array([-0.7, 0.1, 0.6])).requires_grad_()
    assert gradcheck(ember.erfinv, (y,)) and gradgradcheck(ember.erfinv, (y,))
    z = _e(np.array([-2.6, -1.4, -0.3])).requires_grad_()
    assert gradcheck(ember.lgamma, (z,)) and gradcheck(ember.digamma, (z,))


def test_inplace_and_out():
    x = _e(np.array([0.25, 0.5]))
    y = x.clone()
    assert y.exp2_() is y
    np.testing.assert_allclose(_np(y), 2 ** _np(x))
    out = ember.empty(2, dtype=ember.float64)
    assert ember.erf(x, out=out) is out
    np.testing.assert_allclose(_np(out), [math.erf(0.25), math.erf(0.5)])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        _e(np.array([1, 2])).exp2_()
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x.clone().requires_grad_().erf_()
    a = _e(np.array([0.5])).requires_grad_().clone()
    a.asinh_()
    assert type(a.grad_fn).__name__ == "AsinhBackward1"
    with pytest.raises(NotImplementedError, match="inplace version of asinh"):
        a.sum().backward()
    h = _e(np.array([1.0])).requires_grad_()
    with pytest.raises(RuntimeError, match="derivative for aten::heaviside is not implemented"):
        ember.heaviside(h, h).sum().backward()


# ---- parity with PyTorch --------------------------------------------------------------------------
def _grid():
    rng = np.random.default_rng(0)
    return np.concatenate([rng.uniform(-3, 3, 40), [0, -0.0, 0.5, -0.5, 1, -1, 2.5, np.inf,
                                                    -np.inf, np.nan, 1e-5, 100]])


def _pair(torch, d):
    base = _grid()
    tt = torch.tensor(base > 0) if d == "bool" else torch.tensor(base).to(getattr(torch, d))
    if d.startswith("complex"):
        tt = tt + 1j * torch.tensor(base[::-1].copy()).to(tt.dtype)
    if d == "bfloat16":
        return tt, ember.tensor(tt.float().numpy()).to(ember.bfloat16)
    return tt, ember.tensor(tt.numpy())


@pytest.mark.parametrize("name", UNARY)
@pytest.mark.parametrize("dtype", DTYPES)
def test_unary_dtypes_values_and_errors(torch, name, dtype):
    tt, et = _pair(torch, dtype)
    try:
        expected, terr = getattr(torch, name)(tt), None
    except Exception as e:  # noqa: BLE001 - the error itself is compared
        expected, terr = None, e
    if terr is not None:
        with pytest.raises(type(terr)) as info:
            getattr(ember, name)(et)
        assert str(info.value) == str(terr)
        return
    got = getattr(ember, name)(et)
    assert str(got.dtype) == str(expected.dtype).replace("torch.", "ember.") or \
        got.dtype.name == str(expected.dtype).split(".")[1]
    if expected.dtype == torch.bool:
        assert _np(got).tolist() == expected.tolist()
        return
    tol = {"float16": 2e-3, "bfloat16": 1e-2, "float32": 2e-6, "complex64": 2e-6}.get(
        str(expected.dtype).split(".")[1], 1e-12)
    want = (expected.to(torch.complex128) if expected.is_complex() else
            expected.to(torch.float64)).numpy()
    np.testing.assert_allclose(_np(got).astype(want.dtype), want, rtol=tol, atol=tol,
                               equal_nan=True)


SPECIAL_GRIDS = {
    "erf": np.concatenate([np.linspace(-7, 7, 20001), [0.46875, -0.46875, 4.0, 26.5, 1e-300]]),
    "erfc": np.concatenate([np.linspace(-7, 27, 20001), [0.46875, 4.0, 26.5]]),
    "erfinv": np.concatenate([np.linspace(-0.9999, 0.9999, 20001), [0.7, -0.7, 1e-300]]),
    "lgamma": np.concatenate([np.linspace(0.01, 50, 20001), np.geomspace(1e-10, 1e10, 500),
                              np.linspace(-10.01, -0.01, 5001)]),
    "digamma": np.concatenate([np.linspace(-10.01, 50, 20001), [10.0, 1e-10, 1e20]]),
}


@pytest.mark.parametrize("name", sorted(SPECIAL_GRIDS))
def test_special_functions_float64_tight(torch, name):
    x = SPECIAL_GRIDS[name]
    got = _np(getattr(ember, name)(_e(x)))
    want = getattr(torch, name)(torch.from_numpy(x)).numpy()
    if name == "lgamma":  # relative accuracy is lost beside the zeros of lgamma for x < 0
        ok = np.abs(want) > 1e-2
        np.testing.assert_allclose(got[ok], want[ok], rtol=2e-13)
        np.testing.assert_allclose(got[~ok], want[~ok], atol=1e-13)
        return
    np.testing.assert_allclose(got, want, rtol=1e-14, atol=1e-300)


@pytest.mark.parametrize("name", sorted(SPECIAL_GRIDS))
def test_special_functions_float32(torch, name):
    x = SPECIAL_GRIDS[name].astype(np.float32)
    got = _np(getattr(ember, name)(_e(x)))
    want = getattr(torch, name)(torch.from_numpy(x)).numpy()
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, want, rtol=3e-6, atol=1e-6)


def test_digamma_gradient_is_torchs_trigamma(torch):
    x = np.linspace(-4.9, 6, 301)
    x = x[np.abs(x - np.round(x)) > 1e-3]
    et = _e(x).requires_grad_()
    tt = torch.from_numpy(x).requires_grad_()
    ember.digamma(et).sum().backward()
    torch.digamma(tt).sum().backward()
    np.testing.assert_allclose(_np(et.grad), tt.grad.numpy(), rtol=1e-12)


def test_every_method_and_inplace_form_exists_like_torch(torch):
    from ember.ops import unary
    for name in unary.METHODS:
        assert hasattr(torch.Tensor, name), name
        assert hasattr(ember.Tensor, name), name
    for name in unary.__all__:
        assert hasattr(torch, name), name
    for name in UNARY:
        for form in (name, name + "_"):
            assert hasattr(ember.Tensor, form) == hasattr(torch.Tensor, form), form


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
def test_binary_ops_low_precision_dtypes(torch, dtype):
    rng = np.random.default_rng(1)
    a, b = rng.uniform(0.5, 3, 20), rng.uniform(-3, 3, 20)

    def both(arr):
        t = torch.from_numpy(arr).to(getattr(torch, dtype))
        return t, ember.tensor(t.float().numpy()).to(getattr(ember, dtype))
    (ta, ea), (tb, eb) = both(a), both(b)
    tol = {"float16": 1e-3, "bfloat16": 8e-3}.get(dtype, 1e-6)
    for name in ("atan2", "hypot", "fmax", "fmin", "copysign", "xlogy", "fmod", "float_power"):
        want = getattr(torch, name)(tb, ta)
        got = getattr(ember, name)(eb, ea)
        assert got.dtype.name == str(want.dtype).split(".")[1], name
        np.testing.assert_allclose(_np(got), want.double().numpy(), rtol=tol, atol=tol,
                                   err_msg=name)
    for w in (0.3, 0.8):
        want, got = torch.lerp(ta, tb, w), ember.lerp(ea, eb, w)
        np.testing.assert_allclose(_np(got), want.double().numpy(), rtol=tol, atol=tol)
    want, got = torch.addcdiv(ta, tb, ta, value=0.5), ember.addcdiv(ea, eb, ea, value=0.5)
    np.testing.assert_allclose(_np(got), want.double().numpy(), rtol=tol, atol=tol)


def test_round_decimals_parity(torch):
    x = np.random.default_rng(2).uniform(-1000, 1000, 200)
    for d in (-2, -1, 1, 2, 3):
        for dt in ("float32", "float64"):
            t = torch.from_numpy(x).to(getattr(torch, dt))
            np.testing.assert_array_equal(_np(ember.round(ember.tensor(t.numpy()), decimals=d)),
                                          torch.round(t, decimals=d).numpy())


def test_bfloat16_inputs_do_not_use_numpy_promotion():
    x = ember.tensor(np.array([0.5, 1.5], dtype=ml_dtypes.bfloat16))
    for name in ("erf", "lgamma", "exp2", "sinc", "logit", "frac", "deg2rad"):
        assert getattr(ember, name)(x).dtype is ember.bfloat16, name


def test_ops_keep_the_device(fake_cuda):
    a = ember.tensor(np.array([0.5, 2.0])).to(fake_cuda)
    for out in (ember.erf(a), ember.lgamma(a), ember.exp2(a), ember.isnan(a), ember.atan2(a, a),
                ember.addcmul(a, a, ember.tensor(2.0)), ember.lerp(a, a, ember.tensor(0.5)),
                ember.isclose(a, a), ember.nan_to_num(a), ember.round(a, decimals=1)):
        assert out.device == fake_cuda
    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        ember.addcdiv(a, a, ember.tensor(np.array([1.0, 2.0])))


# ---- torch.special's erfcx ... gammaincc: graphs and missing derivatives ---------------------------
def _graph(node, depth=0):
    if node is None or depth > 6:
        return None
    return (type(node).__name__, [(_graph(n, depth + 1), nr) for n, nr in node.next_functions])


_GRAPHS = {
    "ndtr": lambda T, x, y: T.special.ndtr(x), "erfcx": lambda T, x, y: T.special.erfcx(x),
    "ndtri": lambda T, x, y: T.special.ndtri(x.sigmoid()),
    "log_ndtr": lambda T, x, y: T.special.log_ndtr(x), "entr": lambda T, x, y: T.special.entr(x),
    "xlog1py": lambda T, x, y: T.special.xlog1py(x, y),
    "xlog1py_number_self": lambda T, x, y: T.special.xlog1py(2.0, y),
    "xlog1py_number_other": lambda T, x, y: T.special.xlog1py(x, 2.0),
    "zeta": lambda T, x, y: T.special.zeta(x + 2, y),
    "zeta_number_self": lambda T, x, y: T.special.zeta(2.5, y),
    "zeta_number_other": lambda T, x, y: T.special.zeta(x + 2, 2.0),
    "multigammaln": lambda T, x, y: T.special.multigammaln(x + 3, 2),
    "mvlgamma_method": lambda T, x, y: (x + 3).mvlgamma(3),
    "gammainc": lambda T, x, y: T.special.gammainc(x, y), "igammac": lambda T, x, y: T.igammac(x, y),
    "bessel_j0": lambda T, x, y: T.special.bessel_j0(x),
}


@pytest.mark.parametrize("name", sorted(_GRAPHS))
def test_special_graphs_and_backward_errors(torch, name):
    """grad_fn graphs (ndtr is PyTorch's composite: MulBackward1 over AddBackward1 over erf),
    requires_grad, and backward: the gradients, or PyTorch's error where it has no derivative
    (zeta's order, igamma's first argument)."""
    def run(T):
        x = T.tensor([0.3, 0.7, 1.6], dtype=T.float64, requires_grad=True)
        y = T.tensor([1.3, 0.4, 2.2], dtype=T.float64, requires_grad=True)
        r = _GRAPHS[name](T, x, y)
        out = [_graph(r.grad_fn), r.requires_grad, r.detach().tolist()]
        if r.requires_grad:
            try:
                grads = T.autograd.grad(r.sum(), [x, y], allow_unused=True)
                out.append([None if g is None else g.tolist() for g in grads])
            except NotImplementedError as exc:
                out.append(("NotImplementedError", str(exc)))
        return out
    e, t = run(ember), run(torch)
    assert e[:2] == t[:2]
    np.testing.assert_allclose(e[2], t[2], rtol=1e-13)
    assert len(e) == len(t)
    if len(t) == 4 and isinstance(t[3], tuple):
        assert e[3] == t[3]
    elif len(t) == 4:
        for ge, gt in zip(e[3], t[3]):
            assert (ge is None) == (gt is None)
            if gt is not None:
                np.testing.assert_allclose(ge, gt, rtol=1e-12)


def test_special_values_against_torch_on_wide_grids(torch):
    """float64 values over wide grids, tails and special points, to 1e-12 relative (torch's own
    igamma deviates from the exact value by up to ~2e-9 near a = x, hence its looser bound)."""
    rng = np.random.default_rng(7)
    x = np.concatenate([np.linspace(-40, 40, 801), [0.0, -0.0, np.inf, -np.inf, np.nan]])
    p = np.concatenate([10.0 ** -rng.uniform(0, 300, 200), rng.uniform(0, 1, 200), [0, 1, 0.5]])
    cases = [("erfcx", x), ("log_ndtr", x), ("ndtr", x), ("entr", np.abs(x)), ("ndtri", p),
             ("bessel_j0", x), ("bessel_j1", x)]
    for name, arr in cases:
        e = getattr(ember.special, name)(ember.tensor(arr)).numpy()
        t = getattr(torch.special, name)(torch.tensor(arr)).numpy()
        # ndtr is (1 + erf) / 2 in PyTorch too: its left tail carries erf's last bit.
        # PyTorch's J0 / J1 are off by up to 3.3e-7 near |x| = 5 (SciPy and mpmath agree with
        # ember there to 5e-16): they are held to SciPy's values as well where it is installed
        atol = {"ndtr": 1e-15, "bessel_j0": 5e-7, "bessel_j1": 5e-7}.get(name, 1e-300)
        np.testing.assert_allclose(e, t, rtol=1e-12, atol=atol, err_msg=name)
    a = np.concatenate([rng.uniform(0, 5, 500), 10 ** rng.uniform(-4, 3, 500)])
    z = np.concatenate([rng.uniform(0, 8, 500), 10 ** rng.uniform(-4, 3, 500)])
    for name in ("gammainc", "gammaincc"):
        e = getattr(ember.special, name)(ember.tensor(a), ember.tensor(z)).numpy()
        t = getattr(torch.special, name)(torch.tensor(a), torch.tensor(z)).numpy()
        np.testing.assert_allclose(e, t, rtol=1e-8, atol=1e-300, err_msg=name)
    s, q = rng.uniform(1.01, 12, 500), rng.uniform(0.01, 30, 500)
    np.testing.assert_allclose(ember.special.zeta(ember.tensor(s), ember.tensor(q)).numpy(),
                               torch.special.zeta(torch.tensor(s), torch.tensor(q)).numpy(),
                               rtol=1e-13)
    sc = pytest.importorskip("scipy.special")
    for name, ref in (("bessel_j0", sc.j0), ("bessel_j1", sc.j1)):
        np.testing.assert_allclose(getattr(ember.special, name)(ember.tensor(x)).numpy(), ref(x),
                                   rtol=0, atol=1e-15, err_msg=name)
