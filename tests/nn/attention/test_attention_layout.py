"""scaled_dot_product_attention lays its output out as the query is laid out, as PyTorch's does
(a query cut from a (B, L, H, D) projection gives an output whose transpose back needs no
copy), and nn.MultiheadAttention without weights runs through it as PyTorch's does: values,
gradients and strides beside torch."""
import numpy as np
import pytest

import ember


def _queries(lib, layout):
    rng = np.random.default_rng(0)
    B, H, L, D = 2, 4, 3, 5
    if layout == "contiguous":
        a = rng.standard_normal((B, H, L, D))
        return lib.tensor(a.astype(np.float32))
    if layout == "from (L, B*H, D)":  # nn.MultiheadAttention's fold of the heads
        a = rng.standard_normal((L, B * H, D)).astype(np.float32)
        return lib.tensor(a).transpose(0, 1).view(B, H, L, D)
    a = rng.standard_normal((B, L, H, D)).astype(np.float32)  # GPT's split of a projection
    return lib.tensor(a).transpose(1, 2)


@pytest.mark.parametrize("layout", ["contiguous", "from (L, B*H, D)", "from (B, L, H, D)"])
@pytest.mark.parametrize("causal", [False, True])
def test_sdpa_output_follows_the_query_layout(torch, layout, causal):
    outs = []
    for lib in (ember, torch):
        q = _queries(lib, layout)
        out = lib.nn.functional.scaled_dot_product_attention(q, q * 0.5, q + 1.0,
                                                             is_causal=causal)
        outs.append((out.stride(), out.numpy()))
    assert outs[0][0] == outs[1][0]
    np.testing.assert_allclose(outs[0][1], outs[1][1], rtol=1e-5, atol=1e-6)


def _mha_case(lib, kind):
    lib.manual_seed(0)
    rng = np.random.default_rng(1)
    m = lib.nn.MultiheadAttention(8, 2, batch_first=True)
    with lib.no_grad():
        for p in m.parameters():
            p.copy_(lib.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32) * 0.3))
    q = lib.tensor(rng.standard_normal((2, 4, 8)).astype(np.float32), requires_grad=True)
    kv = lib.tensor(rng.standard_normal((2, 5, 8)).astype(np.float32), requires_grad=True)
    kwargs = {"need_weights": False}
    if kind == "cross":
        out = m(q, kv, kv, **kwargs)[0]
    elif kind == "causal":
        mask = lib.nn.Transformer.generate_square_subsequent_mask(4)
        out = m(q, q, q, attn_mask=mask, is_causal=True, **kwargs)[0]
    elif kind == "key padding":
        pad = lib.tensor([[False, False, True, False, True], [False] * 5])
        out = m(q, kv, kv, key_padding_mask=pad, **kwargs)[0]
    else:  # a float mask that hides every key from the second query
        mask = lib.zeros(4, 5)
        mask[1] = float("-inf")
        out = m(q, kv, kv, attn_mask=mask, **kwargs)[0]
    (out * lib.arange(8.0)).sum().backward()
    return [out.detach().numpy(), q.grad.numpy(), kv.grad.numpy() if kv.grad is not None
            else np.zeros(1), m.in_proj_weight.grad.numpy()]


@pytest.mark.parametrize("kind", ["cross", "causal", "key padding", "a query sees no key"])
def test_mha_without_weights_matches_pytorch(torch, kind):
    for mine, theirs in zip(_mha_case(ember, kind), _mha_case(torch, kind)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-5)
