"""The single-pass forms of batch / layer / group norm, softmax, log_softmax, cross entropy
and scaled_dot_product_attention (in-place array passes, closed-form first-order backward
on arrays) beside PyTorch: values and gradients in float32 and float64, non-contiguous
inputs, training and eval, no affine, momentum=None, masks and dropout; and that the
ember-op backward they keep for create_graph still gives second derivatives."""
import numpy as np
import pytest

import ember
import ember.nn.functional as EF

torch = pytest.importorskip("torch")
TF = torch.nn.functional

TOL = {"float32": dict(rtol=2e-5, atol=2e-5), "float64": dict(rtol=1e-10, atol=1e-10)}


def _pair(arr, grad=True):
    return (ember.tensor(arr, requires_grad=grad), torch.tensor(arr, requires_grad=grad))


def _close(e, t, dtype):
    assert e is not None and t is not None
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), **TOL[dtype])


def _run_both(fn_e, fn_t, leaves, seed_shape, dtype, rng):
    """Forward and backward in both libraries, comparing the outputs and every leaf grad."""
    g = rng.standard_normal(seed_shape).astype(dtype)
    ye, yt = fn_e(*[e for e, _ in leaves]), fn_t(*[t for _, t in leaves])
    _close(ye, yt, dtype)
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    for e, t in leaves:
        if t.requires_grad:
            _close(e.grad, t.grad, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(7, 5), (4, 3, 6), (4, 3, 5, 6)])
@pytest.mark.parametrize("training", [True, False])
@pytest.mark.parametrize("affine", [True, False])
def test_batch_norm(dtype, shape, training, affine):
    rng = np.random.default_rng(0)
    c = shape[1]
    x = _pair((rng.standard_normal(shape) * 3 + 2).astype(dtype))
    leaves = [x]
    if affine:
        leaves += [_pair(rng.standard_normal(c).astype(dtype)),
                   _pair(rng.standard_normal(c).astype(dtype))]
    rm0, rv0 = rng.standard_normal(c).astype(dtype), rng.uniform(0.5, 2, c).astype(dtype)
    stats_e = [ember.tensor(rm0.copy()), ember.tensor(rv0.copy())]
    stats_t = [torch.tensor(rm0.copy()), torch.tensor(rv0.copy())]

    def fe(x, *wb):
        return EF.batch_norm(x, *stats_e, *(wb or (None, None)), training, 0.2, 1e-5)

    def ft(x, *wb):
        return TF.batch_norm(x, *stats_t, *(wb or (None, None)), training, 0.2, 1e-5)
    _run_both(fe, ft, leaves, shape, dtype, rng)
    for e, t in zip(stats_e, stats_t):
        _close(e, t, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_batch_norm_non_contiguous_and_no_running_stats(dtype):
    rng = np.random.default_rng(1)
    base = rng.standard_normal((5, 6, 4, 3)).astype(dtype)
    xe, xt = _pair(base)
    w, b = _pair(rng.standard_normal(4).astype(dtype)), _pair(rng.standard_normal(4).astype(dtype))
    g = rng.standard_normal((6, 4, 5, 3)).astype(dtype)
    ye = EF.batch_norm(xe.permute(1, 2, 0, 3), None, None, w[0], b[0], True)
    yt = TF.batch_norm(xt.permute(1, 2, 0, 3), None, None, w[1], b[1], True)
    _close(ye, yt, dtype)
    ye.backward(ember.tensor(g))
    yt.backward(torch.tensor(g))
    for e, t in ((xe, xt), w, b):
        _close(e.grad, t.grad, dtype)


@pytest.mark.parametrize("shape", [(2, 8, 4, 4), (1, 128, 28, 28)])
def test_eval_batch_norm_gradient_through_a_transposed_output(shape):
    """In eval mode batch norm is an affine map per channel, so the input's gradient is the
    output's times weight / sqrt(running_var + eps), whatever the layout of the gradient that
    arrives. XCiT's patch embedding flattens and transposes the output (its gradient comes
    back channels-last); PyTorch 2.13's CPU kernel gets the input gradient wrong there (off
    by 1.6x the gradient's size at (1, 128, 28, 28); ember agrees with finite differences)."""
    rng = np.random.default_rng(3)
    c = shape[1]
    bn = ember.nn.BatchNorm2d(c)
    bn.weight.data = ember.tensor(rng.standard_normal(c).astype(np.float32))
    bn.running_var = ember.tensor(rng.random(c).astype(np.float32) + 0.5)
    bn.running_mean = ember.tensor(rng.standard_normal(c).astype(np.float32))
    bn.eval()
    x = ember.tensor(rng.standard_normal(shape).astype(np.float32), requires_grad=True)
    g = rng.standard_normal((shape[0], shape[2] * shape[3], c)).astype(np.float32)
    bn(x).flatten(2).transpose(1, 2).backward(ember.tensor(g))
    scale = bn.weight.detach().numpy() / np.sqrt(bn.running_var.numpy() + bn.eps)
    want = g.transpose(0, 2, 1).reshape(shape) * scale[None, :, None, None]
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6, atol=1e-7)


def test_batch_norm_module_momentum_none_cumulative_average():
    rng = np.random.default_rng(2)
    me, mt = ember.nn.BatchNorm2d(3, momentum=None), torch.nn.BatchNorm2d(3, momentum=None)
    for _ in range(3):
        x = rng.standard_normal((4, 3, 5, 5)).astype(np.float32) * 2 + 1
        _close(me(ember.tensor(x)), mt(torch.tensor(x)), "float32")
    _close(me.running_mean, mt.running_mean, "float32")
    _close(me.running_var, mt.running_var, "float32")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", [True, False])
def test_layer_norm(dtype, affine):
    rng = np.random.default_rng(3)
    x = _pair((rng.standard_normal((6, 4, 10)) + 5).astype(dtype))
    leaves = [x]
    if affine:
        leaves += [_pair(rng.standard_normal((4, 10)).astype(dtype)),
                   _pair(rng.standard_normal((4, 10)).astype(dtype))]
    _run_both(lambda x, *wb: EF.layer_norm(x.transpose(0, 1), (6, 10), *wb),
              lambda x, *wb: TF.layer_norm(x.transpose(0, 1), (6, 10), *wb),
              [x], (4, 6, 10), dtype, rng) if not affine else \
        _run_both(lambda x, *wb: EF.layer_norm(x, (4, 10), *wb),
                  lambda x, *wb: TF.layer_norm(x, (4, 10), *wb), leaves, (6, 4, 10), dtype, rng)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_layer_norm_weight_only_needs_no_input_grad(dtype):
    rng = np.random.default_rng(4)
    x = _pair(rng.standard_normal((5, 8)).astype(dtype), grad=False)
    w = _pair(rng.standard_normal(8).astype(dtype))
    _run_both(lambda x, w: EF.layer_norm(x, (8,), w), lambda x, w: TF.layer_norm(x, (8,), w),
              [x, w], (5, 8), dtype, rng)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_group_norm(dtype):
    rng = np.random.default_rng(5)
    leaves = [_pair(rng.standard_normal((3, 6, 4, 5)).astype(dtype)),
              _pair(rng.standard_normal(6).astype(dtype)),
              _pair(rng.standard_normal(6).astype(dtype))]
    _run_both(lambda x, w, b: EF.group_norm(x, 3, w, b), lambda x, w, b: TF.group_norm(x, 3, w, b),
              leaves, (3, 6, 4, 5), dtype, rng)


@pytest.mark.parametrize("op", ["batch_norm", "layer_norm"])
def test_norm_second_derivative_keeps_ember_op_backward(op):
    rng = np.random.default_rng(6)
    x = rng.standard_normal((4, 3, 5))
    w = rng.standard_normal(5 if op == "layer_norm" else 3)
    results = []
    for lib, F in ((ember, EF), (torch, TF)):
        xt, wt = lib.tensor(x, requires_grad=True), lib.tensor(w, requires_grad=True)
        y = F.layer_norm(xt, (5,), wt) if op == "layer_norm" else \
            F.batch_norm(xt, None, None, wt, None, True)
        gx, = lib.autograd.grad((y * y * y).sum(), xt, create_graph=True)
        gx.sum().backward()
        results.append((gx.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()))
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_family(dtype, dim, log):
    rng = np.random.default_rng(7)
    x = _pair((rng.standard_normal((5, 4, 6)) * 4).astype(dtype))
    name = "log_softmax" if log else "softmax"
    _run_both(lambda x: getattr(EF, name)(x.transpose(0, 2), dim),
              lambda x: getattr(TF, name)(x.transpose(0, 2), dim), [x], (6, 4, 5), dtype, rng)


@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize("log", [False, True])
def test_softmax_family_low_precision(dt, log):
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 9)).astype(np.float32)
    g = rng.standard_normal((4, 9)).astype(np.float32)
    outs = []
    for lib, F in ((ember, EF), (torch, TF)):
        xt = lib.tensor(x).to(getattr(lib, dt)).requires_grad_()
        y = (F.log_softmax if log else F.softmax)(xt, -1)
        y.backward(lib.tensor(g).to(getattr(lib, dt)))
        assert str(y.dtype).endswith(dt) and str(xt.grad.dtype).endswith(dt)
        outs.append((y.detach().float().numpy(), xt.grad.float().numpy()))
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-2, atol=1e-2)


def test_log_softmax_backward_twice_and_under_saved_tensor_hooks():
    rng = np.random.default_rng(9)
    x = rng.standard_normal((3, 7))
    xe, xt = _pair(x)
    ye, yt = EF.log_softmax(xe, 1), TF.log_softmax(xt, 1)
    for _ in range(2):  # retain_graph: the kept softmax serves both
        (ye * ye).sum().backward(retain_graph=True)
        (yt * yt).sum().backward(retain_graph=True)
    _close(xe.grad, xt.grad, "float64")
    packed = []
    xe2 = ember.tensor(x, requires_grad=True)
    with ember.autograd.graph.saved_tensors_hooks(lambda t: packed.append(t) or t, lambda t: t):
        y2 = EF.log_softmax(xe2, 1)
    (y2 * y2).sum().backward()
    assert packed and "probs" not in y2.grad_fn.__dict__
    np.testing.assert_allclose(xe2.grad.numpy(), xt.grad.numpy() / 2, rtol=1e-10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kwargs", [{}, {"label_smoothing": 0.2}, {"ignore_index": 1},
                                    {"reduction": "sum", "label_smoothing": 0.1},
                                    {"reduction": "none", "ignore_index": 2}, {"weight": True},
                                    {"weight": True, "label_smoothing": 0.3, "ignore_index": 0}])
def test_cross_entropy(dtype, kwargs):
    rng = np.random.default_rng(10)
    x = _pair(rng.standard_normal((8, 5, 3)).astype(dtype))
    target = rng.integers(0, 5, (8, 3))
    w = rng.uniform(0.5, 2, 5).astype(dtype)
    ke, kt = dict(kwargs), dict(kwargs)
    if kwargs.get("weight"):
        ke["weight"], kt["weight"] = ember.tensor(w), torch.tensor(w)
    shape = (8, 3) if kwargs.get("reduction") == "none" else ()
    _run_both(lambda x: EF.cross_entropy(x, ember.tensor(target), **ke),
              lambda x: TF.cross_entropy(x, torch.tensor(target), **kt), [x], shape, dtype, rng)


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("weighted", [False, True])
def test_nll_loss_ignored_rows_add_plus_zero_whatever_their_logits(reduction, weighted):
    """PyTorch skips an ignored target: its loss is +0 and the reductions stay finite, even
    where the logit its row would have picked (class 0, the wrapped index) is inf or NaN."""
    x = np.array([[np.nan, 1.0, 2.0], [0.5, np.inf, 3.0], [1.0, 2.0, 3.0], [-np.inf, 0.0, 1.0]])
    target = np.array([-100, -100, 2, 1])
    w = np.array([0.5, 2.0, 1.5])
    ke = {"weight": ember.tensor(w)} if weighted else {}
    kt = {"weight": torch.tensor(w)} if weighted else {}
    xe, xt = _pair(x)
    ye = EF.nll_loss(xe, ember.tensor(target), reduction=reduction, **ke)
    yt = TF.nll_loss(xt, torch.tensor(target), reduction=reduction, **kt)
    np.testing.assert_array_equal(ye.detach().numpy(), yt.detach().numpy())
    assert np.array_equal(np.signbit(ye.detach().numpy()), np.signbit(yt.detach().numpy()))
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_array_equal(xe.grad.numpy(), xt.grad.numpy())
    assert np.array_equal(np.signbit(xe.grad.numpy()), np.signbit(xt.grad.numpy()))


def _sdpa_inputs(rng, dtype, shape=(2, 3, 5, 4), s=6):
    q = _pair(rng.standard_normal(shape).astype(dtype))
    k = _pair(rng.standard_normal(shape[:-2] + (s, shape[-1])).astype(dtype))
    v = _pair(rng.standard_normal(shape[:-2] + (s, shape[-1])).astype(dtype))
    return [q, k, v]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mask", ["causal", "bool", "float", "float_grad", None])
def test_sdpa(dtype, mask):
    rng = np.random.default_rng(11)
    leaves = _sdpa_inputs(rng, dtype)
    extra = {}
    if mask == "causal":
        extra = {"is_causal": True}
    elif mask == "bool":
        m = rng.random((5, 6)) > 0.4
        m[2] = False  # a query that sees no key: zeros, and a zero gradient
        extra = {"attn_mask": m}
    elif mask is not None:
        leaves.append(_pair(rng.standard_normal((3, 5, 6)).astype(dtype), mask == "float_grad"))

    def call(F, lib, q, k, v, *m):
        kw = dict(extra)
        if "attn_mask" in kw:
            kw["attn_mask"] = lib.tensor(kw["attn_mask"])
        if m:
            kw["attn_mask"] = m[0]
        return F.scaled_dot_product_attention(q, k, v, **kw)
    _run_both(lambda *a: call(EF, ember, *a), lambda *a: call(TF, torch, *a), leaves,
              (2, 3, 5, 4), dtype, rng)


def test_sdpa_causal_non_square_and_non_contiguous():
    rng = np.random.default_rng(12)
    q = _pair(rng.standard_normal((2, 7, 3, 4)).astype(np.float64))
    k = _pair(rng.standard_normal((2, 4, 3, 4)).astype(np.float64))
    v = _pair(rng.standard_normal((2, 4, 3, 4)).astype(np.float64))
    _run_both(lambda q, k, v: EF.scaled_dot_product_attention(
                  q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True),
              lambda q, k, v: TF.scaled_dot_product_attention(
                  q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True),
              [q, k, v], (2, 3, 7, 4), "float64", rng)


def test_sdpa_mask_and_causal_together_refused():
    q = ember.zeros(1, 2, 3, 4)
    with pytest.raises(RuntimeError, match="Explicit attn_mask should not be set"):
        EF.scaled_dot_product_attention(q, q, q, attn_mask=ember.ones(3, 3, dtype=ember.bool),
                                        is_causal=True)


@pytest.mark.parametrize("mask_shape,message", [
    ((6,), r"Dimension out of range \(expected to be in range of \[-1, 0\], but got -2\)"),
    ((), "Dimension specified as -2 but tensor has no dimensions")])
@pytest.mark.parametrize("dtype", ["bool", "float32"])
def test_sdpa_mask_of_fewer_than_two_dims_refused_as_torch(mask_shape, message, dtype):
    q = ember.zeros(1, 2, 5, 4)
    with pytest.raises(IndexError, match=message):
        EF.scaled_dot_product_attention(q, q, q, attn_mask=ember.ones(mask_shape,
                                                                       dtype=getattr(ember, dtype)))
    tq = torch.zeros(1, 2, 5, 4)
    with pytest.raises(IndexError, match=message):
        TF.scaled_dot_product_attention(tq, tq, tq, attn_mask=torch.ones(mask_shape,
                                                                         dtype=getattr(torch, dtype)))


def test_sdpa_dropout_is_softmax_then_dropout():
    rng = np.random.default_rng(13)
    q, k, v = (ember.tensor(rng.standard_normal((2, 2, 5, 4)).astype(np.float32),
                            requires_grad=True) for _ in range(3))
    ember.manual_seed(3)
    out = EF.scaled_dot_product_attention(q, k, v, dropout_p=0.4, is_causal=True)
    ember.manual_seed(3)
    scores = q @ k.transpose(-2, -1) / 2.0 + ember.full((5, 5), float("-inf")).triu(1)
    ref = EF.dropout(EF.softmax(scores, -1), 0.4, True) @ v
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-6)
    g1 = ember.autograd.grad(out.sum(), (q, k, v))
    g2 = ember.autograd.grad(ref.sum(), (q, k, v))
    for a, b in zip(g1, g2):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_sdpa_and_layer_norm_under_autocast_keep_torch_dtypes(dt):
    rng = np.random.default_rng(14)
    x = rng.standard_normal((2, 2, 3, 4)).astype(np.float32)
    dtypes = []
    for lib, F in ((ember, EF), (torch, TF)):
        t = lib.tensor(x, requires_grad=True)
        with lib.autocast("cpu", dtype=getattr(lib, dt)):
            a = F.scaled_dot_product_attention(t, t, t, is_causal=True)
            n = F.layer_norm(a, (4,))
        (a.float().sum() + n.float().sum()).backward()
        dtypes.append((str(a.dtype), str(n.dtype), str(t.grad.dtype)))
    assert [d.split(".")[-1] for d in dtypes[0]] == [d.split(".")[-1] for d in dtypes[1]]


@pytest.mark.parametrize("mask", ["causal", "bool", None])
def test_sdpa_one_node_gradcheck_and_second_derivative(mask):
    from ember.autograd import gradcheck, gradgradcheck
    rng = np.random.default_rng(15)
    q, k, v = (ember.tensor(rng.standard_normal((2, 2, 4, 3)), requires_grad=True)
               for _ in range(3))
    kw = {"is_causal": True} if mask == "causal" else {}
    if mask == "bool":
        m = rng.random((4, 4)) > 0.3
        m[1] = False
        kw = {"attn_mask": ember.tensor(m)}

    def f(q, k, v):
        return EF.scaled_dot_product_attention(q, k, v, scale=-0.7, **kw)
    assert f(q, k, v).grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    assert gradcheck(f, (q, k, v))
    assert gradgradcheck(f, (q, k, v))


def test_sdpa_one_node_forward_ad_and_grad_fn_names_match_torch():
    rng = np.random.default_rng(16)
    arrs = [rng.standard_normal((1, 2, 3, 4)) for _ in range(6)]
    e = ember.func.jvp(lambda q, k, v: EF.scaled_dot_product_attention(q, k, v, is_causal=True),
                       tuple(ember.tensor(a) for a in arrs[:3]),
                       tuple(ember.tensor(a) for a in arrs[3:]))
    # PyTorch's fused CPU kernel has no forward AD: its 3-d (math path) form is the reference
    t = torch.func.jvp(lambda q, k, v: TF.scaled_dot_product_attention(q, k, v, is_causal=True),
                       tuple(torch.tensor(a[0]) for a in arrs[:3]),
                       tuple(torch.tensor(a[0]) for a in arrs[3:]))
    for a, b in zip(e, t):
        np.testing.assert_allclose(a.numpy()[0], b.numpy(), rtol=1e-10, atol=1e-12)
    names = []
    for lib, F in ((ember, EF), (torch, TF)):
        x = lib.tensor(arrs[0], requires_grad=True)
        names.append([type(F.scaled_dot_product_attention(x, x, x).grad_fn).__name__,
                      type(F.scaled_dot_product_attention(x[0], x[0], x[0]).grad_fn).__name__ !=
                      "ScaledDotProductFlashAttentionForCpuBackward0"])
    assert names[0] == names[1]


@pytest.mark.parametrize("width", [1, 2, 3, 7, 8, 33, 64, 65, 200])
def test_row_max_tree_is_numpys_max(width):
    """softmax's row maximum over short rows (a tree of halving maxima) is NumPy's own, NaN,
    infinities and odd widths included."""
    from ember.ops.softmax_family import max_along
    x = np.random.default_rng(width).standard_normal((41, width)).astype(np.float32)
    x[0, 0], x[1, :], x[2, -1], x[3, width // 2] = np.nan, -np.inf, np.inf, 30.0
    got = max_along(np, x, 1)
    assert got.shape == (41, 1)
    np.testing.assert_array_equal(got, x.max(1, keepdims=True))
