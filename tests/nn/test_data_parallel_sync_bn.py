"""nn.DataParallel on a machine without GPUs, nn.SyncBatchNorm outside a distributed run, and
nn.utils.convert_conv{2,3}d_weight_memory_format: parity with PyTorch."""
import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

if ember.cuda.is_available():
    pytest.skip("these tests describe a machine without GPUs", allow_module_level=True)


def _copy_params(src, dst):
    with torch.no_grad():
        for (k, v), (tk, tv) in zip(src.state_dict().items(), dst.state_dict().items()):
            assert k == tk
            tv.copy_(torch.tensor(v.numpy()))


@pytest.mark.parametrize("kw", [{}, {"device_ids": [0]}, {"device_ids": []},
                                {"output_device": 0}, {"device_ids": [0, 1], "output_device": 1},
                                {"dim": 1}])
def test_data_parallel_runs_the_module(kw):
    m = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.BatchNorm1d(3))
    tm = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3))
    _copy_params(m, tm)
    dp, tdp = ember.nn.DataParallel(m, **kw), torch.nn.DataParallel(tm, **kw)
    assert dp.module is m and dp.device_ids == tdp.device_ids == []
    assert list(dp.state_dict()) == list(tdp.state_dict())
    assert repr(dp) == repr(tdp)
    assert sorted(k for k in vars(dp) if not k.startswith("_")) == sorted(
        k for k in vars(tdp) if not k.startswith("_"))
    x = np.random.default_rng(0).standard_normal((4, 2)).astype(np.float32)
    out, tout = dp(ember.tensor(x)), tdp(torch.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m[1].running_mean.numpy(), tm[1].running_mean.numpy(), rtol=1e-5)
    out.sum().backward()
    assert m[0].weight.grad is not None
    # a checkpoint of the wrapper loads into another wrapper, and with the prefix stripped
    # into the bare module
    sd = dp.state_dict()
    ember.nn.DataParallel(ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.BatchNorm1d(3))
                          ).load_state_dict(sd)
    bare = ember.nn.Sequential(ember.nn.Linear(2, 3), ember.nn.BatchNorm1d(3))
    bare.load_state_dict({k[len("module."):]: v for k, v in sd.items()})
    assert ember.equal(bare[0].weight, m[0].weight)


def test_data_parallel_kwargs_and_no_inputs():
    class Two(ember.nn.Module):
        def forward(self, a=None, b=2):
            return (a, b)
    dp = ember.nn.DataParallel(Two())
    assert dp() == (None, 2) and dp(b=5) == (None, 5)
    assert ember.nn.parallel.DataParallel is ember.nn.DataParallel


def _sync_pair(**kw):
    s, ts = ember.nn.SyncBatchNorm(4, **kw), torch.nn.SyncBatchNorm(4, **kw)
    _copy_params(s, ts)
    return s, ts


@pytest.mark.parametrize("kw", [{}, {"affine": False}, {"bias": False}, {"momentum": None},
                                {"track_running_stats": False}, {"eps": 1e-3}])
@pytest.mark.parametrize("shape", [(3, 4), (3, 4, 5), (2, 4, 3, 3), (2, 4, 2, 2, 2)])
def test_sync_batchnorm_without_process_group(kw, shape):
    s, ts = _sync_pair(**kw)
    assert repr(s) == repr(ts)
    assert list(s.state_dict()) == list(ts.state_dict())
    rng = np.random.default_rng(1)
    for training in (True, True, False):
        s.train(training)
        ts.train(training)
        x = rng.standard_normal(shape)
        ex, tx = ember.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        out, tout = s(ex.float()), ts(tx.float())
        np.testing.assert_allclose(out.detach().numpy(), tout.detach().numpy(), rtol=1e-4,
                                   atol=1e-5)
        (out * out).sum().backward()
        (tout * tout).sum().backward()
        np.testing.assert_allclose(ex.grad.numpy(), tx.grad.numpy(), rtol=1e-3, atol=1e-4)
        for (k, v), tv in zip(s.state_dict().items(), ts.state_dict().values()):
            np.testing.assert_allclose(v.numpy(), tv.numpy(), rtol=1e-5, atol=1e-6, err_msg=k)


@pytest.mark.parametrize("shape", [(4,), (2, 0, 3)])
def test_sync_batchnorm_errors(shape):
    s = ember.nn.SyncBatchNorm(0 if 0 in shape else 4)
    ts = torch.nn.SyncBatchNorm(0 if 0 in shape else 4)
    with pytest.raises(ValueError) as want:
        ts(torch.zeros(shape))
    with pytest.raises(ValueError, match=str(want.value).replace("(", r"\(").replace(")", r"\)")):
        s(ember.zeros(shape))


def test_convert_sync_batchnorm():
    def build(nn):
        return nn.Sequential(nn.Conv2d(3, 4, 1), nn.BatchNorm2d(4),
                             nn.Sequential(nn.BatchNorm1d(4, affine=False)),
                             nn.BatchNorm3d(2, track_running_stats=False))
    seq, tseq = build(ember.nn), build(torch.nn)
    _copy_params(seq, tseq)
    for m in (seq, tseq):
        m[1].running_mean.fill_(3.0)
        m[1].num_batches_tracked.fill_(5)
        m[2].eval()
    weight, mean = seq[1].weight, seq[1].running_mean
    out = ember.nn.SyncBatchNorm.convert_sync_batchnorm(seq)
    tout = torch.nn.SyncBatchNorm.convert_sync_batchnorm(tseq)
    assert out is seq and repr(out) == repr(tout)
    assert out[1].weight is weight and out[1].running_mean is mean
    assert [m.training for m in out.modules()] == [m.training for m in tout.modules()]
    for (k, v), (tk, tv) in zip(out.state_dict().items(), tout.state_dict().items()):
        assert k == tk
        np.testing.assert_array_equal(v.numpy(), tv.numpy())
    bn = ember.nn.BatchNorm2d(3)
    converted = ember.nn.SyncBatchNorm.convert_sync_batchnorm(bn, process_group="g")
    assert type(converted) is ember.nn.SyncBatchNorm and converted.process_group == "g"
    s = ember.nn.SyncBatchNorm(3)
    assert ember.nn.SyncBatchNorm.convert_sync_batchnorm(s) is s


@pytest.mark.parametrize("which, fmt", [("2d", "channels_last"), ("2d", "contiguous_format"),
                                        ("3d", "channels_last_3d"), ("2d", "channels_last_3d")])
def test_convert_conv_weight_memory_format(which, fmt):
    def build(nn):
        return nn.Sequential(nn.Conv2d(3, 4, 3), nn.ConvTranspose2d(4, 4, 3),
                             nn.Sequential(nn.Conv2d(4, 4, 1)), nn.Conv3d(2, 3, 2),
                             nn.ConvTranspose3d(3, 2, 1), nn.Linear(2, 2))
    m, tm = build(ember.nn), build(torch.nn)
    _copy_params(m, tm)
    weights = [p for p in m.parameters()]
    fn = f"convert_conv{which}_weight_memory_format"
    try:
        tr = getattr(torch.nn.utils, fn)(tm, getattr(torch, fmt))
    except RuntimeError as err:
        with pytest.raises(RuntimeError, match=str(err)):
            getattr(ember.nn.utils, fn)(m, getattr(ember, fmt))
        return
    r = getattr(ember.nn.utils, fn)(m, getattr(ember, fmt))
    assert (r is m) and (tr is tm)
    assert [p.stride() for p in m.parameters()] == [p.stride() for p in tm.parameters()]
    assert all(a is b for a, b in zip(weights, m.parameters()))
    for p, tp in zip(m.parameters(), tm.parameters()):
        np.testing.assert_array_equal(p.detach().numpy(), tp.detach().numpy())


def test_sync_batchnorm_in_a_cpu_process_group():
    """In a process group, training-mode SyncBatchNorm wants a GPU input (PyTorch's check comes
    before it looks at the group's size); eval mode never syncs."""
    dist = ember.distributed
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        s = ember.nn.SyncBatchNorm(3)
        with pytest.raises(ValueError, match="^SyncBatchNorm expected input tensor to be on GPU "
                           "or XPU or privateuseone$"):
            s(ember.randn(2, 3, 4))
        s.eval()
        x = ember.randn(2, 3, 4)
        assert ember.equal(s(x), ember.nn.functional.batch_norm(
            x, s.running_mean, s.running_var, s.weight, s.bias, False, 0.1, 1e-5))
    finally:
        dist.destroy_process_group()
