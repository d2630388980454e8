"""nn.utils.weight_norm / spectral_norm (the classic hook-based forms) and their remove_*:
parity with PyTorch on shared weights (forward outputs, gradients w.r.t. weight_g/weight_v/
weight_orig over a few training steps, power-iteration buffers), state_dict keys, loading,
removal and errors."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn as nn
from ember.nn.utils import (remove_spectral_norm, remove_weight_norm, spectral_norm,
                            weight_norm)

torch = pytest.importorskip("torch")
TU = torch.nn.utils

ATOL = {np.float32: 2e-5, np.float64: 1e-11}

SEED = 0


@pytest.fixture(autouse=True)
def _seed():
    torch.manual_seed(SEED)
    ember.manual_seed(SEED)
    np.random.seed(SEED)


MODULES = [
    ("Linear", (5, 4), (3, 5)),
    ("Conv1d", (3, 4, 3), (2, 3, 7)),
    ("Conv2d", (3, 4, 3), (2, 3, 6, 6)),
    ("ConvTranspose2d", (3, 4, 3), (2, 3, 5, 5)),
]


def _e(t):
    return ember.tensor(t.detach().numpy())


def _np(t):
    return t.detach().numpy()


def _close(a, b, atol, rtol=1e-5):
    np.testing.assert_allclose(_np(a), _np(b), atol=atol, rtol=rtol)


def _pair(name, args, dtype=np.float32):
    t_mod = getattr(torch.nn, name)(*args)
    e_mod = getattr(nn, name)(*args)
    if dtype == np.float64:
        t_mod, e_mod = t_mod.double(), e_mod.double()
    e_mod.load_state_dict({k: _e(v) for k, v in t_mod.state_dict().items()})
    return t_mod, e_mod


def _wn(mod, lib_wn, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        return lib_wn(mod, **kw)


def _sync_buffers(t_mod, e_mod, name="weight"):
    """Spectral norm draws u/v from each library's own RNG: start ember from torch's."""
    for s in ("_u", "_v"):
        getattr(e_mod, name + s).copy_(_e(getattr(t_mod, name + s)))


def _train(t_mod, e_mod, in_shape, dtype, params, buffers=(), steps=3, lr=0.01):
    atol = ATOL[dtype]
    rng = np.random.RandomState(SEED)
    for _ in range(steps):
        x = rng.randn(*in_shape).astype(dtype)
        xt, xe = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
        yt, ye = t_mod(xt), e_mod(xe)
        _close(ye, yt, atol)
        _close(e_mod.weight, t_mod.weight, atol)
        gy = rng.randn(*yt.shape).astype(dtype)
        (yt * torch.tensor(gy)).sum().backward()
        (ye * ember.tensor(gy)).sum().backward()
        _close(xe.grad, xt.grad, atol)
        for p in params:
            gt, ge = getattr(t_mod, p).grad, getattr(e_mod, p).grad
            assert ge is not None, p
            assert tuple(ge.shape) == tuple(gt.shape), p
            _close(ge, gt, atol)
        for b in buffers:
            _close(getattr(e_mod, b), getattr(t_mod, b), atol)
        with torch.no_grad():
            for p in t_mod.parameters():
                p.sub_(lr * p.grad)
                p.grad = None
        with ember.no_grad():
            for p in e_mod.parameters():
                p.sub_(lr * p.grad)
                p.grad = None
        for name, p in t_mod.named_parameters():
            _close(getattr(e_mod, name), p, atol)


# ---- weight_norm ---------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,args,in_shape", MODULES)
@pytest.mark.parametrize("dim", [0, 1, -2, None, "last"])
def test_weight_norm_parity(name, args, in_shape, dim, dtype):
    t_mod, e_mod = _pair(name, args, dtype)
    if dim == "last":
        dim = t_mod.weight.dim() - 1
    _wn(t_mod, TU.weight_norm, dim=dim)
    _wn(e_mod, weight_norm, dim=dim)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    assert [n for n, _ in e_mod.named_parameters()] == [n for n, _ in t_mod.named_parameters()]
    assert tuple(e_mod.weight_g.shape) == tuple(t_mod.weight_g.shape)
    assert tuple(e_mod.weight_v.shape) == tuple(t_mod.weight_v.shape)
    assert isinstance(e_mod.weight_g, nn.Parameter) and isinstance(e_mod.weight_v, nn.Parameter)
    assert not isinstance(e_mod.weight, nn.Parameter)
    atol = ATOL[dtype]
    _close(e_mod.weight_g, t_mod.weight_g, atol)
    _close(e_mod.weight, t_mod.weight, atol)
    _train(t_mod, e_mod, in_shape, dtype, ["weight_g", "weight_v", "bias"])

    remove_weight_norm(e_mod)
    TU.remove_weight_norm(t_mod)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    assert isinstance(e_mod.weight, nn.Parameter) and e_mod.weight.requires_grad
    assert not hasattr(e_mod, "weight_g") and not hasattr(e_mod, "weight_v")
    assert not e_mod._forward_pre_hooks
    _close(e_mod.weight, t_mod.weight, atol)
    x = np.random.randn(*in_shape).astype(dtype)
    _close(e_mod(ember.tensor(x)), t_mod(torch.tensor(x)), atol)


def test_weight_norm_name_and_state_dict_roundtrip():
    t_mod, e_mod = _pair("Linear", (4, 3))
    _wn(t_mod, TU.weight_norm, name="bias")
    _wn(e_mod, weight_norm, name="bias")
    assert list(e_mod.state_dict()) == list(t_mod.state_dict()) == \
        ["weight", "bias_g", "bias_v"]
    assert tuple(e_mod.bias_g.shape) == tuple(t_mod.bias_g.shape)
    _close(e_mod.bias_g, t_mod.bias_g, 1e-6)
    _train(t_mod, e_mod, (2, 4), np.float32, ["weight", "bias_g", "bias_v"], steps=2)

    # torch's weight_norm state_dict loads into ember's (and the hook recomputes the weight)
    t2, e2 = _pair("Linear", (4, 3))
    _wn(t2, TU.weight_norm)
    _wn(e2, weight_norm)
    with torch.no_grad():
        t2.weight_g.mul_(3.0)
    e2.load_state_dict({k: _e(v) for k, v in t2.state_dict().items()})
    x = np.random.randn(2, 4).astype(np.float32)
    _close(e2(ember.tensor(x)), t2(torch.tensor(x)), 1e-5)
    _close(e2.weight, t2.weight, 1e-5)


def test_weight_norm_errors_and_warning():
    m = nn.Linear(3, 2)
    with pytest.warns(FutureWarning, match="weight_norm"):
        assert weight_norm(m) is m
    with pytest.raises(RuntimeError, match="Cannot register two weight_norm hooks"):
        _wn(m, weight_norm)
    with pytest.raises(ValueError, match="weight_norm of 'bias' not found in"):
        remove_weight_norm(m, "bias")
    assert remove_weight_norm(m) is m
    with pytest.raises(ValueError, match="weight_norm of 'weight' not found in"):
        remove_weight_norm(m)
    with pytest.raises(AttributeError):
        _wn(nn.Linear(3, 2), weight_norm, name="nope")


# ---- spectral_norm -------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("name,args,in_shape", MODULES)
@pytest.mark.parametrize("n_iter", [1, 3])
@pytest.mark.parametrize("dim", [None, 1])
def test_spectral_norm_parity(name, args, in_shape, n_iter, dim, dtype):
    t_mod, e_mod = _pair(name, args, dtype)
    TU.spectral_norm(t_mod, n_power_iterations=n_iter, dim=dim)
    spectral_norm(e_mod, n_power_iterations=n_iter, dim=dim)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    assert [n for n, _ in e_mod.named_parameters()] == [n for n, _ in t_mod.named_parameters()]
    assert [n for n, _ in e_mod.named_buffers()] == [n for n, _ in t_mod.named_buffers()]
    for b in ("weight_u", "weight_v"):
        eb, tb = getattr(e_mod, b), getattr(t_mod, b)
        assert tuple(eb.shape) == tuple(tb.shape)
        np.testing.assert_allclose(np.linalg.norm(_np(eb)), 1.0, rtol=1e-5)
        assert not eb.requires_grad
    assert isinstance(e_mod.weight_orig, nn.Parameter)
    assert not isinstance(e_mod.weight, nn.Parameter)
    _sync_buffers(t_mod, e_mod)
    _train(t_mod, e_mod, in_shape, dtype, ["weight_orig", "bias"], ["weight_u", "weight_v"])

    # eval: no power iteration (buffers stay put), weight = W / (u @ W @ v)
    t_mod.eval()
    e_mod.eval()
    u0 = _np(e_mod.weight_u).copy()
    # (no updates here: with the vectors frozen, gradient steps drive u @ W @ v towards 0)
    _train(t_mod, e_mod, in_shape, dtype, ["weight_orig", "bias"], ["weight_u", "weight_v"],
           steps=2, lr=0.0)
    np.testing.assert_array_equal(_np(e_mod.weight_u), u0)

    t_mod.train()
    e_mod.train()
    remove_spectral_norm(e_mod)
    TU.remove_spectral_norm(t_mod)
    assert list(e_mod.state_dict()) == list(t_mod.state_dict())
    assert isinstance(e_mod.weight, nn.Parameter) and e_mod.weight.requires_grad
    for attr in ("weight_orig", "weight_u", "weight_v"):
        assert not hasattr(e_mod, attr)
    assert not e_mod._forward_pre_hooks
    atol = ATOL[dtype]
    _close(e_mod.weight, t_mod.weight, atol)
    x = np.random.randn(*in_shape).astype(dtype)
    _close(e_mod(ember.tensor(x)), t_mod(torch.tensor(x)), atol)


def test_spectral_norm_default_dim_and_shapes():
    for name, args in [("Linear", (5, 4)), ("Conv2d", (3, 4, 3)), ("ConvTranspose1d", (3, 4, 3)),
                       ("ConvTranspose2d", (3, 4, 3)), ("ConvTranspose3d", (3, 4, 2))]:
        t_mod, e_mod = _pair(name, args)
        TU.spectral_norm(t_mod)
        spectral_norm(e_mod)
        assert tuple(e_mod.weight_u.shape) == tuple(t_mod.weight_u.shape), name
        assert tuple(e_mod.weight_v.shape) == tuple(t_mod.weight_v.shape), name
        assert [h.dim for h in e_mod._forward_pre_hooks.values()] == \
            [h.dim for h in t_mod._forward_pre_hooks.values()], name


def test_spectral_norm_initial_vectors_from_global_rng():
    ember.manual_seed(3)
    m = spectral_norm(nn.Linear(5, 4))
    ember.manual_seed(3)
    w = nn.Linear(5, 4).weight
    u = ember.nn.functional.normalize(w.new_empty(4).normal_(0, 1), dim=0)
    v = ember.nn.functional.normalize(w.new_empty(5).normal_(0, 1), dim=0)
    np.testing.assert_array_equal(_np(m.weight_u), _np(u))
    np.testing.assert_array_equal(_np(m.weight_v), _np(v))


def test_spectral_norm_two_forwards_one_backward():
    # the GAN pattern: loss = D(real) - D(fake); u/v are cloned after the in-place update
    t_mod, e_mod = _pair("Linear", (5, 4))
    TU.spectral_norm(t_mod)
    spectral_norm(e_mod)
    _sync_buffers(t_mod, e_mod)
    a, b = np.random.randn(3, 5).astype(np.float32), np.random.randn(3, 5).astype(np.float32)
    (t_mod(torch.tensor(a)).sum() - t_mod(torch.tensor(b)).sum()).backward()
    (e_mod(ember.tensor(a)).sum() - e_mod(ember.tensor(b)).sum()).backward()
    _close(e_mod.weight_orig.grad, t_mod.weight_orig.grad, 2e-5)
    _close(e_mod.weight_u, t_mod.weight_u, 2e-5)


def test_spectral_norm_state_dict_load():
    t_mod, e_mod = _pair("Conv2d", (3, 4, 3))
    TU.spectral_norm(t_mod)
    spectral_norm(e_mod)
    t_mod(torch.randn(1, 3, 5, 5))
    # torch's state_dict (weight_orig, weight_u, weight_v) loads into ember's
    e_mod.load_state_dict({k: _e(v) for k, v in t_mod.state_dict().items()})
    for k, v in t_mod.state_dict().items():
        _close(e_mod.state_dict()[k], v, 0)
    e_mod.eval()
    t_mod.eval()
    x = np.random.randn(1, 3, 5, 5).astype(np.float32)
    _close(e_mod(ember.tensor(x)), t_mod(torch.tensor(x)), 2e-5)
    # and ember's own
    e2 = spectral_norm(nn.Conv2d(3, 4, 3))
    e2.load_state_dict(e_mod.state_dict())
    e2.eval()
    _close(e2(ember.tensor(x)), t_mod(torch.tensor(x)), 2e-5)


def test_spectral_norm_load_version0_state_dict():
    # a pre-version-1 state dict holds `weight` (W / sigma) and no `weight_v`: v is solved for
    t_mod, e_mod = _pair("Linear", (6, 4), np.float64)
    TU.spectral_norm(t_mod)
    spectral_norm(e_mod)
    _sync_buffers(t_mod, e_mod)
    t_mod(torch.randn(2, 6, dtype=torch.float64))
    sd = {"weight_orig": t_mod.weight_orig.detach().clone(),
          "weight_u": t_mod.weight_u.clone(), "weight": t_mod.weight.detach().clone(),
          "bias": t_mod.bias.detach().clone()}

    class SD(dict):
        pass

    t_sd = SD(sd)
    t_sd._metadata = {"": {"spectral_norm": {"weight.version": 0}}}
    e_sd = SD({k: _e(v) for k, v in sd.items()})
    e_sd._metadata = {"": {"spectral_norm": {"weight.version": 0}}}
    t_mod.load_state_dict(t_sd)
    e_mod.load_state_dict(e_sd)
    _close(e_mod.weight_v, t_mod.weight_v, 1e-9)
    t_mod.eval()
    e_mod.eval()
    x = np.random.randn(2, 6)
    _close(e_mod(ember.tensor(x)), t_mod(torch.tensor(x)), 1e-9)
    # missing keys are reported
    missing = SD({k: v for k, v in e_sd.items() if k != "weight_u"})
    missing._metadata = e_sd._metadata
    with pytest.raises(RuntimeError, match='Missing key.*"weight_u"'):
        e_mod.load_state_dict(missing)


def test_spectral_norm_errors():
    m = spectral_norm(nn.Linear(3, 2))
    with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks"):
        spectral_norm(m)
    with pytest.raises(ValueError, match="spectral_norm of 'bias' not found in"):
        remove_spectral_norm(m, "bias")
    assert remove_spectral_norm(m) is m
    assert not m._state_dict_hooks and not m._load_state_dict_pre_hooks
    with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in"):
        remove_spectral_norm(m)
    with pytest.raises(ValueError, match="Expected n_power_iterations to be positive"):
        spectral_norm(nn.Linear(3, 2), n_power_iterations=0)
    with pytest.raises(ValueError, match="cannot be applied as parameter `bias` is None"):
        spectral_norm(nn.Linear(3, 2, bias=False), name="bias")
    with pytest.raises(KeyError):
        spectral_norm(nn.Linear(3, 2), name="nope")
