"""Two-operand pointwise math beyond the core arithmetic: fmod, fmax, fmin, hypot, copysign,
xlogy, heaviside and float_power, each with its backward node, then their in-place forms.
(add, mul, pow, remainder ... are core arithmetic and live in `pointwise`.)
"""
import builtins

import numpy as np

from ... import dtypes as _dt
from ..._tensor import Tensor
from .._graph import node_of
from .._writes import inplace
from .. import pointwise as _pw
from ..pointwise import BinaryNode, binary, where
from ._common import (_HALF, _both_tensors, _inplace, _module, _not_implemented, _opmath,
                      _promoted, _zeros)

__all__ = [
    "fmod", "fmax", "fmin", "hypot", "xlogy", "copysign", "heaviside", "float_power", "xlogy_",
    "fmod_", "hypot_", "copysign_", "heaviside_", "float_power_",
]


# ==== fmod, fmax, fmin, hypot, copysign, xlogy, heaviside ============================================
class FmodBackward0(BinaryNode):
    saves = False

    def backward(self, grad):
        return grad


class FmodBackward1(BinaryNode):
    saves = True

    def backward(self, grad):
        a, b = self.saved_tensors
        gb = None
        if self._next[1][0] is not None:
            gb = -grad * _pw.div(a, b, rounding_mode="trunc")
        return grad, gb


def _fmod_arrays(x, y):
    if _pw._is_int(x) and _pw._is_int(y) and _pw._has_zero(y):
        raise RuntimeError("ZeroDivisionError")
    return _module(x, y).fmod(x, y)


def fmod(input, other, *, out=None):
    if not isinstance(input, Tensor):
        raise TypeError(
            f"fmod() received an invalid combination of arguments - got "
            f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
            " * (Tensor input, Tensor other, *, Tensor out = None)\n"
            " * (Tensor input, Number other, *, Tensor out = None)\n")
    d = _promoted(input, other)
    if d is _dt.bool or d.is_complex:
        raise _not_implemented("fmod_cpu", d)
    cls = FmodBackward1 if isinstance(other, Tensor) else FmodBackward0
    return binary(input, other, _opmath(_fmod_arrays), cls, "fmod", out)


class FmaxBackward0(BinaryNode):
    def backward(self, grad):
        a, b = self.saved_tensors
        keep_a = (a >= b) | b.isnan() if self.is_max else (a <= b) | b.isnan()
        ga = where(keep_a, grad, 0.0) if self._next[0][0] is not None else None
        gb = where(keep_a, 0.0, grad) if self._next[1][0] is not None else None
        return ga, gb


class FminBackward0(FmaxBackward0):
    pass


def _fmaxmin(input, other, out, fname, cls, fn):
    _both_tensors(fname, input, other)
    if input.dtype.is_complex or other.dtype.is_complex:
        raise RuntimeError(f"{fname} not implemented for complex tensors.")
    res = binary(input, other, lambda x, y: fn(_module(x, y), x, y), cls, fname, out)
    if type(node_of(res)) is cls:
        node_of(res).is_max = cls is FmaxBackward0
    return res


def fmax(input, other, *, out=None):
    return _fmaxmin(input, other, out, "fmax", FmaxBackward0, lambda xp, x, y: xp.fmax(x, y))


def fmin(input, other, *, out=None):
    return _fmaxmin(input, other, out, "fmin", FminBackward0, lambda xp, x, y: xp.fmin(x, y))


class HypotBackward0(BinaryNode):
    saves = False

    def backward(self, grad):
        a, b, r = self.saved_tensors
        ga = grad * a / r if self._next[0][0] is not None else None
        gb = grad * b / r if self._next[1][0] is not None else None
        return ga, gb


def hypot(input, other, *, out=None):
    _both_tensors("hypot", input, other)
    d = _promoted(input, other)
    if not d.is_floating_point:
        raise _not_implemented("hypot_cpu", d)
    res = binary(input, other, _opmath(lambda x, y: _module(x, y).hypot(x, y)), HypotBackward0,
                 "hypot", out)
    if type(node_of(res)) is HypotBackward0:
        node_of(res).save_for_backward(input, other, res)
    return res


class CopysignBackward0(BinaryNode):
    saves = False

    def backward(self, grad):
        a, r = self.saved_tensors
        ga = grad * where(a == 0, 0.0, r / a)
        if len(self._next) == 1:
            return ga
        gb = _zeros(grad) if self._next[1][0] is not None else None
        return ga, gb


class CopysignBackward1(CopysignBackward0):
    pass


def copysign(input, other, *, out=None):
    if not isinstance(input, Tensor):
        raise TypeError(
            f"copysign() received an invalid combination of arguments - got "
            f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
            " * (Tensor input, Tensor other, *, Tensor out = None)\n"
            " * (Tensor input, Number other, *, Tensor out = None)\n")
    d = _promoted(input, other)
    if d.is_complex:
        raise _not_implemented("copysign_cpu", d)
    cls = CopysignBackward0 if isinstance(other, Tensor) else CopysignBackward1
    res = binary(input, other, _opmath(lambda x, y: _module(x, y).copysign(x, y)), cls,
                 "copysign", out, float_result=True)
    if type(node_of(res)) is cls:
        node_of(res).save_for_backward(input, res)
    return res


class XlogyBackward0(BinaryNode):
    def backward(self, grad):
        a, b = self.saved_tensors
        ga = grad * xlogy(a != 0, b) if self._next[0][0] is not None else None
        gb = grad * a / b if self._next[1][0] is not None else None
        return ga, gb


class XlogyBackward1(BinaryNode):
    """scalar self, tensor other."""

    def backward(self, grad):
        (b,) = self.saved_tensors
        return grad * self.scalar / b


class XlogyBackward2(BinaryNode):
    """tensor self, scalar other."""

    def backward(self, grad):
        (a,) = self.saved_tensors
        return grad * xlogy(a != 0, self.scalar)


def _xlogy_arrays(x, y):
    xp = _module(x, y)
    dt = x.dtype if hasattr(x, "dtype") else y.dtype
    x = x if hasattr(x, "dtype") else xp.asarray(x, dtype=dt)
    y = y if hasattr(y, "dtype") else xp.asarray(y, dtype=dt)
    if dt in _HALF:  # PyTorch rounds log(y) to the half type before the product
        logy = xp.log(y.astype(np.float32)).astype(dt).astype(np.float32)
        return _xlogy_finish(xp, x.astype(np.float32), y, x.astype(np.float32) * logy).astype(dt)
    return _xlogy_finish(xp, x, y, x * xp.log(y))


def _xlogy_finish(xp, x, y, res):
    res = xp.where(x == 0, 0, res)
    return xp.where(xp.isnan(y), np.nan, res).astype(res.dtype, copy=False)


def xlogy(input, other, *, out=None):
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(
            f"xlogy() received an invalid combination of arguments - got "
            f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
            " * (Tensor self, Tensor other, *, Tensor out = None)\n"
            " * (Number self, Tensor other, *, Tensor out = None)\n"
            " * (Tensor self, Number other, *, Tensor out = None)\n")
    d = _promoted(input, other)
    if d.is_complex:
        raise _not_implemented("xlogy_cpu", d)
    if isinstance(input, Tensor) and isinstance(other, Tensor):
        cls = XlogyBackward0
    else:
        cls = XlogyBackward2 if isinstance(input, Tensor) else XlogyBackward1
    return binary(input, other, _xlogy_arrays, cls, "xlogy", out, float_result=True)


class _HeavisideBackward(BinaryNode):
    saves = False

    def backward(self, grad):
        raise RuntimeError("derivative for aten::heaviside is not implemented")


_HeavisideBackward.__name__ = _HeavisideBackward.__qualname__ = "NotImplemented"


def heaviside(input, values, *, out=None):
    _both_tensors("heaviside", input, values, "values")
    if input.dtype.is_complex or values.dtype.is_complex:
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different dtypes.")

    def fn(x, y):
        xp = _module(x, y)
        return xp.where(x == 0, y, (x > 0)).astype(x.dtype, copy=False)
    return binary(input, values, fn, _HeavisideBackward, "heaviside", out)


def _is_complex_operand(x):
    return x.dtype.is_complex if isinstance(x, Tensor) else isinstance(x, builtins.complex)


def float_power(input, exponent, *, out=None):
    if not isinstance(input, Tensor) and not isinstance(exponent, Tensor):
        raise TypeError(
            f"float_power() received an invalid combination of arguments - got "
            f"({type(input).__name__}, {type(exponent).__name__}), but expected one of:\n"
            " * (Tensor input, Tensor exponent, *, Tensor out = None)\n"
            " * (Number self, Tensor exponent, *, Tensor out = None)\n"
            " * (Tensor input, Number exponent, *, Tensor out = None)\n")
    d = _dt.complex128 if (_is_complex_operand(input) or _is_complex_operand(exponent)) \
        else _dt.float64
    if out is not None and isinstance(out, Tensor) and out.dtype is not d:
        raise RuntimeError(f"the output given to float_power has dtype {out.dtype._scalar_name} "
                           f"but the operation's result requires dtype {d._scalar_name}")
    a = input.to(d) if isinstance(input, Tensor) else input
    b = exponent.to(d) if isinstance(exponent, Tensor) else exponent
    if not isinstance(a, Tensor):
        a = builtins.complex(a) if d.is_complex else builtins.float(a)
    if not isinstance(b, Tensor):
        b = builtins.complex(b) if d.is_complex else builtins.float(b)
    return _pw.pow(a, b, out=out)


# ==== in-place forms ==============================================================================
fmod_, hypot_, xlogy_, copysign_, heaviside_ = (
    _inplace(f) for f in (fmod, hypot, xlogy, copysign, heaviside))


def float_power_(self, exponent):
    d = _dt.complex128 if (self.dtype.is_complex or _is_complex_operand(exponent)) else _dt.float64
    if self.dtype is not d:
        raise RuntimeError(f"the base given to float_power_ has dtype {self.dtype._scalar_name} "
                           f"but the operation's result requires dtype {d._scalar_name}")
    return inplace(self, lambda s: float_power(s, exponent),
                   (exponent,) if isinstance(exponent, Tensor) else ())
