"""Pointwise ops: arithmetic, comparison, logic and elementwise math, with derivatives.

Binary ops promote their operands with PyTorch's rules (`dtypes.promote_operands`) and
hand NumPy/CuPy arrays that already have the result dtype, so the backend's own promotion
never decides anything. Each op's backward sits right below its forward.

One op family (its `__all__`, `METHODS`) split by kind of op:
  _common        operand promotion, devices, `binary` and `BinaryNode`, broadcasting errors:
                 the machinery every pointwise op (and many other families) use
  arithmetic     add, sub, rsub, mul, div, floor_divide, remainder, pow
  unary_core     neg, abs, exp, log, sqrt, sin, cos, tanh, sigmoid, relu, conj, sgn, sign
  selection      clamp (clip, clamp_min, clamp_max), where, maximum, minimum
  comparison     eq ... ge, logical_*, bitwise_* (no gradient)
  inplace_forms  add_, mul_, clamp_, neg_ ... (the direct in-place fast path of add_/sub_/
                 mul_/div_)
The other elementwise functions are the `unary` family; in-place comparisons and logic are
`pointwise_inplace`.
"""
from .arithmetic import *  # noqa: F401,F403
from .comparison import *  # noqa: F401,F403
from .inplace_forms import *  # noqa: F401,F403
from .selection import *  # noqa: F401,F403
from .unary_core import *  # noqa: F401,F403
# the machinery other families import from `pointwise`
from ._common import (BinaryNode, _as_scalar, _on, binary, broadcast_error,  # noqa: F401
                      broadcast_shapes_or_none, common_device, operands)
from .arithmetic import (_has_zero, _is_int, _np_add, _np_mul, _promoted_dtype,  # noqa: F401
                         scalar_op)
from .inplace_forms import _inplace_unary  # noqa: F401
from .unary_core import unary  # noqa: F401

__all__ = ["add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
           "floor_divide", "remainder", "rsub", "pow", "neg", "negative", "abs", "absolute", "exp",
           "log", "sqrt", "sin", "cos", "tanh", "sigmoid", "relu", "conj", "sgn", "sign", "clamp",
           "clip", "clamp_min", "clamp_max", "where", "maximum", "minimum", "eq", "ne", "lt", "le",
           "gt", "ge", "greater", "greater_equal", "less", "less_equal", "not_equal",
           "logical_and", "logical_or", "logical_xor", "logical_not", "bitwise_and", "bitwise_or",
           "bitwise_xor", "bitwise_not", "bitwise_left_shift", "bitwise_right_shift"]
METHODS = [n for n in __all__ if n not in ("where", "rsub")] + [
    "add_", "sub_", "mul_", "div_", "pow_", "clamp_", "subtract_", "multiply_", "divide_",
    "true_divide_", "neg_", "abs_", "exp_", "log_", "sqrt_", "sin_", "cos_", "tanh_",
    "sigmoid_", "relu_", "clip_", "clamp_min_", "clamp_max_", "floor_divide_", "remainder_",
    "logical_not_", "bitwise_not_", "sign_", "sgn_", "where"]
