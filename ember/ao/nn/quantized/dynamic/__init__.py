"""`torch.ao.nn.quantized.dynamic`: the layers `quantize_dynamic` swaps in (Linear; ember has
no quantized LSTM/GRU/RNN cells yet)."""
from . import modules
from .modules import Linear

__all__ = ["Linear"]
