"""TF32 on 'cuda', as PyTorch has it on an Ampere or later GPU: float32 convolutions compute
their products in TF32 by default (`torch.backends.cudnn.allow_tf32`, cuDNN's), float32
matmuls only when asked (`torch.backends.cuda.matmul.allow_tf32`,
`torch.set_float32_matmul_precision("high")`). On the strict CuPy stand-in, a product in TF32
reads its operands rounded to TF32's 10 mantissa bits, as cuBLAS's tensor cores do."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import _state
from tests._strict_cupy import REAL_CUDA

pytestmark = pytest.mark.skipif(REAL_CUDA, reason="holds values to the stand-in's TF32 model")
RNG = np.random.default_rng(7)


@pytest.fixture
def flags():
    """The TF32 settings put back as they were after the test."""
    flags = ember.backends.cuda.cuBLASModule._flags
    conv, precision = ember.backends.cudnn.allow_tf32, _state.matmul_precision.float32
    fp32 = flags["fp32_precision"]
    yield
    ember.backends.cudnn.allow_tf32 = conv
    _state.matmul_precision.float32, flags["fp32_precision"] = precision, fp32
    ember.backends.cuda.apply_matmul_precision()


def _tf32(a):
    """float32 values rounded to TF32 (10 mantissa bits, to nearest even): an independent
    reference, by frexp, for the stand-in's bit arithmetic."""
    m, e = np.frexp(a.astype(np.float64))
    return (np.round(m * 2.0 ** 11) / 2.0 ** 11 * 2.0 ** e).astype(np.float32)


def _data(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def test_tf32_products_read_ten_mantissa_bits(cupy_like):
    """The stand-in's model, read through a product with the identity: ties go to even, and
    infinities and NaN stay as they are."""
    types = cupy_like._core._routines_linalg
    types.set_compute_type(np.float32, types.COMPUTE_TYPE_TF32)
    x = np.array([1 + 2 ** -11, 1 + 3 * 2 ** -11, 1 + 2 ** -10 + 2 ** -12, -3.9995, 2 ** -100,
                  np.inf, 3.4e38], np.float32)
    want = [1, 1 + 2 ** -9, 1 + 2 ** -10, -4, 2 ** -100, np.inf, _tf32(x)[6]]
    got = cupy_like.matmul(cupy_like.asarray(x[:, None]), cupy_like.ones((1, 1), np.float32))
    np.testing.assert_array_equal(got.get()[:, 0], want)
    np.testing.assert_array_equal(_tf32(x), want)
    nan = cupy_like.asarray(np.array([[np.nan]], np.float32))
    assert np.isnan(cupy_like.matmul(nan, cupy_like.ones((1, 1), np.float32)).get()).all()


def test_convolutions_compute_in_tf32_by_default_as_cudnns(fake_cuda, flags):
    x, w = _data(2, 3, 9, 9), _data(5, 3, 3, 3)
    assert ember.backends.cudnn.allow_tf32 is True  # PyTorch's default
    got = F.conv2d(ember.tensor(x).to(fake_cuda), ember.tensor(w).to(fake_cuda), padding=1).cpu()
    tf32 = F.conv2d(ember.tensor(_tf32(x)), ember.tensor(_tf32(w)), padding=1)
    full = F.conv2d(ember.tensor(x), ember.tensor(w), padding=1)
    np.testing.assert_allclose(got.numpy(), tf32.numpy(), rtol=1e-5, atol=1e-5)
    assert np.abs(got.numpy() - full.numpy()).max() > 1e-4  # not float32's values

    ember.backends.cudnn.allow_tf32 = False
    got = F.conv2d(ember.tensor(x).to(fake_cuda), ember.tensor(w).to(fake_cuda), padding=1).cpu()
    np.testing.assert_allclose(got.numpy(), full.numpy(), rtol=1e-5, atol=1e-5)


def test_convolution_gradients_compute_in_tf32_too(fake_cuda, flags):
    x, w, g = _data(2, 3, 7, 7), _data(4, 3, 3, 3), _data(2, 4, 7, 7)

    def grads(device, round_):
        xt = ember.tensor(round_(x)).to(device).requires_grad_()
        wt = ember.tensor(round_(w)).to(device).requires_grad_()
        F.conv2d(xt, wt, padding=1).backward(ember.tensor(round_(g)).to(device))
        return xt.grad.cpu().numpy(), wt.grad.cpu().numpy()

    got = grads(fake_cuda, lambda a: a)
    tf32 = grads("cpu", _tf32)
    full = grads("cpu", lambda a: a)
    for a, b, c in zip(got, tf32, full):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
        assert np.abs(a - c).max() > 1e-4


def test_float64_convolutions_and_matmuls_keep_their_precision(fake_cuda, flags):
    x, w = RNG.standard_normal((1, 2, 6, 6)), RNG.standard_normal((3, 2, 3, 3))
    ember.backends.cuda.matmul.allow_tf32 = True
    got = F.conv2d(ember.tensor(x).to(fake_cuda), ember.tensor(w).to(fake_cuda)).cpu()
    np.testing.assert_allclose(got.numpy(), F.conv2d(ember.tensor(x), ember.tensor(w)).numpy(),
                               rtol=1e-12, atol=1e-12)
    a, b = RNG.standard_normal((5, 8)), RNG.standard_normal((8, 4))
    got = (ember.tensor(a).to(fake_cuda) @ ember.tensor(b).to(fake_cuda)).cpu().numpy()
    np.testing.assert_allclose(got, a @ b, rtol=1e-12)


def test_matmuls_compute_in_tf32_only_when_asked(fake_cuda, flags):
    a, b = _data(16, 64), _data(64, 8)
    ad, bd = ember.tensor(a).to(fake_cuda), ember.tensor(b).to(fake_cuda)
    full, tf32 = a @ b, _tf32(a) @ _tf32(b)
    assert ember.backends.cuda.matmul.allow_tf32 is False  # PyTorch's default
    np.testing.assert_allclose((ad @ bd).cpu().numpy(), full, rtol=1e-6, atol=1e-6)
    for ask in (lambda: setattr(ember.backends.cuda.matmul, "allow_tf32", True),
                lambda: ember.set_float32_matmul_precision("high"),
                lambda: ember.set_float32_matmul_precision("medium")):
        ember.set_float32_matmul_precision("highest")
        ask()
        assert ember.backends.cuda.matmul.allow_tf32 is True
        for got in (ad @ bd, F.linear(ad, bd.T), ember.mm(ad, bd)):
            np.testing.assert_allclose(got.cpu().numpy(), tf32, rtol=1e-5, atol=1e-5)
    ember.backends.cuda.matmul.allow_tf32 = False
    assert ember.get_float32_matmul_precision() == "highest"
    np.testing.assert_allclose((ad @ bd).cpu().numpy(), full, rtol=1e-6, atol=1e-6)


def test_a_convolution_leaves_the_matmul_setting_as_it_was(fake_cuda, flags):
    """cuDNN's TF32 and cuBLAS's are two settings: a convolution switches CuPy's products for
    its own and puts them back, either way round."""
    a, b = _data(8, 32), _data(32, 8)
    x, w = _data(1, 2, 5, 5), _data(2, 2, 3, 3)
    for conv, matmul in ((True, False), (False, True)):
        ember.backends.cudnn.allow_tf32 = conv
        ember.backends.cuda.matmul.allow_tf32 = matmul
        F.conv2d(ember.tensor(x).to(fake_cuda), ember.tensor(w).to(fake_cuda))
        got = (ember.tensor(a).to(fake_cuda) @ ember.tensor(b).to(fake_cuda)).cpu().numpy()
        want = _tf32(a) @ _tf32(b) if matmul else a @ b
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)


def test_a_gpu_before_ampere_keeps_float32(cupy_like, flags, monkeypatch):
    """CuPy sets TF32 only from compute capability 8.0 (warning otherwise); ember asks first,
    so a V100 computes in float32 whatever the flags, as PyTorch's kernels do there."""
    monkeypatch.setattr(cupy_like.cuda.Device, "compute_capability", property(lambda s: "70"))
    x, w = _data(1, 2, 5, 5), _data(2, 2, 3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # (CuPy's own warning, had ember asked it for TF32)
        ember.backends.cuda.matmul.allow_tf32 = True
        got = F.conv2d(ember.tensor(x).cuda(), ember.tensor(w).cuda()).cpu().numpy()
    np.testing.assert_allclose(got, F.conv2d(ember.tensor(x), ember.tensor(w)).numpy(),
                               rtol=1e-6, atol=1e-6)
    types = cupy_like._core._routines_linalg
    assert types.get_compute_type(np.float32) == types.COMPUTE_TYPE_DEFAULT
    with pytest.warns(UserWarning, match="compute capability 8.0 or higher"):
        types.set_compute_type(np.float32, types.COMPUTE_TYPE_TF32)


def test_the_stand_ins_compute_types_are_cupys(cupy_like):
    types = cupy_like._core._routines_linalg
    assert types.COMPUTE_TYPE_TF32 == 7 and types.COMPUTE_TYPE_DEFAULT == 1
    assert types.get_compute_type(np.float32) == types.COMPUTE_TYPE_DEFAULT
    types.set_compute_type(np.float32, types.COMPUTE_TYPE_TF32)
    assert types.get_compute_type(np.complex64) == types.COMPUTE_TYPE_TF32  # one setting
    assert types.get_compute_type(np.float64) == types.COMPUTE_TYPE_DEFAULT
    with pytest.raises(ValueError, match="Unknown compute type"):
        types.set_compute_type(np.float32, 9)
    with pytest.raises(TypeError, match="not supported"):
        types.to_compute_type_index(np.int16)
