"""Helpers shared by the unary family's modules: the array-module lookup, half-precision
compute, argument checks, PyTorch's "not implemented for" error and `_unary`, the driver of
every float-valued one-input op. One place, so that each op module holds only ops.
"""
import math

import numpy as np

from ..._meta import module as meta_module
from ..._meta.array import ndarray as MetaArray
from ... import _dtype_casts as _casts, dtypes as _dt
from ..._tensor import make_tensor, Tensor, xp_of
from .._graph import record
from .._writes import write_out
from .. import pointwise as _pw

_HALF = (np.dtype(np.float16), _dt.bfloat16.np)
_PI = math.pi
_inplace = _pw._inplace_unary


def _module(*arrays):
    """The array module of the first backend array among `arrays` (numbers are skipped)."""
    for a in arrays:
        if isinstance(a, np.ndarray):
            return np
        if type(a).__module__.split(".")[0] == "cupy":
            import cupy
            return cupy
        if isinstance(a, MetaArray):
            return meta_module
    return np


def _compute(xp, arr, kernel, wide=False):
    """`kernel(xp, arr)` with half types (and float32 when `wide`) computed in a wider type."""
    dt = arr.dtype
    if dt in _HALF or (wide and dt == np.float32):
        return kernel(xp, arr.astype(np.float64 if wide else np.float32)).astype(dt)
    return kernel(xp, arr)


def _opmath(fn):
    """A binary array function computed in float32 for half types, rounded once. A Python
    number operand takes the array's dtype first (PyTorch's wrapped numbers)."""
    def run(x, y):
        dt = x.dtype if hasattr(x, "dtype") else y.dtype
        if not hasattr(x, "dtype"):
            x = _casts.full_array(_module(y), (), x, dt)
        elif not hasattr(y, "dtype"):
            y = _casts.full_array(_module(x), (), y, dt)
        if dt in _HALF:
            x = x.astype(np.float32) if hasattr(x, "astype") else x
            y = y.astype(np.float32) if hasattr(y, "astype") else y
            return fn(x, y).astype(dt)
        return fn(x, y)
    return run


def _need_tensor(fname, value, name="input", position=1):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{type(value).__name__}")


def _not_implemented(kernel, d):
    return NotImplementedError(f'"{kernel}" not implemented for \'{d._scalar_name}\'')


def _zeros(like):
    return make_tensor(xp_of(like).zeros_like(like._array), like._device)


def _float_input(input):
    """The array of `input` in a floating dtype (integers and bools: the default dtype)."""
    arr = input._array
    if arr.dtype.kind in "biu":
        arr = arr.astype(_dt.get_default_dtype().np)
    return arr


def _unary(input, kernel, node_cls, save, out, fname, *, wide=False, complex_error=None):
    """A float-valued unary op: integer inputs give the default dtype; `save` says what the
    backward needs ('input', 'result' or None)."""
    _need_tensor(fname, input)
    if complex_error is not None and input._array.dtype.kind == "c":
        raise _not_implemented(complex_error, input.dtype)
    if input.dtype._kind:
        _pw._common.barebones_unary(input, fname, True)  # PyTorch's refusal, or uint's go
    arr = _float_input(input)
    res = make_tensor(_compute(xp_of(input), arr, kernel, wide), input._device)
    if out is not None:
        return write_out(out, res, fname)
    if node_cls is not None:
        node = record(node_cls, (input,), res)
        if node is not None and save is not None:
            node.save_for_backward(input if save == "input" else res)
    return res


def _promoted(*values):
    return _dt.promote_operands([
        (v.dtype, v._array.ndim) if isinstance(v, Tensor) else (_dt.scalar_dtype(v), None)
        for v in values])


def _both_tensors(fname, input, other, other_name="other"):
    _need_tensor(fname, input)
    _need_tensor(fname, other, other_name, 2)
