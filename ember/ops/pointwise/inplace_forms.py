"""The in-place forms of the core pointwise ops (add_, mul_, clamp_, neg_, sigmoid_ ...).
add_/sub_/mul_/div_ write straight into self's memory when nothing is tracked and the result
keeps self's dtype (optimisers do this on every step); everything else goes through
`inplace` over the out-of-place op.
"""
import builtins
import inspect as _inspect

import numpy as np

from ..._sparse import SparseTensor
from ..._tensor import Tensor, xp_of
from ...device import is_writeable
from .._writes import before_write, inplace, inplace_saving_result, tracks, write_watchers
from ._common import operands
from .arithmetic import (_check_alpha, _scale, add, div, floor_divide, mul, pow, remainder,
                         sub)
from .comparison import bitwise_not, logical_not
from .selection import clamp, clamp_max, clamp_min, scalar_clamp_dtype
from .unary_core import (ReluBackward0, abs, cos, exp, log, neg, relu, relu_into, sgn, sigmoid,
                         sign, sin, sqrt, tanh)

__all__ = ["add_", "sub_", "mul_", "div_", "pow_", "clamp_", "subtract_", "multiply_",
           "divide_", "true_divide_", "neg_", "abs_", "exp_", "log_", "sqrt_", "sin_", "cos_",
           "tanh_", "sigmoid_", "relu_", "clip_", "clamp_min_", "clamp_max_", "floor_divide_",
           "remainder_", "logical_not_", "bitwise_not_", "sign_", "sgn_"]


# ---- in-place forms ------------------------------------------------------------------------
def _direct_inplace(self, other, ufunc, alpha=1):
    """An untracked add_/sub_/mul_/div_ whose result keeps self's dtype: the ufunc writes
    straight into self's memory (optimisers do this on every step). Returns False when the
    general path must run (autograd, a cast, a read-only or non-broadcastable target: it
    gives PyTorch's errors)."""
    if self._inference or tracks(self, (other,)):  # the general path raises for inference
        return False
    arr = self._array
    if not is_writeable(arr) or not isinstance(other, (Tensor, builtins.int, builtins.float)):
        return False
    try:
        x, y, d, dev = operands(self, other, ufunc.__name__)
    except (TypeError, RuntimeError):
        return False
    if x is not arr or d.np != arr.dtype or dev is not self._device or d._kind:
        return False
    if alpha.__class__ is not builtins.int or alpha != 1:
        y = _scale(y, _check_alpha(alpha, d), d.np)
    if write_watchers:
        before_write(self)
    try:
        ufunc(arr, y, out=arr)
    except (ValueError, TypeError):  # e.g. other broadcasts to a larger shape
        return False
    self._vc.value += 1
    return True


def add_(self, other, *, alpha=1):
    if other.__class__ is SparseTensor:
        from ..sparse_arith import add_dense_sparse_
        return add_dense_sparse_(self, other, alpha)
    if _direct_inplace(self, other, np.add, alpha):
        return self
    return inplace(self, lambda s: add(s, other, alpha=alpha), (other,), saves_input=False)


def sub_(self, other, *, alpha=1):
    if not isinstance(other, builtins.bool) and _direct_inplace(self, other, np.subtract, alpha):
        return self
    return inplace(self, lambda s: sub(s, other, alpha=alpha), (other,), saves_input=False)


def mul_(self, other):
    if _direct_inplace(self, other, np.multiply):
        return self
    return inplace(self, lambda s: mul(s, other), (other,))


def div_(self, other, *, rounding_mode=None):
    if rounding_mode is None and self._array.dtype.kind in "fc" and \
            _direct_inplace(self, other, np.true_divide):
        return self
    return inplace(self, lambda s: div(s, other, rounding_mode=rounding_mode), (other,))


def pow_(self, exponent):
    return inplace(self, lambda s: pow(s, exponent), (exponent,))


def _check_scalar_clamp_cast(input, *bounds):
    """In-place clamp with number bounds: PyTorch names the tensor's C++ type when the
    result cannot be cast back ("long int", not "Long")."""
    if any(isinstance(b, Tensor) for b in bounds) or input.dtype._kind:
        return
    d = scalar_clamp_dtype(input, *bounds)
    if d is not input.dtype and d._category > input.dtype._category:
        raise RuntimeError(f"result type {d._scalar_name} can't be cast to the desired output "
                           f"type {input.dtype._cpp_name}")


def clamp_(input, min=None, max=None):
    _check_scalar_clamp_cast(input, min, max)
    return inplace(input, lambda s: clamp(s, min, max), (min, max))


def clamp_min_(input, min):
    _check_scalar_clamp_cast(input, min)
    return inplace(input, lambda s: clamp_min(s, min), (min,))


def clamp_max_(input, max):
    _check_scalar_clamp_cast(input, max)
    return inplace(input, lambda s: clamp_max(s, max), (max,))


def _inplace_unary(op):
    def method(input, *args, **kwargs):
        return inplace(input, lambda s: op(s, *args, **kwargs),
                       tuple(a for a in args if isinstance(a, Tensor)))
    method.__name__ = op.__name__ + "_"
    # the operands keep the op's keyword names (`torch.xlogy_(input, other=...)`); no `out=`
    sig = _inspect.signature(op)
    method.__signature__ = sig.replace(parameters=[p for p in sig.parameters.values()
                                                   if p.name != "out"])
    return method

subtract_, multiply_, divide_, true_divide_ = sub_, mul_, div_, div_
neg_, abs_, exp_, log_, sqrt_, sin_, cos_, tanh_, sigmoid_, _relu_general_, sign_, sgn_ = (
    _inplace_unary(f) for f in (neg, abs, exp, log, sqrt, sin, cos, tanh, sigmoid, relu, sign, sgn))


def relu_(input):
    """In place, one pass over a float tensor's memory (`inplace_saving_result`: relu's
    backward reads only its result); otherwise the general in-place form."""
    if isinstance(input, Tensor) and input._array.dtype.kind == "f" and not input.dtype._kind \
            and inplace_saving_result(
                input, lambda a: relu_into(xp_of(input), a), ReluBackward0):
        return input
    return _relu_general_(input)


relu_.__signature__ = _relu_general_.__signature__
clip_ = clamp_
floor_divide_ = _inplace_unary(floor_divide)
remainder_ = _inplace_unary(remainder)
logical_not_ = _inplace_unary(logical_not)
bitwise_not_ = _inplace_unary(bitwise_not)
