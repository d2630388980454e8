"""Max pooling whose windows tile the input (kernel == stride, no padding: `_tiled`): values,
gradients, ties, NaN and -inf windows, in-place changes after the pool, double backward,
forward AD and the intra-op threads, beside PyTorch."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.autograd import forward_ad
from ember.ops.pooling import _tiled

CASES = [  # (function, shape, kernel)
    ("max_pool2d", (2, 3, 8, 8), 2),
    ("max_pool2d", (2, 3, 9, 7), 2),        # the last row and column fall outside every window
    ("max_pool2d", (3, 10, 11), (3, 2)),     # no batch dim
    ("max_pool1d", (2, 4, 13), 3),
    ("max_pool3d", (1, 2, 5, 4, 6), 2),
]


def _ties(shape, seed=0):
    """Values after a ReLU: many windows of equal maxima (zeros)."""
    rng = np.random.default_rng(seed)
    return np.maximum(rng.integers(-3, 3, shape), 0).astype(np.float32)


def _both(torch, arr):
    return ember.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)


@pytest.mark.parametrize("name,shape,kernel", CASES)
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_values_and_gradients_follow_pytorch(torch, name, shape, kernel, dtype):
    arr = _ties(shape).astype(dtype)
    x, tx = _both(torch, arr)
    y, ty = getattr(F, name)(x, kernel), getattr(torch.nn.functional, name)(tx, kernel)
    assert type(y.grad_fn).__name__ == type(ty.grad_fn).__name__
    node = y.grad_fn.next_functions[0][0] if name == "max_pool1d" else y.grad_fn  # a squeeze
    assert isinstance(node, tuple(_tiled._TILED.values()))
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    g = np.random.default_rng(1).standard_normal(ty.shape).astype(dtype)
    y.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())  # one term per element


def test_nan_and_minus_inf_windows_follow_pytorch(torch):
    arr = _ties((1, 2, 4, 6)).astype(np.float64)
    arr[0, 0, 0, 0] = arr[0, 0, 1, 1] = np.nan        # two NaNs: the last one wins
    arr[0, 0, 2:4, 2:4] = -np.inf                      # all -inf: the first element
    arr[0, 1, 0, 3] = np.nan
    x, tx = _both(torch, arr)
    y, ty = F.max_pool2d(x, 2), torch.nn.functional.max_pool2d(tx, 2)
    np.testing.assert_array_equal(y.detach().numpy(), ty.detach().numpy())
    g = np.arange(1.0, 1.0 + ty.numel()).reshape(ty.shape)
    y.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    _, i = F.max_pool2d(x, 2, return_indices=True)
    np.testing.assert_array_equal(i.numpy(), torch.nn.functional.max_pool2d(
        tx, 2, return_indices=True)[1].numpy())


def test_a_result_changed_in_place_keeps_the_gradient(torch):
    arr = np.random.default_rng(2).standard_normal((2, 3, 6, 6)).astype(np.float32)
    grads = []
    for lib, x in zip((ember, torch), _both(torch, arr)):
        y = lib.nn.functional.max_pool2d(x, 2)
        y = lib.nn.functional.relu(y, inplace=True)
        (y * 3).sum().backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(*grads)


def test_an_input_changed_in_place_is_refused_as_in_pytorch(torch):
    arr = np.ones((1, 1, 4, 4), np.float32)
    messages = []
    for lib, x in zip((ember, torch), _both(torch, arr)):
        h = x * 1
        y = lib.nn.functional.max_pool2d(h, 2)
        h.add_(1)
        with pytest.raises(RuntimeError) as err:
            y.sum().backward()
        messages.append(str(err.value))
    assert "modified by an inplace operation" in messages[0]


def test_a_second_backward_is_refused_as_in_pytorch(torch):
    messages = []
    for lib, x in zip((ember, torch), _both(torch, _ties((1, 2, 4, 4)))):
        y = lib.nn.functional.max_pool2d(x, 2).sum()
        y.backward(retain_graph=True)
        y.backward()  # a retained graph: again
        with pytest.raises(RuntimeError) as err:
            y.backward()
        messages.append(str(err.value))
    assert messages[0] == messages[1]


def test_double_backward_follows_pytorch(torch):
    arr = _ties((2, 2, 6, 4))
    out = []
    for lib, x in zip((ember, torch), _both(torch, arr)):
        y = lib.nn.functional.max_pool2d(x, 2)
        w = lib.ones_like(y, requires_grad=True)
        (gx,) = lib.autograd.grad(y, x, w, create_graph=True)
        (gw,) = lib.autograd.grad((gx * lib.arange(gx.numel()).reshape(gx.shape)).sum(), w)
        out.append((gx.detach().numpy(), gw.numpy()))
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


def test_forward_ad_follows_pytorch(torch):
    arr, tangent = _ties((1, 2, 4, 4), 3).astype(np.float64), np.arange(32.0).reshape(1, 2, 4, 4)
    with forward_ad.dual_level():
        y = F.max_pool2d(forward_ad.make_dual(ember.tensor(arr), ember.tensor(tangent)), 2)
        mine = forward_ad.unpack_dual(y).tangent.numpy()
    fwad = torch.autograd.forward_ad
    with fwad.dual_level():
        ty = torch.nn.functional.max_pool2d(
            fwad.make_dual(torch.tensor(arr), torch.tensor(tangent)), 2)
        theirs = fwad.unpack_dual(ty).tangent.numpy()
    np.testing.assert_array_equal(mine, theirs)


def test_threads_give_the_bits_of_one_thread():
    arr = _ties((4, 64, 64, 64))  # 4 MB: over the threads' threshold
    results = []
    before = ember.get_num_threads()
    try:
        for threads in (1, 2):
            ember.set_num_threads(threads)
            x = ember.tensor(arr, requires_grad=True)
            y = F.max_pool2d(x, 2)
            y.backward(ember.arange(1, y.numel() + 1, dtype=ember.float32).reshape(y.shape))
            results.append((y.detach().numpy(), x.grad.numpy()))
    finally:
        ember.set_num_threads(before)
    for a, b in zip(*results):
        np.testing.assert_array_equal(a, b)
    assert (results[0][1] != 0).sum() == results[0][0].size  # one winner a window
