"""`torch.signal`: signal processing; today its window functions (`windows`)."""
from . import windows

__all__ = ["windows"]
