"""Attention: `scaled_dot_product_attention` and `multi_head_attention_forward` (the math of
`nn.MultiheadAttention`), with the mask helpers the transformer modules share.

Attention on 4-d inputs without dropout runs as one node (`_attention_core`), as PyTorch's
CPU kernel; otherwise both are compositions of differentiable ember ops (matmul, softmax,
dropout, linear ...), following PyTorch's math path step for step.
"""
import builtins
import math
import warnings

import numpy as np

from .._tensor import make_tensor, Tensor, xp_of
from .._state import autocast as _autocast
from ._autocast import lower
from ._attention_core import biased_softmax, causal_bias, fused_attention
from .softmax_family import softmax
from .creation import full, zeros
from .distance import _check_tensor
from .linalg import bmm, linear
from .normalization import dropout
from .pointwise._common import broadcast_error
from .rearrange import triu
from .shape import cat
from .spatial import pad

__all__ = []
METHODS = []
# multi_head_attention_forward reaches nn.functional by name there: it has no op-table entry
FUNCTIONAL = ["scaled_dot_product_attention"]


# ---- scaled dot product ------------------------------------------------------------------------
def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """softmax(q k^T * scale + mask) v, PyTorch's math form (q and k each scaled by
    sqrt(scale)); rows that mask everything give zeros, not NaN."""
    takeover = getattr(type(attn_mask), "_sdpa_dispatch", None)
    if takeover is not None:  # a mask object that runs attention its own way (CausalBias)
        return takeover(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa)
    for name, t, pos in (("query", query, 1), ("key", key, 2), ("value", value, 3)):
        _check_tensor(t, "scaled_dot_product_attention", name, pos)
    if _autocast.active:
        query, key, value, attn_mask = lower(query, key, value, attn_mask)
    if not (query.dtype is key.dtype is value.dtype):
        raise RuntimeError("Expected query, key, and value to have the same dtype, but got "
                           f"query.dtype: {query.dtype._cpp_name} key.dtype: "
                           f"{key.dtype._cpp_name} and value.dtype: {value.dtype._cpp_name} "
                           "instead.")
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise RuntimeError("Expected query, key, and value to all be  at least 2 dimensional, but "
                           f"got query.dim: {query.ndim} key.dim: {key.ndim} and value.dim: "
                           f"{value.ndim} instead.")
    if attn_mask is not None and attn_mask.ndim < 2:  # PyTorch reads the mask's dim -2
        raise IndexError("Dimension specified as -2 but tensor has no dimensions"
                         if attn_mask.ndim == 0 else
                         "Dimension out of range (expected to be in range of [-1, 0], but got -2)")
    if attn_mask is not None and attn_mask.dtype.name != "bool" and \
            attn_mask.dtype is not query.dtype:
        raise RuntimeError("Expected attn_mask dtype to be bool or float or to match query "
                           f"dtype, but got attn_mask.dtype: {attn_mask.dtype._cpp_name} and  "
                           f"query.dtype: {query.dtype._cpp_name} instead.")
    xp = xp_of(query)
    dev = query._device
    negative = scale is not None and scale < 0
    s = 1.0 / math.sqrt(query.shape[-1]) if scale is None else builtins.abs(scale)
    factor = math.sqrt(s)
    bias = None  # the additive mask as a constant array, or a float mask tensor with grad
    if is_causal:
        if attn_mask is not None:
            raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                               "set when is_causal=True")
        bias = causal_bias(xp, query.shape[-2], key.shape[-2], query._array.dtype, dev)
    elif attn_mask is not None and attn_mask.dtype.name == "bool":
        bias = xp.where(attn_mask._array, 0, -np.inf).astype(query._array.dtype)
    elif attn_mask is not None:
        bias = attn_mask if attn_mask.requires_grad else attn_mask._array
    if dropout_p == 0.0 and not isinstance(bias, Tensor) and \
            _one_node_shapes(query, key, value, bias):
        return fused_attention(query, key, value, bias, -s if negative else s)
    q = query * (-factor if negative else factor)
    k, v = key, value
    if enable_gqa and key.ndim >= 3 and query.shape[-3] != key.shape[-3]:
        hq, hk = query.shape[-3], key.shape[-3]
        if hq % hk or hq % value.shape[-3]:
            raise RuntimeError("Number of heads in key and value must divide the number of heads "
                               "in query")
        k = _repeat_heads(key, hq // hk)
        v = _repeat_heads(value, hq // value.shape[-3])
    attn = q.matmul(k.transpose(-2, -1) * factor)
    if bias is not None:  # a mask that does not broadcast to the scores
        err = broadcast_error(tuple(attn.shape), tuple(bias.shape))
        if err is not None:
            raise err
    if isinstance(bias, Tensor):  # a mask that learns: its gradient flows through the sum
        attn = attn + bias
        # A query that sees no key gets zeros, not NaN. Masking every row (a no-op where none
        # is dead) rather than asking whether any is spares the device a host sync.
        dead = make_tensor(xp.all(xp.isneginf(attn._array), axis=-1, keepdims=True), dev)
        attn = softmax(attn.masked_fill(dead, 0), -1).masked_fill(dead, 0)
    else:
        attn = biased_softmax(attn, bias)
    if dropout_p > 0.0:
        attn = dropout(attn, dropout_p, True)
    return attn.matmul(v)


def _one_node_shapes(query, key, value, bias):
    """Whether attention runs as one node, where PyTorch's CPU runs its fused kernel: 4-d
    inputs with one batch and head layout (no broadcast, no grouped heads) and a mask that
    broadcasts to the scores."""
    if not (query.ndim == key.ndim == value.ndim == 4 and query.dtype.is_floating_point):
        return False
    batch = tuple(query.shape[:2])
    if tuple(key.shape[:2]) != batch or tuple(value.shape[:2]) != batch or \
            query.shape[3] != key.shape[3] or key.shape[2] != value.shape[2]:
        return False  # the composition raises the errors of mismatched shapes
    scores = batch + (query.shape[2], key.shape[2])
    try:
        return bias is None or np.broadcast_shapes(scores, bias.shape) == scores
    except ValueError:
        return False


def _repeat_heads(t, r):
    shape = tuple(t.shape)
    e = t.unsqueeze(-3).expand(shape[:-2] + (r,) + shape[-2:])
    return e.reshape(shape[:-3] + (shape[-3] * r,) + shape[-2:])


# ---- multi-head attention ----------------------------------------------------------------------
def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A bool mask becomes an additive float mask (True -> -inf); a float mask stays."""
    if mask is None:
        return None
    is_float = mask.is_floating_point()
    if mask.dtype.name != "bool" and not is_float:
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype != other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=3)
    if not is_float:
        mask = zeros(tuple(mask.shape), dtype=target_type,
                     device=mask.device).masked_fill(mask, float("-inf"))
    return mask


def _none_or_dtype(t):
    return None if t is None else t.dtype


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError("For batched (3-D) `query`, expected `key` and `value` to be "
                                 f"3-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 2:
            raise AssertionError("For batched (3-D) `query`, expected `key_padding_mask` to be "
                                 f"`None` or 2-D but found {key_padding_mask.dim()}-D tensor "
                                 "instead")
        if attn_mask is not None and attn_mask.dim() not in (2, 3):
            raise AssertionError("For batched (3-D) `query`, expected `attn_mask` to be `None`, "
                                 f"2-D or 3-D but found {attn_mask.dim()}-D tensor instead")
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError("For unbatched (2-D) `query`, expected `key` and `value` to "
                                 f"be 2-D but found {key.dim()}-D and {value.dim()}-D tensors "
                                 "respectively")
        if key_padding_mask is not None and key_padding_mask.dim() != 1:
            raise AssertionError("For unbatched (2-D) `query`, expected `key_padding_mask` to "
                                 f"be `None` or 1-D but found {key_padding_mask.dim()}-D tensor "
                                 "instead")
        if attn_mask is not None:
            if attn_mask.dim() not in (2, 3):
                raise AssertionError("For unbatched (2-D) `query`, expected `attn_mask` to be "
                                     f"`None`, 2-D or 3-D but found {attn_mask.dim()}-D tensor "
                                     "instead")
            if attn_mask.dim() == 3:
                expected = (num_heads, query.shape[0], key.shape[0])
                if tuple(attn_mask.shape) != expected:
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                         f"{attn_mask.shape}")
        return False
    raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                         f"{query.dim()}-D query tensor")


def _in_projection(query, key, value, w, b, separate):
    if separate is None:
        b_q, b_k, b_v = (None,) * 3 if b is None else b.chunk(3)
        if query is key and key is value:
            return linear(query, w, b).chunk(3, -1)
        w_q, w_k, w_v = w.chunk(3)
        if key is value:  # encoder-decoder attention: keys and values in one product, as PyTorch
            b_kv = None if b is None else b[b_q.shape[0]:]
            return (linear(query, w_q, b_q),
                    *linear(key, w[w_q.shape[0]:], b_kv).chunk(2, -1))
    else:
        w_q, w_k, w_v = separate
        b_q, b_k, b_v = (None,) * 3 if b is None else b.chunk(3)
    return linear(query, w_q, b_q), linear(key, w_k, b_k), linear(value, w_v, b_v)


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """`nn.MultiheadAttention`'s math on sequence-first inputs ((L, N, E), or (L, E)
    unbatched): project query, key and value, fold the heads into the batch, softmax the
    scaled scores plus the additive masks, dropout, project the output."""
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    # called here, not in a helper: its warning's stacklevel names this function's caller
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    attn_mask, causal = _attn_mask_or_causal(attn_mask, is_causal,
                                             key_padding_mask is None and not need_weights,
                                             query.dtype)
    head_dim = _head_dim(embed_dim, embed_dim_to_check, num_heads)
    separate = (q_proj_weight, k_proj_weight, v_proj_weight) if use_separate_proj_weight \
        else None
    q, k, v = _project(query, key, value, in_proj_weight, in_proj_bias, separate)
    if attn_mask is not None:
        attn_mask = _batched_attn_mask(attn_mask, tgt_len, src_len, bsz * num_heads)
    k, v, attn_mask, key_padding_mask = _append_bias_kv(k, v, bias_k, bias_v, static_k, static_v,
                                                        bsz, attn_mask, key_padding_mask)
    q = _fold_heads(q, bsz * num_heads, head_dim)
    k = _fold_heads(k, bsz * num_heads, head_dim) if static_k is None else static_k
    v = _fold_heads(v, bsz * num_heads, head_dim) if static_v is None else static_v
    if add_zero_attn:
        zero_keys = zeros((bsz * num_heads, 1, head_dim), dtype=k.dtype, device=k.device)
        k, v = cat([k, zero_keys], dim=1), cat([v, zero_keys], dim=1)
        attn_mask, key_padding_mask = _one_more_key(attn_mask, key_padding_mask)
    src_len = k.size(1)
    if key_padding_mask is not None:
        attn_mask = _merge_key_padding(key_padding_mask, attn_mask, bsz, num_heads, src_len)
    if not training:
        dropout_p = 0.0
    if not need_weights:  # as PyTorch: the heads as a batch through one fused attention
        if attn_mask is not None:
            attn_mask = attn_mask.unsqueeze(0) if attn_mask.size(0) == 1 else \
                attn_mask.view(bsz, num_heads, -1, src_len)
        out = scaled_dot_product_attention(
            q.view(bsz, num_heads, tgt_len, head_dim), k.view(bsz, num_heads, src_len, head_dim),
            v.view(bsz, num_heads, src_len, head_dim), attn_mask, dropout_p, causal)
        out = out.permute(2, 0, 1, 3).contiguous().view(bsz * tgt_len, embed_dim)
        out = linear(out, out_proj_weight, out_proj_bias)
        out = out.view(tgt_len, bsz, out.shape[-1])
        return (out if is_batched else out.squeeze(1)), None
    if causal:
        attn_mask = triu(full((tgt_len, src_len), float("-inf"), dtype=q.dtype,
                              device=q.device), diagonal=1).unsqueeze(0)
    weights = _attention_weights(q, k, attn_mask, head_dim, dropout_p)
    out = bmm(weights, v)
    out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
    out = linear(out, out_proj_weight, out_proj_bias)
    out = out.view(tgt_len, bsz, out.shape[-1])  # sizes, not -1: a batch of 0 must view too
    if not is_batched:
        out = out.squeeze(1)
    weights = weights.view(bsz, num_heads, tgt_len, src_len)
    if average_attn_weights:
        weights = weights.mean(dim=1)
    if not is_batched:
        weights = weights.squeeze(0)
    return out, weights


def _attn_mask_or_causal(attn_mask, is_causal, hint_allowed, dtype):
    """The additive attn_mask, and whether the is_causal hint replaces it (as in
    scaled_dot_product_attention) where no key padding mask or weights are asked for."""
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and hint_allowed:
        return None, True
    return _canonical_mask(attn_mask, "attn_mask", None, "", dtype, False), False


def _head_dim(embed_dim, embed_dim_to_check, num_heads):
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but "
                             f"got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    return head_dim


def _project(query, key, value, in_proj_weight, in_proj_bias, separate):
    """q, k, v through the packed in_proj_weight, or through `separate` (the q, k and v
    weights of use_separate_proj_weight), after PyTorch's checks of either."""
    if separate is not None:
        if tuple(key.shape[:2]) != tuple(value.shape[:2]):
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not match "
                                 f"value's {value.shape[:2]}")
        for name, w in zip(("q", "k", "v"), separate):
            if w is None:
                raise AssertionError(f"use_separate_proj_weight is True but {name}_proj_weight "
                                     "is None")
        return _in_projection(query, key, value, None, in_proj_bias, separate)
    if tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape "
                             f"{value.shape}")
    if in_proj_weight is None:
        raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
    return _in_projection(query, key, value, in_proj_weight, in_proj_bias, None)


def _batched_attn_mask(attn_mask, tgt_len, src_len, batch_heads):
    """attn_mask as (1 or batch * heads, L, S), after checking its shape."""
    if attn_mask.dim() == 2:
        if tuple(attn_mask.shape) != (tgt_len, src_len):
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                               f"should be {(tgt_len, src_len)}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if tuple(attn_mask.shape) != (batch_heads, tgt_len, src_len):
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                               f"should be {(batch_heads, tgt_len, src_len)}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def _append_bias_kv(k, v, bias_k, bias_v, static_k, static_v, bsz, attn_mask,
                    key_padding_mask):
    """add_bias_kv: the learned bias_k and bias_v become one more key and value of every
    sequence (both or neither must be given)."""
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = cat([k, bias_k.repeat(1, bsz, 1)])
        v = cat([v, bias_v.repeat(1, bsz, 1)])
        attn_mask, key_padding_mask = _one_more_key(attn_mask, key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")
    return k, v, attn_mask, key_padding_mask


def _one_more_key(attn_mask, key_padding_mask):
    """The masks widened by a column of zeros for a key appended to every sequence (bias_k
    or add_zero_attn's zeros): every query may attend to it."""
    if attn_mask is not None:
        attn_mask = pad(attn_mask, (0, 1))
    if key_padding_mask is not None:
        key_padding_mask = pad(key_padding_mask, (0, 1))
    return attn_mask, key_padding_mask


def _fold_heads(t, batch_heads, head_dim):
    """(S, N, E) -> (N * heads, S, head_dim): each head is a batch entry of its own."""
    return t.reshape(t.shape[0], batch_heads, head_dim).transpose(0, 1)


def _merge_key_padding(key_padding_mask, attn_mask, bsz, num_heads, src_len):
    """The (N, S) key padding mask repeated for each head and added to attn_mask."""
    if key_padding_mask.shape[0] != bsz:
        raise AssertionError(f"Expected key_padded_mask.shape[0] to be {bsz}, but got "
                             f"{key_padding_mask.shape[0]}")
    if key_padding_mask.shape[1] != src_len:
        raise AssertionError(f"Expected key_padded_mask.shape[1] to be {src_len}, but got "
                             f"{key_padding_mask.shape[1]}")
    key_padding_mask = key_padding_mask.view(bsz, 1, 1, src_len) \
        .expand(-1, num_heads, -1, -1).reshape(bsz * num_heads, 1, src_len)
    return key_padding_mask if attn_mask is None else attn_mask + key_padding_mask


def _attention_weights(q, k, attn_mask, head_dim, dropout_p):
    """softmax(q k^T / sqrt(head_dim) + attn_mask), then dropout."""
    scores = bmm(q * math.sqrt(1.0 / float(head_dim)), k.transpose(-2, -1))
    if attn_mask is not None:
        scores = scores + attn_mask
    weights = softmax(scores, -1)
    if dropout_p > 0.0:
        weights = dropout(weights, p=dropout_p)
    return weights
