"""`torch.ao.nn.quantized`: quantized layers. ember has the dynamically quantized ones only
(no quantized tensors, so no statically quantized layers)."""
from . import dynamic

__all__ = ["dynamic"]
