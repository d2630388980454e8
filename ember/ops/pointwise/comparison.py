"""Comparison, logical and bitwise ops (eq ... ge and their aliases, logical_and/or/xor/not,
bitwise_and/or/xor/not and the shifts): no gradient.
"""
import numpy as np

from ..._tensor import Tensor, make_tensor
from .._writes import write_out
from ... import dtypes as _dt
from ._common import (_barebones_operands, _raise_if_not_broadcastable, binary, common_device,
                      operands)

__all__ = ["eq", "ne", "lt", "le", "gt", "ge", "greater", "greater_equal", "less", "less_equal",
           "not_equal", "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and",
           "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
           "bitwise_right_shift"]


# ---- comparison and logic (no gradient) -----------------------------------------------------
def _compare(fn, name):
    def op(input, other, *, out=None):
        return binary(input, other, fn, None, name, out)
    op.__name__ = name
    return op


def _ordering(fn, name):
    """lt, le, gt, ge: complex numbers have no order, and PyTorch's kernels refuse them (NumPy
    would order them by real part, then imaginary)."""
    def op(input, other, *, out=None):
        if _complex_operand(input) or _complex_operand(other):
            d, dev = operands(input, other, name)[2:]
            raise NotImplementedError(f'"{name}_{dev.type}" not implemented for '
                                      f"'{d._scalar_name}'")
        return binary(input, other, fn, None, name, out)
    op.__name__ = name
    return op


def _complex_operand(x):
    if isinstance(x, Tensor):
        return x._array.dtype.kind == "c"
    return isinstance(x, (complex, np.complexfloating))


eq = _compare(np.equal, "eq")
ne = _compare(np.not_equal, "ne")
lt = _ordering(np.less, "lt")
le = _ordering(np.less_equal, "le")
gt = _ordering(np.greater, "gt")
ge = _ordering(np.greater_equal, "ge")
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _logical(fn, name):
    def op(input, other, *, out=None):
        for t in (input, other):
            if isinstance(t, Tensor) and t.dtype._kind:
                raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                          f"'{t.dtype._scalar_name}'")
        x = input._array
        y = other._array if isinstance(other, Tensor) else other
        if isinstance(other, Tensor) and other._device != input._device:
            common_device(input, other)
        try:
            res = make_tensor(fn(x, y), input._device)
        except ValueError:
            _raise_if_not_broadcastable(x, y)
            raise
        return write_out(out, res, name) if out is not None else res
    op.__name__ = name
    return op


logical_and = _logical(np.logical_and, "logical_and")
logical_or = _logical(np.logical_or, "logical_or")
logical_xor = _logical(np.logical_xor, "logical_xor")


def logical_not(input, *, out=None):
    if input.dtype._kind:
        raise NotImplementedError(f'"logical_not_cpu" not implemented for '
                                  f"'{input.dtype._scalar_name}'")
    res = make_tensor(np.logical_not(input._array), input._device)
    return write_out(out, res, "logical_not") if out is not None else res


def _bitwise(fn, name, kernel=None):
    def op(input, other, *, out=None):
        x, y, d, dev = operands(input, other, name)
        if d._kind and (d._kind is not _dt.UINT or kernel is not None):
            _barebones_operands(input, other, x, y, d, name)  # raises PyTorch's refusal
        if d.is_floating_point or d.is_complex:
            raise NotImplementedError(f'"{kernel or name}_cpu" not implemented for \'{d._scalar_name}\'')
        try:
            res = make_tensor(fn(x, y), dev)
        except ValueError:
            _raise_if_not_broadcastable(x, y)
            raise
        return write_out(out, res, name) if out is not None else res
    op.__name__ = name
    return op


bitwise_and = _bitwise(np.bitwise_and, "bitwise_and")
bitwise_or = _bitwise(np.bitwise_or, "bitwise_or")
bitwise_xor = _bitwise(np.bitwise_xor, "bitwise_xor")
bitwise_left_shift = _bitwise(np.left_shift, "bitwise_left_shift", "lshift")
bitwise_right_shift = _bitwise(np.right_shift, "bitwise_right_shift", "rshift")


def invert_operator(input):
    """`~t`: PyTorch's operator refuses floating and complex tensors with a TypeError (the
    function bitwise_not raises NotImplementedError for them)."""
    if input.dtype.is_floating_point or input.dtype.is_complex:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return bitwise_not(input)


def bitwise_not(input, *, out=None):
    if input.dtype._kind is _dt.UINT:
        raise NotImplementedError(f'"bitwise_not_cpu" not implemented for \'{input.dtype._scalar_name}\'')
    if input.dtype.is_floating_point or input.dtype.is_complex:
        raise NotImplementedError(f'"bitwise_not_cpu" not implemented for \'{input.dtype._scalar_name}\'')
    res = make_tensor(np.invert(input._array), input._device)
    return write_out(out, res, "bitwise_not") if out is not None else res
