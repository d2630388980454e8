"""The entropy terms of `torch.special`: entr(x) = -x log x and xlog1py(x, y) = x log(1 + y)
(zero where x is zero, as xlogy), with PyTorch's backward nodes, including its Scalar
overloads' nodes for xlog1py (SpecialXlog1PyBackward1 / 2, a Python number as self / other).
"""
import numpy as np

from ..._tensor import Tensor
from .._graph import Node
from ..pointwise import BinaryNode, binary, where
from ._common import _HALF, _module, _not_implemented, _promoted, _unary

__all__ = []  # torch.special only: re-exported by ember/special.py


def _entr(xp, x, log_dtype=None):
    log = xp.log(xp.where(x > 0, x, 1.0))
    if log_dtype is not None:  # PyTorch rounds log(x) to the half type before the product
        log = log.astype(log_dtype).astype(x.dtype)
    res = -x * log
    res = xp.where(x == 0, 0.0, xp.where(x < 0, -np.inf, res))
    return xp.where(xp.isnan(x), x, res).astype(x.dtype, copy=False)


class SpecialEntrBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * -(1 + t.log())


def entr(input, *, out=None):
    if isinstance(input, Tensor) and input.dtype.is_complex:
        raise _not_implemented("entr_cpu", input.dtype)
    half = isinstance(input, Tensor) and input._array.dtype in _HALF
    kernel = (lambda xp, x: _entr(xp, x, input._array.dtype)) if half else _entr
    return _unary(input, kernel, SpecialEntrBackward0, "input", out, "special_entr")


# ==== xlog1py ======================================================================================
class SpecialXlog1PyBackward0(BinaryNode):
    def backward(self, grad):
        a, b = self.saved_tensors
        ga = grad * xlog1py(a != 0, b) if self._next[0][0] is not None else None
        gb = grad * a / (b + 1) if self._next[1][0] is not None else None
        return ga, gb


class SpecialXlog1PyBackward1(BinaryNode):
    """A number as self, a tensor as other."""

    def backward(self, grad):
        (b,) = self.saved_tensors
        return grad * self.scalar / (b + 1)


class SpecialXlog1PyBackward2(BinaryNode):
    """A tensor as self, a number as other: grad * log1p(other), except that where self is
    zero and log1p(other) is not finite-or-above (other <= -1 or NaN) it is zero."""

    def backward(self, grad):
        (a,) = self.saved_tensors
        g = xlog1py(grad, self.scalar)
        if not self.scalar > -1:
            g = where((a == 0) & ~grad.isnan(), 0.0, g)
        return g


def _xlog1py_arrays(x, y):
    xp = _module(x, y)
    dt = x.dtype if hasattr(x, "dtype") else y.dtype
    x = x if hasattr(x, "dtype") else xp.asarray(x, dtype=dt)
    y = y if hasattr(y, "dtype") else xp.asarray(y, dtype=dt)
    wide = dt in _HALF
    xw, yw = (x.astype(np.float32), y.astype(np.float32)) if wide else (x, y)
    log = xp.log1p(yw)
    if wide:  # PyTorch rounds log1p(y) to the half type before the product
        log = log.astype(dt).astype(np.float32)
    res = xp.where(xw == 0, 0.0, xw * log).astype(xw.dtype, copy=False)
    res = xp.where(xp.isnan(yw), np.nan, res).astype(xw.dtype, copy=False)
    return res.astype(dt) if wide else res


def xlog1py(input, other, *, out=None):
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(
            f"special_xlog1py() received an invalid combination of arguments - got "
            f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
            " * (Tensor input, Tensor other, *, Tensor out = None)\n"
            " * (Number self, Tensor other, *, Tensor out = None)\n"
            " * (Tensor input, Number other, *, Tensor out = None)\n")
    d = _promoted(input, other)
    if d.is_complex:
        raise _not_implemented("xlog1py_cpu", d)
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        cls = SpecialXlog1PyBackward0
    else:
        cls = SpecialXlog1PyBackward2 if isinstance(input, Tensor) else SpecialXlog1PyBackward1
    return binary(input, other, _xlog1py_arrays, cls, "special_xlog1py", out, float_result=True)
