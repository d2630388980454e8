"""nn layers of the activation, normalization, dropout, sparse and flatten families beside
PyTorch's: same weights -> same outputs, parameter gradients and buffers, in train and
eval mode; reprs, state_dict keys and shapes equal."""
import numpy as np
import pytest

import ember
import ember.nn as enn

torch = pytest.importorskip("torch")
tnn = torch.nn

# (constructor call as text, input shape); the text is evaluated with `nn` bound to either
# library's nn package, so both sides are built alike.
LAYERS = [
    ("nn.ReLU()", (3, 4)), ("nn.ReLU(inplace=True)", (3, 4)), ("nn.ReLU6()", (3, 4)),
    ("nn.LeakyReLU(0.2)", (3, 4)), ("nn.LeakyReLU(0.2, True)", (3, 4)),
    ("nn.ELU(alpha=0.5)", (3, 4)), ("nn.ELU(inplace=True)", (3, 4)), ("nn.SELU()", (3, 4)),
    ("nn.CELU(0.7)", (3, 4)), ("nn.GELU()", (3, 4)), ("nn.GELU('tanh')", (3, 4)),
    ("nn.SiLU()", (3, 4)), ("nn.SiLU(inplace=True)", (3, 4)), ("nn.Mish()", (3, 4)),
    ("nn.Hardtanh()", (3, 4)), ("nn.Hardtanh(-2, 3, True)", (3, 4)),
    ("nn.Hardsigmoid()", (3, 4)), ("nn.Hardswish()", (3, 4)), ("nn.Softplus()", (3, 4)),
    ("nn.Softplus(2, 1)", (3, 4)), ("nn.Softsign()", (3, 4)), ("nn.Tanhshrink()", (3, 4)),
    ("nn.Softshrink()", (3, 4)), ("nn.Hardshrink(0.3)", (3, 4)),
    ("nn.Threshold(0.1, 20)", (3, 4)), ("nn.Threshold(0.1, 20, True)", (3, 4)),
    ("nn.GLU()", (3, 4)), ("nn.GLU(0)", (4, 3)), ("nn.LogSigmoid()", (3, 4)),
    ("nn.PReLU()", (2, 3, 4)), ("nn.PReLU(3, 0.1)", (2, 3, 4)), ("nn.RReLU(0.1, 0.3)", (3, 4)),
    ("nn.Sigmoid()", (3, 4)), ("nn.Tanh()", (3, 4)), ("nn.Softmax(1)", (3, 4)),
    ("nn.Softmin(dim=0)", (3, 4)), ("nn.LogSoftmax(-1)", (2, 3, 4)),
    ("nn.Softmax2d()", (2, 3, 4, 2)),
    ("nn.BatchNorm1d(3)", (4, 3)), ("nn.BatchNorm1d(3)", (4, 3, 5)),
    ("nn.BatchNorm2d(3, momentum=None)", (2, 3, 4, 2)),
    ("nn.BatchNorm2d(3, affine=False)", (2, 3, 4, 2)),
    ("nn.BatchNorm3d(3, track_running_stats=False)", (2, 3, 2, 2, 2)),
    ("nn.BatchNorm1d(3, eps=1e-3, momentum=0.3, bias=False)", (4, 3)),
    ("nn.InstanceNorm1d(3)", (2, 3, 5)), ("nn.InstanceNorm1d(3)", (3, 5)),
    ("nn.InstanceNorm2d(3, affine=True, track_running_stats=True)", (2, 3, 4, 2)),
    ("nn.InstanceNorm3d(2, affine=True)", (2, 2, 2, 3, 2)),
    ("nn.LayerNorm(4)", (3, 4)), ("nn.LayerNorm((3, 4), elementwise_affine=False)", (2, 3, 4)),
    ("nn.LayerNorm([4], bias=False)", (2, 3, 4)),
    ("nn.GroupNorm(2, 4)", (3, 4, 5)), ("nn.GroupNorm(1, 4, affine=False)", (3, 4)),
    ("nn.RMSNorm(4)", (3, 4)), ("nn.RMSNorm([3, 4], eps=1e-5, elementwise_affine=False)", (2, 3, 4)),
    ("nn.LocalResponseNorm(2)", (2, 5, 3)), ("nn.LocalResponseNorm(3, 0.1, 0.5, 2.)", (2, 5, 3, 2)),
    ("nn.Dropout()", (3, 4)), ("nn.Dropout(0.2, True)", (3, 4)), ("nn.Dropout1d()", (2, 3, 4)),
    ("nn.Dropout2d()", (2, 3, 4, 2)), ("nn.Dropout3d()", (2, 3, 2, 2, 2)),
    ("nn.AlphaDropout()", (3, 4)), ("nn.FeatureAlphaDropout(0.3)", (2, 3, 4)),
    ("nn.Flatten()", (2, 3, 4)), ("nn.Flatten(0, 1)", (2, 3, 4)),
    ("nn.Unflatten(1, (2, 3))", (4, 6)), ("nn.Unflatten(-1, (2, -1))", (4, 6)),
]
RANDOM = ("Dropout", "RReLU", "AlphaDropout")  # random in training: checked in eval only


def _build(text, lib_nn):
    return eval(text, {"nn": lib_nn})


def _copy_weights(e, t):
    """Give ember's module torch's parameter and buffer values."""
    for name, tp in t.state_dict().items():
        ep = e.state_dict()[name]
        ep.copy_(ember.tensor(tp.detach().numpy().copy()))


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


@pytest.mark.parametrize("text,shape", LAYERS, ids=[f"{t}-{s}" for t, s in LAYERS])
@pytest.mark.parametrize("mode", ["train", "eval"])
def test_layer_parity(text, shape, mode):
    torch.manual_seed(0)
    t = _build(text, tnn)
    e = _build(text, enn)
    assert repr(e) == repr(t)
    assert list(e.state_dict().keys()) == list(t.state_dict().keys())
    for (k, ev), tv in zip(e.state_dict().items(), t.state_dict().values()):
        assert tuple(ev.shape) == tuple(tv.shape), k
        assert str(ev.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1], k
    # perturb parameters so that init values (ones, zeros) do not hide mistakes
    with torch.no_grad():
        for p in t.parameters():
            p.add_(torch.randn_like(p) * 0.3)
    _copy_weights(e, t)
    getattr(t, mode)()
    getattr(e, mode)()
    if mode == "train" and any(r in text for r in RANDOM):
        x = ember.randn(*shape) if hasattr(ember, "randn") else ember.tensor(np.random.randn(*shape))
        y = e(x.float() if x.dtype != ember.float32 else x)
        assert tuple(y.shape) == tuple(t(torch.randn(*shape)).shape)
        return
    rng = np.random.default_rng(1)
    xa = rng.standard_normal(shape).astype(np.float32) * 2
    xt = torch.tensor(xa, requires_grad=True)
    xe = ember.tensor(xa, requires_grad=True)
    inplace = "inplace=True" in repr(t) or "True)" in text
    yt = t(xt * 1 if inplace else xt)
    ye = e(xe * 1 if inplace else xe)
    np.testing.assert_allclose(_np(ye), _np(yt), rtol=1e-5, atol=1e-5)
    g = rng.standard_normal(tuple(yt.shape)).astype(np.float32)
    yt.backward(torch.tensor(g))
    ye.backward(ember.tensor(g))
    np.testing.assert_allclose(_np(xe.grad), _np(xt.grad), rtol=1e-4, atol=1e-5)
    for (name, tp), ep in zip(t.named_parameters(), e.parameters()):
        np.testing.assert_allclose(_np(ep.grad), _np(tp.grad), rtol=1e-4, atol=1e-5,
                                   err_msg=name)
    for (name, tb), eb in zip(t.named_buffers(), e.buffers()):
        np.testing.assert_allclose(_np(eb), _np(tb), rtol=1e-5, atol=1e-6, err_msg=name)


def test_batchnorm_running_stats_over_steps():
    for momentum in (0.1, None):
        t = tnn.BatchNorm1d(3, momentum=momentum)
        e = enn.BatchNorm1d(3, momentum=momentum)
        rng = np.random.default_rng(0)
        for _ in range(3):
            xa = rng.standard_normal((5, 3)).astype(np.float32)
            t(torch.tensor(xa))
            e(ember.tensor(xa))
        np.testing.assert_allclose(_np(e.running_mean), _np(t.running_mean), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(_np(e.running_var), _np(t.running_var), rtol=1e-5, atol=1e-6)
        assert e.num_batches_tracked.item() == 3
        assert e.num_batches_tracked.dtype == ember.int64
        e.eval()
        t.eval()
        xa = rng.standard_normal((4, 3)).astype(np.float32)
        np.testing.assert_allclose(_np(e(ember.tensor(xa))), _np(t(torch.tensor(xa))),
                                   rtol=1e-5, atol=1e-6)


def test_batchnorm_loads_old_checkpoint_without_num_batches_tracked():
    e = enn.BatchNorm2d(3)
    sd = e.state_dict()
    del sd["num_batches_tracked"]
    sd._metadata[""] = {"version": 1}
    result = e.load_state_dict(sd)
    assert not result.missing_keys and not result.unexpected_keys
    sd2 = enn.BatchNorm2d(3).state_dict()
    del sd2["num_batches_tracked"]
    sd2._metadata[""] = {"version": 2}
    with pytest.raises(RuntimeError, match="num_batches_tracked"):
        enn.BatchNorm2d(3).load_state_dict(sd2)


def test_batchnorm_input_dim_errors():
    with pytest.raises(ValueError, match=r"expected 4D input \(got 3D input\)"):
        enn.BatchNorm2d(3)(ember.zeros(2, 3, 4))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        enn.BatchNorm1d(3)(ember.zeros(2, 3, 4, 1))


def test_embedding_parity_and_padding():
    t = tnn.Embedding(6, 3, padding_idx=1)
    e = enn.Embedding(6, 3, padding_idx=1)
    assert repr(e) == repr(t)
    assert (_np(e.weight)[1] == 0).all()
    _copy_weights(e, t)
    idx = np.array([[1, 2, 1], [0, 5, 2]])
    yt = t(torch.tensor(idx))
    ye = e(ember.tensor(idx))
    np.testing.assert_allclose(_np(ye), _np(yt))
    g = np.random.default_rng(0).standard_normal(tuple(yt.shape)).astype(np.float32)
    yt.backward(torch.tensor(g))
    ye.backward(ember.tensor(g))
    np.testing.assert_allclose(_np(e.weight.grad), _np(t.weight.grad), rtol=1e-5, atol=1e-6)
    assert (_np(e.weight.grad)[1] == 0).all()
    assert ye.grad_fn.name() == "EmbeddingBackward0"


def test_embedding_max_norm_renormalises_in_place():
    w = np.random.default_rng(0).standard_normal((5, 3)).astype(np.float32) * 3
    t = tnn.Embedding.from_pretrained(torch.tensor(w), max_norm=1.0)
    e = enn.Embedding.from_pretrained(ember.tensor(w), max_norm=1.0)
    assert repr(e) == repr(t)
    assert not e.weight.requires_grad
    idx = np.array([0, 2, 2])
    np.testing.assert_allclose(_np(e(ember.tensor(idx))), _np(t(torch.tensor(idx))), rtol=1e-5)
    np.testing.assert_allclose(_np(e.weight), _np(t.weight), rtol=1e-5)


def test_embedding_from_pretrained_unfrozen():
    w = ember.tensor(np.arange(6.0).reshape(3, 2))
    e = enn.Embedding.from_pretrained(w, freeze=False, padding_idx=0)
    assert e.weight.requires_grad
    assert repr(e) == "Embedding(3, 2, padding_idx=0)"


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag_module(mode):
    t = tnn.EmbeddingBag(6, 3, mode=mode)
    e = enn.EmbeddingBag(6, 3, mode=mode)
    assert repr(e) == repr(t)
    _copy_weights(e, t)
    idx, off = np.array([1, 2, 4, 4, 3, 0, 5]), np.array([0, 2, 2, 5])
    yt = t(torch.tensor(idx), torch.tensor(off))
    ye = e(ember.tensor(idx), ember.tensor(off))
    np.testing.assert_allclose(_np(ye), _np(yt), rtol=1e-5, atol=1e-6)
    yt.sum().backward()
    ye.sum().backward()
    np.testing.assert_allclose(_np(e.weight.grad), _np(t.weight.grad), rtol=1e-5, atol=1e-6)


def test_dropout_train_scales_and_eval_is_identity():
    ember.manual_seed(0)
    x = ember.ones(1000)
    d = enn.Dropout(0.25)
    y = d(x)
    ya = _np(y)
    assert (np.isclose(ya, 0) | np.isclose(ya, 1 / 0.75)).all()
    assert 0.6 < (_np(y) != 0).mean() < 0.9
    d.eval()
    assert d(x) is x
    ember.manual_seed(3)
    a = enn.Dropout()(ember.ones(50))
    ember.manual_seed(3)
    b = enn.Dropout()(ember.ones(50))
    assert (_np(a) == _np(b)).all()


def test_dropout2d_zeroes_whole_channels():
    ember.manual_seed(0)
    y = _np(enn.Dropout2d(0.5)(ember.ones(4, 6, 3, 3)))
    per_channel = y.reshape(4, 6, -1)
    assert ((per_channel == 0).all(-1) | (per_channel == 2).all(-1)).all()


def test_prelu_parameter_and_init():
    e = enn.PReLU(3, 0.1)
    assert [n for n, _ in e.named_parameters()] == ["weight"]
    np.testing.assert_allclose(_np(e.weight), [0.1, 0.1, 0.1])


def test_modules_exported():
    for name in ("ReLU", "BatchNorm2d", "LayerNorm", "Embedding", "EmbeddingBag", "Dropout",
                 "Flatten", "Unflatten", "Softmax2d", "RMSNorm", "LocalResponseNorm"):
        assert hasattr(enn, name), name


def test_load_state_dict_result_prints_as_pytorch():
    e, t = enn.Linear(2, 2), torch.nn.Linear(2, 2)
    for load in [lambda m: m.load_state_dict(m.state_dict()),
                 lambda m: m.load_state_dict({"weight": m.weight, "extra": m.bias}, strict=False)]:
        re_, rt = load(e), load(t)
        assert repr(re_) == repr(rt) and str(re_) == str(rt)
        assert type(re_).__name__ == type(rt).__name__ == "_IncompatibleKeys"
        assert tuple(re_) == tuple(rt) and re_._fields == rt._fields
        assert re_.missing_keys == rt.missing_keys and re_.unexpected_keys == rt.unexpected_keys
    assert repr(e.load_state_dict(e.state_dict())) == "<All keys matched successfully>"
    opt = ember.optim.SGD(e.parameters(), lr=0.1)
    assert opt.load_state_dict(opt.state_dict()) is None


def _assignment_errors(lib):
    m = lib.nn.Linear(2, 2)
    m.register_buffer("b", lib.zeros(1))
    calls = [lambda: setattr(m, "weight", lib.randn(2, 2)), lambda: setattr(m, "weight", 3),
             lambda: m.register_buffer("c", 3), lambda: m.register_parameter("p", lib.zeros(1)),
             lambda: setattr(m, "b", [1]),
             lambda: setattr(lib.nn.Sequential(lib.nn.ReLU()), "0", 3)]
    messages = []
    for call in calls:
        with pytest.raises(TypeError) as info:
            call()
        messages.append(str(info.value))
    return messages


def test_wrong_assignments_to_a_module_say_what_torch_says(torch):
    # a tensor is named by its legacy type name ('torch.FloatTensor'), as torch.typename does
    assert _assignment_errors(ember) == _assignment_errors(torch)
