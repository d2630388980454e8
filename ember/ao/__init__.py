"""`torch.ao`: architecture optimisation. ember has dynamic quantization
(`ember.ao.quantization.quantize_dynamic` and the layers it swaps in)."""
from . import nn, quantization

__all__ = ["nn", "quantization"]
