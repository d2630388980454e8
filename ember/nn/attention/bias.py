"""`torch.nn.attention.bias`: causal masks that scaled_dot_product_attention recognises.

`causal_upper_left(q, kv)` lets query i attend to keys 0..i (the usual causal mask, aligned at
the top left); `causal_lower_right(q, kv)` aligns the diagonal at the bottom right, so the
last query sees every key (decoding with a key/value cache). A CausalBias is a tensor
holding its materialised boolean mask (what it prints as); passed as `attn_mask`, it takes
the attention call over and builds the mask on the query's device."""
import warnings
from enum import IntEnum

from ... import dtypes as _dt
from ..._tensor import Tensor, _make
from ...device import device as _device
from ...ops.attention import scaled_dot_product_attention
from ...ops.creation import ones

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(IntEnum):
    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias(Tensor):
    """A causal attention mask of `seq_len_q` queries by `seq_len_kv` keys."""

    def __new__(cls, variant, seq_len_q, seq_len_kv):
        if not isinstance(variant, CausalVariant):
            raise AssertionError(f"variant must be a CausalVariant, got {type(variant).__name__}")
        mask = _causal_mask(variant, seq_len_q, seq_len_kv, _device("cpu"))
        return _make(cls, mask._array, mask._device)

    def __init__(self, variant, seq_len_q, seq_len_kv):
        self.variant, self.seq_len_q, self.seq_len_kv = variant, seq_len_q, seq_len_kv
        if seq_len_q > seq_len_kv and variant == CausalVariant.LOWER_RIGHT:
            warnings.warn("Lower right causal bias will produce NaNs in the output when seq_len_q "
                          "> seq_len_kv!", stacklevel=2)

    def __repr__(self):  # the mask it stands for, as PyTorch prints it
        return repr(self._materialize())

    def _materialize(self, device=None):
        """The boolean mask (True where attention is allowed) on `device` (the CPU by
        default)."""
        device = _device("cpu") if device is None else device
        return _causal_mask(self.variant, self.seq_len_q, self.seq_len_kv, device)

    @staticmethod
    def _sdpa_dispatch(query, key, value, attn_mask, dropout_p=0.0, is_causal=False,
                       scale=None, enable_gqa=False):
        """scaled_dot_product_attention with this mask: the upper-left (or square) variant is
        the built-in causal attention, the lower-right one a mask on the query's device."""
        if is_causal:
            raise ValueError("CausalBias should not be used with causal=True")
        if (attn_mask.seq_len_q == attn_mask.seq_len_kv
                or attn_mask.variant == CausalVariant.UPPER_LEFT):
            mask, is_causal = None, True
        else:
            mask = attn_mask._materialize(query.device)
        return scaled_dot_product_attention(query, key, value, attn_mask=mask,
                                            dropout_p=dropout_p, is_causal=is_causal,
                                            scale=scale, enable_gqa=enable_gqa)


def _causal_mask(variant, seq_len_q, seq_len_kv, device):
    allowed = ones(seq_len_q, seq_len_kv, device=device, dtype=_dt.bool)
    if variant == CausalVariant.UPPER_LEFT:
        return allowed.tril()
    if variant == CausalVariant.LOWER_RIGHT:
        return allowed.tril(diagonal=seq_len_kv - seq_len_q)
    raise ValueError(f"CausalBias.variant must be a CausalVariant type, but found: {variant}")


def causal_upper_left(*size):
    """A causal mask of `size` = (seq_len_q, seq_len_kv) aligned at the top left."""
    if len(size) != 2:
        raise AssertionError("causal_upper_left only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.UPPER_LEFT, seq_len_q, seq_len_kv)


def causal_lower_right(*size):
    """A causal mask of `size` = (seq_len_q, seq_len_kv) aligned at the bottom right."""
    if len(size) != 2:
        raise AssertionError("causal_lower_right only supports 2D tensors")
    seq_len_q, seq_len_kv = size
    return CausalBias(CausalVariant.LOWER_RIGHT, seq_len_q, seq_len_kv)
