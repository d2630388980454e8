"""`torch.cpu.amp`: PyTorch's deprecated spellings of `torch.amp.autocast("cpu")` and
`torch.amp.GradScaler("cpu")`; they warn as PyTorch does and behave the same."""
from .autocast_mode import autocast
from .grad_scaler import GradScaler

__all__ = ["autocast", "GradScaler"]
