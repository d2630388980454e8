"""Checkpoints: PyTorch's format (`save`, `load`) and safetensors, both without PyTorch."""
from . import safetensors  # noqa: F401
from .checkpoint import (DEFAULT_PROTOCOL, add_safe_globals, clear_safe_globals,
                         get_safe_globals, load, safe_globals, save)

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "DEFAULT_PROTOCOL", "safetensors"]
