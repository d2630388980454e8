"""Distance layers and attention beyond the op table: reprs and arguments, grad_fn names,
dropout determinism with ember's RNG."""
import numpy as np
import pytest

import ember
import ember.nn as nn

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


@needs_torch
@pytest.mark.parametrize("name,kw", [
    ("CosineSimilarity", {}), ("CosineSimilarity", dict(dim=0, eps=1e-3)),
    ("PairwiseDistance", {}), ("PairwiseDistance", dict(p=1.0, eps=0.0, keepdim=True)),
])
def test_layer_matches_torch(name, kw):
    e, t = getattr(nn, name)(**kw), getattr(torch.nn, name)(**kw)
    assert repr(e) == repr(t)
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((4, 5)), rng.standard_normal((4, 5))
    ea, eb = ember.tensor(a, requires_grad=True), ember.tensor(b, requires_grad=True)
    ta, tb = torch.tensor(a, requires_grad=True), torch.tensor(b, requires_grad=True)
    ye, yt = e(ea, eb), t(ta, tb)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-7)
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=1e-7, atol=1e-12)
    np.testing.assert_allclose(eb.grad.numpy(), tb.grad.numpy(), rtol=1e-7, atol=1e-12)
    for attr in ("dim", "eps", "norm", "keepdim"):
        assert getattr(e, attr, None) == getattr(t, attr, None)


@needs_torch
def test_grad_fn_names():
    a = ember.randn(4, 3, requires_grad=True)
    assert type(ember.cdist(a, a).grad_fn).__name__ == "CdistBackward0"
    assert type(ember.pdist(a).grad_fn).__name__ == "PdistBackward0"
    assert type(ember.cosine_similarity(a, a).grad_fn).__name__ == "SumBackward1"


def test_cosine_similarity_of_zero_vectors_is_zero():
    z = ember.zeros(2, 3)
    assert ember.cosine_similarity(z, z).tolist() == [0.0, 0.0]


def test_sdpa_dropout_uses_ember_rng():
    q = ember.randn(2, 4, 8)
    f = ember.nn.functional.scaled_dot_product_attention
    ember.manual_seed(3)
    a = f(q, q, q, dropout_p=0.5)
    ember.manual_seed(3)
    b = f(q, q, q, dropout_p=0.5)
    assert ember.equal(a, b)
    assert not ember.equal(a, f(q, q, q))


def test_sdpa_fully_masked_row_gives_zeros_and_finite_grads():
    q = ember.randn(1, 3, 4, requires_grad=True)
    mask = ember.ones(3, 3, dtype=ember.bool)
    mask[1] = False
    out = ember.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=mask)
    assert out[0, 1].tolist() == [0.0] * 4
    out.sum().backward()
    assert bool(ember.isfinite(q.grad).all())
