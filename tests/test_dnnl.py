"""ember's convolutions, LSTMs, layer norms and GELUs through oneDNN (ember/_dnnl.py,
ember/_dnnl_layers.py), where it is installed (the test extra installs it on x86-64 Linux):
each routine against ember's own NumPy routines and a float64 reference, over the layouts,
strides, paddings, dilations and groups that reach it, and against PyTorch's."""
import os

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember import _dnnl, _dnnl_layers
from ember.ops.conv import _routines
from ember.ops.normalization import norms

pytestmark = pytest.mark.skipif(_dnnl.library() is None, reason="oneDNN is not installed")


@pytest.fixture(autouse=True)
def _onednn_layer_norms_at_every_size(monkeypatch):
    """These tests hold oneDNN's kernels to ember's own: here small layer norms take them too
    (elsewhere they take the NumPy passes, faster below norms.ONEDNN_MIN_ELEMENTS)."""
    monkeypatch.setattr(norms, "ONEDNN_MIN_ELEMENTS", 0)

# (N, C, O, spatial, kernel, stride, lo, hi, dilation, groups)
CASES = [
    (2, 3, 4, (9, 9), (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 1),
    (3, 16, 32, (8, 8), (3, 3), (2, 2), (1, 1), (1, 1), (1, 1), 1),
    (2, 6, 4, (7, 10), (3, 2), (2, 1), (0, 1), (2, 0), (1, 2), 2),   # asymmetric, grouped
    (2, 8, 8, (6, 6), (3, 3), (1, 1), (1, 1), (1, 1), (1, 1), 8),    # depthwise
    (2, 4, 5, (8, 8), (3, 3), (2, 2), (0, 0), (0, 0), (1, 1), 1),    # a row no window reads
    (2, 3, 4, (11,), (5,), (2,), (2,), (1,), (2,), 1),               # 1-d
    (1, 2, 3, (5, 6, 4), (3, 2, 3), (1, 2, 1), (1, 0, 1), (1, 1, 1), (1, 1, 1), 1),  # 3-d
    (4, 3, 8, (32, 32), (7, 7), (2, 2), (3, 3), (3, 3), (1, 1), 1),  # a stem
]


def _p(case):
    n, c, o, spatial, kernel, stride, lo, hi, dil, g = case
    return stride, lo, hi, dil, g


def _arrays(case, seed=0):
    n, c, o, spatial, kernel, stride, lo, hi, dil, g = case
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((n, c) + spatial).astype(np.float32)
    w = rng.standard_normal((o, c // g) + kernel).astype(np.float32)
    y_spatial = tuple((s + a + b - d * (k - 1) - 1) // st + 1
                      for s, k, st, a, b, d in zip(spatial, kernel, stride, lo, hi, dil))
    gy = rng.standard_normal((n, o) + y_spatial).astype(np.float32)
    return x, w, gy, y_spatial


def _numpy(fn, *args):
    before = _dnnl.use(None)
    try:
        return fn(*args)
    finally:
        _dnnl.use(before)


def _close(ours, reference):
    scale = max(1.0, float(np.abs(reference).max()))
    np.testing.assert_allclose(ours, reference, rtol=0, atol=2e-5 * scale)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_each_routine_equals_embers_numpy_routines(case, threads):
    x, w, gy, y_spatial = _arrays(case)
    p = _p(case)
    x64, w64, gy64 = (a.astype(np.float64) for a in (x, w, gy))  # (NumPy's routines)
    y = _dnnl.forward(x, w, p, y_spatial, threads)
    assert y is not None and y.dtype == np.float32 and y.flags.c_contiguous
    _close(y, _routines.conv_forward(np, x64, w64, p, y_spatial))
    gx = _dnnl.backward_data(gy, w, p, x.shape[2:], threads)
    _close(gx, _routines.conv_transpose_forward(np, gy64, w64, p, x.shape[2:]))
    gw = _dnnl.backward_weights(x, gy, p, w.shape, threads)
    _close(gw, _routines.conv_weight_grad(np, x64, gy64, p, w.shape))


def test_arrays_it_cannot_read_in_place_are_copied_first():
    case = CASES[1]
    x, w, gy, y_spatial = _arrays(case)
    p = _p(case)
    broadcast = np.broadcast_to(np.float32(1.5), gy.shape)  # the gradient of a summed loss
    transposed = np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    flipped = np.ascontiguousarray(w[:, :, ::-1])[:, :, ::-1]  # negative strides
    _close(_dnnl.forward(transposed, flipped, p, y_spatial, 1),
           _dnnl.forward(x, w, p, y_spatial, 1))
    _close(_dnnl.backward_weights(x, broadcast, p, w.shape, 1),
           _dnnl.backward_weights(x, np.ascontiguousarray(broadcast), p, w.shape, 1))
    _close(_dnnl.backward_data(broadcast, flipped, p, x.shape[2:], 1),
           _dnnl.backward_data(np.ascontiguousarray(broadcast), w, p, x.shape[2:], 1))


def test_what_it_does_not_take_is_left_to_numpy():
    x, w, gy, y_spatial = _arrays(CASES[0])
    p = _p(CASES[0])
    assert _dnnl.forward(x.astype(np.float64), w.astype(np.float64), p, y_spatial, 1) is None
    assert _dnnl.forward(x[:0], w, p, y_spatial, 1) is None  # an empty batch
    assert _dnnl.forward(x.astype(np.float16), w.astype(np.float16), p, y_spatial, 1) is None
    assert not _dnnl.applies(x[0, 0], w)  # no batch and channel dims
    with ember.backends.mkldnn.flags(enabled=False):
        assert not _dnnl.applies(x, w)


def test_module_training_matches_numpy_routines_and_switches_off():
    """A conv net's gradients, through ember's graph: oneDNN's and NumPy's agree, and
    `torch.backends.mkldnn.flags(enabled=False)` takes the NumPy routines."""
    def grads():
        ember.manual_seed(0)
        net = ember.nn.Sequential(ember.nn.Conv2d(3, 8, 3, padding=1), ember.nn.ReLU(),
                                  ember.nn.Conv2d(8, 4, 3, stride=2, padding=1, groups=2),
                                  ember.nn.ConvTranspose2d(4, 3, 3, stride=2, padding=1,
                                                           output_padding=1))
        x = ember.randn(2, 3, 10, 10, requires_grad=True)
        net(x).square().sum().backward()
        return [x.grad.numpy()] + [q.grad.numpy() for q in net.parameters()]

    calls = []
    real = _dnnl._Plan.run

    def counted(self, *arrays):
        calls.append(self.name)
        return real(self, *arrays)
    try:
        _dnnl._Plan.run = counted
        ours = grads()
        assert len(calls) == 9  # three convolutions, three kernels each
        calls.clear()
        with ember.backends.mkldnn.flags(enabled=False):
            theirs = grads()
        assert not calls
    finally:
        _dnnl._Plan.run = real
    for a, b in zip(ours, theirs):
        _close(a, b)


def test_openmp_threads_are_left_as_they_were():
    lib = _dnnl.library()
    before = lib._get_threads()
    x, w, gy, y_spatial = _arrays(CASES[1])
    _dnnl.forward(x, w, _p(CASES[1]), y_spatial, 2 if before == 1 else 1)
    assert lib._get_threads() == before


def test_plans_are_bounded_and_given_back(monkeypatch):
    monkeypatch.setattr(_dnnl, "_plans", _dnnl._Plans(size=2))
    x, w, gy, y_spatial = _arrays(CASES[0])
    p = _p(CASES[0])
    for n in (1, 2, 3):
        assert _dnnl.forward(x[:n], w, p, y_spatial, 1) is not None
    assert len(_dnnl._plans._plans) == 2


def test_a_forked_child_leaves_convolutions_to_numpy():
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: report, and leave at once
        os.write(write, b"1" if _dnnl.library() is None else b"0")
        os._exit(0)
    os.waitpid(pid, 0)
    assert os.read(read, 1) == b"1"
    assert _dnnl.library() is not None


def test_results_equal_pytorchs(torch):
    """PyTorch's CPU convolutions are oneDNN's too: the same values, to float32 rounding."""
    x, w, gy, y_spatial = _arrays(CASES[1])
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True)
    ty = torch.nn.functional.conv2d(tx, tw, stride=2, padding=1)
    ty.backward(torch.tensor(gy))
    ex, ew = ember.tensor(x, requires_grad=True), ember.tensor(w, requires_grad=True)
    ey = F.conv2d(ex, ew, stride=2, padding=1)
    ey.backward(ember.tensor(gy))
    for a, b in ((ey, ty), (ex.grad, tx.grad), (ew.grad, tw.grad)):
        _close(a.detach().numpy(), b.detach().numpy())


# ---- LSTM layers -------------------------------------------------------------------------------
def _lstm_grads(bidirectional, bias, num_layers=2, seed=0):
    ember.manual_seed(seed)
    lstm = ember.nn.LSTM(5, 7, num_layers=num_layers, bias=bias, bidirectional=bidirectional)
    x = ember.randn(6, 3, 5, requires_grad=True)
    h0 = ember.randn(num_layers * (2 if bidirectional else 1), 3, 7, requires_grad=True)
    c0 = ember.randn(num_layers * (2 if bidirectional else 1), 3, 7, requires_grad=True)
    out, (h_n, c_n) = lstm(x, (h0, c0))
    (out.square().sum() + h_n.sum() * 2 + c_n.cos().sum()).backward()
    return [out.detach().numpy(), h_n.detach().numpy(), c_n.detach().numpy(),
            x.grad.numpy(), h0.grad.numpy(), c0.grad.numpy()] + \
        [p.grad.numpy() for p in lstm.parameters()]


@pytest.mark.parametrize("bidirectional", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_lstm_layers_equal_embers_fused_numpy_layers(bidirectional, bias, monkeypatch):
    calls = []
    real = _dnnl_layers.lstm_backward
    monkeypatch.setattr(_dnnl_layers, "lstm_backward", lambda *a: calls.append(1) or real(*a))
    ours = _lstm_grads(bidirectional, bias)
    assert len(calls) == 2 * (2 if bidirectional else 1)  # every layer and direction
    calls.clear()
    before = _dnnl.use(None)
    try:
        theirs = _lstm_grads(bidirectional, bias)
    finally:
        _dnnl.use(before)
    assert not calls
    for a, b in zip(ours, theirs):
        _close(a, b)


def test_lstm_layers_equal_pytorchs(torch):
    """PyTorch's CPU LSTM runs oneDNN's kernel too: the same values."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((9, 4, 6)).astype(np.float32)
    torch.manual_seed(0)
    theirs = torch.nn.LSTM(6, 8, bidirectional=True)
    ours = ember.nn.LSTM(6, 8, bidirectional=True)
    ours.load_state_dict({k: ember.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    tx, ex = torch.tensor(x, requires_grad=True), ember.tensor(x, requires_grad=True)
    ty, ey = theirs(tx)[0], ours(ex)[0]
    ty.square().sum().backward()
    ey.square().sum().backward()
    _close(ey.detach().numpy(), ty.detach().numpy())
    _close(ex.grad.numpy(), tx.grad.numpy())
    for (name, p), q in zip(ours.named_parameters(), theirs.parameters()):
        _close(p.grad.numpy(), q.grad.numpy())


def test_lstm_backward_through_it_is_not_differentiable():
    lstm = ember.nn.LSTM(3, 4)
    x = ember.randn(5, 2, 3, requires_grad=True)
    out = lstm(x)[0].sum()
    with pytest.raises(RuntimeError, match="not differentiable"):
        ember.autograd.grad(out, x, create_graph=True)


# ---- layer norm ----------------------------------------------------------------------------------
def _layer_norm_grads(shape, affine, seed=0):
    rng = np.random.default_rng(seed)
    x = ember.tensor(rng.standard_normal(shape).astype(np.float32) * 3 + 1, requires_grad=True)
    w = ember.tensor(rng.standard_normal(shape[-1]).astype(np.float32), requires_grad=True) \
        if affine in ("both", "weight") else None
    b = ember.tensor(rng.standard_normal(shape[-1]).astype(np.float32), requires_grad=True) \
        if affine in ("both", "bias") else None
    y = F.layer_norm(x, shape[-1:], w, b, eps=1e-4)
    (y.square() * ember.arange(shape[-1], dtype=ember.float32)).sum().backward()
    return [y.detach().numpy(), x.grad.numpy()] + [t.grad.numpy() for t in (w, b)
                                                   if t is not None]


@pytest.mark.parametrize("shape", [(6, 5), (3, 4, 37), (2, 3, 4, 16)])
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
def test_layer_norms_equal_embers_numpy_layer_norms(shape, affine, monkeypatch):
    calls = []
    real = _dnnl_layers.layer_norm_backward
    monkeypatch.setattr(_dnnl_layers, "layer_norm_backward", lambda *a: calls.append(1) or real(*a))
    ours = _layer_norm_grads(shape, affine)
    assert calls
    before = _dnnl.use(None)
    try:
        theirs = _layer_norm_grads(shape, affine)
    finally:
        _dnnl.use(before)
    for a, b in zip(ours, theirs):
        _close(a, b)


def test_layer_norm_keeps_its_double_backward():
    x = ember.randn(4, 6, dtype=ember.float32, requires_grad=True)
    w = ember.randn(6, requires_grad=True)
    y = F.layer_norm(x, (6,), w)
    (gx,) = ember.autograd.grad(y.square().sum(), x, create_graph=True)
    (ggx,) = ember.autograd.grad(gx.sum(), x)
    before = _dnnl.use(None)
    try:
        y2 = F.layer_norm(x, (6,), w)
        (gx2,) = ember.autograd.grad(y2.square().sum(), x, create_graph=True)
        (ggx2,) = ember.autograd.grad(gx2.sum(), x)
    finally:
        _dnnl.use(before)
    _close(ggx.numpy(), ggx2.numpy())


def test_layer_norms_equal_pytorchs(torch):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 16, 64)).astype(np.float32)
    w, b = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    g = rng.standard_normal(x.shape).astype(np.float32)
    grads = []
    for lib in (ember, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in (x, w, b)]
        y = lib.nn.functional.layer_norm(ts[0], (64,), ts[1], ts[2])
        y.backward(lib.tensor(g))
        grads.append([y.detach().numpy()] + [t.grad.numpy() for t in ts])
    for a, b in zip(*grads):
        _close(a, b)


# ---- GELU ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_equals_embers_numpy_gelu(approximate, monkeypatch):
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((300, 70)) * 4).astype(np.float32)
    x.reshape(-1)[:5] = [np.inf, -np.inf, 0.0, 20.0, -20.0]
    g = rng.standard_normal(x.shape).astype(np.float32)
    calls = []
    real = _dnnl_layers.eltwise_backward
    monkeypatch.setattr(_dnnl_layers, "eltwise_backward", lambda *a: calls.append(1) or real(*a))

    def run():
        t = ember.tensor(x, requires_grad=True)
        y = F.gelu(t, approximate=approximate)
        y.backward(ember.tensor(g))
        return y.detach().numpy(), t.grad.numpy()
    ours = run()
    assert calls
    assert ours[0].reshape(-1)[0] == np.inf  # gelu(+inf) = +inf, as PyTorch's scalar kernel
    before = _dnnl.use(None)
    try:
        theirs = run()
    finally:
        _dnnl.use(before)
    for a, b in zip(ours, theirs):
        finite = np.isfinite(b)
        _close(a[finite], b[finite])
        assert np.array_equal(np.isnan(a), np.isnan(b))


def test_a_gelu_backward_after_onednn_is_switched_off_takes_numpys():
    x = ember.randn(50, 8, requires_grad=True)
    y = F.gelu(x)
    with ember.backends.mkldnn.flags(enabled=False):
        y.sum().backward()
    before = _dnnl.use(None)
    try:
        x2 = x.detach().requires_grad_()
        F.gelu(x2).sum().backward()
    finally:
        _dnnl.use(before)
    _close(x.grad.numpy(), x2.grad.numpy())


def test_threads_run_kernels_at_once():
    """Each call brings its own scratchpad, and each plan runs one call at a time: threads
    running the same convolutions, LSTMs, layer norms and GELUs at once get every result
    (with oneDNN's own scratchpad, two threads' LSTMs crashed the process)."""
    import threading
    x, w = ember.randn(4, 8, 12, 12), ember.randn(16, 8, 3, 3)
    lstm, xs = ember.nn.LSTM(8, 16), ember.randn(7, 3, 8)

    def results():
        with ember.no_grad():
            return [F.conv2d(x, w, padding=1).numpy(), lstm(xs)[0].numpy(),
                    F.layer_norm(x, (12,)).numpy(), F.gelu(x).numpy()]
    want = results()
    failures = []

    def work():
        try:
            for _ in range(20):
                for got, expected in zip(results(), want):
                    np.testing.assert_array_equal(got, expected)
        except Exception as e:  # (reported below, from the main thread)
            failures.append(e)
    threads = [threading.Thread(target=work) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[0]
