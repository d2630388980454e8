"""Pooling: max/avg/adaptive/lp pooling and unpooling, with derivatives."""

__all__ = []
METHODS = []
