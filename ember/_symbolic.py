"""`torch.sym_*` and `torch.cond` on concrete values. PyTorch's versions exist for its
tracer, where sizes may be symbols; ember runs eagerly, so a size is always a plain number and
these are the arithmetic (and branch) itself, with PyTorch's promotions and checks."""
import builtins
import math
import numbers

import numpy as np

from ._tensor import Tensor

__all__ = ["SymInt", "SymFloat", "SymBool", "sym_int", "sym_float", "sym_max", "sym_min", "sym_not", "sym_ite", "sym_sqrt",
           "sym_sum", "sym_constrain_range", "sym_constrain_range_for_size", "sym_fresh_size",
           "cond"]

class _SymValue:
    """A size, float or condition that PyTorch's tracer keeps as an expression (`node`). ember
    runs eagerly, so every size is already a number and none of its ops make these; the types
    exist for `isinstance` checks and annotations, and one made over a number acts as it."""

    def __init__(self, node):
        self.node = node

    def __repr__(self):
        return str(self.node)

    def __hash__(self):
        return hash(self.node)

    def __eq__(self, other):
        return self.node == (other.node if isinstance(other, _SymValue) else other)

    def __bool__(self):
        return builtins.bool(self.node)


class SymInt(_SymValue):
    def __int__(self):
        return builtins.int(self.node)

    __index__ = __int__


class SymFloat(_SymValue):
    def __float__(self):
        return builtins.float(self.node)


class SymBool(_SymValue):
    pass


for _kind in (SymInt, SymFloat, SymBool):
    _kind.__module__ = "torch"


_NUMBER_TYPES = (np.integer, np.floating, builtins.int, builtins.float)
_FLOAT_TYPES = (np.floating, builtins.float)


def sym_int(a):
    return builtins.int(a)


def sym_float(a):
    return builtins.float(a)


def _check_number(a):
    if not isinstance(a, _NUMBER_TYPES):
        raise AssertionError(f"expected {_NUMBER_TYPES}, got {type(a)}")


def sym_max(a, b):
    """max of two numbers, a float when either is one (builtins.max keeps the winner's type)."""
    _check_number(a)
    _check_number(b)
    if isinstance(a, _FLOAT_TYPES) or isinstance(b, _FLOAT_TYPES):
        return builtins.float(builtins.max(a, b))
    return builtins.max(a, b)


def sym_min(a, b):
    _check_number(a)
    _check_number(b)
    if isinstance(a, _FLOAT_TYPES) or isinstance(b, _FLOAT_TYPES):
        return builtins.float(builtins.min(a, b))
    return builtins.min(a, b)


def sym_not(a):
    return not a


def sym_ite(b, t, f):
    """`t if b else f`, for a Python bool `b` only."""
    if not isinstance(b, builtins.bool):
        raise AssertionError(f"expected SymBool or bool, got {type(b)}")
    return t if b else f


def sym_sqrt(a):
    return math.sqrt(a)


def sym_sum(*args):
    """The sum of `sym_sum(a, b, c)` or `sym_sum([a, b, c])`."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = args[0]
    return builtins.sum(args)


_INT64_MIN, _INT64_MAX = -2 ** 63, 2 ** 63 - 1


def _check_range(size, low, high):
    value = size.item() if isinstance(size, Tensor) else size
    if not low <= value <= high:
        raise RuntimeError(f"Invalid value range for {value} between [{low}, {high}].")


def sym_constrain_range(size, *, min=None, max=None):
    """Check that `size` lies in [min, max] (its tracer records it as a bound; eagerly, the
    value is known and is checked at once)."""
    _check_range(size, _INT64_MIN if min is None else min, _INT64_MAX if max is None else max)


def sym_constrain_range_for_size(size, *, min=None, max=None):
    """As sym_constrain_range for a value used as a size: never negative, and an upper bound
    must leave room above the sizes 0 and 1 that PyTorch's tracer specialises."""
    if max is not None and max <= 2:
        raise RuntimeError(f"Max value to constrain_range_for_size must be greater than 2. "
                           f"got: {max}")
    _check_range(size, 0 if min is None else min, _INT64_MAX if max is None else max)


def sym_fresh_size(expr):
    """A size computed from `expr`, as a plain number (the tracer makes it a fresh symbol)."""
    value = expr.item() if isinstance(expr, Tensor) else expr
    return value.item() if isinstance(value, np.generic) else value


def cond(pred, true_fn, false_fn, operands=()):
    """`true_fn(*operands)` when `pred` holds, else `false_fn(*operands)`; `pred` is a bool,
    a number or a one-element tensor."""
    if isinstance(pred, Tensor):
        if pred.numel() != 1:
            raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                               f"{pred}.")
        pred = builtins.bool(pred.item())
    elif not isinstance(pred, (builtins.bool, numbers.Number)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    return true_fn(*operands) if pred else false_fn(*operands)
