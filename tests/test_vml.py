"""ember._vml: elementwise functions through MKL's vector math. CI has no MKL: a stand-in
library of Python functions with VML's signature checks the calls; the real library's
accuracy is checked where MKL is installed."""
import ctypes
import math

import numpy as np
import pytest

import ember
from ember import _vml
from ember.ops import _gelu_cpu

_C_TYPES = {"vms": ctypes.c_float, "vmd": ctypes.c_double}


_FUNCTIONS = {"CdfNorm": lambda v: 0.5 * math.erfc(-v / math.sqrt(2)), "Erf": math.erf,
              "Tanh": math.tanh}


class _StandIn:
    """vms* / vmd* functions as VML calls them: (n, input address, output address, mode),
    computed with Python's math; every call recorded."""

    def __init__(self):
        self.calls = []
        for prefix, c_type in _C_TYPES.items():
            for name, f in _FUNCTIONS.items():
                setattr(self, prefix + name, self._entry(prefix + name, c_type, f))

    def _entry(self, symbol, c_type, f):
        def call(n, src, dst, mode):
            self.calls.append((symbol[:3], n, mode))
            x = np.ctypeslib.as_array((c_type * n).from_address(src))
            y = np.ctypeslib.as_array((c_type * n).from_address(dst))
            y[:] = [f(v) for v in x.tolist()]
        return call


@pytest.fixture
def stand_in(monkeypatch):
    monkeypatch.setattr(_vml, "UFUNC_MIN_SIZE", 0)
    lib = _StandIn()
    before = _vml.use(lib)
    yield lib
    _vml.use(before)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_function_calls_vml_in_high_accuracy(stand_in, dtype):
    x = np.linspace(-6, 6, 301, dtype=dtype).reshape(7, 43)
    got = _vml.function("CdfNorm", x)
    assert got.shape == x.shape and got.dtype == dtype
    want = [0.5 * math.erfc(-v / math.sqrt(2)) for v in x.ravel().tolist()]
    np.testing.assert_allclose(got.ravel(), np.array(want, dtype), rtol=1e-6)
    assert stand_in.calls == [({np.float32: "vms", np.float64: "vmd"}[dtype], 301, _vml.MODE)]


def test_what_vml_cannot_take_is_left(stand_in):
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    assert _vml.function("CdfNorm", x.T) is None  # not C-contiguous
    assert _vml.function("CdfNorm", x.astype(np.float16)) is None
    assert _vml.function("CdfNorm", x.astype(np.int32)) is None
    assert _vml.function("CdfNorm", x.astype(">f4")) is None
    misaligned = np.frombuffer(np.zeros(4 * 12 + 1, np.uint8).tobytes(), np.float32, 12,
                               offset=1)
    assert _vml.function("CdfNorm", misaligned) is None
    assert not stand_in.calls
    assert _vml.function("CdfNorm", np.zeros(0, np.float32)).shape == (0,)


@pytest.mark.usefixtures("numpy_kernels")  # (ember's own GELU, not oneDNN's)
def test_gelu_takes_its_normal_cdf_from_vml(stand_in):
    x = ember.randn(4, 300, requires_grad=True)
    y = ember.nn.functional.gelu(x)
    assert stand_in.calls and stand_in.calls[0][:2] == ("vms", 1200)
    phi = 0.5 * (1 + np.vectorize(math.erf)(x.detach().numpy().astype(np.float64) / math.sqrt(2)))
    np.testing.assert_allclose(y.detach().numpy(), x.detach().numpy() * phi, rtol=2e-6,
                               atol=1e-7)
    y.sum().backward()  # the backward reads the CDF the forward kept
    pdf = np.exp(-0.5 * x.detach().numpy().astype(np.float64) ** 2) / math.sqrt(2 * math.pi)
    np.testing.assert_allclose(x.grad.numpy(), phi + x.detach().numpy() * pdf, rtol=1e-5,
                               atol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_erf_takes_vml_where_it_can(stand_in, dtype):
    x = ember.linspace(-4, 4, 101, dtype=getattr(ember, dtype))
    got = ember.erf(x)
    assert stand_in.calls == [({"float32": "vms", "float64": "vmd"}[dtype], 101, _vml.MODE)]
    np.testing.assert_allclose(got.numpy(), [math.erf(v) for v in x.tolist()], rtol=1e-6)
    # a strided view: VML or ember's kernels, the same values to float rounding
    np.testing.assert_allclose(ember.erf(x[::2]).numpy(), got.numpy()[::2], rtol=1e-6)


def test_numpy_ufuncs_take_vml_where_it_can(stand_in):
    x = ember.linspace(-3, 3, 50)
    np.testing.assert_allclose(ember.tanh(x).numpy(), np.tanh(x.numpy()), rtol=1e-6)
    assert stand_in.calls == [("vms", 50, _vml.MODE)]
    a = np.linspace(-2, 2, 8)
    assert _vml.ufunc(np.tanh, a, out=a) is a  # in place
    np.testing.assert_allclose(a, np.tanh(np.linspace(-2, 2, 8)), rtol=1e-12)
    b = np.empty((8, 2))[:, 0]  # an output VML cannot write: NumPy's ufunc does
    assert _vml.ufunc(np.tanh, np.ones(8), out=b) is b and len(stand_in.calls) == 2
    c = np.linspace(-2, 2, 9)
    _vml.ufunc(np.tanh, c[:8], out=c[1:])  # overlapping, not in place: NumPy's
    assert len(stand_in.calls) == 2
    assert _vml.ufunc(np.negative, np.ones(3)).tolist() == [-1, -1, -1]  # not VML's


def test_without_a_library_nothing_is_called():
    before = _vml.use(None)
    try:
        assert _vml.function("CdfNorm", np.ones(4, np.float32)) is None
        x = np.linspace(-5, 5, 1000, dtype=np.float32)
        phi = _gelu_cpu._normal_cdf_single(x)
        np.testing.assert_allclose(phi, 0.5 * (1 + np.vectorize(math.erf)(x / math.sqrt(2))),
                                   atol=2e-7)
    finally:
        _vml.use(before)


def test_mkls_normal_cdf_is_within_an_ulp():
    if _vml.library() is None or isinstance(_vml.library(), _StandIn):
        pytest.skip("MKL is not installed")
    x = np.concatenate([np.linspace(-15, 8, 200001, dtype=np.float32),
                        np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e30, -1e30],
                                 np.float32)])
    got = _gelu_cpu._normal_cdf_single(x)
    wide = x.astype(np.float64)
    exact = np.array([0.5 * math.erfc(-v / math.sqrt(2)) if math.isfinite(v) else
                      (v > 0) * 1.0 if not math.isnan(v) else math.nan for v in wide.tolist()])
    finite = np.isfinite(x) & (x > 0)
    ulps = np.abs(got[finite] - exact[finite]) / np.spacing(exact[finite].astype(np.float32))
    assert ulps.max() <= 1.0
    np.testing.assert_allclose(got, exact.astype(np.float32), atol=1e-7, rtol=0)
