"""Normalisation, dropout and embedding ops beyond the op table: running statistics,
second derivatives, errors and warnings, beside PyTorch."""
import warnings

import numpy as np
import pytest

import ember
import ember.nn.functional as EF
from ember.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional


def _with_grad(f):
    def g(*args):
        with ember.enable_grad():
            return f(*args)
    return g


def test_batch_norm_updates_running_stats_like_torch():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((6, 3, 4))
    erm, erv = ember.zeros(3, dtype=ember.float64), ember.ones(3, dtype=ember.float64)
    trm, trv = torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64)
    v0 = erm._version
    EF.batch_norm(ember.tensor(x), erm, erv, training=True, momentum=0.3)
    TF.batch_norm(torch.tensor(x), trm, trv, training=True, momentum=0.3)
    np.testing.assert_allclose(erm.numpy(), trm.numpy(), rtol=1e-12)
    np.testing.assert_allclose(erv.numpy(), trv.numpy(), rtol=1e-12)
    assert erm._version > v0


def test_batch_norm_eval_uses_running_stats():
    rng = np.random.default_rng(1)
    x, rm, rv = rng.standard_normal((4, 3)), rng.standard_normal(3), rng.uniform(0.5, 2, 3)
    ye = EF.batch_norm(ember.tensor(x), ember.tensor(rm), ember.tensor(rv))
    yt = TF.batch_norm(torch.tensor(x), torch.tensor(rm), torch.tensor(rv))
    np.testing.assert_allclose(ye.numpy(), yt.numpy(), rtol=1e-12)


@pytest.mark.parametrize("fn", [
    lambda x, w, b: EF.batch_norm(x, None, None, w, b, training=True),
    lambda x, w, b: EF.layer_norm(x, (4,), w.sum() * ember.ones(4, dtype=ember.float64), b.sum()
                                  * ember.ones(4, dtype=ember.float64)),
    lambda x, w, b: EF.group_norm(x.reshape(2, 3, 4), 3, w, b),
    lambda x, w, b: EF.instance_norm(x.reshape(2, 3, 4), weight=w, bias=b),
])
def test_norm_double_backward(fn):
    rng = np.random.default_rng(2)
    x = ember.tensor(rng.standard_normal((2, 3, 4)), requires_grad=True)
    w = ember.tensor(rng.standard_normal(3), requires_grad=True)
    b = ember.tensor(rng.standard_normal(3), requires_grad=True)
    assert gradcheck(fn, (x, w, b))
    assert gradgradcheck(_with_grad(fn), (x, w, b))


def test_batch_norm_double_backward_matches_torch():
    rng = np.random.default_rng(3)
    a, wa = rng.standard_normal((4, 3, 2)), rng.standard_normal(3)
    res = []
    for lib in (ember, torch):
        x = lib.tensor(a, requires_grad=True)
        w = lib.tensor(wa, requires_grad=True)
        y = lib.nn.functional.batch_norm(x, None, None, w, None, training=True)
        (gx,) = lib.autograd.grad((y * y * y).sum(), x, create_graph=True)
        gx2, gw2 = lib.autograd.grad((gx * gx).sum(), (x, w))
        res.append((gx2.detach().numpy(), gw2.detach().numpy()))
    np.testing.assert_allclose(res[0][0], res[1][0], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-8, atol=1e-10)


def test_error_messages_match_torch():
    cases = [
        lambda L: L.nn.functional.layer_norm(L.zeros(2, 3), (4,)),
        lambda L: L.nn.functional.group_norm(L.zeros(2, 4, 3), 3),
        lambda L: L.nn.functional.batch_norm(L.zeros(2, 4), L.zeros(3), L.ones(3)),
        lambda L: L.nn.functional.batch_norm(L.zeros(1, 4), L.zeros(4), L.ones(4), training=True),
        lambda L: L.nn.functional.embedding(L.tensor([5]), L.zeros(3, 2)),
        lambda L: L.nn.functional.embedding(L.tensor([1]), L.zeros(3, 2), padding_idx=3),
        lambda L: L.nn.functional.one_hot(L.tensor([-1, 3])),
        lambda L: L.nn.functional.dropout(L.zeros(3), 1.5),
        lambda L: L.nn.functional.dropout1d(L.zeros(1, 2, 3, 4)),
        lambda L: L.nn.functional.instance_norm(L.zeros(2, 3, 1)),
        lambda L: L.nn.functional.embedding_bag(L.tensor([1, 2]), L.zeros(3, 2)),
    ]
    for case in cases:
        with pytest.raises(Exception) as te:
            case(torch)
        with pytest.raises(Exception) as ee:
            case(ember)
        assert type(ee.value) is type(te.value)
        assert str(ee.value) == str(te.value)


def test_dropout2d_warnings():
    for shape in ((3, 4), (2, 3, 4)):
        with warnings.catch_warnings(record=True) as we:
            warnings.simplefilter("always")
            EF.dropout2d(ember.ones(*shape))
        with warnings.catch_warnings(record=True) as wt:
            warnings.simplefilter("always")
            TF.dropout2d(torch.ones(*shape))
        assert [str(w.message) for w in we] == [str(w.message) for w in wt]


def test_dropout_functional_forms():
    x = ember.ones(4, 5)
    assert EF.dropout(x, training=False) is x
    assert ember.dropout(x, 0.5, False) is x
    y = EF.dropout(x * 1, p=1.0)
    assert (y.numpy() == 0).all()
    z = ember.ones(4, 5)
    ember.manual_seed(0)
    out = EF.dropout(z, 0.5, inplace=True)
    assert out is z
    assert set(np.unique(z.numpy()).tolist()) <= {0.0, 2.0}
    ember.manual_seed(0)
    n = ember.tensor(np.random.default_rng(0).standard_normal(20000))
    a = EF.alpha_dropout(n, 0.3, training=True).numpy()
    assert abs(a.mean()) < 0.05 and abs(a.std() - 1) < 0.05  # self-normalising


def test_dropout_gradient_is_the_mask():
    ember.manual_seed(0)
    x = ember.ones(100, requires_grad=True)
    y = EF.dropout(x, 0.4)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.detach().numpy())
    assert y.grad_fn.name() == "MulBackward0"


def test_embedding_double_backward():
    rng = np.random.default_rng(4)
    idx = ember.tensor([[0, 2, 2], [1, 0, 3]])
    w = ember.tensor(rng.standard_normal((4, 3)), requires_grad=True)
    f = lambda w: EF.embedding(idx, w) ** 2  # noqa: E731
    assert gradcheck(f, (w,))
    assert gradgradcheck(_with_grad(f), (w,))


def test_embedding_bag_double_backward_and_psw():
    rng = np.random.default_rng(5)
    idx, off = ember.tensor([1, 2, 4, 4, 3, 0, 5]), ember.tensor([0, 2, 2, 5])
    w = ember.tensor(rng.standard_normal((6, 3)), requires_grad=True)
    p = ember.tensor(rng.standard_normal(7), requires_grad=True)
    f = lambda w, p: EF.embedding_bag(idx, w, off, mode="sum", per_sample_weights=p) ** 2  # noqa
    assert gradcheck(f, (w, p))
    assert gradgradcheck(_with_grad(f), (w, p))
    for mode in ("mean", "max"):
        g = lambda w: EF.embedding_bag(idx, w, off, mode=mode) ** 2  # noqa: E731
        assert gradcheck(g, (w,))


def test_embedding_bag_empty_bags_are_zero():
    w = ember.tensor(np.arange(12.0).reshape(4, 3))
    for mode in ("sum", "mean", "max"):
        out = EF.embedding_bag(ember.tensor([1, 2]), w, ember.tensor([0, 0, 2]), mode=mode)
        ref = TF.embedding_bag(torch.tensor([1, 2]), torch.tensor(w.numpy()),
                               torch.tensor([0, 0, 2]), mode=mode)
        np.testing.assert_allclose(out.numpy(), ref.numpy())


def test_one_hot():
    y = EF.one_hot(ember.tensor([[0, 2], [1, 1]]), 4)
    assert y.dtype == ember.int64
    assert y.shape == (2, 2, 4)
    np.testing.assert_array_equal(y.numpy(), TF.one_hot(torch.tensor([[0, 2], [1, 1]]), 4).numpy())


def test_normalize_and_rms_norm_match_torch():
    a = np.random.default_rng(6).standard_normal((3, 4, 2))
    e, t = ember.tensor(a), torch.tensor(a)
    for kw in ({}, {"p": 1, "dim": 0}, {"p": float("inf"), "dim": -1}, {"p": 3, "dim": 2}):
        np.testing.assert_allclose(EF.normalize(e, **kw).numpy(), TF.normalize(t, **kw).numpy(),
                                   rtol=1e-12)
    np.testing.assert_allclose(EF.rms_norm(e, (2,)).numpy(), TF.rms_norm(t, (2,)).numpy(),
                               rtol=1e-12)
    e32, t32 = ember.tensor(a.astype(np.float32)), torch.tensor(a.astype(np.float32))
    np.testing.assert_allclose(EF.rms_norm(e32, (4, 2)).numpy(), TF.rms_norm(t32, (4, 2)).numpy(),
                               rtol=1e-5)


@pytest.mark.usefixtures("numpy_kernels")  # (the NumPy routines' own bits)
@pytest.mark.parametrize("dev", ["cpu", "cuda"])
@pytest.mark.parametrize("fn,shape", [
    (lambda x, w, b: EF.layer_norm(x, (x.shape[-1],), w, b), (3, 5, 37)),
    (lambda x, w, b: EF.batch_norm(x, None, None, w, b, training=True), (4, 6, 5, 7)),
    (lambda x, w, b: EF.batch_norm(x, None, None, w, b, training=True), (2, 6, 3, 4, 5)),
])
def test_statistics_of_a_contiguous_input_as_it_is_match_its_grouped_view(fn, shape, dev,
                                                                         request):
    """layer_norm and batch_norm take the statistics of a contiguous input over its own dims
    (no reshapes: each is a call on a device), of any other over its (rows, D) or (N, C, S)
    view. The two are the same memory, which einsum sums to the same bits: output and
    gradients of a contiguous input and of its transposed copy agree to the bit. Values over
    a wide range of magnitudes, where another summation order would round otherwise."""
    if dev == "cuda":
        request.getfixturevalue("fake_cuda")
    rng = np.random.default_rng(6)
    xa = (rng.standard_normal(shape) * np.exp(rng.uniform(-6, 6, shape))).astype(np.float32)
    c = shape[-1] if len(shape) == 3 else shape[1]
    wa, ba = rng.standard_normal(c).astype(np.float32), rng.standard_normal(c).astype(np.float32)
    ga = rng.standard_normal(shape).astype(np.float32)
    results = []
    for contiguous in (True, False):
        x = ember.tensor(xa if contiguous else np.ascontiguousarray(xa.swapaxes(0, 2)),
                         device=dev)
        x = (x if contiguous else x.transpose(0, 2)).requires_grad_(True)
        assert x.is_contiguous() is contiguous
        w = ember.tensor(wa, device=dev, requires_grad=True)
        b = ember.tensor(ba, device=dev, requires_grad=True)
        y = fn(x, w, b)
        y.backward(ember.tensor(ga, device=dev))
        results.append([t.detach().cpu().numpy() for t in (y, x.grad, w.grad, b.grad)])
    for got, want in zip(*results):
        assert got.tobytes() == want.tobytes()


_NORM_DTYPES = ("float32", "float64", "bfloat16", None)


def _norm_outcome(lib, kind, xd, wd, bd, sd=None, train=True):
    x = lib.randn(4, 3, 5).to(getattr(lib, xd))
    n = 5 if kind == "layer" else 3

    def param(d, v):
        return None if d is None else lib.full((n,), v, dtype=getattr(lib, d))
    F = lib.nn.functional
    try:
        if kind == "batch":
            F.batch_norm(x, param(sd, 0.0), param(sd, 1.0), param(wd, 1.0), param(bd, 0.0),
                         training=train)
        elif kind == "layer":
            F.layer_norm(x, (5,), param(wd, 1.0), param(bd, 0.0))
        else:
            F.group_norm(x, 3, param(wd, 1.0), param(bd, 0.0))
    except RuntimeError as e:
        return str(e)
    return "ok"


def test_parameter_dtypes_as_pytorch():
    """Parameters (and running statistics) of another dtype than the input's are refused as
    PyTorch refuses them, naming the first one its kernel reads, except for the mixed form
    (a bfloat16/float16 input with float32 parameters): never a silent promotion."""
    import itertools
    cases = [("batch", xd, wd, bd, sd, train) for xd, wd, bd, sd, train in itertools.product(
        _NORM_DTYPES[:3], _NORM_DTYPES, _NORM_DTYPES, _NORM_DTYPES, (True, False))
        if train or sd is not None]
    cases += [(kind, xd, wd, bd) for kind in ("layer", "group")
              for xd, wd, bd in itertools.product(_NORM_DTYPES[:3], _NORM_DTYPES, _NORM_DTYPES)]
    outcomes = {"ok": 0}
    for case in cases:
        want = _norm_outcome(torch, *case)
        assert _norm_outcome(ember, *case) == want, case
        outcomes[want] = outcomes.get(want, 0) + 1
    assert len(outcomes) >= 6 and outcomes["ok"] > 20  # every kind of answer was seen
