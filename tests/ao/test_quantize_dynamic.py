"""Dynamic quantization (ember.ao.quantization.quantize_dynamic) against PyTorch's: the same
weights and inputs give outputs within float rounding of PyTorch's x86/fbgemm kernel."""
import subprocess
import sys
import warnings

import numpy as np
import pytest

import ember
from ember.ao.nn.quantized.dynamic.modules.linear import choose_activation_qparams

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning")


def _pair(torch, in_features, out_features, seed, bias=True):
    rng = np.random.default_rng(seed)
    weight = (rng.standard_normal((out_features, in_features)) * 0.2).astype(np.float32)
    theirs = torch.nn.Sequential(torch.nn.Linear(in_features, out_features, bias=bias),
                                 torch.nn.ReLU())
    ours = ember.nn.Sequential(ember.nn.Linear(in_features, out_features, bias=bias),
                               ember.nn.ReLU())
    with torch.no_grad():
        theirs[0].weight.copy_(torch.from_numpy(weight))
    with ember.no_grad():
        ours[0].weight.copy_(ember.from_numpy(weight))
    if bias:
        b = rng.standard_normal(out_features).astype(np.float32)
        with torch.no_grad():
            theirs[0].bias.copy_(torch.from_numpy(b))
        with ember.no_grad():
            ours[0].bias.copy_(ember.from_numpy(b))
    return theirs, ours


def _quantize(torch, theirs, ours, dtype, spec=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tq = torch.ao.quantization.quantize_dynamic(theirs, {torch.nn.Linear} if spec else None,
                                                    dtype=getattr(torch, dtype))
        eq = ember.ao.quantization.quantize_dynamic(ours, {ember.nn.Linear} if spec else None,
                                                    dtype=getattr(ember, dtype))
    return tq, eq


@pytest.mark.parametrize("dtype", ["qint8", "float16"])
@pytest.mark.parametrize("seed,shape,bias", [(0, (3, 4, 33), True), (1, (16, 33), False),
                                             (2, (1, 33), True)])
def test_outputs_match_torch(torch, dtype, seed, shape, bias):
    theirs, ours = _pair(torch, 33, 17, seed, bias)
    tq, eq = _quantize(torch, theirs, ours, dtype, spec=seed % 2 == 1)
    x = (np.random.default_rng(seed + 10).standard_normal(shape) * 3).astype(np.float32)
    expected = tq(torch.from_numpy(x)).detach().numpy()
    got = eq(ember.from_numpy(x))
    assert got.shape == expected.shape and got.dtype is ember.float32
    # the integer codes agree; what is left is float32 rounding in the rescale
    np.testing.assert_allclose(got.numpy(), expected, rtol=0, atol=1e-5)
    assert repr(eq) == repr(tq)
    their_weight = tq[0].weight()
    if dtype == "qint8":
        assert tq[0].weight().q_scale() == pytest.approx(eq[0]._packed_params._scale)
        their_weight = their_weight.dequantize()
    np.testing.assert_array_equal(eq[0].weight().numpy(), their_weight.numpy())


def test_quantization_changes_the_output_as_torchs_does(torch):
    theirs, ours = _pair(torch, 64, 8, 5)
    tq, eq = _quantize(torch, theirs, ours, "qint8")
    x = np.random.default_rng(6).standard_normal((32, 64)).astype(np.float32)
    exact = ours(ember.from_numpy(x)).detach().numpy()
    assert np.abs(eq(ember.from_numpy(x)).numpy() - exact).max() > 1e-4  # really quantized
    assert np.abs(tq(torch.from_numpy(x)).detach().numpy()
                  - eq(ember.from_numpy(x)).numpy()).max() < 1e-5


def test_activation_qparams_match_torchs_chooser(torch):
    for low, high in [(-1.5, 2.0), (0.0, 3.0), (-2.0, 0.0), (0.0, 0.0), (-1e-7, 1e-7)]:
        scale, zero_point = choose_activation_qparams(low, high)
        assert 0 <= zero_point <= 127 and scale > 0
    assert choose_activation_qparams(0.0, 0.0) == (pytest.approx(0.1), 0)
    assert choose_activation_qparams(0.0, 127.0) == (pytest.approx(1.0), 0)
    assert choose_activation_qparams(-127.0, 0.0) == (pytest.approx(1.0), 127)


def test_state_dict_keys_and_round_trip(torch):
    theirs, ours = _pair(torch, 12, 6, 3)
    tq, eq = _quantize(torch, theirs, ours, "qint8")
    assert list(eq.state_dict()) == list(tq.state_dict())
    fresh = ember.ao.quantization.quantize_dynamic(ember.nn.Sequential(ember.nn.Linear(12, 6),
                                                                       ember.nn.ReLU()))
    fresh.load_state_dict(eq.state_dict())
    x = ember.randn(4, 12)
    assert ember.equal(fresh(x), eq(x))


def test_qconfig_spec_by_name_and_inplace():
    model = ember.nn.Sequential(ember.nn.Linear(4, 4), ember.nn.Linear(4, 2))
    with pytest.warns(DeprecationWarning, match="torch.ao.quantization is deprecated"):
        q = ember.quantization.quantize_dynamic(model, {"1"})
    assert type(q[0]) is ember.nn.Linear
    assert type(q[1]) is ember.ao.nn.quantized.dynamic.Linear
    assert type(model[1]) is ember.nn.Linear   # not inplace: the original stays float
    assert not hasattr(q[0], "qconfig")
    same = ember.ao.quantization.quantize_dynamic(
        model, {"0": ember.ao.quantization.float16_dynamic_qconfig}, inplace=True)
    assert same is model and "dtype=torch.float16" in repr(model[0])


def test_errors_and_the_root_module_is_not_swapped():
    # as PyTorch's, only submodules are swapped: a bare Linear stays float
    assert type(ember.ao.quantization.quantize_dynamic(ember.nn.Linear(2, 2))) is ember.nn.Linear
    with pytest.raises(ValueError, match="Don't know how to quantize with default settings"):
        ember.ao.quantization.quantize_dynamic(ember.nn.Linear(2, 2), dtype=ember.qint32)
    q = ember.ao.quantization.quantize_dynamic(ember.nn.Sequential(ember.nn.Linear(2, 2)))
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        q(ember.randn(1, 2, dtype=ember.float64))
    with pytest.raises(AssertionError, match="only works for one of"):
        ember.ao.nn.quantized.dynamic.Linear.from_float(ember.nn.ReLU())


def test_observer_qparams_match_torch(torch):
    x = np.random.default_rng(0).standard_normal((5, 7)).astype(np.float32)
    for kwargs in [dict(dtype="qint8", qscheme="per_tensor_symmetric"),
                   dict(dtype="quint8", qscheme="per_tensor_affine"),
                   dict(dtype="quint8", qscheme="per_tensor_affine", reduce_range=True)]:
        ours = ember.ao.quantization.MinMaxObserver(**{
            k: getattr(ember, v) if isinstance(v, str) else v for k, v in kwargs.items()})
        theirs = torch.ao.quantization.MinMaxObserver(**{
            k: getattr(torch, v) if isinstance(v, str) else v for k, v in kwargs.items()})
        ours(ember.from_numpy(x))
        theirs(torch.from_numpy(x))
        (s1, z1), (s2, z2) = ours.calculate_qparams(), theirs.calculate_qparams()
        assert s1.tolist() == s2.tolist() and z1.tolist() == z2.tolist(), kwargs
        assert repr(ours) == repr(theirs)
    assert repr(ember.ao.quantization.default_dynamic_qconfig).count("{}") == 2


def test_dtypes_and_schemes_print_as_torchs(torch):
    for name in ("qint8", "quint8", "qint32", "per_tensor_affine", "per_tensor_symmetric"):
        assert repr(getattr(ember, name)) == repr(getattr(torch, name))
    assert ember.qint8 is not ember.int8 and ember.from_numpy(np.int8([1])).dtype is ember.int8


def test_compat_imports_torch_quantization():
    code = ("import ember.compat; ember.compat.install(); import torch, torch.quantization; "
            "import torch.ao.nn.quantized.dynamic as nnqd; "
            "assert torch.quantization.quantize_dynamic is torch.ao.quantization.quantize_dynamic;"
            "print(nnqd.Linear.__module__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout
    assert out.strip().endswith("ao.nn.quantized.dynamic.modules.linear")


@pytest.mark.parametrize("kwargs,shape", [({}, (4, 3, 5)),
                                          (dict(num_layers=2, batch_first=True,
                                                bidirectional=True), (3, 6, 5))])
def test_lstm_matches_torch(torch, kwargs, shape):
    theirs = torch.nn.Sequential(torch.nn.LSTM(5, 6, **kwargs))
    ours = ember.nn.Sequential(ember.nn.LSTM(5, 6, **kwargs))
    ours.load_state_dict({k: ember.from_numpy(v.detach().numpy().copy())
                          for k, v in theirs.state_dict().items()})
    tq, eq = _quantize(torch, theirs, ours, "qint8")
    assert repr(eq) == repr(tq)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    expected_out, (expected_h, expected_c) = tq(torch.from_numpy(x))
    out, (h, c) = eq(ember.from_numpy(x))
    for got, expected in ((out, expected_out), (h, expected_h), (c, expected_c)):
        assert got.shape == expected.shape
        np.testing.assert_allclose(got.numpy(), expected.detach().numpy(), rtol=0, atol=1e-5)
    hx = (ember.from_numpy(h.numpy()), ember.from_numpy(c.numpy()))
    again, _ = eq[0](ember.from_numpy(x), hx)
    expected_again, _ = tq[0](torch.from_numpy(x), (expected_h, expected_c))
    np.testing.assert_allclose(again.numpy(), expected_again.detach().numpy(), atol=1e-5)
    with pytest.raises(RuntimeError, match="input must have 3 dimensions, got 2"):
        eq(ember.from_numpy(x[0]))
