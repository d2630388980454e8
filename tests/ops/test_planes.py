"""Per-channel operands spread over a plane (`ember.ops._planes`): batch norm (training and
eval, forward and backward) and a convolution's bias give the same bits through the plane as
through the broadcast operand, and the plane is taken where it is meant to be."""
import numpy as np
import pytest

import ember
from ember.ops import _planes


def _batch_norm_step(x, g, train):
    ember.manual_seed(0)
    bn = ember.nn.BatchNorm2d(x.shape[1], dtype=ember.tensor(x[:0]).dtype)
    with ember.no_grad():
        bn.weight.uniform_(0.5, 1.5)
        bn.bias.uniform_(-1, 1)
        bn.running_var.uniform_(0.5, 2)
    bn.train(train)
    xt = ember.tensor(x, requires_grad=True)
    y = bn(xt)
    y.backward(ember.tensor(g))
    return [y.detach().numpy(), xt.grad.numpy(), bn.weight.grad.numpy(), bn.bias.grad.numpy(),
            bn.running_mean.numpy(), bn.running_var.numpy()]


def _conv_step(x, g):
    ember.manual_seed(0)
    conv = ember.nn.Conv2d(x.shape[1], 8, 3, padding=1)
    xt = ember.tensor(x, requires_grad=True)
    y = conv(xt)
    y.backward(ember.tensor(g))
    return [y.detach().numpy(), xt.grad.numpy(), conv.weight.grad.numpy(), conv.bias.grad.numpy()]


def _without_planes(monkeypatch, fn, *args):
    with monkeypatch.context() as m:
        m.setattr(_planes, "MIN_BATCH", 1 << 30)
        return fn(*args)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("train", [True, False])
def test_batch_norm_same_bits(monkeypatch, dtype, train):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((32, 16, 9, 8)) * 3 + 1).astype(dtype)
    g = rng.standard_normal(x.shape).astype(dtype)
    for got, want in zip(_batch_norm_step(x, g, train),
                         _without_planes(monkeypatch, _batch_norm_step, x, g, train)):
        np.testing.assert_array_equal(got, want)


def test_conv_bias_same_bits(monkeypatch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((32, 3, 12, 12)).astype(np.float32)
    g = rng.standard_normal((32, 8, 12, 12)).astype(np.float32)
    for got, want in zip(_conv_step(x, g), _without_planes(monkeypatch, _conv_step, x, g)):
        np.testing.assert_array_equal(got, want)


def test_spread_where_it_pays():
    v = np.arange(4, dtype=np.float32).reshape(1, 4, 1, 1)
    big = np.zeros((_planes.MIN_BATCH, 4, 32, 32), np.float32)
    plane = _planes.spread(np, v, big)
    assert plane.shape == (1, 4, 32, 32) and plane.flags.c_contiguous
    np.testing.assert_array_equal(plane, np.broadcast_to(v, plane.shape))
    assert _planes.spread(np, v, big[:, :, :2, :2]) is v                # too few numbers
    assert _planes.spread(np, v, big[:_planes.MIN_BATCH - 1]) is v       # too few samples
    assert _planes.spread(np, v, big.transpose(0, 1, 3, 2)) is v         # not C-contiguous
    flat = np.zeros((_planes.MIN_ELEMENTS, 4, 1, 1), np.float32)
    assert _planes.spread(np, v, flat) is v                              # v is a plane already
