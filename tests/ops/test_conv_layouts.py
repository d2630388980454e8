"""The convolution layout dispatcher: every branch (channels-last one-product im2col, the
per-sample batched im2col, and the automatic choice between them) forced in turn, against
PyTorch for values and input, weight and bias gradients, over the shapes each branch meets:
strides, paddings, dilations, groups (which fall back to the batched layout), 1x1 and 7x7
kernels, odd sizes, batch 1 and 0, channels-last (non-contiguous) inputs, float64, 1-d and 3-d,
transposed convolutions, and the CuPy path."""
import numpy as np
import pytest

import ember
import ember.nn.functional as F

from ember.ops.conv import _layout

# ember's own routines, which these tests look inside (not oneDNN's)
pytestmark = pytest.mark.usefixtures("numpy_kernels")

LAYOUTS = ["auto", "im2col", "channels_last", "batched", "winograd"]

CASES = [  # (input shape, weight shape, conv kwargs)
    ((2, 5, 9, 7), (4, 5, 3, 3), dict(padding=1)),
    ((3, 6, 11, 10), (8, 6, 3, 3), dict(stride=2, padding=1)),
    ((2, 4, 9, 9), (6, 4, 1, 1), dict(stride=2)),
    ((1, 3, 23, 21), (8, 3, 7, 7), dict(stride=2, padding=3)),
    ((2, 4, 10, 9), (5, 4, 3, 2), dict(stride=(1, 2), padding=(2, 0), dilation=(2, 1))),
    ((2, 6, 8, 8), (6, 3, 3, 3), dict(padding=1, groups=2)),
    ((2, 33, 6, 5), (34, 33, 3, 3), dict(padding=1)),  # over the automatic threshold
    ((1, 32, 5, 5), (3, 32, 3, 3), dict(stride=2, padding=1)),
]


@pytest.fixture(params=LAYOUTS)
def layout(request, monkeypatch):
    monkeypatch.setattr(_layout, "LAYOUT", request.param)
    return request.param


def _check(torch, fn, x, w, kw, dtype, channels_last=False, rtol=1e-4, atol=1e-4):
    rng = np.random.default_rng(0)
    xa = rng.standard_normal(x).astype(dtype)
    wa = (rng.standard_normal(w) * 0.3).astype(dtype)
    ba = rng.standard_normal(w[1] if "transpose" in fn else w[0]).astype(dtype)
    outs = []
    for lib in (ember, torch):
        xt = lib.tensor(xa)
        if channels_last:  # a non-contiguous (N, C, H, W) view of an NHWC array
            xt = lib.tensor(np.ascontiguousarray(xa.transpose(0, 2, 3, 1))).permute(0, 3, 1, 2)
        xt.requires_grad_(True)
        wt, bt = lib.tensor(wa, requires_grad=True), lib.tensor(ba, requires_grad=True)
        y = getattr(lib.nn.functional, fn)(xt, wt, bt, **kw)
        g = lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)).astype(dtype))
        y.backward(g)
        outs.append([y.detach().numpy()] + [t.grad.numpy() for t in (xt, wt, bt)])
    for got, want in zip(*outs):
        assert got.shape == want.shape and got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)


@pytest.mark.parametrize("x,w,kw", CASES)
def test_conv2d_every_layout_float32(torch, layout, x, w, kw):
    _check(torch, "conv2d", x, w, kw, np.float32, atol=1e-3)


@pytest.mark.parametrize("x,w,kw", CASES[:4])
def test_conv2d_every_layout_float64(torch, layout, x, w, kw):
    _check(torch, "conv2d", x, w, kw, np.float64, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("x,w,kw", [CASES[0], CASES[1], CASES[6]])
def test_channels_last_input(torch, layout, x, w, kw):
    _check(torch, "conv2d", x, w, kw, np.float64, channels_last=True, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("fn,x,w", [
    ("conv2d", (2, 6, 5, 4), (3, 6, 1, 1)),
    ("conv3d", (2, 4, 3, 2, 5), (5, 4, 1, 1, 1)),
    ("conv_transpose2d", (2, 6, 5, 4), (6, 3, 1, 1)),
])
def test_pointwise_convolution_of_channels_last_memory(torch, fn, x, w):
    """A 1x1 convolution of channels_last activations and gradients is one product over their
    memory: values, gradients, the result's strides and a second derivative as PyTorch's."""
    rng = np.random.default_rng(0)
    xa, wa = rng.standard_normal(x), rng.standard_normal(w)
    ba = rng.standard_normal(w[1] if "transpose" in fn else w[0])
    outs = []
    for lib in (ember, torch):
        fmt = lib.channels_last if len(x) == 4 else lib.channels_last_3d
        xt = lib.tensor(xa).to(memory_format=fmt).requires_grad_()
        wt, bt = lib.tensor(wa, requires_grad=True), lib.tensor(ba, requires_grad=True)
        y = getattr(lib.nn.functional, fn)(xt, wt, bt)
        g = lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape))).to(memory_format=fmt)
        gx, gw, gb = lib.autograd.grad(y, (xt, wt, bt), g, create_graph=True)
        (gx.square().sum() + gw.square().sum()).backward()
        outs.append([y.stride()] + [t.detach().numpy() for t in (y, gx, gw, gb, xt.grad, wt.grad)])
    assert outs[0][0] == outs[1][0]
    for got, want in zip(outs[0][1:], outs[1][1:]):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("x,w,kw", [
    ((2, 4, 5, 6), (4, 3, 3, 3), dict(stride=2, padding=1, output_padding=1)),
    ((1, 6, 4, 4), (6, 2, 2, 3), dict(stride=(2, 3), padding=(0, 1), dilation=(1, 2))),
    ((2, 4, 5, 5), (4, 3, 3, 3), dict(padding=1)),
])
def test_conv_transpose2d_every_layout(torch, layout, x, w, kw):
    _check(torch, "conv_transpose2d", x, w, kw, np.float64, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("fn,x,w,kw", [
    ("conv1d", (3, 4, 17), (5, 4, 3), dict(stride=2, padding=1, dilation=2)),
    ("conv3d", (2, 3, 5, 6, 4), (4, 3, 3, 2, 3), dict(stride=(1, 2, 1), padding=1)),
])
def test_other_dimensionalities(torch, layout, fn, x, w, kw):
    _check(torch, fn, x, w, kw, np.float64, rtol=1e-10, atol=1e-10)


def test_empty_batch(torch, layout):
    x = ember.zeros(0, 32, 5, 5, requires_grad=True)
    w = ember.ones(8, 32, 3, 3, requires_grad=True)
    y = F.conv2d(x, w, padding=1)
    assert y.shape == (0, 8, 5, 5)
    y.sum().backward()
    assert x.grad.shape == x.shape and not w.grad.numpy().any()


def test_the_automatic_choice():
    a = np.zeros((2, 64, 8, 8), np.float32)
    assert _layout.channels_last_ok(a, 1, 64, (3, 3))
    assert not _layout.channels_last_ok(a, 1, 16, (3, 3))  # short rows to copy
    assert not _layout.channels_last_ok(a, 1, 64, (1, 1))  # no window copy to save
    assert not _layout.channels_last_ok(a, 2, 64, (3, 3))  # groups: batched layout
    assert not _layout.channels_last_ok(a.astype(np.float16), 1, 64, (3, 3))
    assert _layout.channels_last_ok(a, 1, 16, (3, 3), 64)  # small images: tiny per-sample products
    assert not _layout.channels_last_ok(a, 1, 16, (3, 3), 196)
    assert not _layout.channels_last_ok(a, 1, 3, (3, 3), 64)


@pytest.mark.parametrize("forced", ["channels_last", "batched", "winograd"])
def test_cuda_path_every_layout(fake_cuda, monkeypatch, forced):
    monkeypatch.setattr(_layout, "LAYOUT", forced)
    rng = np.random.default_rng(1)
    xa, wa = rng.standard_normal((2, 4, 7, 6)), rng.standard_normal((5, 4, 3, 3))
    results = []
    for dev in ("cpu", fake_cuda):
        x = ember.tensor(xa, device=dev, requires_grad=True)
        w = ember.tensor(wa, device=dev, requires_grad=True)
        y = F.conv2d(x, w, stride=2, padding=1)
        (y * y).sum().backward()
        results.append([t.cpu().numpy() for t in (y.detach(), x.grad, w.grad)])
    for got, want in zip(*results):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("forced", ["channels_last", "batched"])
@pytest.mark.parametrize("budget", [None, 0])
def test_forward_keeps_its_columns_for_the_weight_gradient(torch, monkeypatch, forced, budget):
    """A forward whose weight needs a gradient keeps its im2col columns (within
    KEEP_COL_BYTES), and the weight gradient reads them instead of copying x again; over
    the budget it copies again. Gradients as PyTorch's either way (stride 2, groups,
    channels-last input, float64), and nothing is kept without a weight gradient."""
    from ember.ops.conv import _routines
    monkeypatch.setattr(_layout, "LAYOUT", forced)
    if budget is not None:
        monkeypatch.setattr(_routines, "KEEP_COL_BYTES", budget)
    copies = []
    for name in ("im2col", "im2col_channels_last"):
        real = getattr(_routines, name)
        monkeypatch.setattr(_routines, name, lambda *a, _real=real, **k:
                            copies.append(name) or _real(*a, **k))
    for x, w, kw in (CASES[1], CASES[7],
                     ((2, 6, 9, 9), (6, 3, 3, 3), dict(stride=2, padding=1, groups=2))):
        copies.clear()
        _check(torch, "conv2d", x, w, kw, np.float64, channels_last=True, rtol=1e-10,
               atol=1e-10)
        # the forward's copy, and the weight gradient's when none was kept (the input
        # gradient of a stride-2 convolution takes none)
        assert len(copies) == (1 if budget is None else 2), (x, copies)
    copies.clear()
    xt = ember.randn(2, 6, 7, 7)
    wt = ember.randn(4, 6, 3, 3)  # no gradient: nothing kept
    F.conv2d(xt, wt, stride=2).sum()
    assert len(copies) == 1


@pytest.mark.parametrize("y_shape,w_shape,lo,size", [
    ((2, 4, 5, 6), (4, 3, 3, 3), (1, 1), (9, 11)),   # odd sizes
    ((2, 4, 5, 6), (4, 3, 3, 3), (1, 1), (10, 12)),  # output_padding: a last row no window reads
    ((3, 5, 4, 4), (5, 6, 3, 2), (0, 1), (9, 7)),    # rectangular kernel, padding 0 on one side
    ((1, 3, 3, 5), (3, 2, 5, 5), (2, 3), (5, 10)),   # 5x5, more padding than the split's border
    ((0, 4, 3, 3), (4, 2, 3, 3), (1, 1), (6, 6)),    # empty batch
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_parity_split_input_gradient(y_shape, w_shape, lo, size, dtype):
    """The stride-2 input gradient summed in the parity-split layout equals the column
    scatter's (non-contiguous y too)."""
    from ember.ops.conv import _routines
    rng = np.random.default_rng(3)
    y = rng.standard_normal(y_shape[:2] + y_shape[2:][::-1]).astype(dtype).swapaxes(2, 3)
    w = rng.standard_normal(w_shape).astype(dtype)
    kernel = w_shape[2:]
    hi = [2 * (o - 1) + k - s - l for s, l, o, k in zip(size, lo, y_shape[2:], kernel)]
    p = ((2, 2), lo, hi, (1, 1), 1)
    assert _layout.parity_transpose_ok(np, y, 1, kernel, (2, 2), (1, 1))
    got = _routines.parity_conv_transpose(np, y, w, lo, size)
    _layout.LAYOUT = "im2col"
    try:
        want = _routines.conv_transpose_forward(np, y, w, p, size)
    finally:
        _layout.LAYOUT = "auto"
    assert got.shape == want.shape == y_shape[:1] + w_shape[1:2] + size
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_parity_split_rule():
    y = np.zeros((2, 8, 4, 4), np.float32)
    assert _layout.parity_transpose_ok(np, y, 1, (3, 3), (2, 2), (1, 1))
    assert not _layout.parity_transpose_ok(np, y, 1, (1, 1), (2, 2), (1, 1))  # one offset
    assert not _layout.parity_transpose_ok(np, y, 2, (3, 3), (2, 2), (1, 1))
    assert not _layout.parity_transpose_ok(np, y, 1, (3, 3), (2, 1), (1, 1))
    assert not _layout.parity_transpose_ok(np, y, 1, (3, 3), (2, 2), (2, 1))
    assert not _layout.parity_transpose_ok(np, y, 1, (3, 3, 3), (2, 2, 2), (1, 1, 1))
    assert not _layout.parity_transpose_ok(np, y.astype(np.float16), 1, (3, 3), (2, 2), (1, 1))


@pytest.mark.parametrize("size,kernel,stride,lo,hi", [
    ((9, 8), (3, 3), (2, 2), (1, 1), (1, 0)),  # ResNet's stride-2 3x3: 4 phase groups
    ((10, 9), (5, 2), (3, 2), (2, 0), (2, 1)),  # a group narrower than the stride
    ((8, 9), (1, 2), (2, 2), (0, 0), (0, 1)),  # one offset down, one group of 2 across
    ((7, 9), (3, 3), (1, 2), (1, 1), (1, 1)),  # stride 1 along one dim
    ((11,), (4,), (3,), (0,), (1,)),
    ((5, 6, 5), (3, 2, 3), (2, 2, 2), (1, 0, 1), (1, 1, 0)),
])
def test_device_col2im_sums_by_phase_to_the_hosts_bits(cupy_like, size, kernel, stride, lo, hi):
    """A device's col2im adds a stride's worth of kernel offsets at once (`sum_by_phase`); every
    element still takes its terms in kernel-offset order, so the sums are the host's (one add
    per offset) to the bit, in both column layouts. Values over a wide range of magnitudes,
    where another order would round otherwise."""
    from ember.ops.conv import _channels_last, _im2col
    assert _im2col.by_phase(cupy_like, kernel, stride, (1,) * len(size))
    assert not _im2col.by_phase(cupy_like, (1, 1), (2, 2), (1, 1))  # one offset: per offset
    rng = np.random.default_rng(5)
    n, c = 2, 3
    dil = (1,) * len(size)
    osz = _im2col.out_size(tuple(s + l + h for s, l, h in zip(size, lo, hi)), kernel, stride, dil)
    shape = (n, c) + kernel + osz
    batched = (rng.standard_normal(shape) * np.exp(rng.uniform(-12, 12, shape))).astype(np.float32)
    nd = len(size)
    # the same columns as (N*L, K*C) rows: (N, *out, *kernel, C)
    rows = np.ascontiguousarray(batched.transpose(
        (0,) + tuple(range(2 + nd, 2 + 2 * nd)) + tuple(range(2, 2 + nd)) + (1,)))
    rows = rows.reshape(n * int(np.prod(osz)), -1)
    want = _im2col.col2im(np, batched, size, kernel, stride, dil, lo, hi)
    got = _im2col.col2im(cupy_like, cupy_like.asarray(batched), size, kernel, stride, dil, lo,
                         hi).get()
    assert got.shape == want.shape == (n, c) + size and got.tobytes() == want.tobytes()
    args = (n, c, size, kernel, stride, dil, lo, hi, osz)
    want = _channels_last.col2im_channels_last(np, rows, *args)
    got = _channels_last.col2im_channels_last(cupy_like, cupy_like.asarray(rows), *args).get()
    assert got.shape == want.shape == (n, c) + size and got.tobytes() == want.tobytes()
