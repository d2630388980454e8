"""Activation functions beyond the op table: in-place forms, grad_fn names, warnings,
errors, numerical stability and low-precision dtypes, beside PyTorch."""
import pickle
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as EF

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _pair(a, requires_grad=False):
    return (ember.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


@pytest.mark.parametrize("name,kwargs", [
    ("relu", {}), ("relu6", {}), ("leaky_relu", {"negative_slope": 0.2}), ("elu", {}),
    ("selu", {}), ("celu", {"alpha": 0.5}), ("hardtanh", {"min_val": -0.5}), ("silu", {}),
    ("mish", {}), ("hardsigmoid", {}), ("hardswish", {}), ("threshold", {"threshold": 0.1, "value": 2.0}),
    ("rrelu", {}),
])
def test_inplace_forms_modify_input_and_name_grad_fn(name, kwargs):
    a = np.random.default_rng(0).standard_normal((3, 4))
    e_leaf, t_leaf = _pair(a, True)
    e, t = e_leaf * 1, t_leaf * 1
    ev, tv = e._version, t._version
    ye = getattr(EF, name)(e, inplace=True, **kwargs)
    yt = getattr(TF, name)(t, inplace=True, **kwargs)
    assert ye is e
    assert e._version == ev + 1 and t._version == tv + 1
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-6, atol=1e-7)
    assert ye.grad_fn.name() == yt.grad_fn.name()
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(e_leaf.grad.numpy(), t_leaf.grad.numpy(), rtol=1e-6, atol=1e-7)


def test_underscore_functions():
    a = np.random.default_rng(1).standard_normal((3, 4))
    for name, args in [("elu_", ()), ("leaky_relu_", (0.3,)), ("hardtanh_", ()),
                       ("relu_", ()), ("celu_", ()), ("selu_", ()), ("threshold_", (0.0, 5.0)),
                       ("rrelu_", ())]:
        e, t = _pair(a.copy())
        assert getattr(EF, name)(e, *args) is e
        getattr(TF, name)(t, *args)
        np.testing.assert_allclose(e.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)
    for name in ("selu_", "celu_", "threshold_", "rrelu_"):
        assert hasattr(ember, name)


def test_inplace_on_leaf_requiring_grad_raises():
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        EF.elu(x, inplace=True)


def test_softmax_implicit_dim_warning():
    x = ember.randn(2, 3) if hasattr(ember, "randn") else ember.tensor(np.ones((2, 3)))
    for name in ("softmax", "log_softmax", "softmin"):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            getattr(EF, name)(x)
        assert any(f"Implicit dimension choice for {name} has been deprecated" in str(m.message)
                   for m in w)


def test_softmax_requires_dim_outside_nn_functional():
    """torch.softmax and Tensor.softmax require dim (F.softmax infers one); F.softmax takes no
    out=; a dtype may come third positionally in both."""
    for lib in (torch, ember):
        x = lib.ones(2, 3)
        for call in (lambda: lib.softmax(x), lambda: x.log_softmax(), lambda: lib.softmax(x, None),
                     lambda: lib.nn.functional.softmax(x, 1, out=lib.empty(2, 3))):
            with pytest.raises(TypeError):
                call()
        assert lib.softmax(x, 1, lib.float64).dtype == lib.float64
        assert x.log_softmax(0, lib.float64).dtype == lib.float64
        assert lib.nn.functional.softmax(x, 1, 3, lib.float64).dtype == lib.float64
    assert ember.nn.functional.softmax.__name__ == "softmax"
    assert pickle.loads(pickle.dumps(ember.nn.functional.log_softmax)) is \
        ember.nn.functional.log_softmax


@pytest.mark.parametrize("shape,dim", [((2, 3), 1), ((3,), 0), ((2, 3, 4), 0), ((2, 3, 4, 5), 1)])
def test_softmax_implicit_dim_choice(shape, dim):
    a = np.random.default_rng(0).standard_normal(shape)
    e, t = _pair(a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(EF.softmax(e).numpy(), TF.softmax(t).numpy(), rtol=1e-12)


def test_softmax_large_logits_stable():
    a = np.array([[1e4, -1e4, 0.0], [5e3, 5e3, 5e3]])
    for dt in (np.float32, np.float64):
        e, t = _pair(a.astype(dt))
        for name in ("softmax", "log_softmax"):
            ye, yt = getattr(EF, name)(e, 1), getattr(TF, name)(t, 1)
            assert np.isfinite(ye.numpy()).all()
            np.testing.assert_allclose(ye.numpy(), yt.numpy(), rtol=1e-6)


def test_softmax_dtype_argument():
    e, t = _pair(np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32))
    ye = ember.softmax(e, 1, ember.float64)
    assert ye.dtype == ember.float64
    np.testing.assert_allclose(ye.numpy(), torch.softmax(t, 1, torch.float64).numpy())
    assert EF.log_softmax(e, 1, dtype=ember.float64).dtype == ember.float64


def test_gelu_matches_torch_over_range():
    a = np.linspace(-10, 10, 2001)
    e, t = _pair(a)
    np.testing.assert_allclose(EF.gelu(e).numpy(), TF.gelu(t).numpy(), rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(EF.gelu(e, approximate="tanh").numpy(),
                               TF.gelu(t, approximate="tanh").numpy(), rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("name", ["gelu", "silu", "elu", "softplus", "logsigmoid", "mish",
                                  "hardswish", "leaky_relu"])
def test_low_precision_dtypes(name):
    a = np.random.default_rng(0).standard_normal((4, 5)).astype(np.float32)
    for ed, td in ((ember.float16, torch.float16), (ember.bfloat16, torch.bfloat16)):
        ye = getattr(EF, name)(ember.tensor(a).to(ed))
        yt = getattr(TF, name)(torch.tensor(a).to(td))
        assert ye.dtype == ed
        np.testing.assert_allclose(ye.float().numpy(), yt.float().numpy(), rtol=1e-2, atol=1e-2)


@pytest.mark.parametrize("name", ["elu", "gelu", "silu", "softplus", "leaky_relu", "logsigmoid"])
def test_integer_input_errors(name):
    with pytest.raises(NotImplementedError) as ee:
        getattr(EF, name)(ember.tensor([1, 2, 3]))
    with pytest.raises(NotImplementedError) as te:
        getattr(TF, name)(torch.tensor([1, 2, 3]))
    assert str(ee.value) == str(te.value)


def test_integer_inputs_that_work():
    e, t = _pair(np.array([-3, 0, 4, 9]))
    for f in (lambda L, x: L.nn.functional.hardtanh(x), lambda L, x: L.nn.functional.relu6(x),
              lambda L, x: L.nn.functional.threshold(x, 1, 7)):
        ye, yt = f(ember, e), f(torch, t)
        assert str(ye.dtype).split(".")[-1] == str(yt.dtype).split(".")[-1]
        assert ye.tolist() == yt.tolist()


def test_rrelu_training_is_random_and_seeded():
    x = -ember.ones(200)
    ember.manual_seed(0)
    a = EF.rrelu(x, 0.1, 0.3, training=True)
    ember.manual_seed(0)
    b = EF.rrelu(x, 0.1, 0.3, training=True)
    assert (a.numpy() == b.numpy()).all()
    assert ((-a.numpy() >= 0.1) & (-a.numpy() <= 0.3)).all()
    assert len(set(a.numpy().tolist())) > 10
    np.testing.assert_allclose(EF.rrelu(x, 0.1, 0.3).numpy(), -0.2 * np.ones(200), rtol=1e-6)


def test_rrelu_gradient_uses_the_drawn_slopes():
    x = ember.tensor(-np.ones(50), requires_grad=True)
    y = EF.rrelu(x, training=True)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy() / -1.0)


def test_gumbel_softmax():
    ember.manual_seed(0)
    logits = ember.tensor(np.random.default_rng(0).standard_normal((5, 4)), requires_grad=True)
    y = EF.gumbel_softmax(logits, tau=0.5)
    np.testing.assert_allclose(y.sum(1).detach().numpy(), np.ones(5))
    h = EF.gumbel_softmax(logits, hard=True)
    hn = h.detach().numpy()
    assert set(np.unique(hn).round(6).tolist()) <= {0.0, 1.0}
    assert (hn.sum(1) == 1).all()
    h.sum().backward()
    assert logits.grad is not None


def test_prelu_method_and_error():
    x = ember.tensor(np.random.default_rng(0).standard_normal((2, 3, 4)))
    w = ember.tensor([0.1, 0.2, 0.3], dtype=ember.float64)
    np.testing.assert_allclose(x.prelu(w).numpy(), TF.prelu(torch.tensor(x.numpy()),
                                                             torch.tensor(w.numpy())).numpy())
    with pytest.raises(RuntimeError, match="Mismatch of parameter numbers and input channel size"):
        ember.prelu(x, ember.tensor([0.1, 0.2]))


def test_double_backward_softmax():
    a = np.random.default_rng(0).standard_normal((3, 4))
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        y = lib.nn.functional.log_softmax(x, 1)
        (g,) = lib.autograd.grad((y * lib.tensor(a)).sum(), x, create_graph=True)
        (gg,) = lib.autograd.grad((g * g).sum(), x)
        if lib is ember:
            ember_gg = gg.numpy()
        else:
            np.testing.assert_allclose(ember_gg, gg.numpy(), rtol=1e-10)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("inplace", [False, True])
def test_relu_of_large_inputs_matches_torch(dtype, inplace):
    """Inputs from 4096 elements take relu's zero-array path (NumPy's SIMD maximum): same
    values as PyTorch, NaN and infinities included, on contiguous and strided inputs, and
    the shared zeros are never written."""
    from ember.ops.pointwise import unary_core
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 5, 33, 41)).astype(dtype)
    a.reshape(-1)[:6] = [np.nan, -np.inf, np.inf, 0.0, -1.0, 2.0]
    for view in (lambda t: t, lambda t: t.transpose(1, 3), lambda t: t[:, :, ::2]):
        e_leaf, t_leaf = _pair(a, True)
        e, t = view(e_leaf * 1), view(t_leaf * 1)
        ye = EF.relu(e, inplace=inplace)
        yt = TF.relu(t, inplace=inplace)
        assert ye.numel() >= unary_core._ZEROS_FROM
        np.testing.assert_array_equal(ye.detach().numpy(), yt.detach().numpy())
        g = rng.standard_normal(tuple(yt.shape)).astype(dtype)
        ye.backward(ember.tensor(g))
        yt.backward(torch.tensor(g))
        assert not unary_core._zeros_local.buf.any()
        finite = np.isfinite(a)  # PyTorch passes the gradient through a NaN input
        np.testing.assert_array_equal(e_leaf.grad.numpy()[finite], t_leaf.grad.numpy()[finite])


def test_relu_inplace_writes_once_into_its_own_memory_and_saves_itself(monkeypatch):
    """relu_ on a float tensor (tracked or not, not a tracked view) writes its result into its
    memory in one pass, and its node saves the tensor itself, as PyTorch's does: a later
    in-place change fails the backward with PyTorch's message. A tracked view keeps the
    general path (CopySlices)."""
    from ember.ops.pointwise import inplace_forms

    def general(*a, **k):
        raise AssertionError("the general in-place path ran")
    a = np.random.default_rng(3).standard_normal((64, 80)).astype(np.float32)
    e_leaf, t_leaf = _pair(a, True)
    e, t = e_leaf * 2, t_leaf * 2
    with monkeypatch.context() as m:
        m.setattr(inplace_forms, "_relu_general_", general)
        ptr, version = e.data_ptr(), e._version
        assert e.relu_() is e and e.data_ptr() == ptr and e._version == version + 1
        with ember.no_grad():
            plain = ember.tensor(a)
            plain.relu_()
    t.relu_()
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__ == "ReluBackward0"
    np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())
    np.testing.assert_array_equal(plain.numpy(), np.maximum(a, 0))
    e.sum().backward()
    t.sum().backward()
    np.testing.assert_array_equal(e_leaf.grad.numpy(), t_leaf.grad.numpy())
    messages = []
    for lib, leaf in ((ember, e_leaf), (torch, t_leaf)):
        y = leaf * 1
        y.relu_()
        y.add_(1)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    base = e_leaf * 1
    base[:, :40].relu_()  # a tracked view: its base becomes CopySlices' output
    assert base.grad_fn.name() == "torch::autograd::CopySlices"


def test_relu_inplace_on_a_device_is_one_call(fake_cuda):
    import sys

    from tests._strict_cupy import array as stand_in_array
    x = ember.randn(4, 8, device=fake_cuda) * ember.ones(1, requires_grad=True, device=fake_cuda)
    calls = []
    inner = stand_in_array.ndarray.__setitem__
    cp = sys.modules["cupy"]
    maximum = cp.maximum

    def counted(*args, **kwargs):
        calls.append("maximum")
        return maximum(*args, **kwargs)
    cp.maximum = counted
    try:
        stand_in_array.ndarray.__setitem__ = lambda *a: (calls.append("setitem"), inner(*a))[1]
        x.relu_()
    finally:
        cp.maximum = maximum
        stand_in_array.ndarray.__setitem__ = inner
    assert calls == ["maximum"]
    assert (x.cpu() >= 0).all()


@pytest.mark.parametrize("bounds", [(0.0, 6.0), (-1.0, 1.0), (0.5, 0.5)])
def test_hardtanh_inplace_in_one_pass_masks_as_pytorchs(monkeypatch, bounds):
    """hardtanh_ (relu6 in MobileNets) writes in place and saves its result: the gradient's
    mask from the clipped values is PyTorch's from the input, at the bounds and for NaN."""
    from ember.ops import activation

    def general(*a, **k):
        raise AssertionError("the general in-place path ran")
    monkeypatch.setattr(activation, "_in_place", general)
    a = np.array([-2.0, -1.0, 0.0, 0.5, 1.0, 3.0, 6.0, 7.0, np.nan], np.float32)
    e_leaf, t_leaf = _pair(a, True)
    e, t = e_leaf * 1, t_leaf * 1
    ptr = e.data_ptr()
    assert EF.hardtanh(e, *bounds, inplace=True) is e and e.data_ptr() == ptr
    TF.hardtanh(t, *bounds, inplace=True)
    np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())
    weights = np.arange(a.size, dtype=np.float32)
    (e * ember.tensor(weights)).sum().backward()
    (t * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(e_leaf.grad.numpy(), t_leaf.grad.numpy())


@pytest.mark.parametrize("slope", [0.2, 0.0, 1.5])
def test_leaky_relu_inplace_in_one_pass_as_pytorchs(monkeypatch, slope):
    """leaky_relu_ (a DCGAN discriminator's activation) writes in place and saves its
    result, as PyTorch's LeakyReluBackward1 does: PyTorch's values (at 0, -0, NaN and -inf),
    its gradient from the result's sign, and its error for a negative slope, raised when the
    gradient is asked for."""
    from ember.ops import activation

    def general(*a, **k):
        raise AssertionError("the general in-place path ran")
    monkeypatch.setattr(activation, "_in_place", general)
    a = np.array([-2.0, -0.0, 0.0, 0.5, 3.0, -np.inf, np.inf, np.nan], np.float32)
    e_leaf, t_leaf = _pair(a, True)
    e, t = e_leaf * 1, t_leaf * 1
    ptr, version = e.data_ptr(), e._version
    assert EF.leaky_relu_(e, slope) is e and e.data_ptr() == ptr and e._version == version + 1
    TF.leaky_relu_(t, slope)
    assert type(e.grad_fn).__name__ == type(t.grad_fn).__name__ == "LeakyReluBackward1"
    np.testing.assert_array_equal(e.detach().numpy(), t.detach().numpy())
    np.testing.assert_array_equal(np.signbit(e.detach().numpy()), np.signbit(t.detach().numpy()))
    weights = np.arange(a.size, dtype=np.float32)
    (e * ember.tensor(weights)).sum().backward()
    (t * torch.tensor(weights)).sum().backward()
    np.testing.assert_array_equal(e_leaf.grad.numpy(), t_leaf.grad.numpy())
    messages = []
    for lib, F, leaf in ((ember, EF, e_leaf), (torch, TF, t_leaf)):
        y = F.leaky_relu_(leaf * 1, -slope - 0.1)
        with pytest.raises(RuntimeError) as info:
            y.sum().backward()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_leaky_relu_on_a_device_is_one_kernel_each_way(fake_cuda):
    """In place, out of place and backward: one of ember's kernels each, with the CPU's
    values (the op table holds the rest of leaky_relu on 'cuda' to the CPU)."""
    from ember._tensor import xp_of
    from ember.ops import activation, _device_kernels
    x = ember.randn(4, 8, device=fake_cuda) * ember.ones(1, requires_grad=True, device=fake_cuda)
    before = x.detach().cpu().numpy()
    _device_kernels.usable(xp_of(x), x._array)  # every kernel compiled (and run) first
    made, inner = [], _device_kernels._compiled
    with pytest.MonkeyPatch.context() as m:
        m.setattr(_device_kernels, "_compiled",
                  lambda xp, kernel: made.append(kernel.name) or inner(xp, kernel))
        m.setattr(activation, "_in_place", None)  # (the general path would fail)
        y = EF.leaky_relu(x, 0.2)
        z = x.detach().clone()
        EF.leaky_relu_(z, 0.2)
        assert made == ["ember_leaky_relu"] * 2
        y.backward(ember.ones_like(y))
    assert made[2:] == ["ember_leaky_relu_grad"]
    want = np.where(before > 0, before, before * np.float32(0.2))
    np.testing.assert_array_equal(z.cpu().numpy(), want)
    np.testing.assert_array_equal(y.detach().cpu().numpy(), want)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("slope", [0.2, 0.0, 1.0, 1.5, 1e-30, 0.9999999, -0.5])
def test_leaky_relu_values_are_pytorchs_bits(dtype, slope):
    """leaky_relu's max(x, x * slope) form (min past 1) gives PyTorch's select bit for bit:
    signed zeros, infinities, NaN, subnormals; a negative slope keeps the select."""
    specials = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40, -1e-40, 1.0, -1.0, 3e38,
                         -3e38], dtype)
    a = np.concatenate([specials, np.random.default_rng(5).standard_normal(20000).astype(dtype)])
    for inplace in (False, True):
        e, t = ember.tensor(a.copy()), torch.tensor(a.copy())
        got = EF.leaky_relu(e, slope, inplace).numpy()
        want = TF.leaky_relu(t, slope, inplace).numpy()
        np.testing.assert_array_equal(got.view(f"u{got.itemsize}"), want.view(f"u{want.itemsize}"))
