"""Pointwise ops: arithmetic, comparison, logic and elementwise math, with derivatives.

Binary ops promote their operands with PyTorch's rules (`dtypes.promote_operands`) and
hand NumPy/CuPy arrays that already have the result dtype, so the backend's own promotion
never decides anything. Each op's backward sits right below its forward.
"""
import builtins
import math
import operator

import numpy as np

from .. import dtypes as _dt
from .._state import grad as _grad_state
from .._tensor import Tensor, _make, make_tensor
from .._sparse import SparseTensor
from ..device import _BACKENDS
from ._graph import Node, inplace, record, record_number, tracks, write_out

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

_FROM_NUMPY = _dt.FROM_NUMPY
_PROMOTED = {}  # (dtype, dim?, dtype-or-scalar-type, dim?) -> dtype; filled as types appear


def xp_of(t):
    """The array module of a tensor's device."""
    return _BACKENDS[t._device.type].xp


# ---- operands --------------------------------------------------------------------------
def _as_scalar(x, fname):
    if isinstance(x, np.generic):  # first: np.float64 is a float subclass of its own type
        return x.item()
    if isinstance(x, (builtins.bool, builtins.int, builtins.float, builtins.complex)):
        return x
    raise TypeError(f"{fname}(): argument 'other' (position 2) must be Tensor, not "
                    f"{type(x).__name__}")


def _promote(da, na, db, nb):
    """Result dtype for two operands, each a dtype (or a Python number's type) with whether
    it has dimensions (None for a Python number). Cached: dispatch runs it on every op."""
    key = (da, na, db, nb, _dt._default[0])
    d = _PROMOTED.get(key)
    if d is None:
        ops = [(x if isinstance(x, _dt.dtype) else _dt.scalar_dtype(x()), n)
               for x, n in ((da, na), (db, nb))]
        d = _PROMOTED[key] = _dt.promote_operands(ops)
    return d


def operands(a, b, fname="op"):
    """Two operands as (array-or-number, array-or-number, result dtype, device), arrays
    already cast to the result dtype. One of `a`, `b` is a Tensor (a NumPy array counts as
    one, as in PyTorch)."""
    if isinstance(a, Tensor):
        if type(b) is np.ndarray:
            b = make_tensor(b, a._device) if a._device.type == "cpu" else _host_operand(b, a)
        aa, dev = a._array, a._device
        if isinstance(b, Tensor):
            ba = b._array
            if b._device is not dev:
                dev = common_device(a, b)
            if aa.dtype is ba.dtype:
                return aa, ba, _FROM_NUMPY[aa.dtype], dev
            d = _promote(_FROM_NUMPY[aa.dtype], aa.ndim > 0, _FROM_NUMPY[ba.dtype], ba.ndim > 0)
            if aa.dtype is not d.np:
                aa = aa.astype(d.np)
            if ba.dtype is not d.np:
                ba = ba.astype(d.np)
            return aa, ba, d, dev
        b = _as_scalar(b, fname)
        d = _promote(_FROM_NUMPY[aa.dtype], aa.ndim > 0, type(b), None)
        if aa.dtype is not d.np:
            aa = aa.astype(d.np)
        if d.np in _SCALAR_FIXES:
            b = _scalar_as(b, d.np)
        return aa, b, d, dev
    if type(a) is np.ndarray:
        return operands(make_tensor(a), b, fname)
    ba, dev = b._array, b._device
    a = _as_scalar(a, fname)
    d = _promote(_FROM_NUMPY[ba.dtype], ba.ndim > 0, type(a), None)
    if ba.dtype is not d.np:
        ba = ba.astype(d.np)
    if d.np in _SCALAR_FIXES:
        a = _scalar_as(a, d.np)
    return a, ba, d, dev


_SMALL_INT_RANGE = {np.dtype(t): (int(np.iinfo(t).min), int(np.iinfo(t).max))
                    for t in (np.uint8, np.int8, np.int16, np.int32)}


_SCALAR_FIXES = set(_SMALL_INT_RANGE) | {_dt.bfloat16.np}


def _scalar_as(value, np_dtype):
    """A Python number as NumPy must see it to compute in `np_dtype`, PyTorch's way: a float
    with bfloat16 as a bfloat16 (NumPy would give float32); an int beyond a small integer
    dtype's range cast with wrap-around (`uint8_tensor + -3` subtracts 3 modulo 256), where
    NumPy would raise."""
    if np_dtype is _dt.bfloat16.np:
        return np_dtype.type(value) if type(value) is builtins.float else value
    if type(value) is not builtins.int:
        return value
    lo, hi = _SMALL_INT_RANGE[np_dtype]
    if lo <= value <= hi:
        return value
    bits = 8 * np_dtype.itemsize
    value %= 1 << bits
    if lo < 0 and value > hi:
        value -= 1 << bits
    return np_dtype.type(value)


def _host_operand(arr, like):
    from .creation import tensor
    return tensor(arr)


def common_device(a, b):
    """The device of an op over a and b: equal devices, or a 0-dim CPU tensor beside a
    tensor elsewhere (PyTorch lets CPU scalars mix)."""
    da, db = a._device, b._device
    if da == db:
        return da
    if db.type == "cpu" and b._array.ndim == 0:
        return da
    if da.type == "cpu" and a._array.ndim == 0:
        return db
    raise RuntimeError("Expected all tensors to be on the same device, but found at least two "
                       f"devices, {da} and {db}!")


def _on(arr, dev, src_dev):
    """Move a 0-dim CPU operand's array to `dev` when it mixes with a device tensor."""
    if dev is src_dev or dev.type == "cpu":
        return arr
    return _BACKENDS[dev.type].from_host(arr, dev.index)


def _wrap_result(arr, dev):
    return make_tensor(arr, dev)


_np_add, _np_sub, _np_mul, _np_div = operator.add, operator.sub, operator.mul, operator.truediv


def binary(a, b, fn, node_cls, fname, out=None, save=(True, True), float_result=False):
    """The body of a binary op: promote, compute `fn(x, y)` on arrays, record the node."""
    x, y, d, dev = operands(a, b, fname)
    if float_result and not (d.is_floating_point or d.is_complex):
        f = _dt.get_default_dtype().np
        # a Python number stays itself (operands may have cast it to the integer dtype)
        x = x.astype(f) if isinstance(a, Tensor) or type(a) is np.ndarray else _as_scalar(a, fname)
        y = y.astype(f) if isinstance(b, Tensor) or type(b) is np.ndarray else _as_scalar(b, fname)
    if dev.type != "cpu":
        if isinstance(a, Tensor) and a._device is not dev:
            x = _on(x, dev, a._device)
        if isinstance(b, Tensor) and b._device is not dev:
            y = _on(y, dev, b._device)
    try:
        res = _make(Tensor, fn(x, y), dev)
    except ValueError:
        _raise_if_not_broadcastable(x, y)
        raise
    if node_cls is not None and _grad_state.enabled:
        ta, tb = isinstance(a, Tensor), isinstance(b, Tensor)
        if ta and tb:
            node = record(node_cls, (a, b), res)
            if node is not None and node_cls.saves:
                node.save_for_backward(a, b)
        else:
            t, number = (a, b) if ta else (b, a)
            if node_cls.number_edge:
                node = record_number(node_cls, t, number, res, not ta)
            else:
                node = record(node_cls, (t,), res)
            if node is not None:  # nodes default to two tensor operands (BinaryNode)
                node.scalar = number
                node.scalar_first = not ta
                if node_cls.saves and (node_cls.saves_with_number_first if not ta
                                       else node_cls.saves_with_number):
                    node.save_for_backward(t)
    if out is not None:  # after recording: write_out refuses a result that requires grad
        return write_out(out, res, fname)
    return res


class BinaryNode(Node):
    """A node of a binary op; `scalar` holds a Python-number operand, if one was given.

    `number_edge`: PyTorch wraps a Python-number operand of this op into a 0-dim tensor
    input, so the node has an edge (None, 0) for it (record_number) and its backward
    returns a gradient slot (None) for it: `_for_tensor` puts one gradient in its place."""
    saves = True
    saves_with_number = True        # tensor op number: the tensor is saved
    saves_with_number_first = True  # number op tensor: the tensor is saved
    number_edge = False
    scalar = None
    scalar_first = False

    def _for_tensor(self, g):
        return (None, g) if self.scalar_first else (g, None)


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
    # x * 2 and 2 * x need only the number (PyTorch saves nothing)
    saves_with_number = saves_with_number_first = False
    number_edge = True

    def backward(self, grad):
        if self.scalar is not None:
            return self._for_tensor(grad * _conj_scalar(self.scalar))
        a, b = self.saved_tensors
        ga = grad * b.conj() if self._next[0][0] is not None else None
        gb = grad * a.conj() if self._next[1][0] is not None else None
        return ga, gb


class DivBackward0(BinaryNode):
    saves = True
    # x / 2 needs only the number (PyTorch saves no tensor); div(2, x) needs x
    saves_with_number = False
    number_edge = True

    def backward(self, grad):
        if self.scalar is not None:
            if self.scalar_first:  # scalar / t
                (t,) = self.saved_tensors
                return None, -grad * self.scalar / (t * t).conj()
            return grad / _conj_scalar(self.scalar), None
        a, b = self.saved_tensors
        ga = grad / b.conj() if self._next[0][0] is not None else None
        gb = -grad * a.conj() / (b * b).conj() if self._next[1][0] is not None else None
        return ga, gb


class DivBackward2(BinaryNode):
    """Division with a rounding mode: a step function, so a zero gradient."""
    saves = False
    number_edge = True

    def backward(self, grad):
        zero = grad * 0
        if self.scalar is not None:
            return self._for_tensor(zero)
        return zero, zero


def _conj_scalar(s):
    return s.conjugate() if isinstance(s, builtins.complex) else s


def add(input, other, *, alpha=1, out=None):
    if other.__class__ is SparseTensor or input.__class__ is SparseTensor:
        return _add_with_sparse(input, other, alpha, out)
    if alpha.__class__ is not builtins.int or alpha != 1:
        return _with_alpha(input, other, alpha, _np_add, AddBackward0, "add", out)
    return binary(input, other, _np_add, AddBackward0, "add", out)


def _add_with_sparse(input, other, alpha, out):
    from . import sparse_arith
    if out is not None:
        raise RuntimeError("ember: add(..., out=) with a sparse operand is not supported")
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
    node = res._grad_fn
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
    return binary(input, other, _remainder, RemainderBackward0, "remainder", out)


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


def _is_int(x):
    if isinstance(x, (builtins.int, builtins.bool)):
        return True
    return hasattr(x, "dtype") and x.dtype.kind in "iub"


def _has_zero(y):
    if isinstance(y, (builtins.int, builtins.bool)):
        return y == 0
    return builtins.bool((y == 0).any())


class PowBackward0(BinaryNode):
    """t ** scalar."""
    saves = True

    def backward(self, grad):
        (t,) = self.saved_tensors
        e = self.scalar
        if e == 0:
            return grad * 0
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
        if not isinstance(y, np.ndarray):  # only a Python-number exponent is refused
            if y < 0:
                raise RuntimeError("Integers to negative integer powers are not allowed.")
        elif y.dtype.kind == "i" and (y < 0).any():
            return _int_pow_negative(x, y)
    return x ** y


def _int_pow_negative(x, y):
    """Integer powers with some negative exponents, as PyTorch computes them: 1 ** -n is 1,
    (-1) ** -n is +-1 by the parity of n, and every other base gives 0 (1 / x truncated)."""
    negative = y < 0
    r = x ** np.where(negative, 0, y)
    reciprocal = np.where(x == 1, 1, np.where(x == -1, 1 - 2 * (y & 1), 0))
    return np.where(negative, reciprocal, r).astype(r.dtype, copy=False)


def pow(input, exponent, *, out=None):
    if isinstance(input, Tensor) and isinstance(exponent, Tensor):
        cls = PowBackward1
    elif isinstance(input, Tensor):
        cls = PowBackward0
    else:
        cls = PowBackward2
    return binary(input, exponent, _pow_arrays, cls, "pow", out)




# ---- unary math --------------------------------------------------------------------------
def unary(input, fn, node_cls, save, out=None, fname="op", to_float=True):
    """The body of a unary op. `save`: 'input', 'result' or None: what backward needs."""
    arr = input._array
    if to_float and arr.dtype.kind in "biu":
        arr = arr.astype(_dt.get_default_dtype().np)
    res = make_tensor(fn(arr), input._device)
    node = record(node_cls, (input,), res)
    if node is not None and save is not None:
        node.save_for_backward(input if save == "input" else res)
    if out is not None:  # after recording: write_out refuses a result that requires grad
        return write_out(out, res, fname)
    return res


class NegBackward0(Node):
    def backward(self, grad):
        return -grad


def neg(input, *, out=None):
    if input._array.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                           "are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.")
    return unary(input, np.negative, NegBackward0, None, out, "neg", to_float=False)


negative = neg


class AbsBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * t.sgn()


def abs(input, *, out=None):
    return unary(input, np.abs, AbsBackward0, "input", out, "abs", to_float=False)


absolute = abs


class ExpBackward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return grad * r.conj()


def exp(input, *, out=None):
    return unary(input, np.exp, ExpBackward0, "result", out, "exp")


class LogBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad / t.conj()


def log(input, *, out=None):
    return unary(input, np.log, LogBackward0, "input", out, "log")


class SqrtBackward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return grad / (2 * r.conj())


def sqrt(input, *, out=None):
    return unary(input, np.sqrt, SqrtBackward0, "result", out, "sqrt")


class SinBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * t.cos().conj()


def sin(input, *, out=None):
    return unary(input, np.sin, SinBackward0, "input", out, "sin")


class CosBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * -t.sin().conj()


def cos(input, *, out=None):
    return unary(input, np.cos, CosBackward0, "input", out, "cos")


class TanhBackward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return grad * (1 - r * r).conj()


def tanh(input, *, out=None):
    return unary(input, np.tanh, TanhBackward0, "result", out, "tanh")


class SigmoidBackward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return grad * (r * (1 - r)).conj()


def _sigmoid(x):
    # exp of -|x| never overflows; both branches are exact where they are used.
    e = np.exp(-np.abs(x))
    return np.where(x >= 0, 1 / (1 + e), e / (1 + e)).astype(x.dtype, copy=False)


def sigmoid(input, *, out=None):
    return unary(input, _sigmoid, SigmoidBackward0, "result", out, "sigmoid")


class ReluBackward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return grad * (r > 0)


def _relu(x):
    return np.maximum(x, x.dtype.type(0)) if x.dtype != np.bool_ else x


def relu(input):
    if input._array.dtype == np.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    return unary(input, _relu, ReluBackward0, "result", None, "relu", to_float=False)


def conj(input):
    if not input.dtype.is_complex:
        return input
    out = unary(input, xp_of(input).conj, ConjBackward0, None, None, "conj", to_float=False)
    # PyTorch's conj is a lazy view that reports is_conj(); ember's is a copy reporting the same
    if not input.__dict__.get("_conj_bit", False):
        out._conj_bit = True
    return out


class ConjBackward0(Node):
    def backward(self, grad):
        return grad.conj()


class SgnBackward0(Node):
    def backward(self, grad):
        return grad * 0


def sgn(input):
    return unary(input, _sgn, SgnBackward0, None, None, "sgn", to_float=False)


def sign(input, *, out=None):
    if input.dtype.is_complex:
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. "
                           "Please use torch.sgn instead.")
    return unary(input, _sgn, SgnBackward0, None, out, "sign", to_float=False)


def _sgn(x):
    if x.dtype.kind == "c":
        a = np.abs(x)
        return np.where(a == 0, 0, x / np.where(a == 0, 1, a)).astype(x.dtype)
    if x.dtype == np.bool_:
        return x.copy()
    return np.sign(x)


# ---- clamp, where, maximum, minimum -------------------------------------------------------
class ClampBackward1(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        mask = ones_mask = None
        if self.min is not None:
            mask = t >= self.min
        if self.max is not None:
            ones_mask = t <= self.max
            mask = ones_mask if mask is None else mask & ones_mask
        # a select, not a product: a NaN/inf incoming gradient stays out of clamped
        # elements, as in PyTorch
        return where(mask, grad, 0)


class ClampBackward0(Node):
    """clamp with tensor bounds."""

    def backward(self, grad):
        t, lo, hi = self.saved_tensors
        gt = grad
        glo = ghi = None
        in_range = None
        if lo is not None:
            in_range = t >= lo
            glo = grad * (t < lo)
        if hi is not None:
            below = t <= hi
            in_range = below if in_range is None else in_range & below
            ghi = grad * (t > hi)
            if lo is not None:
                glo = grad * ((t < lo) & (lo <= hi))
                ghi = grad * ((t > hi) | (lo > hi))
        gt = grad * in_range
        res = [gt]
        if lo is not None:
            res.append(glo)
        if hi is not None:
            res.append(ghi)
        return tuple(res)


def clamp(input, min=None, max=None, *, out=None):
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor(input, min, max, out)
    arr = input._array
    d = input.dtype
    for bound in (min, max):
        if bound is not None:
            d = _promote(d, arr.ndim > 0, type(_as_scalar(bound, "clamp")), None)
    if arr.dtype is not d.np:
        arr = arr.astype(d.np)
    res = np.clip(arr, min, max) if min is None or max is None or min <= max else np.full_like(arr, max)
    res = make_tensor(np.asarray(res, dtype=d.np) if not isinstance(res, np.ndarray) else res, input._device)
    node = record(ClampBackward1, (input,), res)
    if node is not None:
        node.min, node.max = min, max
        node.save_for_backward(input)
    if out is not None:  # after recording: write_out refuses a result that requires grad
        return write_out(out, res, "clamp")
    return res


def _clamp_tensor(input, min, max, out):
    res = input
    if min is not None:
        res = maximum(res, min) if isinstance(min, Tensor) else clamp(res, min=min)
    if max is not None:
        res = minimum(res, max) if isinstance(max, Tensor) else clamp(res, max=max)
    if out is not None:
        return write_out(out, res, "clamp")
    return res


clip = clamp


class ClampMinBackward0(ClampBackward1):
    pass


class ClampMaxBackward0(ClampBackward1):
    pass


class ClampMinBackward1(BinaryNode):
    """clamp_min with a tensor bound: the gradient goes to whichever side was kept (a NaN
    input sends it to neither, as PyTorch's formula does)."""

    def backward(self, grad):
        t, bound = self.saved_tensors
        keep, other = (t >= bound, t < bound) if self.is_min else (t <= bound, t > bound)
        gt = grad * keep if self._next[0][0] is not None else None
        gb = grad * other if self._next[1][0] is not None else None
        return gt, gb


class ClampMaxBackward1(ClampMinBackward1):
    pass


def _one_sided_clamp(input, bound, is_min, scalar_cls, tensor_cls):
    if isinstance(bound, Tensor):
        fn = np.maximum if is_min else np.minimum
        res = binary(input, bound, fn, tensor_cls, tensor_cls.__name__)
        if type(res._grad_fn) is tensor_cls:
            res._grad_fn.is_min = is_min
        return res
    res = clamp(input, min=bound) if is_min else clamp(input, max=bound)
    if type(res._grad_fn) is ClampBackward1:
        res._grad_fn.__class__ = scalar_cls
    return res


def clamp_min(input, min):
    return _one_sided_clamp(input, min, True, ClampMinBackward0, ClampMinBackward1)


def clamp_max(input, max):
    return _one_sided_clamp(input, max, False, ClampMaxBackward0, ClampMaxBackward1)


class WhereBackward0(Node):
    """Edges for `input` and `other`; a Python-number one has the edge (None, 0)."""

    def backward(self, grad):
        (cond,) = self.saved_tensors
        ga = where(cond, grad, 0) if self._next[0][0] is not None else None
        gb = where(cond, 0, grad) if self._next[1][0] is not None else None
        return ga, gb


def _where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        from .indexing import nonzero
        return nonzero(condition, as_tuple=True)
    if condition._array.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {_dt_name(condition.dtype)}")
    ta, tb = isinstance(input, Tensor), isinstance(other, Tensor)
    if ta or tb:
        x, y, d, dev = operands(input, other, "where")
    else:
        d = _dt.promote_operands([(_dt.scalar_dtype(input), None), (_dt.scalar_dtype(other), None)])
        x, y, dev = input, other, condition._device
    if condition._device != dev and condition._array.ndim != 0:
        common_device(condition, input if ta else other)
    try:
        res = np.where(condition._array, x, y)
    except ValueError:
        _raise_if_not_broadcastable(condition._array, x, y)
        raise
    if res.dtype != d.np:
        res = res.astype(d.np)
    res = make_tensor(res, dev)
    if ta and tb:
        node = record(WhereBackward0, (input, other), res)
    elif ta or tb:
        node = record_number(WhereBackward0, input if ta else other, other if ta else input,
                             res, not ta)
    else:
        node = None
    if node is not None:
        node.save_for_backward(condition)
    if out is not None:  # after recording: write_out refuses a result that requires grad
        return write_out(out, res, "where")
    return res


class _Where:
    """`torch.where(condition, input, other)`; as a Tensor method the tensor is `input`:
    `x.where(condition, y)` (a descriptor, since METHODS binds this same object)."""

    __name__ = __qualname__ = "where"
    __doc__ = _where.__doc__

    def __call__(self, condition, input=None, other=None, *, out=None):
        return _where(condition, input, other, out=out)

    def __get__(self, obj, cls=None):
        if obj is None:
            return self

        def method(condition, other):
            return _where(condition, obj, other)
        method.__name__ = "where"
        return method


where = _Where()


def _dt_name(d):
    from ._graph import _type_name
    return _type_name(d)


class MaximumBackward0(BinaryNode):
    def backward(self, grad):
        a, b = self.saved_tensors
        pick_a = (a > b) if self.is_max else (a < b)
        tie = a == b
        w = pick_a + tie * 0.5
        return grad * w, grad * (1 - w)


def maximum(input, other, *, out=None):
    res = binary(input, other, np.maximum, MaximumBackward0, "maximum", out)
    if res._grad_fn is not None and type(res._grad_fn) is MaximumBackward0:
        res._grad_fn.is_max = True
    return res


def minimum(input, other, *, out=None):
    res = binary(input, other, np.minimum, MinimumBackward0, "minimum", out)
    if res._grad_fn is not None and type(res._grad_fn) is MinimumBackward0:
        res._grad_fn.is_max = False
    return res


class MinimumBackward0(MaximumBackward0):
    pass


# ---- comparison and logic (no gradient) -----------------------------------------------------
def _compare(fn, name):
    def op(input, other, *, out=None):
        return binary(input, other, fn, None, name, out)
    op.__name__ = name
    return op


eq = _compare(np.equal, "eq")
ne = _compare(np.not_equal, "ne")
lt = _compare(np.less, "lt")
le = _compare(np.less_equal, "le")
gt = _compare(np.greater, "gt")
ge = _compare(np.greater_equal, "ge")
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne


def _logical(fn, name):
    def op(input, other, *, out=None):
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
    res = make_tensor(np.logical_not(input._array), input._device)
    return write_out(out, res, "logical_not") if out is not None else res


def _bitwise(fn, name, kernel=None):
    def op(input, other, *, out=None):
        x, y, d, dev = operands(input, other, name)
        if d.is_floating_point or d.is_complex:
            raise NotImplementedError(f'"{kernel or name}_cpu" not implemented for \'{_dt_name(d)}\'')
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


def bitwise_not(input, *, out=None):
    if input.dtype.is_floating_point or input.dtype.is_complex:
        raise NotImplementedError(f'"bitwise_not_cpu" not implemented for \'{_dt_name(input.dtype)}\'')
    res = make_tensor(np.invert(input._array), input._device)
    return write_out(out, res, "bitwise_not") if out is not None else res


def broadcast_error(a, b):
    """PyTorch's RuntimeError for shapes `a` and `b` that do not broadcast, or None when
    they do (it names the last mismatching dim, counted in the broadcast rank)."""
    n = builtins.max(len(a), len(b))
    for i in range(n - 1, -1, -1):
        ia, ib = i - n + len(a), i - n + len(b)
        da = a[ia] if ia >= 0 else 1
        db = b[ib] if ib >= 0 else 1
        if da != db and da != 1 and db != 1:
            return RuntimeError(f"The size of tensor a ({da}) must match the size of tensor b "
                                f"({db}) at non-singleton dimension {i}")
    return None


def _raise_if_not_broadcastable(*operands):
    shapes = [np.shape(x) for x in operands]
    for k in range(1, len(shapes)):
        err = broadcast_error(np.broadcast_shapes(*shapes[:k]) if k > 1 else shapes[0], shapes[k])
        if err is not None:
            raise err


def broadcast_shapes_or_none(*shapes):
    try:
        return np.broadcast_shapes(*shapes)
    except ValueError:
        return None


# ---- in-place forms ------------------------------------------------------------------------
def _direct_inplace(self, other, ufunc, alpha=1):
    """An untracked add_/sub_/mul_/div_ whose result keeps self's dtype: the ufunc writes
    straight into self's memory (optimisers do this on every step). Returns False when the
    general path must run (autograd, a cast, a read-only or non-broadcastable target: it
    gives PyTorch's errors)."""
    if tracks(self, (other,)):
        return False
    arr = self._array
    if not arr.flags.writeable or not isinstance(other, (Tensor, builtins.int, builtins.float)):
        return False
    try:
        x, y, d, dev = operands(self, other, ufunc.__name__)
    except (TypeError, RuntimeError):
        return False
    if x is not arr or d.np != arr.dtype or dev is not self._device:
        return False
    if alpha.__class__ is not builtins.int or alpha != 1:
        y = _scale(y, _check_alpha(alpha, d), d.np)
    try:
        ufunc(arr, y, out=arr)
    except (ValueError, TypeError):  # e.g. other broadcasts to a larger shape
        return False
    self._vc.value += 1
    return True


def add_(self, other, *, alpha=1):
    if other.__class__ is SparseTensor:
        from .sparse_arith import add_dense_sparse_
        return add_dense_sparse_(self, other, alpha)
    if _direct_inplace(self, other, np.add, alpha):
        return self
    return inplace(self, lambda s: add(s, other, alpha=alpha), (other,))


def sub_(self, other, *, alpha=1):
    if not isinstance(other, builtins.bool) and _direct_inplace(self, other, np.subtract, alpha):
        return self
    return inplace(self, lambda s: sub(s, other, alpha=alpha), (other,))


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


def clamp_(self, min=None, max=None):
    return inplace(self, lambda s: clamp(s, min, max), (min, max))


def _inplace_unary(op):
    def method(self, *args, **kwargs):
        return inplace(self, lambda s: op(s, *args, **kwargs),
                       tuple(a for a in args if isinstance(a, Tensor)))
    method.__name__ = op.__name__ + "_"
    return method


subtract, multiply, divide, true_divide = sub, mul, div, div
subtract_, multiply_, divide_, true_divide_ = sub_, mul_, div_, div_
neg_, abs_, exp_, log_, sqrt_, sin_, cos_, tanh_, sigmoid_, relu_, sign_, sgn_ = (
    _inplace_unary(f) for f in (neg, abs, exp, log, sqrt, sin, cos, tanh, sigmoid, relu, sign, sgn))
clip_ = clamp_
clamp_min_ = _inplace_unary(clamp_min)
clamp_max_ = _inplace_unary(clamp_max)
floor_divide_ = _inplace_unary(floor_divide)
remainder_ = _inplace_unary(remainder)
logical_not_ = _inplace_unary(logical_not)
bitwise_not_ = _inplace_unary(bitwise_not)
