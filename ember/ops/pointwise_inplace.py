"""In-place forms of the comparison, logic and bitwise ops (`x.lt_(y)`, `x.logical_and_(y)`,
`x.bitwise_or_(y)` ...), PyTorch's top-level function forms of in-place and Tensor-only
ops (`torch.abs_`, `torch.zero_`, `torch.fill`, `torch.detach` ...), and the predicates
is_nonzero, is_same_size and is_signed.

An in-place comparison writes its 0/1 result in self's dtype and is recorded (PyTorch's
EqBackward0 for a number operand, EqBackward1 for a tensor: zero gradients). The logical
and bitwise in-place ops are not differentiable and PyTorch leaves the graph as it was:
they write self's memory and bump its version, nothing more.
"""
import builtins

import numpy as np

from .._tensor import Tensor, make_tensor
from . import pointwise as _pw
from .creation import _filled_like, fill_, zero_, zeros_like
from .indexing import index_put_
from ._graph import Node, record
from ._writes import _store, before_write, check_no_internal_overlap, inplace, write_watchers

__all__ = ["abs_", "absolute_", "neg_", "negative_", "exp_", "log_", "sqrt_", "sin_", "cos_",
           "tanh_", "sigmoid_", "relu_", "clamp_", "clip_", "clamp_min_", "clamp_max_",
           "zero_", "fill_", "fill", "detach", "detach_", "index_put_", "is_nonzero",
           "is_same_size", "is_signed"]
_COMPARISONS = ("eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "greater_equal_",
                "less_", "less_equal_", "not_equal_")
_LOGICAL = ("logical_and_", "logical_or_", "logical_xor_")
_BITWISE = ("bitwise_and_", "bitwise_or_", "bitwise_xor_", "bitwise_left_shift_",
            "bitwise_right_shift_")
METHODS = list(_COMPARISONS + _LOGICAL + _BITWISE) + ["absolute_", "negative_", "is_nonzero",
                                                        "is_same_size"]


# ---- comparisons ---------------------------------------------------------------------------
class _CompareInplaceNode(Node):
    """A comparison written in place: a step function, so zero gradients for each input."""

    def backward(self, grad):
        grads = tuple(zeros_like(grad) if fn is not None and shape == grad._array.shape
                      else (None if fn is None else grad.new_zeros(shape))
                      for (fn, _), (shape, _) in zip(self._next, self._meta))
        return grads[0] if len(grads) == 1 else grads


def _compare_nodes(stem):
    """PyTorch's two nodes of an in-place comparison: 0 for a number, 1 for a tensor."""
    return tuple(type(f"{stem}Backward{k}", (_CompareInplaceNode,), {"__module__": __name__})
                 for k in (0, 1))


def _invalid_arguments(name, other):
    tname = type(other).__name__
    return TypeError(
        f"{name}() received an invalid combination of arguments - got ({tname}), but expected one "
        f"of:\n * (Tensor other)\n      didn't match because some of the arguments have invalid "
        f"types: (!{tname}!)\n * (Number other)\n      didn't match because some of the arguments "
        f"have invalid types: (!{tname}!)\n")


def _compare_inplace(op, name, nodes):
    def method(self, other):
        if not isinstance(other, (Tensor, builtins.bool, builtins.int, builtins.float,
                                  builtins.complex, np.generic)):
            raise _invalid_arguments(name, other)

        def compute(s):
            flags = op(s, other)
            res = make_tensor(flags._array.astype(s._array.dtype), s._device)
            if isinstance(other, Tensor):
                record(nodes[1], (s, other), res)
            else:
                record(nodes[0], (s,), res)
            return res
        return inplace(self, compute, (other,))
    method.__name__ = name
    return method


_EQ, _NE, _LT, _LE, _GT, _GE = (_compare_nodes(s) for s in ("Eq", "Ne", "Lt", "Le", "Gt", "Ge"))
eq_ = _compare_inplace(_pw.eq, "eq_", _EQ)
ne_ = _compare_inplace(_pw.ne, "ne_", _NE)
lt_ = _compare_inplace(_pw.lt, "lt_", _LT)
le_ = _compare_inplace(_pw.le, "le_", _LE)
gt_ = _compare_inplace(_pw.gt, "gt_", _GT)
ge_ = _compare_inplace(_pw.ge, "ge_", _GE)
greater_ = _compare_inplace(_pw.gt, "greater_", _GT)
greater_equal_ = _compare_inplace(_pw.ge, "greater_equal_", _GE)
less_ = _compare_inplace(_pw.lt, "less_", _LT)
less_equal_ = _compare_inplace(_pw.le, "less_equal_", _LE)
not_equal_ = _compare_inplace(_pw.ne, "not_equal_", _NE)


# ---- logic and bitwise: not differentiable, the graph stays as it was ------------------------
def _write_untracked(self, value):
    if 0 in self._array.strides:
        check_no_internal_overlap(self._array)
    if write_watchers:
        before_write(self)
    _store(self, value)
    self._vc.value += 1
    return self


def _logical_inplace(op, name):
    def method(self, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}(): argument 'other' (position 1) must be Tensor, not "
                            f"{type(other).__name__}")
        flags = op(self, other)
        return _write_untracked(self, make_tensor(flags._array.astype(self._array.dtype),
                                                  self._device))
    method.__name__ = name
    return method


logical_and_ = _logical_inplace(_pw.logical_and, "logical_and_")
logical_or_ = _logical_inplace(_pw.logical_or, "logical_or_")
logical_xor_ = _logical_inplace(_pw.logical_xor, "logical_xor_")


def _bitwise_inplace(op, name):
    def method(self, other):
        # PyTorch checks the cast of the promoted type into self before the kernel's dtype
        d = _pw._promoted_dtype(self, other, name)
        if d._category > self.dtype._category:
            raise RuntimeError(f"result type {d._scalar_name} can't be cast to the desired "
                               f"output type {self.dtype._scalar_name}")
        return _write_untracked(self, op(self, other))
    method.__name__ = name
    return method


bitwise_and_ = _bitwise_inplace(_pw.bitwise_and, "bitwise_and_")
bitwise_or_ = _bitwise_inplace(_pw.bitwise_or, "bitwise_or_")
bitwise_xor_ = _bitwise_inplace(_pw.bitwise_xor, "bitwise_xor_")
bitwise_left_shift_ = _bitwise_inplace(_pw.bitwise_left_shift, "bitwise_left_shift_")
bitwise_right_shift_ = _bitwise_inplace(_pw.bitwise_right_shift, "bitwise_right_shift_")


# ---- aliases and top-level function forms ----------------------------------------------------
abs_, neg_, exp_, log_, sqrt_, sin_, cos_, tanh_, sigmoid_, relu_ = (
    _pw.abs_, _pw.neg_, _pw.exp_, _pw.log_, _pw.sqrt_, _pw.sin_, _pw.cos_, _pw.tanh_,
    _pw.sigmoid_, _pw.relu_)
absolute_, negative_ = _pw.abs_, _pw.neg_
clamp_, clip_, clamp_min_, clamp_max_ = _pw.clamp_, _pw.clip_, _pw.clamp_min_, _pw.clamp_max_


class _OutOfPlaceFill(Node):
    def backward(self, grad):
        if len(self._next) == 1:
            return zeros_like(grad)
        return zeros_like(grad), grad.sum().to(self._value_dtype)


FillBackward0 = type("FillBackward0", (_OutOfPlaceFill,), {"__module__": __name__})
FillBackward1 = type("FillBackward1", (_OutOfPlaceFill,), {"__module__": __name__})


def fill(input, value):
    """`torch.fill(input, value)`: a new tensor like `input` holding `value` everywhere."""
    if not isinstance(input, Tensor) or not isinstance(
            value, (Tensor, builtins.bool, builtins.int, builtins.float, builtins.complex,
                    np.generic)):
        got = ", ".join(type(a).__name__ for a in (input, value))
        marked = ", ".join(("Tensor" if isinstance(a, Tensor) else f"!{type(a).__name__}!")
                           for a in (input, value))
        why = f"      didn't match because some of the arguments have invalid types: ({marked})\n"
        raise TypeError(f"fill() received an invalid combination of arguments - got ({got}), but "
                        f"expected one of:\n * (Tensor input, Tensor value)\n{why}"
                        f" * (Tensor input, Number value)\n{why}")
    if isinstance(value, Tensor) and value._array.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with "
                           f"{value._array.ndim} dimensions.")
    res = _filled_like(input.detach(), value.detach() if isinstance(value, Tensor) else value,
                      None)
    if isinstance(value, Tensor):
        node = record(FillBackward1, (input, value), res)
        if node is not None:
            node._value_dtype = value.dtype
    else:
        record(FillBackward0, (input,), res)
    return res


def detach(input):
    return input.detach()


def detach_(input):
    return input.detach_()


# ---- predicates ----------------------------------------------------------------------------------
def _need_tensor(fname, value, name, position):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{type(value).__name__}")


def is_nonzero(input):
    """Whether a one-element tensor is not zero (Python's truth of its value)."""
    _need_tensor("is_nonzero", input, "input", 1)
    n = input._array.size
    if n == 0:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous")
    if n > 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return builtins.bool(input._array.reshape(()).item())


def is_same_size(input, other):
    _need_tensor("is_same_size", input, "input", 1)
    _need_tensor("is_same_size", other, "other", 2)
    return input._array.shape == other._array.shape


def is_signed(input):
    _need_tensor("is_signed", input, "input", 1)
    return input.is_signed()
