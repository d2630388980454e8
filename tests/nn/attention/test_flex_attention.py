"""flex_attention and its block masks beside PyTorch's: the BlockMask tensors (partial and
full tiles by query and by key block), and the attention values (score_mod, mask_mod built
with and_masks/or_masks and indexing other tensors, GQA, empty rows, lse)."""
import numpy as np
import pytest

import ember


def _masks(lib):
    from importlib import import_module
    fa = import_module(lib.__name__ + ".nn.attention.flex_attention")
    causal = fa.create_block_mask(lambda b, h, q, k: q >= k, None, None, 5, 7, device="cpu",
                                  BLOCK_SIZE=2)
    fields = [causal.kv_num_blocks, causal.kv_indices, causal.full_kv_num_blocks,
              causal.full_kv_indices, causal.q_num_blocks, causal.q_indices,
              causal.full_q_num_blocks, causal.full_q_indices, causal.to_dense()]
    listed = [f.tolist() for f in fields] + [causal.shape, round(causal.sparsity(), 6),
                                             causal.seq_lengths, causal.BLOCK_SIZE]
    either = fa.or_masks(lambda b, h, q, k: q >= k, lambda b, h, q, k: k == 6)
    dense = fa.create_mask(either, 1, 1, 3, 7, device="cpu").int().tolist()
    return fa, listed, dense, repr(causal)


def _attend(lib, fa):
    rs = np.random.RandomState(0)
    q, k, v = (lib.tensor(rs.randn(*s).astype("float32"))
               for s in ((2, 4, 5, 8), (2, 2, 7, 8), (2, 2, 7, 3)))
    pad = lib.tensor([[1, 1, 1, 1, 1, 0, 0], [1] * 7]).bool()
    keep = fa.and_masks(lambda b, h, qi, ki: qi >= ki - 2, lambda b, h, qi, ki: pad[b, ki])
    mask = fa.create_block_mask(keep, 2, None, 5, 7, device="cpu", BLOCK_SIZE=2)

    def bias(s, b, h, qi, ki):
        return s + 0.1 * (qi - ki) * (h + 1)
    out, aux = fa.flex_attention(q, k, v, score_mod=bias, block_mask=mask, enable_gqa=True,
                                 return_aux=fa.AuxRequest(lse=True))
    k2, v2 = k.repeat_interleave(2, 1), v.repeat_interleave(2, 1)
    plain = fa.flex_attention(q, k2, v2, scale=0.3)
    first_rows = fa.create_block_mask(lambda b, h, qi, ki: qi < 2, 1, 1, 5, 7, device="cpu",
                                      BLOCK_SIZE=2)
    with pytest.warns(FutureWarning, match="return_lse is deprecated"):
        empty, lse = fa.flex_attention(q, k2, v2, block_mask=first_rows, return_lse=True)
    return [x.numpy() for x in (out, aux.lse, plain, empty, lse)]


@pytest.mark.filterwarnings("ignore:flex_attention called without torch.compile")
def test_block_masks_and_attention_match_pytorchs(torch):
    fa, ours, ours_dense, ours_repr = _masks(ember)
    their_fa, theirs, their_dense, their_repr = _masks(torch)
    assert ours == theirs and ours_dense == their_dense
    assert ours_repr == their_repr
    for a, b in zip(_attend(ember, fa), _attend(torch, their_fa)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)  # -inf lse of empty rows too


def test_gradients_flow_as_through_the_written_out_attention():
    """PyTorch's CPU build refuses flex_attention's backward; ember's eager one has it:
    the same gradients as softmax attention with the mask written out."""
    from ember.nn.attention.flex_attention import create_block_mask, flex_attention
    rs = np.random.RandomState(1)
    q, k, v = (ember.tensor(rs.randn(1, 2, 6, 4).astype("float32"), requires_grad=True)
               for _ in range(3))
    mask = create_block_mask(lambda b, h, qi, ki: qi >= ki, 1, 1, 6, 6, device="cpu",
                             BLOCK_SIZE=4)
    flex_attention(q, k, v, block_mask=mask).square().sum().backward()
    grads = [t.grad.clone() for t in (q, k, v)]
    for t in (q, k, v):
        t.grad = None
    causal = ember.ones(6, 6).tril().bool()
    ember.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=causal) \
        .square().sum().backward()
    for g, t in zip(grads, (q, k, v)):
        np.testing.assert_allclose(g.numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_bad_calls_raise_pytorchs_errors(torch):
    from ember.nn.attention import flex_attention as ours
    from torch.nn.attention import flex_attention as theirs
    for fa, lib in ((ours, ember), (theirs, torch)):
        q, k = lib.zeros(1, 4, 3, 8), lib.zeros(1, 3, 3, 8)
        with pytest.raises(ValueError, match="multiple of kv heads"):
            fa.flex_attention(q, k, k, enable_gqa=True)
        with pytest.raises(ValueError, match="same number of heads"):
            fa.flex_attention(q, k, k)
        with pytest.raises(RuntimeError, match="callable mask_mods"):
            fa.and_masks(1)
