"""Pooling behaviour beyond the op table: PyTorch's tie and NaN rules for max pooling,
overlapping-window gradients on float32, unpooling round trips, integer average pooling,
and grad_fn names."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F


def _both(torch, arr, grad=True):
    return (ember.tensor(arr, requires_grad=grad), torch.tensor(arr, requires_grad=grad))


@pytest.mark.parametrize("kw", [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
                                dict(kernel_size=3, stride=1, dilation=2, ceil_mode=True)])
def test_max_pool_ties_follow_pytorch(torch, kw):
    rng = np.random.default_rng(0)
    arr = np.maximum(rng.integers(-2, 3, (2, 3, 9, 8)), 0).astype(np.float32)  # many ties
    x, tx = _both(torch, arr)
    (y, i), (ty, ti) = (F.max_pool2d(x, return_indices=True, **kw),
                        torch.nn.functional.max_pool2d(tx, return_indices=True, **kw))
    np.testing.assert_array_equal(i.numpy(), ti.numpy())
    g = rng.standard_normal(ty.shape).astype(np.float32)
    y.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-6, atol=1e-6)


def test_max_pool_nan_propagates_like_pytorch(torch):
    arr = np.arange(32, dtype=np.float64).reshape(1, 1, 4, 8)
    arr[0, 0, 1, 1] = np.nan
    arr[0, 0, 0, 5] = np.nan
    arr[0, 0, 1, 4] = np.nan
    (y, i), (ty, ti) = (F.max_pool2d(ember.tensor(arr), 2, return_indices=True),
                        torch.nn.functional.max_pool2d(torch.tensor(arr), 2, return_indices=True))
    np.testing.assert_array_equal(y.numpy(), ty.numpy())
    np.testing.assert_array_equal(i.numpy(), ti.numpy())


@pytest.mark.parametrize("name,args,kw", [
    ("max_pool2d", (3,), dict(stride=2)),
    ("max_pool3d", (3,), dict(stride=2, padding=1)),
    ("avg_pool2d", (3,), dict(stride=2, padding=1, count_include_pad=False)),
    ("adaptive_avg_pool2d", ((5, 3),), {}),
    ("adaptive_max_pool2d", ((5, 3),), {}),
    ("adaptive_avg_pool3d", ((2, 3, 5),), {}),
])
def test_float32_larger_inputs(torch, name, args, kw):
    rng = np.random.default_rng(1)
    shape = (4, 8, 9, 13, 11) if name.endswith("3d") else (4, 8, 19, 13)
    x, tx = _both(torch, rng.standard_normal(shape).astype(np.float32))
    y, ty = getattr(F, name)(x, *args, **kw), getattr(torch.nn.functional, name)(tx, *args, **kw)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-5, atol=1e-6)
    g = rng.standard_normal(ty.shape).astype(np.float32)
    y.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-5, atol=1e-5)


def test_unpool_round_trip():
    x = ember.tensor(np.arange(36, dtype=np.float64).reshape(1, 1, 6, 6))
    y, idx = F.max_pool2d(x, 2, return_indices=True)
    up = F.max_unpool2d(y, idx, 2)
    expected = np.zeros((6, 6))
    expected[1::2, 1::2] = np.arange(36).reshape(6, 6)[1::2, 1::2]
    np.testing.assert_array_equal(up.numpy()[0, 0], expected)
    assert idx.dtype == ember.int64


def test_integer_avg_pool_truncates_like_pytorch(torch):
    arr = np.array([[[[-3, 4, 1], [2, -7, 5], [0, 1, 1]]]], dtype=np.int64)
    y = F.avg_pool2d(ember.tensor(arr), 2, stride=1)
    ty = torch.nn.functional.avg_pool2d(torch.tensor(arr), 2, stride=1)
    assert y.dtype == ember.int64
    np.testing.assert_array_equal(y.numpy(), ty.numpy())


def test_global_pooling_and_names():
    x = ember.tensor(np.ones((2, 3, 4, 4)), requires_grad=True)
    assert type(F.adaptive_avg_pool2d(x, 1).grad_fn).__name__ == "MeanBackward1"
    assert type(F.adaptive_avg_pool2d(x, 2).grad_fn).__name__ == "AdaptiveAvgPool2DBackward0"
    assert type(F.max_pool2d(x, 2).grad_fn).__name__ == "MaxPool2DWithIndicesBackward0"
    assert type(F.avg_pool2d(x, 2).grad_fn).__name__ == "AvgPool2DBackward0"
    assert type(F.adaptive_max_pool2d(x, 2).grad_fn).__name__ == "AdaptiveMaxPool2DBackward0"
    x1 = ember.tensor(np.ones((2, 3, 4)), requires_grad=True)
    assert type(F.max_pool1d(x1, 2).grad_fn).__name__ == "SqueezeBackward1"
    out = ember.max_pool1d_with_indices(x1, 2)
    assert isinstance(out, tuple) and len(out) == 2


def test_no_graph_without_grad():
    x = ember.tensor(np.ones((1, 1, 4, 4)))
    y = F.max_pool2d(x, 2)
    assert y.grad_fn is None and not y.requires_grad


@pytest.mark.parametrize("nd, kw", [
    (2, dict(kernel_size=3, stride=2, padding=1)),
    (2, dict(kernel_size=3, stride=1, dilation=2, ceil_mode=True)),
    (2, dict(kernel_size=(3, 2), stride=(2, 1), padding=(1, 0))),
    (1, dict(kernel_size=4, stride=3, padding=2, ceil_mode=True)),
    (3, dict(kernel_size=2, stride=1))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_overlapping_max_pool_backward_on_a_device_matches_the_cpu(fake_cuda, nd, kw, dtype):
    """On a device, overlapping windows' gradients are summed by disjoint-window sets
    (pooling/_common.py's _scatter_by_window_groups): the CPU's sums, ties (one element
    winning several windows) included, on a non-contiguous upstream gradient. float32 and
    float16 sums are exact in float64; float64 ones may differ in the order of addition."""
    arr = np.maximum(np.random.default_rng(1).integers(-2, 3, (2, 3) + (7, 6, 5)[:nd]), 0)
    arr = arr.astype(dtype)
    pool = getattr(F, f"max_pool{nd}d")
    grads = []
    for device in ("cpu", "cuda"):
        x = ember.tensor(arr, device=device, requires_grad=True)
        y = pool(x, **kw)
        g = np.random.default_rng(2).standard_normal(y.shape[::-1]).astype(dtype)
        y.backward(ember.tensor(g, device=device).permute(*range(y.dim() - 1, -1, -1)))
        grads.append(x.grad.cpu().numpy())
    if dtype == np.float64:
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-15, atol=1e-15)
    else:
        np.testing.assert_array_equal(grads[1], grads[0])
