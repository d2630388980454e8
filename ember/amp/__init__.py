"""`torch.amp`: automatic mixed precision. `autocast` makes the ops of PyTorch's
lower-precision list compute in bfloat16/float16 (and its float32 list in float32);
`GradScaler` scales a loss so that small float16 gradients do not underflow."""
from .autocast_mode import (autocast, custom_bwd, custom_fwd, get_autocast_dtype,
                            is_autocast_available, is_autocast_enabled)
from .. import _lazy

# GradScaler loads on first use (ember/_lazy.py): most scripts never scale a loss
_lazy.lazy_attributes(__import__("sys").modules[__name__], {
    "GradScaler": (".grad_scaler", "GradScaler"), "grad_scaler": (".grad_scaler", None)})

__all__ = ["autocast", "custom_bwd", "custom_fwd", "GradScaler", "is_autocast_available",
           "is_autocast_enabled", "get_autocast_dtype"]
