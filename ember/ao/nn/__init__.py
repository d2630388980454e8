"""`torch.ao.nn`: the layers of architecture optimisation (quantized layers)."""
from . import quantized

__all__ = ["quantized"]
