"""Reductions, statistics and scans (ember/ops/reduction.py, statistics.py, cumulative.py):
behaviours the op table does not reach (named result tuples, exact derivatives at zeros and
ties, double backward, warnings, out=, in-place scans, devices), and parity with PyTorch."""
import pickle
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.ops import cumulative


def t64(a, grad=True):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def both(torch, a, grad=True):
    a = np.asarray(a, dtype=np.float64)
    return (ember.tensor(a, requires_grad=grad), torch.tensor(a, requires_grad=grad))


def close(e, t, **kw):
    np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), equal_nan=True, **kw)


# ---- named result tuples ----------------------------------------------------------------------
def test_return_types_are_named_tuples():
    r = ember.max(ember.tensor([[1.0, 3.0], [2.0, 0.0]]), 1)
    values, indices = r
    assert isinstance(r, tuple) and r.values is values and r.indices is indices
    assert type(r).__name__ == "max" and type(r) is ember.return_types.max
    assert indices.dtype is ember.int64 and indices.tolist() == [1, 0]


def test_return_types_print_as_pytorch(torch):
    x = np.array([[1.0, 3.0, 2.0], [2.0, 0.0, 5.0]], dtype=np.float32)
    for name in ("max", "min", "cummax", "cummin"):
        e = getattr(ember, name)(ember.tensor(x), 1)
        t = getattr(torch, name)(torch.tensor(x), 1)
        assert repr(e) == repr(t) and str(e) == str(t)


def test_return_types_pickle():
    r = ember.min(ember.tensor([3.0, 1.0, 2.0]), 0)
    back = pickle.loads(pickle.dumps(r))
    assert type(back) is type(r) and back.indices.item() == 1 and back.values.item() == 1.0


def test_indices_do_not_require_grad():
    r = ember.max(t64([[1.0, 2.0], [4.0, 3.0]]), 1)
    assert type(r.values.grad_fn).__name__ == "MaxBackward0"
    assert not r.indices.requires_grad and r.indices.grad_fn is None


# ---- derivatives: ties, zeros, double backward ---------------------------------------------------
def test_max_shares_gradient_among_ties():
    x = t64([1.0, 3.0, 3.0, 2.0, 3.0])
    ember.max(x).backward()
    assert x.grad.tolist() == pytest.approx([0, 1 / 3, 1 / 3, 0, 1 / 3])


def test_max_over_dim_gives_gradient_to_first_index():
    x = t64([[3.0, 3.0, 1.0]])
    ember.max(x, 1).values.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 0.0]]


def test_prod_gradient_with_zeros():
    x = t64([0.0, 2.0, 3.0])
    ember.prod(x).backward()
    assert x.grad.tolist() == [6.0, 0.0, 0.0]
    x = t64([[0.0, 2.0, 0.0], [1.0, 2.0, 3.0]])
    ember.prod(x, 1).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0], [6.0, 3.0, 2.0]]


@pytest.mark.parametrize("f", [
    lambda x: ember.prod(x, 1), lambda x: ember.prod(x), lambda x: ember.cumprod(x, 1),
    lambda x: ember.cumprod(x, 0), lambda x: ember.prod(x[:, :2], 0, keepdim=True)])
def test_products_differentiate_twice_through_zeros(f):
    x = t64([[0.0, 2.0, 3.0, 0.5], [1.5, 0.0, 0.0, 2.0], [0.5, 2.0, 3.0, 0.0]])
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_double_backward_matches_torch(torch):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 4))
    a[1, 2] = 0.0
    ops = [lambda lib, x: lib.cumprod(x, 1), lambda lib, x: lib.prod(x, 1),
           lambda lib, x: lib.std(x, 0), lambda lib, x: lib.norm(x, 3, 1),
           lambda lib, x: lib.logsumexp(x, 1), lambda lib, x: lib.logcumsumexp(x, 0),
           lambda lib, x: lib.var_mean(x, 1)[0] + lib.var_mean(x, 1)[1]]
    for op in ops:
        grads = []
        for lib, x in zip((ember, torch), both(torch, a)):
            y = op(lib, x)
            w = lib.tensor(np.linspace(-1, 1, y.numel()).reshape(tuple(y.shape)))
            (g,) = lib.autograd.grad((y * w).sum(), x, create_graph=True)
            (gg,) = lib.autograd.grad((g * g).sum(), x)
            grads.append((g, gg))
        close(grads[0][0], grads[1][0], rtol=1e-10, atol=1e-10)
        close(grads[0][1], grads[1][1], rtol=1e-8, atol=1e-8)


def test_std_of_constant_slice_has_zero_gradient_and_no_nan():
    x = t64([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]])
    (g,) = ember.autograd.grad(ember.std(x, 1).sum(), x, create_graph=True)
    assert g[0].tolist() == [0.0, 0.0, 0.0]
    (gg,) = ember.autograd.grad(g.sum(), x)
    assert not np.isnan(gg.numpy()).any()


def test_std_mean_gradients_of_both_outputs(torch):
    a = np.random.default_rng(1).standard_normal((3, 5))
    res = []
    for lib, x in zip((ember, torch), both(torch, a)):
        s, m = lib.std_mean(x, 1, keepdim=True)
        assert type(s.grad_fn).__name__ == "StdMeanBackward0" and s.grad_fn is m.grad_fn
        (s.sum() * 2 + (m * m).sum()).backward()
        res.append(x.grad)
    close(*res, rtol=1e-12)
    e, t = both(torch, a)
    ember.var_mean(e, 0)[1].sum().backward()  # only the mean is used: zeros for the other
    torch.var_mean(t, 0)[1].sum().backward()
    close(e.grad, t.grad)


# ---- numerics and warnings -------------------------------------------------------------------------
def test_logsumexp_and_logcumsumexp_are_stable():
    x = ember.tensor([[1000.0, 1000.0], [-1000.0, -1000.0], [-np.inf, -np.inf]])
    assert ember.logsumexp(x, 1).tolist() == pytest.approx([1000 + np.log(2), -1000 + np.log(2),
                                                            -np.inf])
    assert ember.logcumsumexp(x, 1)[0].tolist() == pytest.approx([1000.0, 1000 + np.log(2)])


def test_var_warns_on_nonpositive_degrees_of_freedom():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        r = ember.var(ember.tensor([[1.0, 2.0]]), 0)
    assert np.isnan(r.numpy()).all()
    assert [str(w.message) for w in caught] == [
        "var(): degrees of freedom is <= 0. Correction should be strictly less than the "
        "reduction factor (input numel divided by output numel)."]


def test_integer_and_bool_result_dtypes():
    i = ember.tensor([[1, 2], [3, 4]], dtype=ember.int32)
    b = ember.tensor([True, False, True])
    assert ember.prod(i).dtype is ember.int64 and ember.cumsum(b, 0).tolist() == [1, 1, 2]
    assert ember.all(ember.tensor([1, 0], dtype=ember.uint8)).dtype is ember.uint8
    assert ember.any(i, (0, 1)).dtype is ember.bool
    assert ember.count_nonzero(i, 0).dtype is ember.int64
    assert ember.logsumexp(i, 1).dtype is ember.float32
    assert ember.cumprod(i, 1, dtype=ember.float64).dtype is ember.float64


def test_out_arguments():
    x = ember.tensor([[1.0, 5.0], [4.0, 2.0]])
    values, indices = ember.empty(0), ember.empty(0, dtype=ember.int64)
    r = ember.max(x, 1, out=(values, indices))
    assert r.values is values and values.tolist() == [5.0, 4.0] and indices.tolist() == [1, 0]
    out = ember.empty(2)
    assert ember.prod(x, 0, out=out) is out and out.tolist() == [4.0, 10.0]


def test_in_place_scans():
    x = ember.tensor([[1.0, 2.0, 3.0]])
    v = x._version
    assert x.cumsum_(1) is x and x.tolist() == [[1.0, 3.0, 6.0]] and x._version == v + 1
    y = t64([[1.0, 2.0, 3.0]]).clone()
    y.cumprod_(1)
    assert type(y.grad_fn).__name__ == "CumprodBackward0"


def test_scan_without_numpy_accumulate_matches():
    """The log-step scan used where the backend has no ufunc.accumulate (CuPy)."""
    class NoAccumulate:
        maximum, minimum, logaddexp = np.maximum, np.minimum, np.logaddexp
    rng = np.random.default_rng(2)
    a = rng.standard_normal((3, 13))
    a[1, 4] = np.nan
    for name in ("maximum", "minimum", "logaddexp"):
        for axis in (0, 1):
            np.testing.assert_allclose(cumulative._accumulate(NoAccumulate, name, a, axis),
                                       getattr(np, name).accumulate(a, axis=axis), rtol=1e-15)


# ---- devices ------------------------------------------------------------------------------------------
def test_reductions_stay_on_their_device(fake_cuda):
    x = ember.tensor([[1.0, 0.0, 3.0], [2.0, 5.0, 0.5]], device=fake_cuda, requires_grad=True)
    outs = [ember.max(x), ember.max(x, 1).indices, ember.amax(x, 0), ember.prod(x, 1),
            ember.std(x), ember.norm(x), ember.norm(x, "nuc"), ember.logsumexp(x, 1),
            ember.cumsum(x, 1), ember.cumprod(x, 1), ember.cummax(x, 0).values,
            ember.logcumsumexp(x, 1), ember.diff(x), ember.nansum(x), ember.all(x)]
    for o in outs:
        assert o.device == fake_cuda
    loss = sum(o.sum() for o in outs if o.requires_grad)
    loss.backward()
    assert x.grad.device == fake_cuda


# ---- parity on larger random inputs --------------------------------------------------------------------
@pytest.mark.parametrize("name,args", [
    ("sum", (1,)), ("mean", ((0, 2),)), ("prod", (2,)), ("amax", ((1, 2),)), ("amin", (0,)),
    ("std", (1,)), ("var", ((0, 2),)), ("logsumexp", (2,)), ("cumsum", (1,)), ("cumprod", (2,)),
    ("logcumsumexp", (0,)), ("norm", (1.5, 2)), ("nansum", (1,)), ("nanmean", (0,))])
def test_parity_random(torch, name, args):
    a = np.random.default_rng(3).uniform(0.5, 1.5, (4, 5, 6))
    e, t = both(torch, a)
    ye, yt = getattr(ember, name)(e, *args), getattr(torch, name)(t, *args)
    close(ye, yt, rtol=1e-10)
    assert type(ye.grad_fn).__name__ == type(yt.grad_fn).__name__
    w = np.random.default_rng(4).standard_normal(tuple(yt.shape))
    (ye * ember.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    close(e.grad, t.grad, rtol=1e-9, atol=1e-12)


def test_cummax_indices_match_torch_with_ties_and_nan(torch):
    a = np.array([[1.0, 1.0, 0.0, 1.0, np.nan, 2.0, np.nan], [3.0, 2.0, 3.0, 3.0, 1.0, 4.0, 4.0]])
    for name in ("cummax", "cummin"):
        e = getattr(ember, name)(ember.tensor(a), 1)
        t = getattr(torch, name)(torch.tensor(a), 1)
        assert e.indices.tolist() == t.indices.tolist()
        close(e.values, t.values)
