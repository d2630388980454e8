"""Order statistics (ember/ops/sorting.py): stable sorting with NaN, picking ops and their
derivatives (twice), mode and median conventions, unique, devices, parity with PyTorch."""
import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck
from ember.ops.sorting import scatter_add_along, take_along


def t64(a, grad=True):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def test_sort_is_stable_and_puts_nan_last():
    x = ember.tensor([2.0, np.nan, 1.0, 2.0, 1.0])
    v, i = ember.sort(x)
    assert i.tolist() == [2, 4, 0, 3, 1] and np.isnan(v[-1].item())
    v, i = ember.sort(x, descending=True)
    assert i.tolist() == [1, 0, 3, 2, 4] and np.isnan(v[0].item())


def test_sort_matches_torch_with_ties(torch):
    a = np.random.default_rng(0).integers(0, 4, (5, 40)).astype(np.float32)
    for dim in (0, 1):
        for desc in (False, True):
            e = ember.sort(ember.tensor(a), dim=dim, descending=desc, stable=True)
            t = torch.sort(torch.tensor(a), dim=dim, descending=desc, stable=True)
            assert e.indices.tolist() == t.indices.tolist()
            assert repr(e) == repr(t)


def test_sort_grad_fn_names():
    x = t64([3.0, 1.0])
    assert type(ember.sort(x)[0].grad_fn).__name__ == "SortBackward0"
    assert type(ember.sort(x, stable=True)[0].grad_fn).__name__ == "SortBackward1"
    assert type(ember.msort(x).grad_fn).__name__ == "SortBackward0"
    assert type(ember.topk(x, 1)[0].grad_fn).__name__ == "TopkBackward0"


@pytest.mark.parametrize("f", [
    lambda x: ember.sort(x, 1)[0], lambda x: ember.sort(x, 0, descending=True)[0],
    lambda x: ember.topk(x, 2)[0], lambda x: ember.kthvalue(x, 2, 0)[0],
    lambda x: ember.median(x, 1)[0], lambda x: ember.median(x), lambda x: ember.nanmedian(x, 0)[0],
    lambda x: ember.cummax(x, 1)[0]])
def test_picking_ops_differentiate_twice(f):
    x = t64(np.random.default_rng(1).permutation(12).reshape(3, 4) * 0.5 - 2.75)
    assert gradcheck(f, (x,))
    assert gradgradcheck(f, (x,))


def test_gather_and_scatter_add_are_each_others_derivative():
    rng = np.random.default_rng(2)
    index = rng.integers(0, 3, (4, 5))
    src = t64(rng.standard_normal((4, 5)))
    assert gradgradcheck(lambda s: scatter_add_along(s, 0, index, (3, 5)) ** 2, (src,))
    x = t64(rng.standard_normal((3, 5)))
    assert gradgradcheck(lambda s: take_along(s, 0, index) ** 2, (x,))
    # repeated positions add up
    out = scatter_add_along(ember.ones(4, 1, dtype=ember.float64), 0, np.zeros((4, 1), int), (2, 1))
    assert out.tolist() == [[4.0], [0.0]]


def test_median_is_the_lower_median_and_nan_aware():
    assert ember.median(ember.tensor([4.0, 1.0, 3.0, 2.0])).item() == 2.0
    assert np.isnan(ember.median(ember.tensor([1.0, np.nan, 3.0])).item())
    assert ember.nanmedian(ember.tensor([1.0, np.nan, 3.0, 2.0])).item() == 2.0
    r = ember.median(ember.tensor([[1.0, np.nan, 3.0, np.nan]]), 1)
    assert np.isnan(r.values.item()) and r.indices.item() == 1  # the first NaN


def test_median_gradient_is_shared_among_ties():
    x = t64([1.0, 3.0, 3.0, 2.0, 3.0])
    ember.median(x).backward()
    assert x.grad.tolist() == pytest.approx([0, 1 / 3, 1 / 3, 0, 1 / 3])


def test_mode_takes_smallest_most_frequent_value_and_its_last_index():
    r = ember.mode(ember.tensor([2, 1, 1, 2, 3, 2, 1]))
    assert (r.values.item(), r.indices.item()) == (1, 6)
    r = ember.mode(ember.tensor([[1.0, 2.0, 2.0], [5.0, 5.0, 4.0]]), 1, keepdim=True)
    assert r.values.tolist() == [[2.0], [5.0]] and r.indices.tolist() == [[2], [1]]


def test_topk_and_kthvalue_errors():
    x = ember.tensor([[1.0, 2.0, 3.0]])
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        ember.topk(x, 4)
    with pytest.raises(RuntimeError, match=r"kthvalue\(\): selected number k out of range for "
                                           "dimension 1"):
        ember.kthvalue(x, 0)


def test_unique_outputs_and_missing_derivative():
    x = ember.tensor([[3, 1, 3], [2, 1, 1]])
    vals, inverse, counts = ember.unique(x, return_inverse=True, return_counts=True)
    assert vals.tolist() == [1, 2, 3] and counts.tolist() == [3, 1, 2]
    assert inverse.tolist() == [[2, 0, 2], [1, 0, 0]]
    y = t64([2.0, 1.0, 2.0])
    u = ember.unique(y)
    assert type(u.grad_fn).__name__ == "Unique2Backward0"
    with pytest.raises(NotImplementedError, match="the derivative for '_unique2' is not implemented."):
        u.sum().backward()
    v, c = ember.unique_consecutive(ember.tensor([1, 1, 2, 2, 3, 1, 1]), return_counts=True)
    assert v.tolist() == [1, 2, 3, 1] and c.tolist() == [2, 2, 1, 2]


def test_order_statistics_stay_on_their_device(fake_cuda):
    x = ember.tensor([[1.0, 0.0, 3.0], [2.0, 5.0, 0.5]], device=fake_cuda, requires_grad=True)
    outs = [ember.sort(x).values, ember.argsort(x), ember.topk(x, 2).values,
            ember.kthvalue(x, 2).values, ember.median(x), ember.median(x, 1).indices,
            ember.mode(x).values, ember.unique(x.detach())]
    for o in outs:
        assert o.device == fake_cuda
    sum(o.sum() for o in outs if o.requires_grad).backward()
    assert x.grad.device == fake_cuda


@pytest.mark.parametrize("name,args", [
    ("sort", (1,)), ("topk", (5, 0)), ("kthvalue", (7, 1)), ("median", (1,)), ("median", ()),
    ("nanmedian", (0,)), ("msort", ())])
def test_parity_random(torch, name, args):
    a = np.random.default_rng(3).standard_normal((30, 40))
    a[a > 2] = np.nan if name == "nanmedian" else 2.5
    a[a > 2] += np.arange((a > 2).sum())  # distinct values: where torch breaks ties is unspecified
    e, t = t64(a), torch.tensor(a, requires_grad=True)
    ye, yt = getattr(ember, name)(e, *args), getattr(torch, name)(t, *args)
    if isinstance(yt, tuple):
        assert ye.indices.tolist() == yt.indices.tolist()
        ye, yt = ye.values, yt.values
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), equal_nan=True)
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(e.grad.numpy(), t.grad.numpy())
