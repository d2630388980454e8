"""Memory formats: channels_last is real (NHWC memory seen as NCHW); strides, is_contiguous
answers, preserve_format's choices and errors as PyTorch's."""
import pickle
import re

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

E_FMT = {"contiguous_format": ember.contiguous_format, "channels_last": ember.channels_last,
         "channels_last_3d": ember.channels_last_3d, "preserve_format": ember.preserve_format}
T_FMT = {k: getattr(torch, k) for k in E_FMT}

# (shape, a view recipe applied to both libraries)
CASES = [
    ((2, 3, 4, 5), lambda t: t),
    ((2, 3, 4, 5), lambda t: t.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)),
    ((2, 3, 4, 5), lambda t: t.transpose(2, 3)),
    ((2, 3, 4, 5), lambda t: t[:, :, ::2]),
    ((2, 3, 4, 5), lambda t: t.permute(0, 2, 3, 1).contiguous().permute(0, 3, 1, 2)[:, :, 1:3]),
    ((2, 1, 4, 4), lambda t: t.contiguous(memory_format=_fmt(t, "channels_last"))),
    ((2, 3, 1, 1), lambda t: t.contiguous(memory_format=_fmt(t, "channels_last"))),
    ((1, 3, 4, 4), lambda t: t.contiguous(memory_format=_fmt(t, "channels_last"))),
    ((2, 3, 1, 1), lambda t: t),
    ((2, 3, 4, 5, 6), lambda t: t),
    ((2, 3, 4, 5, 6), lambda t: t.contiguous(memory_format=_fmt(t, "channels_last_3d"))),
    ((2, 3, 4), lambda t: t.transpose(0, 2)),
    ((3, 4), lambda t: t),
]


def _fmt(t, name):
    return (E_FMT if isinstance(t, ember.Tensor) else T_FMT)[name]


def _pair(shape, recipe):
    a = np.random.default_rng(0).standard_normal(shape)
    return recipe(ember.tensor(a)), recipe(torch.tensor(a))


def test_reprs_and_identity():
    for name, fmt in E_FMT.items():
        assert repr(fmt) == repr(T_FMT[name]) == str(fmt)
        assert isinstance(fmt, ember.memory_format)
        assert pickle.loads(pickle.dumps(fmt)) is fmt


@pytest.mark.parametrize("case", range(len(CASES)))
def test_strides_and_is_contiguous(case):
    e, t = _pair(*CASES[case])
    assert e.stride() == t.stride()
    for name in E_FMT:
        assert e.is_contiguous(memory_format=E_FMT[name]) == t.is_contiguous(
            memory_format=T_FMT[name]), name


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("name", list(E_FMT))
def test_copies_follow_pytorch(case, name):
    e, t = _pair(*CASES[case])
    calls = [lambda x, f: x.clone(memory_format=f), lambda x, f: x.contiguous(memory_format=f),
             lambda x, f: x.to(memory_format=f), lambda x, f: x.to(x.dtype, memory_format=f,
                                                                  copy=True),
             lambda x, f: x.float(memory_format=f)]
    lib_calls = [(lambda x, f: ember.empty_like(x, memory_format=f), lambda x, f:
                  torch.empty_like(x, memory_format=f))]
    for fn in ["zeros_like", "ones_like", "rand_like", "randn_like"]:
        lib_calls.append((lambda x, f, fn=fn: getattr(ember, fn)(x, memory_format=f),
                          lambda x, f, fn=fn: getattr(torch, fn)(x, memory_format=f)))
    pairs = [(c, c) for c in calls] + lib_calls
    for ec, tc in pairs:
        try:
            want = tc(t, T_FMT[name])
        except RuntimeError as err:
            with pytest.raises(RuntimeError, match=str(err)):
                ec(e, E_FMT[name])
            continue
        got = ec(e, E_FMT[name])
        assert got.stride() == want.stride()
        assert (got is e) == (want is t)
        if ec in calls:  # copies keep values (the factories' values are not compared)
            np.testing.assert_array_equal(got.detach().numpy(), want.detach().numpy())


def test_empty_with_format():
    for shape in [(2, 3, 4, 5), (2, 1, 4, 4), (2, 3, 1, 1), (0, 3, 2, 2), (2, 0, 2, 2)]:
        for name in ["contiguous_format", "channels_last"]:
            assert (ember.empty(*shape, memory_format=E_FMT[name]).stride()
                    == torch.empty(*shape, memory_format=T_FMT[name]).stride())
    assert (ember.empty(2, 3, 4, 5, 6, memory_format=ember.channels_last_3d).stride()
            == torch.empty(2, 3, 4, 5, 6, memory_format=torch.channels_last_3d).stride())


@pytest.mark.parametrize("call", [
    lambda L: L.randn(2, 3, 4).contiguous(memory_format=L.channels_last),
    lambda L: L.empty(2, 3, 4, memory_format=L.channels_last),
    lambda L: L.randn(2, 3, 4, 5).contiguous(memory_format=L.channels_last_3d),
    lambda L: L.randn(2, 3, 4).to(memory_format=L.channels_last),
    lambda L: L.empty_like(L.randn(3), memory_format=L.channels_last),
    lambda L: L.empty(2, 3, memory_format=L.preserve_format),
    lambda L: L.randn(2, 3, 4, 5).contiguous(memory_format=1),
    lambda L: L.randn(2, 3).clone(memory_format="channels_last"),
    lambda L: L.nn.Conv3d(2, 2, 1).to(memory_format=L.channels_last),
])
def test_errors(call):
    with pytest.raises(Exception) as want:
        call(torch)
    with pytest.raises(type(want.value), match=str(want.value).replace("(", r"\(")
                       .replace(")", r"\)")):
        call(ember)


def test_gradients_unchanged_by_layout():
    a = np.random.default_rng(1).standard_normal((2, 3, 4, 5))
    for L in (ember, torch):
        x = L.tensor(a, requires_grad=True)
        y = x.to(memory_format=L.channels_last)
        z = x.contiguous(memory_format=L.channels_last) * y.clone() + L.zeros_like(y)
        assert type(y.grad_fn).__name__ == "ToCopyBackward0"
        z.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * a)


def test_module_to_channels_last():
    ember.manual_seed(0)
    m = ember.nn.Sequential(ember.nn.Conv2d(3, 4, 3), ember.nn.BatchNorm2d(4),
                            ember.nn.Linear(2, 2))
    tm = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.BatchNorm2d(4),
                             torch.nn.Linear(2, 2))
    before = {k: v.clone() for k, v in m.state_dict().items()}
    assert m.to(memory_format=ember.channels_last) is m
    tm.to(memory_format=torch.channels_last)
    for (k, v), (tk, tv) in zip(m.state_dict().items(), tm.state_dict().items()):
        assert k == tk and v.stride() == tv.stride(), k
        assert ember.equal(v, before[k])
    assert isinstance(m[0].weight, ember.nn.Parameter)


def test_multiprocessing_imported_with_ember():
    import subprocess
    import sys
    code = "import ember; print(ember.multiprocessing.spawn.__name__)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "spawn"


@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("grad_of", ["mul", "contiguous", "sum", "add"])
def test_leaf_grad_follows_the_leaf_layout(case, grad_of):
    """AccumulateGrad's layout contract: a dense leaf's .grad has the leaf's strides, any
    other leaf's a contiguous .grad (whatever layout the incoming gradient has)."""
    grads = []
    for lib, x in zip((ember, torch), _pair(*CASES[case])):
        x = x.detach().requires_grad_()
        y = {"mul": lambda: x * 2, "contiguous": lambda: x.contiguous() * 2,
             "sum": lambda: x.sum() * lib.ones(x.shape), "add": lambda: x + 0}[grad_of]()
        # "add" hands the given gradient (laid out as x is) straight to the leaf
        y.backward(lib.empty_like(x).fill_(1.0) if grad_of == "add" else lib.ones(x.shape))
        grads.append(x.grad)
    assert grads[0].stride() == grads[1].stride()
    np.testing.assert_array_equal(grads[0].numpy(), grads[1].numpy())


@pytest.mark.parametrize("case", range(len(CASES)))
def test_checkpoints_keep_the_layout(case, tmp_path):
    """A tensor saved by ember loads in PyTorch with the strides PyTorch would have saved,
    and the other way round; values always survive."""
    e, t = _pair(*CASES[case])
    e, t = e.contiguous() if e._base is not None else e, t.contiguous() if t._base is not None \
        else t
    ember.save({"x": e}, tmp_path / "e.pt")
    torch.save({"x": t}, tmp_path / "t.pt")
    from_ember = torch.load(tmp_path / "e.pt")["x"]
    from_torch = ember.load(tmp_path / "t.pt")["x"]
    assert from_ember.stride() == t.stride() and from_torch.stride() == e.stride()
    np.testing.assert_array_equal(from_ember.numpy(), t.numpy())
    np.testing.assert_array_equal(from_torch.numpy(), e.numpy())


@pytest.mark.parametrize("size, stride", [((2, 3), (1, 2)), ((2, 3), (0, 1)), ((2, 3), (3, 1)),
                                          ((2, 3, 4, 5), (60, 1, 15, 3)), ((4,), (2,)),
                                          ((2, 3), (1,)), ((2, 3), (-1, 1)), ((2, 3), (1, 2, 3))])
def test_empty_strided(size, stride):
    try:
        want = torch.empty_strided(size, stride)
    except RuntimeError as err:
        with pytest.raises(RuntimeError, match=re.escape(str(err))):
            ember.empty_strided(size, stride)
        return
    got = ember.empty_strided(size, stride)
    assert got.shape == want.shape and got.stride() == want.stride()
    assert got.is_contiguous() == want.is_contiguous()
    got.fill_(2.0)
    assert ember.equal(got, ember.full(size, 2.0))


# Ops PyTorch computes into a fresh contiguous tensor whatever the input's layout (roll: in
# the layout the input suggests), where NumPy's results follow the input's order: each
# result's strides beside PyTorch's, and `.view(-1)` (which a transposed result refuses).
CONTIGUOUS_RESULTS = {
    "softmax": lambda lib, t: lib.nn.functional.softmax(t, 1),
    "log_softmax": lambda lib, t: lib.nn.functional.log_softmax(t, -1),
    "softmin": lambda lib, t: lib.nn.functional.softmin(t, 0),
    "cumsum": lambda lib, t: t.cumsum(1),
    "cumprod": lambda lib, t: t.cumprod(-1),
    "logcumsumexp": lambda lib, t: t.logcumsumexp(0),
    "cummax": lambda lib, t: t.cummax(1).indices,
    "cummin": lambda lib, t: t.cummin(1).values,
    "roll": lambda lib, t: t.roll(1, 1),
    "tril": lambda lib, t: t.tril(),
    "triu": lambda lib, t: t.triu(1),
    "renorm": lambda lib, t: t.renorm(2, 1, 1.0),
    "masked_fill": lambda lib, t: t.masked_fill(t > 0, 0.0),
    "var": lambda lib, t: t.var(1),
    "std_mean": lambda lib, t: lib.std_mean(t, 1)[1],
    "logsumexp": lambda lib, t: t.logsumexp(1),
    "median": lambda lib, t: t.median(1).values,
    "mode": lambda lib, t: t.mode(1).indices,
    "sum": lambda lib, t: t.sum(1),
    "mean keepdim": lambda lib, t: t.mean(-1, keepdim=True),
    "prod": lambda lib, t: t.prod(0),
    "amax": lambda lib, t: t.amax(1),
    "all": lambda lib, t: (t > 1).all(1),
    "count_nonzero": lambda lib, t: lib.count_nonzero(t, 1),
    "aminmax": lambda lib, t: lib.aminmax(t, dim=1).min,
    "norm": lambda lib, t: t.norm(dim=1),
    "argmax": lambda lib, t: t.argmax(1),
    "logsigmoid": lambda lib, t: lib.nn.functional.logsigmoid(t),
    "cat": lambda lib, t: lib.cat([t, t], 1),
    "cat with a contiguous one": lambda lib, t: lib.cat([t, t.contiguous()]),
    "stack": lambda lib, t: lib.stack([t, t]),
    "one_hot": lambda lib, t: lib.nn.functional.one_hot(t.long(), 7),
}
LAYOUTS = {
    "transposed": lambda lib: lib.arange(60.0).reshape(3, 5, 4).transpose(0, 2) % 7,
    "channels_last": lambda lib: (lib.arange(72.0).reshape(2, 4, 3, 3) % 5).contiguous(
        memory_format=lib.channels_last),
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", CONTIGUOUS_RESULTS)
def test_results_laid_out_as_pytorch(op, layout):
    mine = CONTIGUOUS_RESULTS[op](ember, LAYOUTS[layout](ember))
    theirs = CONTIGUOUS_RESULTS[op](torch, LAYOUTS[layout](torch))
    assert (mine.stride(), mine.is_contiguous()) == (theirs.stride(), theirs.is_contiguous())
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6)
    if theirs.is_contiguous():
        assert mine.view(-1).shape == theirs.view(-1).shape


# advanced indexing: PyTorch's TensorIterator lays the result out by the input's strides (0
# along the indexed dims), then the index tensors'; NumPy's order differs, even for a
# contiguous input
INDEXED = {
    "[:, i]": lambda lib, t, i: t[:, i],
    "[:, :, i]": lambda lib, t, i: t[:, :, i],
    "[..., i]": lambda lib, t, i: t[..., i],
    "[i]": lambda lib, t, i: t[i],
    "[i, :, i]": lambda lib, t, i: t[i, :, i],
    "[:, i, :, i]": lambda lib, t, i: t[:, i, :, i],
    "[:, column, row]": lambda lib, t, i: t[:, i[:, None], i[None]],
    "[:, transposed index]": lambda lib, t, i: t[:, lib.stack([i, i]).t()],
    "[1, i]": lambda lib, t, i: t[1, :, i],
    "[i, 1]": lambda lib, t, i: t[i, 1],
    "[mask]": lambda lib, t, i: t[t[..., 0] > 30],
    "[:, mask]": lambda lib, t, i: t[:, t[0, ..., 0] > 20],
    "[..., mask]": lambda lib, t, i: t[..., lib.tensor([True, False, True])],
    "index_select": lambda lib, t, i: t.index_select(1, i),
}
INDEXED_LAYOUTS = {
    "contiguous": lambda lib: lib.arange(120.0).reshape(2, 4, 5, 3),
    "permuted": lambda lib: lib.arange(120.0).reshape(2, 3, 4, 5).permute(0, 2, 3, 1),
    "transposed": lambda lib: lib.arange(120.0).reshape(2, 5, 4, 3).transpose(1, 2),
}


@pytest.mark.parametrize("layout", INDEXED_LAYOUTS)
@pytest.mark.parametrize("op", INDEXED)
def test_advanced_index_laid_out_as_pytorch(op, layout):
    mine = INDEXED[op](ember, INDEXED_LAYOUTS[layout](ember), ember.tensor([1, 0]))
    theirs = INDEXED[op](torch, INDEXED_LAYOUTS[layout](torch), torch.tensor([1, 0]))
    assert mine.stride() == theirs.stride()
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_rms_norm_of_a_permuted_input_is_contiguous():
    def run(lib):
        x = lib.arange(24.0).reshape(2, 3, 4).permute(0, 2, 1).requires_grad_()
        out = lib.nn.functional.rms_norm(x, (3,))
        return out, type(out.grad_fn).__name__
    (mine, node), (theirs, their_node) = run(ember), run(torch)
    assert mine.stride() == theirs.stride() and node == their_node == "CloneBackward0"


# channels_last carried through the layers of a net: PyTorch's CPU kernels lay these results
# out in the format their input (a convolution: input or weight) suggests, where NumPy computes
# them contiguous; the 3-d pools, circular padding and fractional pooling stay contiguous.
def _f(lib):
    return lib.nn.functional


CHANNELS_LAST_OPS = {
    "conv2d": lambda lib, x, w: _f(lib).conv2d(x, w, padding=1),
    "conv2d of a channels_last weight": lambda lib, x, w: _f(lib).conv2d(
        x.contiguous(), w.contiguous(memory_format=lib.channels_last)),
    "conv2d 1x1 stride 2": lambda lib, x, w: _f(lib).conv2d(x, w[:, :, :1, :1], stride=2),
    "conv2d groups": lambda lib, x, w: _f(lib).conv2d(x, w[:, :3], groups=2, dilation=2),
    "conv2d to 1x1": lambda lib, x, w: _f(lib).conv2d(x, w.repeat(1, 1, 3, 3)[..., :8, :8]),
    "conv_transpose2d": lambda lib, x, w: _f(lib).conv_transpose2d(x, w.transpose(0, 1), stride=2),
    "conv3d": lambda lib, x, w: _f(lib).conv3d(x.unsqueeze(2).expand(-1, -1, 3, -1, -1).contiguous(
        memory_format=lib.channels_last_3d), w.unsqueeze(2)),
    "max_pool2d": lambda lib, x, w: _f(lib).max_pool2d(x, 3, 2, 1),
    "max_pool2d indices": lambda lib, x, w: _f(lib).max_pool2d(x, 2, return_indices=True)[1],
    "avg_pool2d": lambda lib, x, w: _f(lib).avg_pool2d(x, 2),
    "adaptive_avg_pool2d": lambda lib, x, w: _f(lib).adaptive_avg_pool2d(x, 3),
    "adaptive_avg_pool2d to 1": lambda lib, x, w: _f(lib).adaptive_avg_pool2d(x, 1),
    "adaptive_max_pool2d": lambda lib, x, w: _f(lib).adaptive_max_pool2d(x, 3),
    "lp_pool2d": lambda lib, x, w: _f(lib).lp_pool2d(x, 2, 2),
    "interpolate nearest": lambda lib, x, w: _f(lib).interpolate(x, scale_factor=2),
    "interpolate bilinear": lambda lib, x, w: _f(lib).interpolate(x, size=5, mode="bilinear"),
    "interpolate bicubic antialias": lambda lib, x, w: _f(lib).interpolate(
        x, size=4, mode="bicubic", antialias=True),
    "interpolate area": lambda lib, x, w: _f(lib).interpolate(x, size=3, mode="area"),
    "pad": lambda lib, x, w: _f(lib).pad(x, (1, 2, 0, 1)),
    "pad reflect": lambda lib, x, w: _f(lib).pad(x, (1, 1, 1, 1), mode="reflect"),
    "pad circular": lambda lib, x, w: _f(lib).pad(x, (1, 1, 1, 1), mode="circular"),
    "group_norm": lambda lib, x, w: _f(lib).group_norm(x, 3),
    "local_response_norm": lambda lib, x, w: _f(lib).local_response_norm(x, 2),
    "pixel_unshuffle": lambda lib, x, w: _f(lib).pixel_unshuffle(x, 2),
    "pixel_shuffle": lambda lib, x, w: _f(lib).pixel_shuffle(lib.cat([x, x[:, :2]], 1), 2),
    "channel_shuffle": lambda lib, x, w: _f(lib).channel_shuffle(x, 2),
    "flip": lambda lib, x, w: x.flip(3),
    "max_unpool2d": lambda lib, x, w: _f(lib).max_unpool2d(
        *_f(lib).max_pool2d(x, 2, return_indices=True), 2),
    "avg_pool3d": lambda lib, x, w: _f(lib).avg_pool3d(
        x.unsqueeze(2).contiguous(memory_format=lib.channels_last_3d), (1, 2, 2)),
    "fractional_max_pool2d": lambda lib, x, w: _f(lib).fractional_max_pool2d(
        x, 2, output_size=3, _random_samples=lib.full((2, 6, 2), 0.5, dtype=x.dtype)),
    "mse_loss none": lambda lib, x, w: _f(lib).mse_loss(x, x.contiguous() * 2, reduction="none"),
}


def _channels_last_inputs(lib):
    x = (lib.arange(768.0).reshape(2, 8, 8, 6).permute(0, 3, 1, 2) % 11) / 5
    w = (lib.arange(216.0).reshape(4, 6, 3, 3) % 7) / 10
    return x, w


@pytest.mark.parametrize("op", CHANNELS_LAST_OPS)
def test_channels_last_carried_as_pytorch(op):
    mine = CHANNELS_LAST_OPS[op](ember, *_channels_last_inputs(ember))
    theirs = CHANNELS_LAST_OPS[op](torch, *_channels_last_inputs(torch))
    assert mine.stride() == theirs.stride()
    fmt = ember.channels_last if mine.dim() == 4 else ember.channels_last_3d
    assert mine.is_contiguous(memory_format=fmt) == theirs.is_contiguous(
        memory_format=T_FMT[str(fmt).split(".")[-1]])
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)


def test_channels_last_model_trains_as_a_contiguous_one():
    """The Channels Last tutorial's check: every layer's output stays channels_last, and the
    gradients equal those of the same model in contiguous memory."""
    def net(lib):
        lib.manual_seed(0)
        return lib.nn.Sequential(lib.nn.Conv2d(3, 8, 3, padding=1), lib.nn.BatchNorm2d(8),
                                 lib.nn.ReLU(), lib.nn.MaxPool2d(2), lib.nn.Conv2d(8, 4, 1),
                                 lib.nn.Upsample(scale_factor=2), lib.nn.Conv2d(4, 2, 3))
    x = np.random.default_rng(0).standard_normal((2, 3, 8, 8))
    grads = []
    for fmt in (ember.contiguous_format, ember.channels_last):
        model = net(ember).double().to(memory_format=fmt)
        h = ember.tensor(x).to(memory_format=fmt)
        for layer in model:
            h = layer(h)
            assert h.is_contiguous(memory_format=fmt), type(layer).__name__
        h.square().sum().backward()
        grads.append([p.grad.numpy() for p in model.parameters()])
    for g_contiguous, g_channels_last in zip(*grads):
        np.testing.assert_allclose(g_channels_last, g_contiguous, rtol=1e-12, atol=1e-12)


# binary ops lay their result out as TensorIterator does: by the first operand that orders a
# pair of dims, where NumPy's result follows its operands only when they agree
MIXED_OPERANDS = {
    "channels_last + contiguous": lambda lib, cl, c, t: cl + c,
    "contiguous + channels_last": lambda lib, cl, c, t: c + cl,
    "transposed * contiguous": lambda lib, cl, c, t: t * t.contiguous(),
    "contiguous * transposed": lambda lib, cl, c, t: t.contiguous() * t,
    "transposed / broadcast": lambda lib, cl, c, t: t / t.sum(1, keepdim=True),
    "2 - transposed": lambda lib, cl, c, t: 2 - t,
    "normalize": lambda lib, cl, c, t: lib.nn.functional.normalize(t, dim=1),
    "kron": lambda lib, cl, c, t: lib.kron(t[0], t[1]),
    "where": lambda lib, cl, c, t: lib.where(t > 3, t, t.contiguous()),
}


@pytest.mark.parametrize("op", MIXED_OPERANDS)
def test_binary_results_laid_out_as_tensoriterator(op):
    def run(lib):
        c = lib.arange(96.0).reshape(2, 3, 4, 4) % 7
        t = lib.arange(60.0).reshape(3, 5, 4).transpose(0, 2) % 7
        return MIXED_OPERANDS[op](lib, c.contiguous(memory_format=lib.channels_last), c, t)
    mine, theirs = run(ember), run(torch)
    assert mine.stride() == theirs.stride()
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6)


@pytest.mark.usefixtures("full_float32")  # held to the CPU's values
@pytest.mark.parametrize("op", CHANNELS_LAST_OPS)
def test_channels_last_carried_on_cuda_as_on_the_cpu(op, fake_cuda):
    """The device's kernels (a fused batch norm, one-launch pools) keep the same layouts."""
    cpu = CHANNELS_LAST_OPS[op](ember, *_channels_last_inputs(ember))
    on_device = CHANNELS_LAST_OPS[op](ember, *(t.to(fake_cuda) for t in _channels_last_inputs(
        ember)))
    assert on_device.stride() == cpu.stride()
    np.testing.assert_allclose(on_device.cpu().numpy(), cpu.numpy(), rtol=1e-5, atol=1e-6)


def test_batch_norm_on_cuda_keeps_channels_last(fake_cuda):
    x = _channels_last_inputs(ember)[0].to(fake_cuda)
    out = ember.nn.functional.batch_norm(x, None, None, training=True)
    assert out.is_contiguous(memory_format=ember.channels_last) and not out.is_contiguous()


@pytest.mark.parametrize("view", [lambda t: t, lambda t: t.transpose(1, 3),
                                  lambda t: t[:, :, ::2], lambda t: t.flip(2)])
def test_relu_keeps_its_inputs_layout(view):
    """relu of large float inputs runs against a block of zeros (NumPy's SIMD loop): laid out
    as the input, so that the result keeps the input's layout, as PyTorch's does."""
    def run(lib):
        x = lib.arange(-8192.0, 8192.0).reshape(4, 8, 16, 32).contiguous(
            memory_format=lib.channels_last)
        return lib.relu(view(x))
    mine, theirs = run(ember), run(torch)
    assert mine.stride() == theirs.stride()
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


def test_channels_last_gradients_as_pytorch():
    """The input gradients of layers that keep channels_last are channels_last too, as
    PyTorch's backward kernels write them (hooks see them; NumPy would otherwise walk the
    gradient and the saved activations in two layouts)."""
    def run(lib):
        lib.manual_seed(0)
        layers = [lib.nn.Conv2d(3, 8, 3, padding=1), lib.nn.BatchNorm2d(8), lib.nn.ReLU(),
                  lib.nn.MaxPool2d(2), lib.nn.Conv2d(8, 8, 1), lib.nn.AdaptiveAvgPool2d(2)]
        h = (lib.arange(384.0).reshape(2, 3, 8, 8) % 7).to(memory_format=lib.channels_last)
        strides = []
        for layer in layers:
            h = layer.to(memory_format=lib.channels_last).double()(h.double())
            h.register_hook(lambda g: strides.append(g.stride()))
        h.flatten(1).sum().backward()
        return strides
    assert run(ember) == run(torch)
