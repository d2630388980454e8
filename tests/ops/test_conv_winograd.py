"""Winograd F(2x2, 3x3) convolutions (ember/ops/conv/_winograd.py): its forward and weight
gradient against the im2col routines and PyTorch, over odd sizes, paddings 0/1/2 and
asymmetric or cropping ones, kept-first outputs, batch chunks, non-contiguous inputs and
gradients, float32 and float64; the public functions forced through it (values, input,
weight and bias gradients, gradcheck and gradgradcheck); and the rule that takes it."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.ops.conv import _layout, _routines, _winograd

# ember's own routines, which these tests look inside (not oneDNN's)
pytestmark = pytest.mark.usefixtures("numpy_kernels")

# (N, C, O, H, W, lo, hi): odd and even sizes, every padding a 3x3 stride-1 convolution meets
# (a stride-1 transposed convolution's adjoint pads by 2 - padding, so lo may be negative)
SHAPES = [
    (2, 3, 4, 5, 7, (1, 1), (1, 1)),
    (2, 3, 4, 6, 6, (0, 0), (0, 0)),
    (3, 5, 2, 9, 8, (2, 2), (2, 2)),
    (1, 1, 1, 3, 3, (0, 0), (0, 0)),
    (2, 4, 3, 7, 10, (1, 0), (2, 1)),
    (2, 4, 3, 8, 9, (-1, 0), (1, -1)),
    (4, 16, 8, 12, 11, (1, 1), (1, 1)),
    # planes 4096 bytes apart in float32 (2048 in float64) with more channels than the L1
    # sets they share hold: the copies go through the staging buffer
    (2, 17, 18, 32, 32, (1, 1), (1, 1)),
]


def _im2col(fn, *args):
    """The same routine through im2col (Winograd switched off)."""
    old, _layout.LAYOUT = _layout.LAYOUT, "batched"
    try:
        return fn(*args)
    finally:
        _layout.LAYOUT = old


def _out_size(h, w, lo, hi):
    return (h + lo[0] + hi[0] - 2, w + lo[1] + hi[1] - 2)


@pytest.fixture(params=[None, 1], ids=["one_chunk", "sample_chunks"])
def chunks(request, monkeypatch):
    if request.param is not None:  # one sample per chunk: the loop over chunks runs
        monkeypatch.setattr(_winograd, "CHUNK_BYTES", request.param)
        monkeypatch.setattr(_winograd, "SUM_PER_CHUNK", 0)


@pytest.mark.parametrize("dtype,tol", [(np.float32, 2e-6), (np.float64, 1e-13)])
@pytest.mark.parametrize("shape", SHAPES)
def test_routines_match_im2col(shape, dtype, tol, chunks):
    n, c, o, h, w, lo, hi = shape
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    k = rng.standard_normal((o, c, 3, 3)).astype(dtype)
    p = ((1, 1), lo, hi, (1, 1), 1)
    osz = _out_size(h, w, lo, hi)
    want = _im2col(_routines.conv_forward, np, x, k, p)
    got = _winograd.winograd_forward(np, x, k, lo, osz)
    assert got.shape == want.shape and got.dtype == want.dtype and got.flags.c_contiguous
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * np.abs(want).max())
    gy = rng.standard_normal(want.shape).astype(dtype)
    want = _im2col(_routines.conv_weight_grad, np, x, gy, p, k.shape)
    got = _winograd.winograd_weight_grad(np, x, gy, lo)
    assert got.shape == want.shape and got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=0, atol=tol * np.abs(want).max())


@pytest.mark.parametrize("dtype,tol", [(np.float32, 2e-6), (np.float64, 1e-13)])
@pytest.mark.parametrize("shape", SHAPES)
def test_backward_routine_matches_im2col(shape, dtype, tol, chunks):
    """winograd_backward: the input gradient (the forward's adjoint) and the weight gradient
    from one transform of gy, against the im2col routines; with the forward's kept tiles too."""
    n, c, o, h, w, lo, hi = shape
    rng = np.random.default_rng(6)
    x = rng.standard_normal((n, c, h, w)).astype(dtype)
    k = rng.standard_normal((o, c, 3, 3)).astype(dtype)
    p = ((1, 1), lo, hi, (1, 1), 1)
    gy = rng.standard_normal((n, o) + _out_size(h, w, lo, hi)).astype(dtype)
    want_x = _im2col(_routines.conv_transpose_forward, np, gy, k, p, (h, w))
    want_w = _im2col(_routines.conv_weight_grad, np, x, gy, p, k.shape)
    kept = []
    _winograd.winograd_forward(np, x, k, lo, gy.shape[2:], kept)
    for tiles in (None, kept):
        got_x, got_w = _winograd.winograd_backward(np, x, gy, k, lo, True, tiles)
        for got, want in ((got_x, want_x), (got_w, want_w)):
            assert got.shape == want.shape and got.dtype == want.dtype
            assert got.flags.c_contiguous
            np.testing.assert_allclose(got, want, rtol=0, atol=tol * np.abs(want).max())


def test_backward_routine_of_strided_arrays():
    """winograd_backward of a non-contiguous input with a broadcast (stride-0) gradient, and
    of a cropped forward (its last input rows and columns unread: their gradient is 0)."""
    rng = np.random.default_rng(7)
    x = rng.standard_normal((3, 9, 11, 5)).transpose(0, 3, 1, 2)  # (3, 5, 9, 11), NHWC memory
    k = rng.standard_normal((4, 5, 3, 3))
    for lo, hi in (((1, 1), (1, 1)), ((0, 1), (-2, -1))):
        p = ((1, 1), lo, hi, (1, 1), 1)
        gy = np.broadcast_to(np.float64(0.5), (3, 4) + _out_size(9, 11, lo, hi))
        got_x, got_w = _winograd.winograd_backward(np, x, gy, k, lo)
        np.testing.assert_allclose(
            got_x, _im2col(_routines.conv_transpose_forward, np, gy, k, p, (9, 11)),
            rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(
            got_w, _im2col(_routines.conv_weight_grad, np, x, gy, p, k.shape),
            rtol=1e-12, atol=1e-12)


def test_kept_first_outputs_and_strided_arrays():
    """Only the first outputs (a transposed convolution's output_padding adjoint), from a
    non-contiguous input, and a weight gradient from a broadcast (stride-0) output gradient."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((3, 9, 11, 5)).transpose(0, 3, 1, 2)  # (3, 5, 9, 11), NHWC memory
    k = rng.standard_normal((4, 5, 3, 3))
    p = ((1, 1), (1, 1), (1, 1), (1, 1), 1)
    want = _im2col(_routines.conv_forward, np, x, k, p, (7, 10))
    np.testing.assert_allclose(_winograd.winograd_forward(np, x, k, (1, 1), (7, 10)),
                               want, rtol=1e-12, atol=1e-12)
    gy = np.broadcast_to(np.float64(0.5), (3, 4, 9, 11))
    want = _im2col(_routines.conv_weight_grad, np, x, gy, p, k.shape)
    np.testing.assert_allclose(_winograd.winograd_weight_grad(np, x, gy, (1, 1)),
                               want, rtol=1e-12, atol=1e-12)


@pytest.fixture
def forced(monkeypatch):
    monkeypatch.setattr(_layout, "LAYOUT", "winograd")


def _both(torch, fn, xa, wa, ba, kw, channels_last=False):
    outs = []
    for lib in (ember, torch):
        x = lib.tensor(xa)
        if channels_last:
            x = lib.tensor(np.ascontiguousarray(xa.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2)
        x.requires_grad_(True)
        w, b = lib.tensor(wa, requires_grad=True), lib.tensor(ba, requires_grad=True)
        y = getattr(lib.nn.functional, fn)(x, w, b, **kw)
        g = lib.tensor(np.sin(np.arange(y.numel())).reshape(tuple(y.shape)).astype(xa.dtype))
        y.backward(g)
        outs.append([y.detach().numpy()] + [t.grad.numpy() for t in (x, w, b)])
    return outs


@pytest.mark.parametrize("fn,x,w,kw", [
    ("conv2d", (2, 6, 9, 7), (5, 6, 3, 3), dict(padding=1)),
    ("conv2d", (3, 4, 8, 8), (6, 4, 3, 3), dict(padding=0)),
    ("conv2d", (1, 3, 6, 9), (2, 3, 3, 3), dict(padding=(2, 1))),
    ("conv2d", (2, 5, 7, 6), (3, 5, 3, 3), dict(padding="same")),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 3), dict(padding=1)),
    ("conv_transpose2d", (2, 4, 5, 6), (4, 3, 3, 3), dict(padding=2)),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_forced_winograd_matches_torch(torch, forced, fn, x, w, kw, dtype):
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


def test_automatic_winograd_is_as_accurate_as_torch_float32(torch):
    """Sizes the automatic rule sends to Winograd (a 64-channel convolution, a 16-channel
    weight gradient): in float32, ember's values and gradients are no further from the exact
    (float64) ones than PyTorch's float32 results are (long sums: both round differently)."""
    rng = np.random.default_rng(3)
    for c, size in ((64, 8), (16, 16)):
        xa = rng.standard_normal((4, c, size, size))
        wa = rng.standard_normal((c, c, 3, 3)) * 0.1
        ba = np.zeros(c)
        _, exact = _both(torch, "conv2d", xa, wa, ba, dict(padding=1))
        as32 = [a.astype(np.float32) for a in (xa, wa, ba)]
        mine, theirs = _both(torch, "conv2d", *as32, dict(padding=1))
        for got, want, ref in zip(mine, theirs, exact):
            assert got.dtype == want.dtype == np.float32
            assert np.abs(got - ref).max() <= 1.5 * np.abs(want - ref).max()


def test_gradcheck_and_gradgradcheck(forced):
    rng = np.random.default_rng(4)
    x = ember.tensor(rng.standard_normal((2, 2, 5, 4)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((3, 2, 3, 3)), requires_grad=True)
    b = ember.tensor(rng.standard_normal(3), requires_grad=True)

    def fn(x, w, b):
        return F.conv2d(x, w, b, padding=1)
    assert ember.autograd.gradcheck(fn, (x, w, b))
    assert ember.autograd.gradgradcheck(fn, (x, w, b))


def test_staging_rule_for_planes_sharing_cache_sets():
    collide = _winograd._planes_collide
    assert collide(np, 32 * 32 * 4, 16) and collide(np, 64 * 64 * 4, 9)
    assert not collide(np, 32 * 32 * 4, 8)  # the 8 ways of their one set hold them
    assert collide(np, 16 * 16 * 4, 33) and not collide(np, 16 * 16 * 4, 32)
    assert not collide(np, 28 * 28 * 4, 512) and not collide(np, 7 * 4, 512)  # spread out


def test_the_rule():
    a = np.zeros((2, 64, 8, 8), np.float32)
    p = ((1, 1), (1, 1), (1, 1), (1, 1), 1)
    ok = _layout.winograd_ok
    assert ok(np, a, 64, 64, (3, 3), p, (8, 8), "forward")
    assert not ok(np, a, 16, 64, (3, 3), p, (8, 8), "forward")  # thin products: im2col
    assert ok(np, a, 32, 32, (3, 3), p, (16, 16), "forward")
    assert not ok(np, a, 32, 32, (3, 3), p, (8, 8), "forward")
    assert ok(np, a, 16, 32, (3, 3), p, (32, 32), "weight")  # (16 -> 16 there: shifted rows)
    assert not ok(np, a, 16, 16, (3, 3), p, (7, 7), "weight")
    assert not ok(np, a, 16, 16, (3, 3), p, (8, 8), "weight")  # a batch of 2: 32 tiles
    big_batch = np.zeros((8, 64, 8, 8), np.float32)  # 128 tiles
    assert ok(np, big_batch, 16, 32, (3, 3), p, (8, 8), "weight")
    assert not ok(np, big_batch, 16, 16, (3, 3), p, (8, 8), "weight")  # shifted rows' (16 -> 16)
    assert ok(np, big_batch, 16, 32, (3, 3), p, (8, 8), "forward_kept")
    assert not ok(np, big_batch, 16, 32, (3, 3), p, (8, 8), "forward")
    assert not ok(np, big_batch, 8, 32, (3, 3), p, (8, 8), "weight")
    # a forward keeping its tiles for the weight gradient follows either rule
    assert ok(np, a, 16, 32, (3, 3), p, (16, 16), "forward_kept")
    assert not ok(np, a, 16, 32, (3, 3), p, (16, 16), "forward")
    assert not ok(np, a, 3, 16, (3, 3), p, (32, 32), "forward_kept")
    assert not ok(np, a, 512, 512, (3, 3), p, (7, 7), "forward")  # odd tiles, short products
    assert not ok(np, a, 64, 64, (3, 1), p, (8, 8), "forward")
    assert not ok(np, a, 64, 64, (3, 3), ((2, 2),) + p[1:], (8, 8), "forward")
    assert not ok(np, a, 64, 64, (3, 3), p[:3] + ((2, 2), 1), (8, 8), "forward")
    assert not ok(np, a, 64, 64, (3, 3), p[:4] + (2,), (8, 8), "forward")
    assert not ok(np, a.astype(np.float16), 64, 64, (3, 3), p, (8, 8), "forward")
    assert not ok(object(), a, 64, 64, (3, 3), p, (8, 8), "forward")  # not NumPy: not the CPU


def test_a_model_layer_takes_it(monkeypatch):
    """A 64-channel layer's forward and both gradients go through the Winograd routines."""
    calls = []
    for name in ("winograd_forward", "winograd_weight_grad", "winograd_backward"):
        real = getattr(_routines, name)
        monkeypatch.setattr(_routines, name,
                            lambda *a, real=real, name=name: calls.append(name) or real(*a))
    x = ember.randn(2, 64, 8, 8, requires_grad=True)
    conv = ember.nn.Conv2d(64, 64, 3, padding=1, bias=False)
    conv(x).sum().backward()
    assert calls == ["winograd_forward", "winograd_backward"]  # both gradients in one pass
    calls.clear()
    conv.requires_grad_(False)
    conv(x).sum().backward()
    assert calls == ["winograd_forward", "winograd_forward"]  # the input gradient alone


@pytest.mark.parametrize("weight_grad", [True, False])
def test_a_thin_layer_takes_it_when_its_weight_gradient_follows(monkeypatch, weight_grad):
    """16 -> 32 channels on 16x16: the forward takes Winograd (keeping its tiles) only when the
    weight gradient, which takes Winograd there, is to come."""
    calls = []
    for name in ("winograd_forward", "winograd_weight_grad", "winograd_backward"):
        real = getattr(_routines, name)
        monkeypatch.setattr(_routines, name,
                            lambda *a, real=real, name=name: calls.append(name) or real(*a))
    x = ember.randn(2, 16, 16, 16, requires_grad=True)
    conv = ember.nn.Conv2d(16, 32, 3, padding=1, bias=False).requires_grad_(weight_grad)
    conv(x).sum().backward()
    assert calls == (["winograd_forward", "winograd_backward"] if weight_grad else [])
    if weight_grad:  # the weight gradient alone
        calls.clear()
        conv(x.detach()).sum().backward()
        assert calls == ["winograd_forward", "winograd_weight_grad"]


def test_weight_gradient_reuses_the_forwards_transformed_input(monkeypatch):
    """The forward keeps its transformed input for the weight gradient (no second transform
    of x), once: a retained graph's second backward transforms again, to the same values."""
    monkeypatch.setattr(_winograd, "CHUNK_BYTES", 1)  # one sample per chunk: 3 chunks
    monkeypatch.setattr(_winograd, "SUM_PER_CHUNK", 0)
    transforms = []
    real = _winograd.input_transform
    monkeypatch.setattr(_winograd, "input_transform",
                        lambda *a, **k: transforms.append(k.get("keep", False)) or real(*a, **k))
    rng = np.random.default_rng(5)
    xa, wa = rng.standard_normal((3, 64, 9, 8)), rng.standard_normal((64, 64, 3, 3)) * 0.1
    x = ember.tensor(xa, requires_grad=True)
    w = ember.tensor(wa, requires_grad=True)
    y = F.conv2d(x, w, padding=1)
    assert transforms == [True] * 3  # kept, as the weight needs a gradient
    g = ember.tensor(rng.standard_normal(tuple(y.shape)))
    first = [t.numpy().copy() for t in ember.autograd.grad(y, (x, w), g, retain_graph=True)]
    assert transforms == [True] * 3  # none of x (kept), none of g (the adjoint's products)
    second = [t.numpy() for t in ember.autograd.grad(y, (x, w), g)]
    assert transforms == [True] * 3 + [False] * 3  # kept tiles were let go: x again
    want = _im2col(_routines.conv_weight_grad, np, xa, g.numpy(),
                   ((1, 1), (1, 1), (1, 1), (1, 1), 1), wa.shape)
    for got in (first[1], second[1]):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(first[0], second[0], rtol=0, atol=0)
    with ember.no_grad():  # nothing kept when no gradient will come
        transforms.clear()
        F.conv2d(x, w, padding=1)
    assert transforms == [False] * 3


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_kernel_transform_and_its_adjoint(dtype):
    """U = G g G^T per (O, C) kernel, written out; and the adjoint: <U(w), Q> = <w, U^T(Q)>."""
    rng = np.random.default_rng(5)
    w = rng.standard_normal((5, 3, 3, 3)).astype(dtype)
    g = _winograd._G
    u = _winograd.kernel_transform(w)
    assert u.shape == (4, 4, 5, 3) and u.dtype == dtype and u.flags.c_contiguous
    want = np.einsum("ik,ockl,jl->ijoc", g, w.astype(np.float64), g)
    np.testing.assert_allclose(u, want, rtol=1e-6, atol=1e-6)
    q = rng.standard_normal((4, 4, 5, 3)).astype(dtype)  # (O, C) per entry, as U
    back = _winograd.kernel_transform_adjoint(q)
    assert back.shape == w.shape and back.dtype == dtype and back.flags.c_contiguous
    np.testing.assert_allclose(np.sum(u * q), np.sum(w * back), rtol=1e-5)
    want = np.einsum("ik,ijoc,jl->ockl", g, q.astype(np.float64), g)
    np.testing.assert_allclose(back, want, rtol=1e-6, atol=1e-6)
