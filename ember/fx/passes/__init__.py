"""`torch.fx.passes`: graph passes (shape propagation)."""
from . import shape_prop

__all__ = ["shape_prop"]
