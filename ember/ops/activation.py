"""Activation functions and the softmax family."""

__all__ = []
METHODS = []
