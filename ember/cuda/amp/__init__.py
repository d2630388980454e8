"""`torch.cuda.amp`: PyTorch's deprecated spellings of `torch.amp.autocast("cuda")`,
`torch.amp.GradScaler("cuda")` and `torch.amp.custom_fwd/custom_bwd(device_type="cuda")`;
they warn as PyTorch does and behave the same (without a GPU autocast and the scaler disable
themselves with PyTorch's warning)."""
from .autocast_mode import autocast, custom_bwd, custom_fwd
from .common import amp_definitely_not_available
from .grad_scaler import GradScaler

__all__ = ["amp_definitely_not_available", "autocast", "custom_bwd", "custom_fwd", "GradScaler"]
