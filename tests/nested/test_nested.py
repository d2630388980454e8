"""ember.nested against torch.nested (strided layout): construction, printing, sizes,
padding, per-component ops, matmul with a dense weight, narrow, errors."""
import warnings

import numpy as np
import pytest

import ember

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")


def _arrays(seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((n, 3)).astype(np.float32) for n in (2, 4, 1)]


def _both(torch, arrays, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.nested.nested_tensor([torch.from_numpy(a) for a in arrays], **kwargs)
    ours = ember.nested.nested_tensor([ember.from_numpy(a) for a in arrays], **kwargs)
    return ours, theirs


def _same(ours, theirs):
    assert getattr(ours, "is_nested", False) == theirs.is_nested
    if theirs.is_nested:
        assert len(ours.unbind()) == len(theirs.unbind())
        for a, b in zip(ours.unbind(), theirs.unbind()):
            np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5,
                                       atol=1e-6)
    else:
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


def test_prints_and_sizes_as_torch(torch):
    ours, theirs = _both(torch, _arrays())
    assert repr(ours) == repr(theirs)
    assert (ours.dim(), ours.size(0), ours.size(2), ours.size(-1), ours.numel()) == \
        (theirs.dim(), theirs.size(0), theirs.size(2), theirs.size(-1), theirs.numel())
    with pytest.raises(RuntimeError, match="Given dimension 1 is irregular"):
        ours.size(1)
    with pytest.raises(IndexError, match=r"expected to be in range of \[-3, 2\], but got 3"):
        ours.size(3)
    ours, theirs = _both(torch, _arrays(1), requires_grad=True)
    assert repr(ours) == repr(theirs)
    assert repr(ember.nested.nested_tensor([])) == repr(torch.nested.nested_tensor([]))


def test_to_padded_tensor_matches_torch(torch):
    ours, theirs = _both(torch, _arrays())
    _same(ember.nested.to_padded_tensor(ours, 0.0), torch.nested.to_padded_tensor(theirs, 0.0))
    _same(ours.to_padded_tensor(-1.0, (3, 5, 4)), theirs.to_padded_tensor(-1.0, (3, 5, 4)))
    with pytest.raises(RuntimeError, match="Truncation is not supported"):
        ours.to_padded_tensor(0.0, (1, 1, 1))


@pytest.mark.parametrize("op", [lambda t: t.sin(), lambda t: t.relu(), lambda t: t * 2 + 1,
                                lambda t: t + t, lambda t: t * t, lambda t: -t,
                                lambda t: t.softmax(-1), lambda t: t.transpose(1, 2),
                                lambda t: t.abs()])
def test_pointwise_ops_match_torch(torch, op):
    ours, theirs = _both(torch, _arrays(2))
    _same(op(ours), op(theirs))


def test_matmul_with_a_dense_weight_and_nested(torch):
    ours, theirs = _both(torch, _arrays(3))
    weight = np.random.default_rng(4).standard_normal((2, 3)).astype(np.float32)
    _same(ours @ ember.from_numpy(weight).T,
          torch.nn.functional.linear(theirs, torch.from_numpy(weight)))
    right = [np.ones((3, 2), np.float32)] * 3
    o2, t2 = _both(torch, right)
    _same(ours @ o2, torch.matmul(theirs, t2))


def test_narrow_and_as_nested_tensor(torch):
    base = np.arange(12.0, dtype=np.float32).reshape(3, 4)
    start, length = [0, 1, 2], [2, 3, 1]
    ours = ember.nested.narrow(ember.from_numpy(base), 1, ember.tensor(start),
                               ember.tensor(length))
    theirs = torch.nested.narrow(torch.from_numpy(base), 1, torch.tensor(start),
                                 torch.tensor(length), layout=torch.jagged)
    _same(ours, theirs)
    x = ember.randn(2, 3, requires_grad=True)
    nt = ember.nested.as_nested_tensor([x, x[:1]])
    (nt * 3).unbind()[1].sum().backward()
    assert x.grad.tolist() == [[3.0] * 3, [0.0] * 3]
    assert ember.nested.as_nested_tensor(ember.ones(2, 3, 4)).size(1) == 3


def test_errors_as_torch():
    with pytest.raises(RuntimeError, match="must have the same dimension. Found dimension 1 for "
                                           "Tensor at index 1 and dimension 2"):
        ember.nested.nested_tensor([ember.ones(2, 3), ember.ones(2)])
    nt = ember.nested.nested_tensor([ember.ones(2, 3), ember.ones(1, 3)])
    with pytest.raises(RuntimeError, match="add does not support broadcasting"):
        nt + ember.nested.nested_tensor([ember.ones(2, 3)])
    with pytest.raises(RuntimeError, match="Expected both to be nested"):
        nt + ember.ones(3)
