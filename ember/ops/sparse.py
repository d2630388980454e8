"""Sparse COO tensors (SciPy on the CPU, CuPy's on the GPU)."""

__all__ = []
METHODS = []
