"""`torch.cpu.amp.autocast_mode`: the deprecated `autocast` of the CPU."""
from ._classes import autocast

__all__ = ["autocast"]
