"""Dynamically quantized modules: weights quantized once, activations in each call."""
from .linear import Linear
from .rnn import LSTM

__all__ = ["Linear", "LSTM"]
