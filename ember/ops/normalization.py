"""Normalisation, dropout and embedding ops."""

__all__ = []
METHODS = []
