"""Loss functions."""

__all__ = []
METHODS = []
