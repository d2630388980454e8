"""`torch.backends.cuda.SDPAParams` (the arguments of one scaled-dot-product-attention call)
and the questions PyTorch asks of them before choosing a fused kernel. ember has no fused
attention kernels (no flash, memory-efficient or cuDNN attention; its attention is the math
one, on NumPy or CuPy), so none of them can be used: each answers False."""

__all__ = ["SDPAParams", "can_use_cudnn_attention", "can_use_efficient_attention",
           "can_use_flash_attention"]


class SDPAParams:
    """query, key, value, attn_mask (or None), dropout, is_causal, enable_gqa."""

    __slots__ = ("query", "key", "value", "attn_mask", "dropout", "is_causal", "enable_gqa")

    def __init__(self, *args, **kwargs):
        if kwargs or len(args) != 7:
            raise TypeError("__init__(): incompatible constructor arguments. The following "
                            "argument types are supported:\n    1. torch._C._SDPAParams(arg0: "
                            "torch.Tensor, arg1: torch.Tensor, arg2: torch.Tensor, arg3: "
                            "torch.Tensor | None, arg4: float, arg5: bool, arg6: bool)")
        (self.query, self.key, self.value, self.attn_mask, dropout, self.is_causal,
         self.enable_gqa) = args
        self.dropout = float(dropout)


def _check(params):
    if not isinstance(params, SDPAParams):
        raise TypeError(f"expected SDPAParams, got {type(params).__name__}")
    return False


def can_use_flash_attention(params, debug=False):
    return _check(params)


def can_use_efficient_attention(params, debug=False):
    return _check(params)


def can_use_cudnn_attention(params, debug=False):
    return _check(params)
