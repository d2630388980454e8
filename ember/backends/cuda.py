"""`torch.backends.cuda`: the CUDA switches scripts set. ember's CUDA backend is CuPy, so it
is built when CuPy is installed; matmul precision and the attention-kernel toggles are kept
as flags with PyTorch's defaults (ember has one attention implementation, the math one)."""
import importlib.util
import types

__all__ = ["is_built", "matmul", "flash_sdp_enabled", "enable_flash_sdp",
           "mem_efficient_sdp_enabled", "enable_mem_efficient_sdp", "math_sdp_enabled",
           "enable_math_sdp", "cudnn_sdp_enabled", "enable_cudnn_sdp"]

matmul = types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                               allow_bf16_reduced_precision_reduction=True)

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True, "overrideable": True}
# The order in which PyTorch tries the attention kernels, as SDPBackend values (flash, efficient,
# math, cudnn, overrideable); `torch.nn.attention.sdpa_kernel(..., set_priority=True)` sets it.
_sdp_priority = [1, 2, 0, 3, 4]


def is_built():
    return importlib.util.find_spec("cupy") is not None


def _toggle(kind):
    def enabled():
        return _sdp[kind]

    def enable(flag):
        _sdp[kind] = bool(flag)
    enabled.__name__, enable.__name__ = f"{kind}_sdp_enabled", f"enable_{kind}_sdp"
    return enabled, enable


flash_sdp_enabled, enable_flash_sdp = _toggle("flash")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _toggle("mem_efficient")
math_sdp_enabled, enable_math_sdp = _toggle("math")
cudnn_sdp_enabled, enable_cudnn_sdp = _toggle("cudnn")
