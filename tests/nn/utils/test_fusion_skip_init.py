"""nn.utils.fusion (conv/linear + eval BatchNorm folding), nn.utils.skip_init and nn.init's
deprecated names, against PyTorch."""
import warnings

import numpy as np
import pytest

import ember


def _pair(make):
    import torch
    e_mod, t_mod = make(ember), make(torch)
    with torch.no_grad():
        for k, v in t_mod.state_dict().items():
            v.copy_(torch.from_numpy(e_mod.state_dict()[k].numpy().copy()))
    return e_mod, t_mod


def _bn_with_stats(lib, bn):
    """Give a BatchNorm non-trivial statistics and affine parameters."""
    rng = np.random.default_rng(7)
    n = bn.num_features
    with lib.no_grad():
        bn.running_mean.copy_(lib.tensor(rng.standard_normal(n)))
        bn.running_var.copy_(lib.tensor(rng.uniform(0.5, 2.0, n)))
        if bn.weight is not None:
            bn.weight.copy_(lib.tensor(rng.standard_normal(n)))
            bn.bias.copy_(lib.tensor(rng.standard_normal(n)))
    return bn


CONV_CASES = [
    (lambda lib: lib.nn.Conv2d(3, 4, 3), lambda lib: lib.nn.BatchNorm2d(4), False, (2, 3, 6, 6)),
    (lambda lib: lib.nn.Conv1d(3, 4, 3, bias=False), lambda lib: lib.nn.BatchNorm1d(4, affine=False),
     False, (2, 3, 6)),
    (lambda lib: lib.nn.ConvTranspose2d(3, 4, 3), lambda lib: lib.nn.BatchNorm2d(4), True,
     (2, 3, 5, 5)),
    (lambda lib: lib.nn.Conv3d(2, 4, 2, groups=2), lambda lib: lib.nn.BatchNorm3d(4, eps=1e-3),
     False, (1, 2, 4, 4, 4)),
]


@pytest.mark.parametrize("make_conv,make_bn,transpose,shape", CONV_CASES)
def test_fuse_conv_bn_eval_matches_torch(torch, make_conv, make_bn, transpose, shape):
    def make(lib):
        seq = lib.nn.Sequential(make_conv(lib), _bn_with_stats(lib, make_bn(lib)))
        return seq.double().eval()
    e_seq, t_seq = _pair(make)
    x = np.random.default_rng(0).standard_normal(shape)
    outs = []
    for lib, seq in ((ember, e_seq), (torch, t_seq)):
        fused = lib.nn.utils.fuse_conv_bn_eval(seq[0], seq[1], transpose=transpose)
        assert type(fused) is type(seq[0]) and fused is not seq[0]
        assert isinstance(fused.weight, lib.nn.Parameter) and fused.weight.requires_grad
        assert fused.weight.grad_fn is None
        y = fused(lib.tensor(x))
        np.testing.assert_allclose(y.detach().numpy(), seq(lib.tensor(x)).detach().numpy(),
                                   rtol=1e-10, atol=1e-10)
        outs.append((fused.weight.detach().numpy(), fused.bias.detach().numpy(),
                     str(fused.bias.dtype)))
    np.testing.assert_allclose(outs[0][0], outs[1][0], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-12, atol=1e-14)
    assert outs[0][2] == outs[1][2]


@pytest.mark.parametrize("features", [4, 1])
def test_fuse_linear_bn_eval_matches_torch(torch, features):
    def make(lib):
        seq = lib.nn.Sequential(lib.nn.Linear(3, 4), _bn_with_stats(lib, lib.nn.BatchNorm1d(
            features)))
        return seq.eval()
    e_seq, t_seq = _pair(make)
    x = np.random.default_rng(1).standard_normal((5, 3)).astype(np.float32)
    outs = []
    for lib, seq in ((ember, e_seq), (torch, t_seq)):
        fused = lib.nn.utils.fusion.fuse_linear_bn_eval(seq[0], seq[1])
        outs.append([fused.weight.detach().numpy(), fused.bias.detach().numpy(),
                     fused(lib.tensor(x)).detach().numpy()])
    for ours, theirs in zip(*outs):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-6)


def test_fusion_errors_match_torch(torch):
    for lib in (ember, torch):
        U = lib.nn.utils
        with pytest.raises(AssertionError, match="Fusion only for eval!"):
            U.fuse_conv_bn_eval(lib.nn.Conv2d(1, 2, 1), lib.nn.BatchNorm2d(2))
        with pytest.raises(AssertionError, match="To fuse, linear.out_features == "
                                                 "bn.num_features or bn.num_features == 1, got "
                                                 "linear.out_features=4 and bn.num_features=3"):
            U.fuse_linear_bn_eval(lib.nn.Linear(2, 4).eval(), lib.nn.BatchNorm1d(3).eval())
        with pytest.raises(AssertionError, match="bn.running_mean and bn.running_var must not "
                                                 "be None"):
            U.fuse_conv_bn_eval(lib.nn.Conv2d(1, 2, 1).eval(),
                                lib.nn.BatchNorm2d(2, track_running_stats=False).eval())


def test_fuse_weights_functions_match_torch(torch):
    rng = np.random.default_rng(2)
    arrays = [rng.standard_normal(s) for s in ((4, 3, 2), (4,), (4,), (4,))]
    arrays[2] = np.abs(arrays[2]) + 0.5
    outs = []
    for lib in (ember, torch):
        w, b, rm, rv = (lib.tensor(a) for a in arrays)
        fw, fb = lib.nn.utils.fuse_conv_bn_weights(w, None, rm, rv, 1e-5, None, None)
        lw, lb = lib.nn.utils.fuse_linear_bn_weights(w[:, :, 0], b, rm, rv, 1e-5, rm, rv)
        assert not fw.requires_grad and fb.requires_grad is False
        outs.append([t.detach().numpy() for t in (fw, fb, lw, lb)])
    for ours, theirs in zip(*outs):
        np.testing.assert_allclose(ours, theirs, rtol=1e-12)


def test_skip_init_draws_no_random_numbers(torch):
    for lib in (ember, torch):
        lib.manual_seed(0)
        expected = lib.rand(3)
        lib.manual_seed(0)
        m = lib.nn.utils.skip_init(lib.nn.Linear, 5, out_features=2, bias=True)
        assert type(m) is lib.nn.Linear and tuple(m.weight.shape) == (2, 5)
        assert isinstance(m.weight, lib.nn.Parameter) and m.weight.requires_grad
        assert str(m.weight.device) == "cpu"
        np.testing.assert_array_equal(lib.rand(3).numpy(), expected.numpy())
        m = lib.nn.utils.skip_init(lib.nn.Conv2d, 2, 3, 3, dtype=lib.float64)
        assert m.weight.dtype == lib.float64 and tuple(m.weight.shape) == (3, 2, 3, 3)
    # once built, the module's initialisers work again
    m = ember.nn.Linear(2, 2)
    assert m.weight.abs().sum().item() > 0


def test_skip_init_errors_match_torch(torch):
    for lib in (ember, torch):
        class NoDevice(lib.nn.Module):
            def __init__(self, n):
                super().__init__()
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip "
                                               "initialization"):
            lib.nn.utils.skip_init(NoDevice, 3)
        with pytest.raises(RuntimeError, match="Expected a Module; got <class 'int'>"):
            lib.nn.utils.skip_init(int, 3)


DEPRECATED = [("uniform", (), {}), ("normal", (), {}), ("constant", (0.5,), {}),
              ("eye", (), {}), ("xavier_uniform", (), dict(gain=2.0)), ("xavier_normal", (), {}),
              ("kaiming_uniform", (), dict(mode="fan_out")), ("kaiming_normal", (), {}),
              ("orthogonal", (), {}), ("sparse", (0.5,), {})]


@pytest.mark.parametrize("name,args,kwargs", DEPRECATED, ids=[d[0] for d in DEPRECATED])
def test_deprecated_init_names_warn_and_delegate(torch, name, args, kwargs):
    for lib in (ember, torch):
        t = lib.zeros(4, 6)
        with pytest.warns(FutureWarning, match=rf"`nn.init.{name}` is now deprecated in favor "
                                               rf"of `nn.init.{name}_`."):
            out = getattr(lib.nn.init, name)(t, *args, **kwargs)
        assert out is t
        assert getattr(lib.nn.init, name).__name__ == name
        if name == "constant":
            assert (t == 0.5).all()
        elif name == "eye":
            np.testing.assert_array_equal(t.numpy(), np.eye(4, 6))
        else:
            assert (t != 0).any()
    assert ember.nn.init.uniform.__doc__ == torch.nn.init.uniform.__doc__


def test_deprecated_dirac_warns_and_delegates(torch):
    for lib in (ember, torch):
        t = lib.zeros(2, 2, 3)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.nn.init.dirac(t)
        assert [w.category for w in caught] == [FutureWarning]
        assert t[0, 0, 1].item() == 1 and t.sum().item() == 2
