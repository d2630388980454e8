"""`torch.cpu.amp.grad_scaler`: the deprecated `GradScaler` of the CPU."""
from ._classes import GradScaler

__all__ = ["GradScaler"]
