"""Helpers shared by the normalization family's modules: a shape's product and the float32
compute type of half-precision arrays (PyTorch's opmath).
"""
import numpy as np

from ... import dtypes as _dt


def _prod(xs):
    n = 1
    for s in xs:
        n *= s
    return n


def _opmath(arr):
    return arr.astype(np.float32) if arr.dtype in (np.dtype(np.float16), _dt.bfloat16.np) else arr
