"""Convolutions: conv1d/2d/3d and their transposes, unfold/fold, with derivatives."""

__all__ = []
METHODS = []
