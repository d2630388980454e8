"""Shifted-row convolutions (ember/ops/conv/_shifted.py): the forward and weight gradient
against the im2col routines over odd sizes, kernel sizes 1-5, paddings including cropping
ones, batch chunks, non-contiguous and broadcast arrays, float32 and float64; the public
functions forced through it beside PyTorch (values, input, weight and bias gradients,
gradcheck and gradgradcheck); the kept copies; and the rule that takes it."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.ops.conv import _layout, _routines, _shifted
from tests.ops.test_conv_winograd import _both, _im2col

# ember's own routines, which these tests look inside (not oneDNN's)
pytestmark = pytest.mark.usefixtures("numpy_kernels")

# (N, C, O, H, W, kernel, lo, hi)
SHAPES = [
    (2, 3, 4, 5, 7, (3, 3), (1, 1), (1, 1)),
    (3, 5, 2, 9, 8, (3, 3), (2, 2), (2, 2)),
    (2, 4, 3, 8, 9, (3, 3), (-1, 0), (1, -1)),  # cropping (a transposed convolution's adjoint)
    (1, 1, 1, 3, 3, (3, 3), (0, 0), (0, 0)),
    (2, 3, 6, 11, 10, (5, 5), (2, 2), (2, 2)),
    (2, 3, 6, 11, 10, (5, 3), (0, 1), (1, 0)),
    (3, 2, 2, 6, 6, (1, 1), (0, 0), (0, 0)),
    (2, 2, 3, 4, 4, (2, 2), (0, 1), (1, 0)),
    (4, 16, 16, 32, 32, (3, 3), (1, 1), (1, 1)),
    # rows share their padding: more padding than k - 1 (only k - 1 shared), and uneven
    (2, 3, 4, 6, 5, (3, 3), (3, 3), (3, 3)),
    (2, 3, 4, 7, 6, (3, 3), (2, 1), (1, 3)),
    (2, 2, 3, 5, 6, (4, 2), (3, 0), (2, 1)),
]


@pytest.fixture(params=[None, 1], ids=["one_chunk", "sample_chunks"])
def chunks(request, monkeypatch):
    if request.param is not None:  # one sample per chunk: the loop over chunks runs
        monkeypatch.setattr(_shifted, "CHUNK_BYTES", request.param)


@pytest.mark.parametrize("dtype,tol", [(np.float32, 2e-6), (np.float64, 1e-13)])
@pytest.mark.parametrize("shape", SHAPES)
def test_routines_match_im2col(shape, dtype, tol, chunks):
    n, c, o, h, w, kernel, lo, hi = shape
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    k = rng.standard_normal((o, c) + kernel).astype(dtype)
    p = ((1, 1), lo, hi, (1, 1), 1)
    want = _im2col(_routines.conv_forward, np, x, k, p)
    osz = want.shape[2:]
    kept = []
    got = _shifted.shifted_forward(np, x, k, lo, osz, kept)
    assert got.shape == want.shape and got.dtype == want.dtype and got.flags.c_contiguous
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * np.abs(want).max())
    gy = rng.standard_normal(want.shape).astype(dtype)
    want = _im2col(_routines.conv_weight_grad, np, x, gy, p, k.shape)
    for copies in (None, kept):
        got = _shifted.shifted_weight_grad(np, x, gy, k.shape, lo, copies)
        assert got.shape == want.shape and got.dtype == want.dtype and got.flags.c_contiguous
        np.testing.assert_allclose(got, want, rtol=0, atol=tol * np.abs(want).max())


def test_strided_and_broadcast_arrays():
    """A non-contiguous input, only the first outputs, and a broadcast (stride-0) gradient."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 9, 11, 5)).transpose(0, 3, 1, 2)  # (3, 5, 9, 11), NHWC memory
    k = rng.standard_normal((4, 5, 3, 3))
    p = ((1, 1), (1, 1), (1, 1), (1, 1), 1)
    want = _im2col(_routines.conv_forward, np, x, k, p, (7, 10))
    np.testing.assert_allclose(_shifted.shifted_forward(np, x, k, (1, 1), (7, 10)), want,
                               rtol=1e-12, atol=1e-12)
    gy = np.broadcast_to(np.float64(0.5), (3, 4, 9, 11))
    want = _im2col(_routines.conv_weight_grad, np, x, gy, p, k.shape)
    np.testing.assert_allclose(_shifted.shifted_weight_grad(np, x, gy, k.shape, (1, 1)), want,
                               rtol=1e-12, atol=1e-12)


def test_empty_batch():
    x, k = np.zeros((0, 3, 6, 6)), np.ones((4, 3, 3, 3))
    assert _shifted.shifted_forward(np, x, k, (1, 1), (6, 6)).shape == (0, 4, 6, 6)
    gw = _shifted.shifted_weight_grad(np, x, np.zeros((0, 4, 6, 6)), k.shape, (1, 1))
    assert gw.shape == k.shape and not gw.any()


@pytest.fixture
def forced(monkeypatch):
    monkeypatch.setattr(_layout, "LAYOUT", "shifted")


@pytest.mark.parametrize("fn,x,w,kw", [
    ("conv2d", (2, 6, 9, 7), (5, 6, 3, 3), dict(padding=1)),
    ("conv2d", (3, 4, 8, 8), (6, 4, 5, 3), dict(padding=0)),
    ("conv2d", (1, 3, 6, 9), (2, 3, 3, 3), dict(padding=(2, 1))),
    ("conv2d", (2, 5, 7, 6), (3, 5, 4, 4), dict(padding="same")),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 3), dict(padding=1)),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 3), dict(padding=2)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forced_shifted_matches_torch(torch, forced, fn, x, w, kw, dtype):
    rng = np.random.default_rng(2)
    xa = rng.standard_normal(x).astype(dtype)
    wa = (rng.standard_normal(w) * 0.3).astype(dtype)
    ba = rng.standard_normal(w[1] if "transpose" in fn else w[0]).astype(dtype)
    tol = dict(rtol=1e-5, atol=1e-5) if dtype == np.float32 else dict(rtol=1e-11, atol=1e-11)
    for channels_last in (False, True):
        mine, theirs = _both(torch, fn, xa, wa, ba, kw, channels_last)
        for got, want in zip(mine, theirs):
            assert got.shape == want.shape and got.dtype == want.dtype
            np.testing.assert_allclose(got, want, **tol)


def test_gradcheck_and_gradgradcheck(forced):
    rng = np.random.default_rng(4)
    x = ember.tensor(rng.standard_normal((2, 2, 5, 4)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((3, 2, 3, 2)), requires_grad=True)
    b = ember.tensor(rng.standard_normal(3), requires_grad=True)

    def fn(x, w, b):
        return F.conv2d(x, w, b, padding=1)
    assert ember.autograd.gradcheck(fn, (x, w, b))
    assert ember.autograd.gradgradcheck(fn, (x, w, b))


def test_the_rule():
    a = np.zeros((32, 16, 32, 32), np.float32)
    p = ((1, 1), (1, 1), (1, 1), (1, 1), 1)
    ok = _layout.shifted_ok
    assert ok(np, a, 16, 16, (3, 3), p, (32, 32))
    assert not ok(np, a, 16, 32, (3, 3), p, (32, 32))  # wider products: Winograd's
    assert ok(np, a, 8, 16, (3, 3), p, (8, 8))
    assert not ok(np, a, 16, 16, (3, 3), p, (7, 7))
    assert not ok(np, a, 3, 16, (3, 3), p, (32, 32))  # K = 9: thin products, im2col's
    assert not ok(np, a, 16, 16, (1, 1), p, (32, 32))
    assert not ok(np, a, 16, 16, (3, 3), ((2, 2),) + p[1:], (32, 32))
    assert not ok(np, a, 16, 16, (3, 3), p[:3] + ((2, 2), 1), (32, 32))
    assert not ok(np, a, 16, 16, (3, 3), p[:4] + (2,), (32, 32))
    assert not ok(np, a.astype(np.float16), 16, 16, (3, 3), p, (32, 32))
    assert not ok(object(), a, 16, 16, (3, 3), p, (32, 32))  # not NumPy: not the CPU
    # and where it holds, Winograd does not
    assert not _layout.winograd_ok(np, a, 16, 16, (3, 3), p, (32, 32), "forward_kept")


def test_a_model_layer_takes_it_and_keeps_its_copies(monkeypatch):
    """CIFAR ResNet's first-stage layer: forward and input gradient by shifted rows, the
    weight gradient from the forward's kept copies (no copies of x made again), once."""
    calls = []
    for name in ("shifted_forward", "shifted_weight_grad"):
        real = getattr(_routines, name)
        monkeypatch.setattr(_routines, name,
                            lambda *a, real=real, name=name: calls.append(name) or real(*a))
    copies = []  # the arrays copied, one entry a chunk
    real_copies = _shifted._shifted_copies
    monkeypatch.setattr(_shifted, "_shifted_copies",
                        lambda *a: copies.append(a[1]) or real_copies(*a))
    rng = np.random.default_rng(5)
    xa, wa = rng.standard_normal((4, 16, 32, 32)), rng.standard_normal((16, 16, 3, 3)) * 0.1
    x = ember.tensor(xa, requires_grad=True)
    w = ember.tensor(wa, requires_grad=True)
    y = F.conv2d(x, w, padding=1)
    made = len(copies)
    g = ember.tensor(rng.standard_normal(tuple(y.shape)))
    first = [t.numpy().copy() for t in ember.autograd.grad(y, (x, w), g, retain_graph=True)]
    assert calls == ["shifted_forward", "shifted_forward", "shifted_weight_grad"]
    assert made and len(copies) == 2 * made  # g's, for the input gradient; none of x again
    second = [t.numpy() for t in ember.autograd.grad(y, (x, w), g)]
    assert len(copies) == 4 * made  # the kept copies were let go: x's made again
    want = _im2col(_routines.conv_weight_grad, np, xa, g.numpy(),
                   ((1, 1), (1, 1), (1, 1), (1, 1), 1), wa.shape)
    for got in (first[1], second[1]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(first[0], second[0], rtol=0, atol=0)
