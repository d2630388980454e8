"""torch.masked's reductions and normalizations on plain tensors with `mask=`, against PyTorch:
values (nan, inf and all), dtypes and shapes, including slices with nothing kept."""
import warnings

import numpy as np
import pytest

import ember

REDUCTIONS = ["sum", "mean", "amax", "amin", "prod", "logsumexp", "argmax", "argmin", "var",
              "std", "norm"]
ALONG_DIM = ["softmax", "log_softmax", "softmin", "cumsum", "cumprod"]


def _inputs(seed, shape=(3, 4, 5)):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(np.float32)
    mask = rng.random(shape) > 0.4
    mask[0, 1] = False          # a slice with nothing kept
    return x, mask


def _call(lib, name, x, mask, *args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return getattr(lib.masked, name)(lib.from_numpy(x), *args,
                                         mask=lib.from_numpy(mask), **kwargs)


def _same(ours, theirs):
    assert ours.dtype.name == str(theirs.dtype).split(".")[1]
    assert tuple(ours.shape) == tuple(theirs.shape)
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-5,
                               atol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", REDUCTIONS)
@pytest.mark.parametrize("dim,keepdim", [(2, False), (-1, True), (None, False)])
def test_reductions_match_torch(torch, name, dim, keepdim):
    x, mask = _inputs(0)
    if name in ("argmax", "argmin") and dim is None:
        dim = 1
    _same(_call(ember, name, x, mask, dim=dim, keepdim=keepdim),
          _call(torch, name, x, mask, dim=dim, keepdim=keepdim))


@pytest.mark.parametrize("name", ["sum", "mean", "amax", "var"])
def test_reductions_over_several_dims_and_broadcast_mask(torch, name):
    x, mask = _inputs(1)
    mask = mask[:1]             # broadcast along the first dim
    _same(_call(ember, name, x, mask, dim=(0, 2)), _call(torch, name, x, mask, dim=(0, 2)))


@pytest.mark.parametrize("name", ALONG_DIM)
@pytest.mark.parametrize("dim", [0, 2])
def test_along_dim_match_torch(torch, name, dim):
    x, mask = _inputs(2)
    _same(_call(ember, name, x, mask, dim), _call(torch, name, x, mask, dim))


def test_normalize_norm_orders_and_integer_dtypes(torch):
    x, mask = _inputs(3)
    for ord in (1.0, 2.0, float("inf")):
        _same(_call(ember, "normalize", x, mask, ord, 1), _call(torch, "normalize", x, mask,
                                                               ord, 1))
        _same(_call(ember, "norm", x, mask, ord, 1), _call(torch, "norm", x, mask, ord, 1))
    ints = (x * 10).astype(np.int64)
    for name in ("sum", "amax", "amin", "prod"):
        _same(_call(ember, name, ints, mask, 2), _call(torch, name, ints, mask, 2))
    _same(_call(ember, "var", x, mask, 1, correction=0),
          _call(torch, "var", x, mask, 1, correction=0))


def test_no_mask_is_the_plain_op():
    x = ember.randn(4, 3)
    assert ember.allclose(ember.masked.sum(x, 1), x.sum(1))
    assert ember.allclose(ember.masked.softmax(x, 0), ember.softmax(x, 0))


def test_gradient_flows_through_kept_elements_only():
    x = ember.randn(2, 3, requires_grad=True)
    mask = ember.tensor([[True, False, True], [False, True, True]])
    ember.masked.sum(x, 1, mask=mask).sum().backward()
    assert x.grad.tolist() == mask.float().tolist()
