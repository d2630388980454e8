"""The arithmetic operators: add, sub, rsub, mul, div (and its rounding modes),
floor_divide, remainder and pow, with their backward nodes; `alpha` of add/sub/rsub is
checked and applied PyTorch's way, and integer division by zero raises as PyTorch does.
"""
import builtins
import math
import numbers
import operator

import numpy as np

from ... import dtypes as _dt
from ..._sparse import SparseTensor
from ..._sparse_compressed import SparseCompressedTensor
from ..._tensor import Tensor, make_tensor
from .._graph import first_order_arrays, node_of
from ._common import _SCALAR_FIXES, BinaryNode, _scalar_as, binary, operands
from .selection import where
from .unary_core import log

_SPARSE = (SparseTensor, SparseCompressedTensor)

__all__ = ["add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
           "floor_divide", "remainder", "rsub", "pow"]

_np_add, _np_sub, _np_mul, _np_div = operator.add, operator.sub, operator.mul, operator.truediv


# ---- arithmetic ------------------------------------------------------------------------
def _times_alpha(grad, alpha):
    return grad if alpha == 1 else grad * _conj_scalar(alpha)


class AddBackward0(BinaryNode):
    saves = False
    number_edge = True
    alpha = 1

    def backward(self, grad):
        if self.scalar is not None:
            return self._for_tensor(_times_alpha(grad, self.alpha) if self.scalar_first else grad)
        return grad, _times_alpha(grad, self.alpha)


class SubBackward0(BinaryNode):
    saves = False
    number_edge = True
    alpha = 1

    def backward(self, grad):
        if self.scalar is not None:
            return self._for_tensor(-_times_alpha(grad, self.alpha) if self.scalar_first else grad)
        return grad, -_times_alpha(grad, self.alpha)


class RsubBackward0(BinaryNode):
    """rsub(input, other): other - alpha * input."""
    saves = False
    alpha = 1

    def backward(self, grad):
        return -_times_alpha(grad, self.alpha), grad


class RsubBackward1(RsubBackward0):
    """rsub(input, number): the number is no input of the node."""

    def backward(self, grad):
        return -_times_alpha(grad, self.alpha)


class MulBackward0(BinaryNode):
    saves = True
    a_only_for_b = b_only_for_a = True
    # x * 2 and 2 * x need only the number (PyTorch saves it, as a wrapped tensor)
    saves_with_number = saves_with_number_first = False
    number_edge = number_saved = True

    def backward(self, grad):
        if self.scalar is not None:
            return self._for_tensor(grad * _conj_scalar(self._saved_number()))
        a, b = self.saved_tensors
        need_a, need_b = self._next[0][0] is not None, self._next[1][0] is not None
        arrays = first_order_arrays(grad, a, b)
        if arrays is not None:  # the same products on arrays (ops/_graph.py)
            g, x, y = arrays
            return (make_tensor(g * y, grad._device) if need_a else None,
                    make_tensor(g * x, grad._device) if need_b else None)
        ga = grad * b.conj() if need_a else None
        gb = grad * a.conj() if need_b else None
        return ga, gb


class DivBackward0(BinaryNode):
    saves = True
    a_only_for_b = True
    # x / 2 needs only the number (PyTorch saves it, as a wrapped tensor); div(2, x) needs x
    saves_with_number = False
    number_edge = number_saved = True

    def backward(self, grad):
        if self.scalar is not None:
            if self.scalar_first:  # scalar / t
                (t,) = self.saved_tensors
                return None, -grad * self.scalar / (t * t).conj()
            return grad / _conj_scalar(self._saved_number()), None
        a, b = self.saved_tensors
        need_a, need_b = self._next[0][0] is not None, self._next[1][0] is not None
        arrays = first_order_arrays(grad, a, b)
        if arrays is not None:  # the same operations on arrays (ops/_graph.py)
            g, x, y = arrays
            return (make_tensor(g / y, grad._device) if need_a else None,
                    make_tensor(-g * x / (y * y), grad._device) if need_b else None)
        ga = grad / b.conj() if need_a else None
        gb = -grad * a.conj() / (b * b).conj() if need_b else None
        return ga, gb


class DivBackward2(BinaryNode):
    """Division with a rounding mode: a step function, so a zero gradient."""
    saves = False
    number_edge = True

    def _release(self):
        self._freed = True  # PyTorch saves both operands, so a second backward raises

    def backward(self, grad):
        self._raise_if_freed()
        zero = grad * 0
        if self.scalar is not None:
            return self._for_tensor(zero)
        return zero, zero


def _conj_scalar(s):
    return s.conjugate() if isinstance(s, builtins.complex) else s


# ---- the Scalar overloads PyTorch's C++ composites call ------------------------------------
# A Python number in `x * 2` is wrapped into a 0-dim tensor input (MulBackward0), but
# PyTorch's own composite ops (label smoothing, triplet loss, pairwise_distance, ndtr ...)
# call at::mul(tensor, Scalar) and friends, whose nodes have the tensor as their only input:
# MulBackward1, AddBackward1, SubBackward1, DivBackward1. `scalar_op` records those.
class AddBackward1(BinaryNode):
    saves = False

    def backward(self, grad):
        return grad


class SubBackward1(AddBackward1):
    pass


class MulBackward1(BinaryNode):
    saves = False

    def backward(self, grad):
        return grad * _conj_scalar(self.scalar)


class DivBackward1(BinaryNode):
    saves = False

    def backward(self, grad):
        return grad / _conj_scalar(self.scalar)


def scalar_op(op, t, number):
    """`t op number` ("add", "sub", "mul" or "div") as a composite inside PyTorch records it:
    a node over `t` alone (the ...Backward1 class), the number kept on the node."""
    fn, node_cls = _SCALAR_OPS[op]
    return binary(t, number, fn, node_cls, op, float_result=op == "div")


_SCALAR_OPS = {"add": (_np_add, AddBackward1), "sub": (_np_sub, SubBackward1),
               "mul": (_np_mul, MulBackward1), "div": (_np_div, DivBackward1)}


def add(input, other, *, alpha=1, out=None):
    if other.__class__ in _SPARSE or input.__class__ in _SPARSE:
        return _add_with_sparse(input, other, alpha, out)
    if alpha.__class__ is not builtins.int or alpha != 1:
        return _with_alpha(input, other, alpha, _np_add, AddBackward0, "add", out)
    return binary(input, other, _np_add, AddBackward0, "add", out)


def _add_with_sparse(input, other, alpha, out):
    from .. import sparse_arith
    if out is not None:
        raise RuntimeError("ember: add(..., out=) with a sparse operand is not supported")
    if input.__class__ is SparseCompressedTensor or other.__class__ is SparseCompressedTensor:
        from ..sparse_compressed_methods import _dense_plus, add as add_compressed
        if input.__class__ is SparseCompressedTensor:
            return add_compressed(input, other, alpha=alpha)
        return _dense_plus(input, other, alpha)
    if input.__class__ is SparseTensor:
        return sparse_arith.add_sparse(input, other, alpha)
    if not isinstance(input, Tensor):
        raise RuntimeError("add(sparse, dense) is not supported. Use add(dense, sparse) instead.")
    return sparse_arith.add_dense_sparse(input, other, alpha)


def sub(input, other, *, alpha=1, out=None):
    _check_bool_sub(input, other)
    if alpha.__class__ is not builtins.int or alpha != 1:
        return _with_alpha(input, other, alpha, _np_sub, SubBackward0, "sub", out)
    return binary(input, other, _np_sub, SubBackward0, "sub", out)


def rsub(input, other, *, alpha=1):
    """`other - alpha * input` (Tensor.__rsub__): with a Python-number `other` PyTorch's
    node has `input` as its only input (RsubBackward1)."""
    if not isinstance(input, Tensor):
        raise TypeError(
            f"rsub() received an invalid combination of arguments - got "
            f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
            " * (Tensor input, Tensor other, *, Number alpha = 1)\n"
            " * (Tensor input, Number other, Number alpha = 1)\n")
    _check_bool_sub(other, input)
    cls = RsubBackward0 if isinstance(other, Tensor) else RsubBackward1
    if alpha.__class__ is not builtins.int or alpha != 1:
        return _with_alpha(input, other, alpha, _np_rsub, cls, "rsub", None)
    return binary(input, other, _np_rsub, cls, "rsub")


def _np_rsub(x, y):
    return y - x


def _with_alpha(input, other, alpha, fn, node_cls, fname, out):
    """add/sub/rsub with an `alpha`: one node (PyTorch's, keeping alpha for backward, not a
    separate multiply), alpha checked against the result dtype as PyTorch does."""
    scale_first = fn is _np_rsub  # rsub scales `input`, add and sub `other`
    d = _promoted_dtype(input, other, fname)
    alpha = _check_alpha(alpha, d)

    def scaled(x, y):
        if scale_first:
            x = _scale(x, alpha, d.np)
        else:
            y = _scale(y, alpha, d.np)
        return fn(x, y)
    res = binary(input, other, scaled, node_cls, fname, out)
    node = node_of(res)
    if node is not None and type(node) is node_cls:
        node.alpha = alpha
    return res


def _promoted_dtype(a, b, fname):
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        return _dt.promote_operands([(_dt.scalar_dtype(a), None), (_dt.scalar_dtype(b), None)])
    return operands(a, b, fname)[2]


def _check_alpha(alpha, d):
    """PyTorch's alpha_check; returns alpha as the computation uses it."""
    if isinstance(alpha, (np.generic, Tensor)):  # PyTorch takes a 0-dim tensor as a Scalar
        alpha = alpha.item()
    if isinstance(alpha, builtins.bool) and d is not _dt.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if not (d.is_floating_point or d.is_complex or isinstance(alpha, builtins.int)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a floating "
                           "point number.")
    if isinstance(alpha, builtins.complex) and not d.is_complex:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a complex "
                           "number.")
    return builtins.bool(alpha) if d is _dt.bool else alpha


def _scale(y, alpha, np_dtype):
    """`alpha * y` in the result dtype (y an array or a number already fit for it)."""
    if np_dtype is _BOOL:
        return y & alpha if hasattr(y, "dtype") else (builtins.bool(y) and alpha)
    y = y * alpha
    if hasattr(y, "dtype"):
        return y if y.dtype == np_dtype else y.astype(np_dtype)
    return _scalar_as(y, np_dtype) if np_dtype in _SCALAR_FIXES else y


_BOOL = np.dtype(np.bool_)


def _check_bool_sub(a, b):
    """PyTorch refuses subtraction with a bool operand (a Python bool counts as one)."""
    ba = a._array.dtype is _BOOL if isinstance(a, Tensor) else isinstance(a, (builtins.bool, np.bool_))
    bb = b._array.dtype is _BOOL if isinstance(b, Tensor) else isinstance(b, (builtins.bool, np.bool_))
    if ba and bb:
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not supported. "
                           "Use the `^` or `logical_xor()` operator instead.")
    if ba or bb:
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or `logical_not()` "
                           "operator instead.")


def mul(input, other, *, out=None):
    return binary(input, other, _np_mul, MulBackward0, "mul", out)


def div(input, other, *, rounding_mode=None, out=None):
    if rounding_mode is None:
        return binary(input, other, _np_div, DivBackward0, "div", out, float_result=True)
    if rounding_mode == "trunc":
        return binary(input, other, _trunc_div, DivBackward2, "div", out)
    if rounding_mode == "floor":
        return binary(input, other, _floordiv, DivBackward2, "div", out)
    raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or 'floor' but "
                       f"found '{rounding_mode}'")


def _trunc_div(x, y):
    if _is_int(x) and _is_int(y):
        if _has_zero(y):
            raise RuntimeError("ZeroDivisionError")
        q = x // y
        return q + ((q < 0) & (q * y != x))  # floor -> toward zero where the division is inexact
    return np.trunc(x / y)


def floor_divide(input, other, *, out=None):
    return binary(input, other, _floordiv, None, "floor_divide", out)


def _floordiv(x, y):
    if _is_int(x) and _is_int(y) and _has_zero(y):
        raise RuntimeError("ZeroDivisionError")
    return x // y


def remainder(input, other, *, out=None):
    cls = RemainderBackward1 if isinstance(input, Tensor) and isinstance(other, Tensor) \
        else RemainderBackward0
    return binary(input, other, _remainder, cls, "remainder", out)


def _remainder(x, y):
    if _is_int(x) and _is_int(y) and _has_zero(y):
        raise RuntimeError("ZeroDivisionError")
    return x % y


class RemainderBackward0(BinaryNode):
    saves = True

    def backward(self, grad):
        saved = self.saved_tensors
        if len(saved) == 1:
            if self.scalar_first:
                (b,) = saved
                return -grad * floor_divide(self.scalar, b)
            return grad
        a, b = saved
        return grad, -grad * floor_divide(a, b)


class RemainderBackward1(RemainderBackward0):
    """remainder of two tensors (RemainderBackward0 is PyTorch's name with a number)."""


def _is_int(x):
    if isinstance(x, (builtins.int, builtins.bool)):
        return True
    return hasattr(x, "dtype") and x.dtype.kind in "iub"


def _has_zero(y):
    """Whether an integer divisor holds a zero, for PyTorch's CPU ZeroDivisionError. Its CUDA
    kernels divide without a check (a look at device data would be a sync), and so does a
    device here: CuPy gives 0."""
    if isinstance(y, (builtins.int, builtins.bool)):
        return y == 0
    return isinstance(y, np.ndarray) and builtins.bool((y == 0).any())  # host memory only


class PowBackward0(BinaryNode):
    """t ** scalar."""
    saves = True

    def backward(self, grad):
        (t,) = self.saved_tensors
        e = self.scalar
        if e == 0:  # zeros, as PyTorch (grad * 0 would be NaN for an infinite gradient)
            return grad.new_zeros(grad.shape)
        return grad * (e * t ** (e - 1)).conj()


class PowBackward1(BinaryNode):
    """t ** t."""
    saves = True

    def backward(self, grad):
        a, b = self.saved_tensors
        ga = gb = None
        if self._next[0][0] is not None:
            ga = grad * (b * a ** where(b == 0, 1.0, b - 1)).conj()
            ga = where(b == 0, 0.0, ga)
        if self._next[1][0] is not None:
            r = a ** b
            gb = grad * (r * where((a == 0) & (b >= 0), 0.0, log(a))).conj()
        return ga, gb


class PowBackward2(BinaryNode):
    """scalar ** t."""
    saves = True

    def backward(self, grad):
        (b,) = self.saved_tensors
        base = self.scalar
        r = base ** b
        if base == 0:
            return grad * where(b >= 0, 0.0, r * math.log(base) if base > 0 else r)
        return grad * (r * _scalar_log(base)).conj()


def _scalar_log(x):
    import cmath
    return math.log(x) if (not isinstance(x, builtins.complex) and x > 0) else cmath.log(x)


def _pow_arrays(x, y):
    if _is_int(x) and _is_int(y):
        if isinstance(y, numbers.Number):  # only a Python-number exponent is refused
            if y < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
        elif y.dtype.kind == "i":
            # every element through the negative-exponent formula: asking first whether any
            # exponent is negative would cost a device-to-host read per call on a GPU
            return _int_pow_negative(x, y)
    if type(y) is builtins.float and y == -0.5 and getattr(x, "dtype", None) in _FLOAT_ARRAYS:
        # PyTorch computes this power as rsqrt (NumPy's power does 0.5 as sqrt, not -0.5):
        # the same bits, and rsqrt's values at -inf (NaN) and -0 (-inf)
        return 1 / np.sqrt(x)
    return x ** y


_FLOAT_ARRAYS = (np.dtype(np.float32), np.dtype(np.float64))


def _int_pow_negative(x, y):
    """Integer powers where exponents may be negative, as PyTorch computes them: 1 ** -n is 1,
    (-1) ** -n is +-1 by the parity of n, and every other base gives 0 (1 / x truncated).
    Operators only (no array module): `x` may be a Python int, and a select with a Python
    bool as its condition is not one CuPy's `where` takes."""
    negative = y < 0
    kept = ~negative
    r = x ** (y * kept)  # a negative exponent becomes 0 here, and its result is replaced
    reciprocal = (x == 1) + (x == -1) * (1 - 2 * (y & 1))
    return (r * kept + reciprocal * negative).astype(r.dtype, copy=False)


def pow(input, exponent, *, out=None):
    if isinstance(input, Tensor) and isinstance(exponent, Tensor):
        cls = PowBackward1
    elif isinstance(input, Tensor):
        cls = PowBackward0
    else:
        cls = PowBackward2
    return binary(input, exponent, _pow_arrays, cls, "pow", out)


subtract, multiply, divide, true_divide = sub, mul, div, div
