"""nn.LinearCrossEntropyLoss against PyTorch's: the same weights give the same loss, gradients
and repr."""
import numpy as np
import pytest

import ember


@pytest.mark.parametrize("kwargs", [{}, {"bias": True, "reduction": "sum"},
                                    {"out_features": (2,), "bias": True, "ignore_index": 1}])
def test_matches_torch(torch, kwargs):
    rng = np.random.default_rng(0)
    shape = (4,) + tuple(kwargs.get("out_features", ()))
    x, target = rng.standard_normal((4, 5)), rng.integers(0, 3, shape)
    tm = torch.nn.LinearCrossEntropyLoss(5, 3, **kwargs).double()
    em = ember.nn.LinearCrossEntropyLoss(5, 3, **kwargs).double()
    em.load_state_dict({k: ember.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    assert repr(em) == repr(tm)
    tl = tm(torch.tensor(x), torch.tensor(target))
    el = em(ember.tensor(x), ember.tensor(target))
    np.testing.assert_allclose(el.detach().numpy(), tl.detach().numpy(), rtol=1e-10)
    tl.sum().backward()
    el.sum().backward()
    np.testing.assert_allclose(em.linear.weight.grad.numpy(), tm.linear.weight.grad.numpy(),
                               rtol=1e-9, atol=1e-12)


def test_bad_arguments():
    with pytest.raises(RuntimeError, match="expected weight shape to be"):
        ember.nn.LinearCrossEntropyLoss(5, 3, weight=ember.ones(2))
    with pytest.raises(RuntimeError, match="label_smoothing"):
        ember.nn.LinearCrossEntropyLoss(5, 3, label_smoothing=2.0)


def test_functional_helpers():
    F = ember.nn.functional
    assert F.GRID_SAMPLE_INTERPOLATION_MODES == {"bilinear": 0, "nearest": 1, "bicubic": 2}
    assert F.GRID_SAMPLE_PADDING_MODES == {"zeros": 0, "border": 1, "reflection": 2}
    F.assert_int_or_pair(3, "kernel_size", "{} must be int or 2-tuple")
    F.assert_int_or_pair((1, 2), "kernel_size", "{} must be int or 2-tuple")
    with pytest.raises(AssertionError, match="kernel_size must be int or 2-tuple"):
        F.assert_int_or_pair((1, 2, 3), "kernel_size", "{} must be int or 2-tuple")
