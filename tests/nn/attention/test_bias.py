"""torch.nn.attention.bias: causal_upper_left / causal_lower_right masks against PyTorch, in
scaled_dot_product_attention and as printed tensors."""
import numpy as np
import pytest

import ember
from ember.nn.attention.bias import (CausalBias, CausalVariant, causal_lower_right,
                                     causal_upper_left)


@pytest.mark.parametrize("make", ["causal_upper_left", "causal_lower_right"])
@pytest.mark.parametrize("q_len, kv_len", [(3, 5), (4, 4), (1, 6)])
def test_sdpa_with_causal_bias_matches_torch(torch, make, q_len, kv_len):
    import torch.nn.attention.bias as tb
    rng = np.random.default_rng(q_len * 10 + kv_len)
    q = rng.standard_normal((2, 3, q_len, 8)).astype(np.float32)
    k = rng.standard_normal((2, 3, kv_len, 8)).astype(np.float32)
    v = rng.standard_normal((2, 3, kv_len, 8)).astype(np.float32)
    ours = ember.nn.functional.scaled_dot_product_attention(
        ember.tensor(q), ember.tensor(k), ember.tensor(v),
        attn_mask=getattr(ember.nn.attention.bias, make)(q_len, kv_len))
    theirs = torch.nn.functional.scaled_dot_product_attention(
        torch.tensor(q), torch.tensor(k), torch.tensor(v),
        attn_mask=getattr(tb, make)(q_len, kv_len))
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
    assert type(ours) is ember.Tensor


def test_prints_and_materialises_as_torch(torch):
    import torch.nn.attention.bias as tb
    for ours, theirs in ((causal_lower_right(3, 4), tb.causal_lower_right(3, 4)),
                         (causal_upper_left(2, 3), tb.causal_upper_left(2, 3))):
        assert repr(ours) == repr(theirs)
        assert ours._materialize().tolist() == theirs._materialize().tolist()
        assert isinstance(ours, ember.Tensor) and isinstance(ours, CausalBias)
    assert [(m.name, int(m)) for m in CausalVariant] == [(m.name, int(m)) for m in tb.CausalVariant]
    assert sorted(ember.nn.attention.bias.__all__) == sorted(tb.__all__)


def test_errors_and_warnings_as_torch():
    with pytest.raises(AssertionError, match="causal_upper_left only supports 2D tensors"):
        causal_upper_left(1, 2, 3)
    with pytest.warns(UserWarning, match="Lower right causal bias will produce NaNs"):
        causal_lower_right(4, 3)
    with pytest.raises(AssertionError, match="variant must be a CausalVariant, got int"):
        CausalBias(1, 2, 2)
    q = ember.randn(1, 1, 2, 4)
    with pytest.raises(ValueError, match="CausalBias should not be used with causal=True"):
        ember.nn.functional.scaled_dot_product_attention(q, q, q, attn_mask=causal_upper_left(2, 2),
                                                         is_causal=True)


def test_lower_right_mask_follows_the_query_device(fake_cuda):
    q = ember.randn(1, 1, 2, 4, device="cuda")
    k = ember.randn(1, 1, 5, 4, device="cuda")
    out = ember.nn.functional.scaled_dot_product_attention(q, k, k,
                                                           attn_mask=causal_lower_right(2, 5))
    want = ember.nn.functional.scaled_dot_product_attention(
        q, k, k, attn_mask=causal_lower_right(2, 5)._materialize(q.device))
    assert out.device.type == "cuda" and ember.allclose(out, want)
