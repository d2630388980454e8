"""Dynamically quantized modules: weights quantized once, activations in each call."""
from .linear import Linear

__all__ = ["Linear"]
