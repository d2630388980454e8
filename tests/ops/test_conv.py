"""Convolution behaviour beyond the op table: larger float32 shapes through both compute
paths (stride-1 flipped-kernel input gradient, strided col2im), second derivatives against
PyTorch, grad_fn structure, scratch-memory reuse, and maths that needs no PyTorch."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from ember.ops import conv as conv_mod
from ember.ops.conv import _layout, _routines


def _pair(torch, rng, *shapes, dtype=np.float32):
    arrs = [rng.standard_normal(s).astype(dtype) for s in shapes]
    return ([ember.tensor(a, requires_grad=True) for a in arrs],
            [torch.tensor(a, requires_grad=True) for a in arrs])


@pytest.mark.parametrize("kw", [dict(padding=1), dict(stride=2, padding=1),
                                dict(stride=(2, 1), dilation=(1, 2), groups=2, padding=(0, 2))])
def test_conv2d_float32_values_and_grads(torch, kw):
    rng = np.random.default_rng(0)
    (x, w, b), (tx, tw, tb) = _pair(torch, rng, (4, 8, 13, 11), (6, 8 // kw.get("groups", 1), 3, 3),
                                    (6,))
    y, ty = F.conv2d(x, w, b, **kw), torch.nn.functional.conv2d(tx, tw, tb, **kw)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-4, atol=1e-4)
    g = rng.standard_normal(ty.shape).astype(np.float32)
    y.backward(ember.tensor(g))
    ty.backward(torch.tensor(g))
    for a, t in ((x, tx), (w, tw), (b, tb)):
        np.testing.assert_allclose(a.grad.numpy(), t.grad.numpy(), rtol=1e-4, atol=1e-3)


def test_conv_transpose2d_float32(torch):
    rng = np.random.default_rng(1)
    (x, w), (tx, tw) = _pair(torch, rng, (3, 6, 7, 5), (6, 4, 3, 3))
    kw = dict(stride=2, padding=1, output_padding=1)
    y, ty = F.conv_transpose2d(x, w, **kw), torch.nn.functional.conv_transpose2d(tx, tw, **kw)
    np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-4, atol=1e-4)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-4, atol=1e-3)
    np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("name,shapes,kw", [
    ("conv2d", [(1, 2, 5, 4), (4, 1, 3, 2), (4,)], dict(stride=(2, 1), padding=1, groups=2)),
    ("conv_transpose2d", [(1, 2, 3, 3), (2, 2, 2, 2), (2,)],
     dict(stride=2, padding=1, output_padding=1)),
    ("conv1d", [(2, 2, 6), (3, 2, 3)], dict(padding=2, dilation=2)),
])
def test_double_backward_matches_torch(torch, name, shapes, kw):
    rng = np.random.default_rng(2)
    arrs = [rng.standard_normal(s) for s in shapes]
    results = []
    for lib in (ember, torch):
        ts = [lib.tensor(a, requires_grad=True) for a in arrs]
        y = getattr(lib.nn.functional, name)(*ts, **kw)
        g = lib.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape)), requires_grad=True)
        grads = lib.autograd.grad(y, ts, g, create_graph=True)
        second = []
        for gr in grads:
            for r in lib.autograd.grad((gr * gr).sum(), ts + [g], retain_graph=True,
                                       allow_unused=True):
                second.append(None if r is None else r.detach().numpy())
        results.append(second)
    for e, t in zip(*results):
        assert (e is None) == (t is None)
        if e is not None:
            np.testing.assert_allclose(e, t, atol=1e-10)


def test_grad_fn_names():
    x = ember.randn(1, 2, 5, 5, requires_grad=True) if hasattr(ember, "randn") else \
        ember.tensor(np.ones((1, 2, 5, 5)), requires_grad=True)
    w = ember.tensor(np.ones((3, 2, 3, 3)), requires_grad=True)
    b = ember.tensor(np.ones(3), requires_grad=True)
    x = ember.tensor(np.ones((1, 2, 5, 5)), requires_grad=True)
    y = F.conv2d(x, w, b)
    assert type(y.grad_fn).__name__ == "ConvolutionBackward0"
    assert len(y.grad_fn.next_functions) == 3
    t = F.conv_transpose2d(x, ember.tensor(np.ones((2, 3, 3, 3)), requires_grad=True))
    assert type(t.grad_fn).__name__ == "ConvolutionBackward0"
    assert type(F.unfold(x, 2).grad_fn).__name__ == "Im2ColBackward0"
    assert type(F.fold(ember.tensor(np.ones((1, 8, 16)), requires_grad=True), 5, 2).grad_fn
                ).__name__ == "Col2ImBackward0"
    assert type(F.conv2d(x[0], w).grad_fn).__name__ == "SqueezeBackward1"


def test_results_never_alias_scratch_memory():
    rng = np.random.default_rng(3)
    x = ember.tensor(rng.standard_normal((8, 16, 32, 32)).astype(np.float32))
    w = ember.tensor(rng.standard_normal((16, 16, 3, 3)).astype(np.float32))
    y1 = F.conv2d(x, w, padding=1)
    kept = y1.numpy().copy()
    F.conv2d(x * 2, w, padding=1)
    F.conv_transpose2d(x, w, stride=2)
    np.testing.assert_array_equal(y1.numpy(), kept)


def test_scratch_views_are_reused_while_their_buffer_stands(monkeypatch):
    """scratch hands out the same view for the same (slot, shape, dtype) until the slot's
    buffer grows; then views of the old buffer are let go, and the view cache is bounded."""
    import threading
    from ember.ops.conv import _im2col
    monkeypatch.setattr(_im2col, "_local", threading.local())
    shape, f32 = (4, 256, 300), np.dtype(np.float32)
    a = _im2col.scratch(np, "t", shape, f32)
    assert _im2col.scratch(np, "t", shape, f32) is a and a.shape == shape and a.dtype == f32
    other = _im2col.scratch(np, "t", (2,) + shape, np.float64)  # larger: a new buffer
    again = _im2col.scratch(np, "t", shape, f32)
    assert again is not a and np.shares_memory(again, other) and not np.shares_memory(a, again)
    assert _im2col.scratch(np, "u", shape, f32) is not again  # slots apart
    monkeypatch.setattr(_im2col, "_SCRATCH_VIEWS", 3)
    for k in range(10):
        _im2col.scratch(np, "t", (k + 1, 1 << 18), f32)
        assert len(_im2col._local.views) <= 3
    small = _im2col.scratch(np, "t", (3,), f32)  # below the scratch size: a fresh array
    assert small is not _im2col.scratch(np, "t", (3,), f32)


def test_identity_kernel_and_known_values():
    x = ember.tensor(np.arange(2 * 3 * 4 * 5, dtype=np.float64).reshape(2, 3, 4, 5))
    eye = np.zeros((3, 3, 3, 3))
    for c in range(3):
        eye[c, c, 1, 1] = 1
    np.testing.assert_array_equal(F.conv2d(x, ember.tensor(eye), padding=1).numpy(), x.numpy())
    ones = ember.tensor(np.ones((1, 1, 2)))
    out = F.conv1d(ember.tensor(np.array([[[1.0, 2.0, 3.0, 4.0]]])), ones, stride=2)
    assert out.tolist() == [[[3.0, 7.0]]]


def test_fold_of_unfold_counts_overlaps():
    x = ember.tensor(np.ones((1, 2, 4, 4)))
    cols = F.unfold(x, 2)
    assert tuple(cols.shape) == (1, 8, 9)
    back = F.fold(cols, (4, 4), 2).numpy()[0, 0]
    np.testing.assert_array_equal(back, [[1, 2, 2, 1], [2, 4, 4, 2], [2, 4, 4, 2], [1, 2, 2, 1]])


def test_integer_conv_and_dtype_errors():
    x = ember.tensor(np.arange(16).reshape(1, 1, 4, 4))
    w = ember.tensor(np.ones((1, 1, 2, 2), dtype=np.int64))
    out = F.conv2d(x, w)
    assert out.dtype == ember.int64 and out.tolist()[0][0][0] == [10, 14, 18]
    with pytest.raises(RuntimeError, match="expected scalar type Float but found Double"):
        F.conv2d(ember.tensor(np.ones((1, 1, 3, 3), np.float32)), ember.tensor(np.ones((1, 1, 2, 2))))


def test_dtype_errors_name_the_bias_first(torch):
    """PyTorch holds the bias's dtype against the input's before the weight's."""
    for dtypes in [("float64", "float32", "float32"), ("float32", "float64", "float64"),
                   ("float16", "float32", "float32"), ("float64", "float32", "float64")]:
        errors = []
        for lib in (torch, ember):
            x, w, b = (lib.ones(shape, dtype=getattr(lib, d))
                       for shape, d in zip([(1, 3, 6), (4, 3, 3), (4,)], dtypes))
            with pytest.raises(RuntimeError) as info:
                lib.nn.functional.conv1d(x, w, b)
            errors.append(str(info.value))
        assert errors[0] == errors[1]


def test_same_padding_even_kernel_warns_once(torch):
    ember._state._warned_once.clear()
    x = ember.tensor(np.ones((1, 1, 5, 5)))
    w = ember.tensor(np.ones((1, 1, 2, 2)))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = F.conv2d(x, w, padding="same")
        F.conv2d(x, w, padding="same")
    assert len(caught) == 1 and "even kernel lengths" in str(caught[0].message)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ty = torch.nn.functional.conv2d(torch.ones(1, 1, 5, 5, dtype=torch.float64),
                                        torch.ones(1, 1, 2, 2, dtype=torch.float64),
                                        padding="same")
    np.testing.assert_array_equal(y.numpy(), ty.numpy())


@pytest.mark.parametrize("transposed", [False, True])
@pytest.mark.parametrize("kw", [dict(padding=1), dict(stride=2, padding=1, dilation=2)])
def test_a_batch_over_the_column_budget_goes_in_slices(monkeypatch, transposed, kw):
    """A batch whose im2col buffer exceeds COL_BUDGET is convolved in slices of the batch: the
    same outputs and gradients (input, weight, bias) as one pass, in bounded scratch memory."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal((7, 4, 9, 9))
    w = rng.standard_normal((4, 6, 3, 3) if transposed else (6, 4, 3, 3))
    b = rng.standard_normal(6)
    fn = F.conv_transpose2d if transposed else F.conv2d

    def run():
        ts = [ember.tensor(a, requires_grad=True) for a in (x, w, b)]
        out = fn(*ts, **kw)
        (out * out).sum().backward()
        return [out.detach().numpy()] + [t.grad.numpy() for t in ts]

    whole = run()
    monkeypatch.setattr(_routines, "COL_BUDGET", 1)  # one sample per slice
    for got, want in zip(run(), whole):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_blas_warm_up_runs_once_per_thread(monkeypatch):
    """The CPU convolutions warm the BLAS up (one large product) once in each thread that
    convolves, and the results are the same either way."""
    import threading
    from ember import _blas
    monkeypatch.setattr(_blas, "_warm", threading.local())
    products = []
    real = np.matmul
    monkeypatch.setattr(np, "matmul", lambda a, b, *r, **k: products.append(a.shape)
                        or real(a, b, *r, **k))
    rng = np.random.default_rng(4)
    x = ember.tensor(rng.standard_normal((2, 3, 6, 5)), requires_grad=True)
    w = ember.tensor(rng.standard_normal((4, 3, 3, 3)), requires_grad=True)
    big = (_blas.WARM_UP_SIZE,) * 2
    first = F.conv2d(x, w, padding=1)
    assert products.count(big) == 1
    first.sum().backward()
    again = F.conv2d(x, w, padding=1)
    assert products.count(big) == 1  # once in this thread
    np.testing.assert_array_equal(first.detach().numpy(), again.detach().numpy())
    other = threading.Thread(target=lambda: F.conv2d(x.detach(), w.detach(), padding=1))
    other.start()
    other.join()
    assert products.count(big) == 2  # and once in another
