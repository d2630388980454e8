"""Helpers shared by the normalization family's modules: a shape's product and the float32
compute type of half-precision arrays (PyTorch's opmath).
"""
import math

import numpy as np

from ... import dtypes as _dt


_prod = math.prod


def _opmath(arr):
    return arr.astype(np.float32) if arr.dtype in (np.dtype(np.float16), _dt.bfloat16.np) else arr
