"""`torch.ao.nn.quantized.dynamic`: the layers `quantize_dynamic` swaps in (Linear, LSTM; ember
has no quantized GRU or RNN cells yet)."""
from . import modules
from .modules import LSTM, Linear

__all__ = ["Linear", "LSTM"]
