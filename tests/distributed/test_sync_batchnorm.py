"""SyncBatchNorm across two processes (on 'cuda', the strict CuPy stand-in: PyTorch's
SyncBatchNorm refuses CPU tensors in a distributed run, and so does ember's): outputs, input
gradients and running statistics equal one BatchNorm over the whole batch, and the weight
gradients of the ranks add up to its."""
import numpy as np
import pytest

import ember
import ember.distributed as dist

from .test_distributed import _launch


def _batch(dims):
    gen = np.random.default_rng(7)
    x = gen.standard_normal((6, 3) + dims) * 2 + 1
    w = gen.standard_normal((6, 3) + dims)
    return x, w


def _layers(cls):
    ember.manual_seed(0)
    bn = cls(3, momentum=0.3)
    with ember.no_grad():
        bn.weight.copy_(ember.tensor([1.5, -0.5, 2.0]))
        bn.bias.copy_(ember.tensor([0.1, 0.2, -0.3]))
    return bn


def _sync(rank, world, dims=(4,)):
    from tests._strict_cupy import strict_cupy
    with strict_cupy():
        x, w = _batch(dims)
        rows = slice(rank * 3, rank * 3 + 3) if rank == 0 else slice(3, 6)
        if dims == ():  # uneven batches: 2 rows and 4
            rows = slice(0, 2) if rank == 0 else slice(2, 6)
        bn = _layers(ember.nn.SyncBatchNorm).to("cuda", dtype=ember.float64)
        xs = ember.tensor(x[rows], device="cuda", requires_grad=True)
        y = bn(xs)
        y.backward(ember.tensor(w[rows], device="cuda"))
        y2 = bn(xs.detach() * 0.5)  # a second step: the running statistics move again
        return {"y": y.detach().cpu().numpy(), "y2": y2.detach().cpu().numpy(),
                "dx": xs.grad.cpu().numpy(), "dw": bn.weight.grad.cpu().numpy(),
                "db": bn.bias.grad.cpu().numpy(), "rows": (rows.start, rows.stop),
                "mean": bn.running_mean.cpu().numpy(), "var": bn.running_var.cpu().numpy()}


def _sync_uneven(rank, world):
    return _sync(rank, world, dims=())


@pytest.mark.parametrize("target", [_sync, _sync_uneven])
def test_sync_batchnorm_equals_one_batchnorm_over_the_whole_batch(target):
    results = _launch(target, world=2)
    dims = (4,) if target is _sync else ()
    x, w = _batch(dims)
    bn = _layers(ember.nn.BatchNorm1d).double()
    xs = ember.tensor(x, requires_grad=True)
    y = bn(xs)
    y.backward(ember.tensor(w))
    y2 = bn(xs.detach() * 0.5)
    for rank in (0, 1):
        r = results[rank]
        rows = slice(*r["rows"])
        np.testing.assert_allclose(r["y"], y.detach().numpy()[rows], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(r["y2"], y2.detach().numpy()[rows], rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(r["dx"], xs.grad.numpy()[rows], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(r["mean"], bn.running_mean.numpy(), rtol=1e-12)
        np.testing.assert_allclose(r["var"], bn.running_var.numpy(), rtol=1e-12)
    np.testing.assert_allclose(results[0]["dw"] + results[1]["dw"], bn.weight.grad.numpy(),
                               rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(results[0]["db"] + results[1]["db"], bn.bias.grad.numpy(),
                               rtol=1e-10, atol=1e-12)


def test_cpu_input_is_refused_in_a_distributed_run():
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        with pytest.raises(ValueError, match="SyncBatchNorm expected input tensor to be on GPU"):
            ember.nn.SyncBatchNorm(3)(ember.ones(4, 3))
    finally:
        dist.destroy_process_group()
