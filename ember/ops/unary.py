"""Elementwise math beyond the core arithmetic: exp2, log1p, trig and hyperbolic functions, erf
and friends, rounding, and the other pointwise ops of PyTorch, with derivatives."""

__all__ = []
METHODS = []
