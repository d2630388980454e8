"""`torch.cuda.amp.grad_scaler`: the deprecated `GradScaler` of CUDA."""
from ._classes import GradScaler

__all__ = ["GradScaler"]
