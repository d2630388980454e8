"""ember's own CuPy kernels (ops/_device_kernels.py, ops/normalization/_device_fused.py,
ops/conv/_device_columns.py, ops/pooling/_device_pool.py): the norms, ReLU and GELU take them
on a device and give the values of the path they replace, to the bit on the strict stand-in,
which runs their C with NumPy (each kernel is that path's operations in its order), and within
a GPU's rounding there (EMBER_TEST_REAL_CUDA=1); 2-d convolutions and max pooling take their
index kernels and give the CPU's values (max pooling's to the bit)."""
import functools

import numpy as np
import pytest

import ember
import ember.nn.functional as F
from tests._strict_cupy import REAL_CUDA, strict_cupy

# the stand-in gives the replaced path's bits; a GPU rounds its own (it may contract a multiply
# and an add, and its exp and sqrt are not NumPy's), so there the values agree closely
_same = functools.partial(np.testing.assert_allclose, rtol=2e-5, atol=1e-6) if REAL_CUDA \
    else np.testing.assert_array_equal


def _norm_steps(device, dtype, x, w, b):
    """Batch norm (training, running statistics updated, twice) and layer norm, forward and
    backward: outputs, gradients and running statistics as NumPy arrays."""
    xt = ember.tensor(x, device=device, requires_grad=True)
    wt, bt = (ember.tensor(a, device=device, requires_grad=True) for a in (w, b))
    rm, rv = ember.zeros(3, dtype=dtype, device=device), ember.ones(3, dtype=dtype, device=device)
    for _ in range(2):
        bn = F.batch_norm(xt, rm, rv, wt, bt, training=True, momentum=0.3)
    ln = F.layer_norm(xt, (5,), wt[0].expand(5), bt[1].expand(5))
    bare = F.layer_norm(xt, (5,))  # no weight: the general form's kernels
    plain = F.batch_norm(xt, None, None, training=True)
    (bn.sin().sum() + ln.cos().sum() + plain.pow(3).sum() + bare.exp().sum()).backward()
    return [t.detach().cpu().numpy()
            for t in (bn, ln, plain, bare, xt.grad, wt.grad, bt.grad, rm, rv)]


@pytest.mark.usefixtures("numpy_kernels")  # (the NumPy routines' own bits)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_norms_on_a_device_run_the_fused_kernels_with_the_cpus_bits(monkeypatch, dtype):
    from ember.ops import _device_kernels
    made = []
    inner = _device_kernels._compiled

    def recording(xp, kernel):
        made.append(kernel.name)
        return inner(xp, kernel)
    monkeypatch.setattr(_device_kernels, "_compiled", recording)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3, 5)).astype(dtype)
    w, b = rng.standard_normal(3).astype(dtype), rng.standard_normal(3).astype(dtype)
    with strict_cupy():
        got = _norm_steps("cuda", getattr(ember, dtype), x, w, b)
    want = _norm_steps("cpu", getattr(ember, dtype), x, w, b)
    for g, c in zip(got, want):
        _same(g, c)
    assert {"ember_norm_stats", "ember_norm_batch_stats", "ember_norm_running",
            "ember_norm_batch_back", "ember_norm_batch_back_scaled", "ember_norm_centred_coefs",
            "ember_norm_input_grad", "ember_norm_normalized", "ember_norm_normalized_shifted",
            "ember_norm_centred_input_grad", "ember_norm_normalized_affine",
            "ember_norm_affine_input_grad"} <= set(made)


@pytest.mark.usefixtures("numpy_kernels")  # (the NumPy routines' own bits)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(4, 7), (2, 3, 5), (2, 2, 3, 6)])
@pytest.mark.parametrize("needs", ["all", "no_input", "no_weight", "no_bias"])
def test_layer_norm_backward_kernels_give_the_cpus_bits(monkeypatch, dtype, shape, needs):
    """Layer norm's backward on a device (xhat and g * w computed inside its reductions and
    its input-gradient pass, never stored) gives the CPU's bits, whichever gradients are
    wanted."""
    rng = np.random.default_rng(4)
    x = rng.standard_normal(shape).astype(dtype)
    w, b = (rng.standard_normal(shape[-1]).astype(dtype) for _ in range(2))

    def run(device):
        xt = ember.tensor(x, device=device, requires_grad=needs != "no_input")
        wt = ember.tensor(w, device=device, requires_grad=needs != "no_weight")
        bt = ember.tensor(b, device=device, requires_grad=True) if needs != "no_bias" else None
        y = F.layer_norm(xt, shape[-1:], wt, bt)
        y.sin().sum().backward()
        return [y.detach().cpu().numpy()] + [t.grad.cpu().numpy() for t in (xt, wt, bt)
                                             if t is not None and t.grad is not None]
    with strict_cupy():
        made = _recording_kernels(monkeypatch)
        got = run("cuda")
    if needs != "no_input":
        assert "ember_norm_affine_input_grad" in made
    want = run("cpu")
    assert len(got) == len(want)
    for g, c in zip(got, want):
        _same(g, c)


def test_half_inputs_and_buffers_give_the_cpus_bits():
    """float16 normalises in float32 (its opmath), where the kernels apply; float16 running
    buffers beside float32 statistics take the general update."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3, 5)).astype(np.float16)

    def run(device):
        rm = ember.zeros(3, dtype=ember.float16, device=device)
        rv = ember.ones(3, dtype=ember.float16, device=device)
        y = F.batch_norm(ember.tensor(x, device=device), rm, rv, training=True)
        return [t.cpu().numpy() for t in (y, rm, rv)]
    with strict_cupy():
        got = run("cuda")
    for g, c in zip(got, run("cpu")):
        assert g.dtype == np.float16
        if REAL_CUDA:  # float16's rounding of a GPU's float32 statistics
            np.testing.assert_allclose(g.astype(np.float32), c.astype(np.float32), rtol=1e-3,
                                       atol=1e-3)
        else:
            np.testing.assert_array_equal(g, c)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_relu_and_gelu_kernels_give_the_general_paths_bits(monkeypatch, dtype):
    """ReLU's backward and GELU both ways as one kernel each on a device: the values of the
    device's general path (which the CPU's float32 GELU, a different erf, does not share)."""
    from ember.ops import _device_kernels
    made = []
    inner = _device_kernels._compiled

    def recording(xp, kernel):
        made.append(kernel.name)
        return inner(xp, kernel)
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 7)) * 3).astype(dtype)
    x[0, :3] = [0.0, np.nan, -np.inf]

    def run():
        xt = ember.tensor(x, device="cuda", requires_grad=True)
        r, g = F.relu(xt), F.gelu(xt)
        (r * 1.5 + g.cos()).sum().backward()
        return [r.detach().cpu().numpy(), g.detach().cpu().numpy(), xt.grad.cpu().numpy()]
    with strict_cupy():
        monkeypatch.setattr(_device_kernels, "_compiled", recording)
        fused = run()
        monkeypatch.setattr(_device_kernels, "usable", lambda xp, *arrays: False)
        general = run()
    assert {"ember_relu_grad", "ember_gelu", "ember_gelu_grad"} <= set(made)
    for f, g in zip(fused, general):
        _same(f, g)


@pytest.mark.usefixtures("numpy_kernels")  # (the NumPy routines' own bits)
def test_a_kernel_that_does_not_compile_turns_them_all_off_with_a_warning(monkeypatch):
    """Every kernel is compiled before any is used: where one fails (a CuPy or CUDA ember was
    not run on), all stay off for that dtype and the general paths give the same results."""
    from ember.ops import _device_kernels
    broken = object.__new__(_device_kernels.Kernel)  # not registered for other tests
    broken.name, broken.in_params, broken.out_params = "ember_broken", "T x", "T y"
    broken.trial = None
    broken.operation = "y = x +* 1"  # compiles nowhere: NVRTC and the stand-in refuse it
    monkeypatch.setattr(_device_kernels, "_KERNELS", _device_kernels._KERNELS + [broken])
    monkeypatch.setattr(_device_kernels, "_COMPILED", {})
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 3, 5)).astype(np.float32)
    w, b = rng.standard_normal(3).astype(np.float32), rng.standard_normal(3).astype(np.float32)
    with strict_cupy():
        with pytest.warns(RuntimeWarning, match="ember_broken did not run"):
            got = _norm_steps("cuda", ember.float32, x, w, b)
        assert _device_kernels._COMPILED and not any(_device_kernels._COMPILED.values())
    for g, c in zip(got, _norm_steps("cpu", ember.float32, x, w, b)):
        _same(g, c)


def _recording_kernels(monkeypatch):
    """The names of the kernels made from here on (a list that fills as they are)."""
    from ember.ops import _device_kernels
    made, inner = [], _device_kernels._compiled

    def recording(xp, kernel):
        made.append(kernel.name)
        return inner(xp, kernel)
    monkeypatch.setattr(_device_kernels, "_compiled", recording)
    return made


CONVS = [  # (N, C, O, *size), kernel, stride, padding, dilation, groups
    ((2, 3, 4, 7, 6), (3, 3), 1, 1, 1, 1),
    ((2, 3, 5, 9, 8), (2, 3), (2, 1), (1, 2), (1, 2), 1),
    ((1, 4, 2, 5, 5), (1, 1), 2, 0, 1, 1),
    ((3, 2, 3, 11, 10), (7, 7), 2, 3, 1, 1),
    ((2, 6, 4, 7, 8), (3, 3), 2, 1, 1, 2),
    ((2, 4, 4, 6, 6), (3, 3), 1, 1, 1, 4),  # depthwise
    ((2, 3, 4, 11), (3,), 2, 1, 2, 1),  # 1-d
    ((2, 4, 6, 9), (2,), 1, 1, 1, 2),
]


@pytest.mark.usefixtures("full_float32")  # held to the CPU's values
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("case", range(len(CONVS)))
def test_convolutions_take_the_index_kernels_with_the_cpus_values(monkeypatch, dtype, case):
    """conv1d/conv2d forward and both gradients, and the transposed convolutions, by im2col /
    col2im kernels and one product (a batched one with groups) each on a device: the CPU's
    values but for the products' summation order."""
    (n, c, o, *size), kernel, stride, padding, dilation, groups = CONVS[case]
    rng = np.random.default_rng(case)
    x = rng.standard_normal((n, c, *size)).astype(dtype)
    wt = rng.standard_normal((o, c // groups) + kernel).astype(dtype)
    wt_t = rng.standard_normal((o, c // groups) + kernel).astype(dtype)
    conv, conv_t = (F.conv1d, F.conv_transpose1d) if len(size) == 1 else \
        (F.conv2d, F.conv_transpose2d)

    def run(device):
        xt = ember.tensor(x, device=device, requires_grad=True)
        k = ember.tensor(wt, device=device, requires_grad=True)
        k_t = ember.tensor(wt_t, device=device, requires_grad=True)
        y = conv(xt, k, stride=stride, padding=padding, dilation=dilation, groups=groups)
        z = conv_t(y, k_t, stride=stride, padding=padding, dilation=dilation, groups=groups)
        (y.sin().sum() + z.cos().sum()).backward()
        return [t.detach().cpu().numpy() for t in (y, z, xt.grad, k.grad, k_t.grad)]
    with strict_cupy():
        made = _recording_kernels(monkeypatch)
        got = run("cuda")
    assert {"ember_im2col", "ember_col2im", "ember_swap_leading"} <= set(made)
    rtol = 1e-4 if dtype == "float32" else 1e-12  # (sums of ~100 terms that cancel)
    for g, c_ in zip(got, run("cpu")):
        np.testing.assert_allclose(g, c_, rtol=rtol, atol=rtol * np.abs(c_).max())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_max_pooling_takes_its_kernels_with_the_cpus_bits(monkeypatch, dtype):
    """max_pool2d (overlapping, padded, dilated and ceil-mode windows; ties, NaN and -inf)
    forward, indices and backward as one kernel each on a device, to the CPU's bits."""
    rng = np.random.default_rng(5)
    cases = [((2, 3, 9, 8), 3, 2, 1, 1, False), ((2, 3, 8, 8), 2, 2, 0, 1, False),
             ((1, 2, 7, 9), (3, 2), (2, 1), (1, 1), (1, 2), True), ((3, 5, 5), 3, 1, 1, 1, False)]
    for shape, k, s, p, d, ceil in cases:
        x = rng.integers(-3, 4, shape).astype(dtype)
        x.flat[5], x.flat[17] = np.nan, -np.inf

        def run(device):
            xt = ember.tensor(x, device=device, requires_grad=True)
            y, idx = F.max_pool2d(xt, k, s, p, d, ceil_mode=ceil, return_indices=True)
            weights = ember.arange(y.numel(), device=device, dtype=y.dtype).reshape(y.shape)
            (y * weights).nansum().backward()
            return [t.detach().cpu().numpy() for t in (y, idx, xt.grad)]
        with strict_cupy():
            made = _recording_kernels(monkeypatch)
            got = run("cuda")
        assert {"ember_max_pool2d", "ember_max_pool2d_grad"} <= set(made)
        for g, c in zip(got, run("cpu")):
            np.testing.assert_array_equal(g, c)


@pytest.mark.skipif(REAL_CUDA, reason="plants a wrong kernel")
@pytest.mark.parametrize("kernel, wrong", [("_IM2COL", ("ki * dh", "(ki + 1) * dh")),
                                           ("_COL2IM", ("s += ", "s -= ")),
                                           ("_MAX_POOL", ("v > m", "v >= m")),
                                           ("_ROWS_IN_RANGE", ("idx % n + n", "idx % n + 1"))])
def test_an_index_kernel_that_computes_wrongly_fails_its_first_read(monkeypatch, kernel, wrong):
    """Before first use each index kernel runs a small case that the device compares with
    NumPy's answer; a difference (a CuPy that indexes raw arrays otherwise, a miscompile)
    fails the next read as a device-side assert does, rather than training on wrong values."""
    from ember.ops.conv import _device_columns
    from ember.ops.pooling import _device_pool
    import importlib  # (the package exports a function of the module's name)
    embedding = importlib.import_module("ember.ops.normalization.embedding")
    owner = {"_MAX_POOL": _device_pool, "_ROWS_IN_RANGE": embedding}.get(kernel,
                                                                      _device_columns)
    from ember.ops import _device_kernels
    planted = getattr(owner, kernel)
    monkeypatch.setattr(planted, "operation", planted.operation.replace(*wrong))
    monkeypatch.setattr(_device_kernels, "_COMPILED", {})  # (trials run once a process)
    x = np.random.default_rng(6).standard_normal((2, 3, 6, 6)).astype(np.float32)
    _device_kernels._compiled.cache_clear()  # (kernels are made once a process too)
    try:
        with strict_cupy():
            y = F.max_pool2d(F.conv2d(ember.tensor(x, device="cuda"),
                                      ember.ones(2, 3, 3, 3, device="cuda")), 2)
            with pytest.raises(RuntimeError, match=f"ember_{planted.name[6:]}"):
                y.sum().item()
    finally:  # the planted kernel is made for no other test
        _device_kernels._compiled.cache_clear()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_repeated_rows_add_up_by_the_run_sums_kernel_with_the_cpus_bits(monkeypatch, dtype):
    """An embedding's backward and index_add with repeated rows sum each row's run in one
    kernel, in float64 and position order: the embedding's to the CPU's bits (its bincount
    sums so), index_add's within rounding (the CPU's reduceat sums in float32)."""
    rng = np.random.default_rng(7)
    idx = rng.integers(0, 7, (4, 9))
    w = rng.standard_normal((7, 5)).astype(dtype)
    g = rng.standard_normal((4, 9, 5)).astype(dtype)

    def run(device):
        wt = ember.tensor(w, device=device, requires_grad=True)
        F.embedding(ember.tensor(idx, device=device), wt).backward(ember.tensor(g, device=device))
        added = ember.zeros(7, 5, dtype=wt.dtype, device=device).index_add_(
            0, ember.tensor(idx.reshape(-1), dtype=ember.int32, device=device),
            ember.tensor(g.reshape(-1, 5), device=device))
        return [wt.grad.cpu().numpy(), added.cpu().numpy()]
    with strict_cupy():
        made = _recording_kernels(monkeypatch)
        got = run("cuda")
    assert "ember_run_sums" in made
    cpu = run("cpu")
    np.testing.assert_array_equal(got[0], cpu[0])
    np.testing.assert_allclose(got[1], cpu[1], rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("transposed", [False, True])
def test_device_convolutions_over_the_column_budget_go_in_slices(monkeypatch, transposed):
    """On a device too, a batch whose columns exceed its budget is convolved in slices of the
    batch (forward, and each gradient on its own): the values of one pass."""
    from ember.ops.conv import _routines
    rng = np.random.default_rng(8)
    x = rng.standard_normal((5, 4, 9, 9))
    w = rng.standard_normal((4, 6, 3, 3) if transposed else (6, 4, 3, 3))
    fn = F.conv_transpose2d if transposed else F.conv2d

    def run():
        ts = [ember.tensor(a, device="cuda", requires_grad=True) for a in (x, w)]
        out = fn(*ts, stride=2, padding=1, dilation=2)
        (out * out).sum().backward()
        return [out.detach().cpu().numpy()] + [t.grad.cpu().numpy() for t in ts]
    with strict_cupy():
        whole = run()
        monkeypatch.setattr(_routines, "DEVICE_COL_BUDGET", 1)  # one sample per slice
        sliced = run()
    for got, want in zip(sliced, whole):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_a_devices_column_budget_keeps_resnet18_at_batch_64_whole():
    """A device's step is bound by its calls: ResNet-18's 7x7 stem at batch 64 (450 MB of
    columns) goes whole there, in two slices on the CPU; at batch 256 (1.8 GB) in four."""
    from ember.ops.conv import _routines
    p = ((2, 2), (3, 3), (3, 3), (1, 1), 1)
    x = np.zeros((64, 3, 224, 224), np.float32)
    assert len(_routines._batch_slices(x, (7, 7), p, (112, 112))) == 2
    with strict_cupy() as cp:
        assert _routines._batch_slices(cp.asarray(x), (7, 7), p, (112, 112)) is None
        big = cp.zeros((256, 3, 224, 224), np.float32)
        assert len(_routines._batch_slices(big, (7, 7), p, (112, 112))) == 4


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_attention_takes_its_softmax_kernels_with_the_cpus_values(monkeypatch, dtype):
    """scaled_dot_product_attention on a device: the scores' scale and mask, softmax's sum and
    normalising pass and the backward's closed form each one kernel; the CPU's values but for
    the row sums' order, a row the mask hides wholly giving zeros (not NaN) as on the CPU."""
    rng = np.random.default_rng(9)
    q, k, v = (rng.standard_normal((2, 3, 5, 4)).astype(dtype) for _ in range(3))
    mask = rng.random((5, 5)) > 0.3
    mask[0] = False
    for kwargs in (dict(is_causal=True), dict(scale=0.3), dict(attn_mask=mask)):
        def run(device):
            ts = [ember.tensor(a, device=device, requires_grad=True) for a in (q, k, v)]
            options = {key: ember.tensor(value, device=device) if key == "attn_mask" else value
                       for key, value in kwargs.items()}
            out = F.scaled_dot_product_attention(*ts, **options)
            out.sin().sum().backward()
            return [out.detach().cpu().numpy()] + [t.grad.cpu().numpy() for t in ts]
        with strict_cupy():
            made = _recording_kernels(monkeypatch)
            got = run("cuda")
        assert {"ember_softmax_normalize", "ember_attention_scores_grad"} <= set(made)
        rtol = (2e-5 if REAL_CUDA else 1e-6) if dtype == "float32" else 1e-13  # (a GPU's exp)
        for g, c in zip(got, run("cpu")):
            assert not np.isnan(g).any()
            np.testing.assert_allclose(g, c, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_nll_loss_takes_its_rows_and_selector_kernels_with_the_cpus_bits(monkeypatch, dtype,
                                                                        reduction):
    """nll_loss on a device: each row's loss, weight and safe class in one kernel, and the
    gradient's selector (each row's gradient at its target class, an ignored target's row
    zero) in another, with the CPU's bits; an ignored row adds +0 even where the logit it
    would have picked is inf or NaN."""
    rng = np.random.default_rng(10)
    x = rng.standard_normal((6, 7)).astype(dtype)
    t = rng.integers(1, 7, 6)
    t[2] = t[4] = -100
    x[2, 0], x[4, 0] = np.inf, np.nan  # what an ignored row's wrapped class 0 would pick

    def run(device):
        xt = ember.tensor(x, device=device, requires_grad=True)
        loss = F.nll_loss(xt, ember.tensor(t, device=device), reduction=reduction)
        loss.sum().backward()
        return [loss.detach().cpu().numpy(), xt.grad.cpu().numpy()]
    with strict_cupy():
        made = _recording_kernels(monkeypatch)
        got = run("cuda")
    assert {"ember_nll_rows", "ember_nll_selector"} <= set(made)
    for g, c in zip(got, run("cpu")):
        assert np.isfinite(g).all()
        _same(g, c)
    if reduction == "none":
        assert got[0][2] == 0 and not np.signbit(got[0][[2, 4]]).any()


@pytest.mark.skipif(REAL_CUDA, reason="plants a wrong kernel")
def test_a_wrong_nll_rows_kernel_fails_its_first_read(monkeypatch):
    """nll_loss's rows kernel indexes the logits by target: its trial (an ignored target, one
    past the classes, a negative one) catches a kernel that picks the wrong class."""
    from ember.ops import _device_kernels, loss
    planted = loss._NLL_ROWS
    monkeypatch.setattr(planted, "operation", planted.operation.replace(
        "i * classes + safe", "i * classes"))
    monkeypatch.setattr(_device_kernels, "_COMPILED", {})
    _device_kernels._compiled.cache_clear()
    try:
        with strict_cupy():
            out = F.nll_loss(ember.randn(3, 4, device="cuda"),
                             ember.tensor([1, 2, 3], device="cuda"))
            with pytest.raises(RuntimeError, match="ember_nll_rows"):
                out.item()
    finally:
        _device_kernels._compiled.cache_clear()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gradient_clipping_norms_each_gradient_in_one_kernel_with_the_cpus_bits(dtype):
    """clip_grad_norm_'s per-gradient 2-norms (HF's Trainer and nanoGPT clip every step) are
    one reduction kernel each on a device, sqrt on the way out, where the sum of squares and
    the sqrt took two; the norms along dims too (vector_norm with dim and keepdim)."""
    from ember.ops import _device_kernels
    rng = np.random.default_rng(4)
    shapes = [(6, 5), (5,), (), (3, 4, 2)]
    grads = [rng.standard_normal(s).astype(dtype) * 3 for s in shapes]

    def clip(device):
        params = [ember.zeros(s, dtype=getattr(ember, dtype), device=device, requires_grad=True)
                  for s in shapes]
        for p, g in zip(params, grads):
            p.grad = ember.tensor(g, device=device)
        total = ember.nn.utils.clip_grad_norm_(params, 1.0)
        x = ember.tensor(grads[3], device=device)
        along = [ember.linalg.vector_norm(x, dim=d, keepdim=k) for d, k in ((1, False),
                                                                           ((0, 2), True))]
        return [t.cpu().numpy() for t in [total, *along, *(p.grad for p in params)]]
    real, calls = _device_kernels._norm2_kernel, []
    with strict_cupy(), pytest.MonkeyPatch.context() as m:
        m.setattr(_device_kernels, "_norm2_kernel", lambda xp: calls.append(1) or real(xp))
        got = clip("cuda")
    want = clip("cpu")
    for g, c in zip(got, want):
        _same(g, c)
    assert len(calls) == len(shapes) + 1 + 2  # each gradient, their stack, the two along dims
