"""MaskedTensor against PyTorch's: printing, pointwise ops, reductions, errors."""
import warnings

import numpy as np
import pytest

import ember

pytestmark = pytest.mark.filterwarnings("ignore::UserWarning")

DATA = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]
MASK = [[True, False, True], [False, False, True]]


def _both(torch, data=DATA, mask=MASK, dtype="float32"):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.masked.masked_tensor(torch.tensor(data, dtype=getattr(torch, dtype)),
                                            torch.tensor(mask))
    ours = ember.masked.masked_tensor(ember.tensor(data, dtype=getattr(ember, dtype)),
                                      ember.tensor(mask))
    return ours, theirs


def _same(ours, theirs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert repr(ours) == repr(theirs)
        mask = theirs.get_mask().numpy()
        assert ours.get_mask().tolist() == mask.tolist()
        np.testing.assert_allclose(ours.get_data().detach().numpy()[mask],
                                   theirs.get_data().detach().numpy()[mask], rtol=1e-6)


@pytest.mark.parametrize("dtype", ["float32", "int64", "bool"])
def test_prints_as_torch(torch, dtype):
    ours, theirs = _both(torch, dtype=dtype)
    _same(ours, theirs)
    _same(ours[0], theirs[0])
    _same(ours[1, 2], theirs[1, 2])
    _same(ours[1, 0], theirs[1, 0])


@pytest.mark.parametrize("op", [lambda t: t + 1, lambda t: t * t, lambda t: t.exp(),
                                lambda t: -t, lambda t: t > 2, lambda t: t.abs().neg(),
                                lambda t: t / 2, lambda t: t.pow(2), lambda t: t.sin()])
def test_pointwise_ops_match_torch(torch, op):
    ours, theirs = _both(torch)
    _same(op(ours), op(theirs))


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "amin", "prod", "argmax"])
@pytest.mark.parametrize("args", [(), (0,), (1,)])
def test_reductions_match_torch(torch, name, args):
    ours, theirs = _both(torch)
    if name == "argmax" and not args:
        return
    _same(getattr(ours, name)(*args), getattr(theirs, name)(*args))


def test_reduction_with_nothing_kept_and_keepdim(torch):
    ours, theirs = _both(torch, mask=[[False] * 3] * 2)
    _same(ours.sum(), theirs.sum())
    ours, theirs = _both(torch)
    _same(ours.sum(1, keepdim=True), theirs.sum(1, keepdim=True))


def test_masked_functions_take_a_masked_tensor(torch):
    ours, theirs = _both(torch)
    # (not mean: PyTorch 2.13 divides a MaskedTensor's masked sum by every element, kept or not)
    for name in ("sum", "softmax", "amax"):
        got = getattr(ember.masked, name)(ours, 1)
        expected = getattr(torch.masked, name)(theirs, 1)
        np.testing.assert_allclose(got.numpy(), expected.numpy(), equal_nan=True, rtol=1e-6)
        assert isinstance(got, ember.Tensor)


def test_plain_tensor_operand_and_to_tensor(torch):
    ours, theirs = _both(torch)
    _same(ours + ember.tensor(DATA), theirs + torch.tensor(DATA))
    assert ours.to_tensor(0).tolist() == theirs.to_tensor(0).tolist()
    assert ours.shape == (2, 3) and ours.dtype is ember.float32 and not ours.requires_grad


def test_errors_as_torch():
    data, mask = ember.tensor(DATA), ember.tensor(MASK)
    mt = ember.masked.masked_tensor(data, mask)
    with pytest.raises(ValueError, match="Input masks must match"):
        mt + ember.masked.masked_tensor(data, ~mask)
    with pytest.raises(ValueError, match="data.dim\\(\\) must equal mask.dim\\(\\)"):
        ember.masked.masked_tensor(data, mask[0])
    with pytest.raises(TypeError, match="mask must have dtype bool."):
        ember.masked.masked_tensor(data, data)
    with pytest.raises(TypeError, match="torch.uint8 is not supported in MaskedTensor."):
        ember.masked.masked_tensor(data.to(ember.uint8), mask)


def test_gradient_through_as_masked_tensor():
    data = ember.tensor(DATA, requires_grad=True)
    mt = ember.masked.as_masked_tensor(data, ember.tensor(MASK))
    (mt * 3).sum().get_data().backward()
    assert data.grad.tolist() == [[3.0, 0.0, 3.0], [0.0, 0.0, 3.0]]
    assert ember.masked.masked_tensor(data, ember.tensor(MASK), requires_grad=True).requires_grad
    assert ember.masked.is_masked_tensor(mt) and not ember.masked.is_masked_tensor(data)
