"""Elementary functions: exponentials and logarithms (exp2, expm1, log2, log10, log1p,
rsqrt, reciprocal, square), trigonometric and hyperbolic functions and their inverses (with
atan2, deg2rad, rad2deg, sinc, angle), `positive`, each with its backward node, then their
in-place forms.

exp, log, sqrt, sin, cos and tanh themselves are core arithmetic and live in `pointwise`.
"""
import math

from ... import dtypes as _dt
from ..._vml import ufunc as vml_ufunc
from .._graph import Node, record
from .._writes import inplace
from .. import pointwise as _pw
from ..pointwise import BinaryNode, binary, where
from ._common import (_PI, _both_tensors, _inplace, _module, _need_tensor, _not_implemented,
                      _opmath, _promoted, _unary, _zeros)

__all__ = [
    "exp2", "expm1", "log2", "log10", "log1p", "rsqrt", "tan", "asin", "acos", "atan", "atan2",
    "arctan2", "sinh", "cosh", "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan",
    "arcsinh", "arccosh", "arctanh", "reciprocal", "square", "deg2rad", "rad2deg", "sinc",
    "positive", "angle", "exp2_", "expm1_", "log2_", "log10_", "log1p_", "rsqrt_", "tan_",
    "asin_", "acos_", "atan_", "sinh_", "cosh_", "asinh_", "acosh_", "atanh_", "arcsin_",
    "arccos_", "arctan_", "arcsinh_", "arccosh_", "arctanh_", "reciprocal_", "square_",
    "deg2rad_", "rad2deg_", "sinc_", "atan2_", "arctan2_",
]


# ==== exponentials and logarithms ==================================================================
_LN2, _LN10 = math.log(2.0), math.log(10.0)


class Exp2Backward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return grad * (r * _LN2).conj()


def exp2(input, *, out=None):
    return _unary(input, lambda xp, a: xp.exp2(a), Exp2Backward0, "result", out, "exp2")


class Expm1Backward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return grad * (r + 1).conj()


def expm1(input, *, out=None):
    return _unary(input, lambda xp, a: vml_ufunc(xp.expm1, a), Expm1Backward0, "result", out, "expm1")


class Log2Backward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad / (t * _LN2).conj()


def log2(input, *, out=None):
    return _unary(input, lambda xp, a: vml_ufunc(xp.log2, a), Log2Backward0, "input", out, "log2")


class Log10Backward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad / (t * _LN10).conj()


def log10(input, *, out=None):
    return _unary(input, lambda xp, a: vml_ufunc(xp.log10, a), Log10Backward0, "input", out, "log10")


class Log1PBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad / (t + 1).conj()


def log1p(input, *, out=None):
    return _unary(input, lambda xp, a: vml_ufunc(xp.log1p, a), Log1PBackward0, "input", out, "log1p")


class RsqrtBackward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return -0.5 * grad * (r * r * r).conj()


def rsqrt(input, *, out=None):
    return _unary(input, lambda xp, a: 1 / xp.sqrt(a), RsqrtBackward0, "result", out, "rsqrt")


class ReciprocalBackward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return -grad * (r * r).conj()


def reciprocal(input, *, out=None):
    return _unary(input, lambda xp, a: 1 / a, ReciprocalBackward0, "result", out, "reciprocal")


def square(input, *, out=None):
    _need_tensor("square", input)
    return _pw.pow(input, 2, out=out)


# ==== trigonometric and hyperbolic ==================================================================
class TanBackward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return grad * (1 + r * r).conj()


def tan(input, *, out=None):
    return _unary(input, lambda xp, a: vml_ufunc(xp.tan, a), TanBackward0, "result", out, "tan")


class AsinBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * rsqrt(1 - t * t).conj()


def asin(input, *, out=None):
    return _unary(input, lambda xp, a: vml_ufunc(xp.arcsin, a), AsinBackward0, "input", out, "asin")


class AcosBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * -rsqrt(1 - t * t).conj()


def acos(input, *, out=None):
    return _unary(input, lambda xp, a: vml_ufunc(xp.arccos, a), AcosBackward0, "input", out, "acos")


class AtanBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad / (t * t + 1).conj()


def atan(input, *, out=None):
    return _unary(input, lambda xp, a: vml_ufunc(xp.arctan, a), AtanBackward0, "input", out, "atan")


class SinhBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * cosh(t).conj()


def sinh(input, *, out=None):
    return _unary(input, lambda xp, a: vml_ufunc(xp.sinh, a), SinhBackward0, "input", out, "sinh")


class CoshBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * sinh(t).conj()


def cosh(input, *, out=None):
    return _unary(input, lambda xp, a: vml_ufunc(xp.cosh, a), CoshBackward0, "input", out, "cosh")


class AsinhBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * rsqrt(t * t + 1).conj()


def asinh(input, *, out=None):
    return _unary(input, lambda xp, a: xp.arcsinh(a), AsinhBackward0, "input", out, "asinh")


class AcoshBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * rsqrt(t * t - 1).conj()


def acosh(input, *, out=None):
    return _unary(input, lambda xp, a: xp.arccosh(a), AcoshBackward0, "input", out, "acosh")


class AtanhBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad / (1 - t * t).conj()


def atanh(input, *, out=None):
    return _unary(input, lambda xp, a: xp.arctanh(a), AtanhBackward0, "input", out, "atanh")


arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh


class Atan2Backward0(BinaryNode):
    def backward(self, grad):
        a, b = self.saved_tensors
        square = a * a + b * b
        recip = 1 / square
        # atan2(0, 0) takes a zero gradient, as in PyTorch (the formula is 0 * inf there)
        ga = where(square == 0, 0.0, grad * b * recip) if self._next[0][0] is not None else None
        gb = where(square == 0, 0.0, grad * -a * recip) if self._next[1][0] is not None else None
        return ga, gb


def atan2(input, other, *, out=None):
    _both_tensors("atan2", input, other)
    if input.dtype.is_complex or other.dtype.is_complex:
        raise _not_implemented("atan2_cpu", _promoted(input, other))
    return binary(input, other, _opmath(lambda x, y: _module(x, y).arctan2(x, y)),
                  Atan2Backward0, "atan2", out, float_result=True)


arctan2 = atan2


class Deg2RadBackward0(Node):
    def backward(self, grad):
        return grad * (_PI / 180)


class Rad2DegBackward0(Node):
    def backward(self, grad):
        return grad * (180 / _PI)


def _scale(factor):
    def kernel(xp, a):
        return a * a.dtype.type(factor)
    return kernel


def deg2rad(input, *, out=None):
    _need_tensor("deg2rad", input)
    if input.dtype.is_complex:
        raise RuntimeError("deg2rad is not supported for complex tensors.")
    return _unary(input, _scale(_PI / 180), Deg2RadBackward0, None, out, "deg2rad")


def rad2deg(input, *, out=None):
    _need_tensor("rad2deg", input)
    if input.dtype.is_complex:
        raise RuntimeError("rad2deg is not supported for complex tensors.")
    return _unary(input, _scale(180 / _PI), Rad2DegBackward0, None, out, "rad2deg")


class SincBackward0(Node):
    def backward(self, grad):
        # PyTorch's form: 0 where pi * t^2 is 0, which takes in the t whose square
        # underflows (1e-30 in float32), where the quotient would be 0 / 0
        (t,) = self.saved_tensors
        pt = t * _PI
        sq = t * t * _PI
        return where(sq == 0, 0.0, grad * (pt * pt.cos() - pt.sin()) / sq.conj())


def _sinc(xp, a):
    p = a * a.dtype.type(_PI) if a.dtype.kind == "f" else a * _PI
    safe = xp.where(a == 0, 1, p)
    return xp.where(a == 0, 1, xp.sin(safe) / safe).astype(a.dtype, copy=False)


def sinc(input, *, out=None):
    return _unary(input, _sinc, SincBackward0, "input", out, "sinc")


class AngleBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        if not t.dtype.is_complex:
            return _zeros(t)
        g = grad * t / (t.abs() ** 2) * 1j
        return where(t == 0, 0.0, g)


def _angle(xp, a):
    if a.dtype.kind == "c":
        return xp.angle(a)
    return xp.where(xp.isnan(a), a, xp.where(a < 0, a.dtype.type(_PI), a.dtype.type(0)))


def angle(input, *, out=None):
    return _unary(input, _angle, AngleBackward0, "input", out, "angle")


def positive(input):
    _need_tensor("positive", input)
    if input.dtype is _dt.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# ==== in-place forms ==============================================================================
exp2_, expm1_, log2_, log10_, log1p_, rsqrt_, reciprocal_ = (
    _inplace(f) for f in (exp2, expm1, log2, log10, log1p, rsqrt, reciprocal))
tan_, asin_, acos_, atan_, sinh_, cosh_ = (_inplace(f) for f in (tan, asin, acos, atan, sinh, cosh))


def _no_inplace_derivative(name, fn):
    """PyTorch records asinh_/acosh_/atanh_ with a node whose backward is not implemented."""
    def backward(self, grad):
        raise NotImplementedError(f"the derivative for 'inplace version of {name}' is not "
                                  "implemented.")
    node_cls = type(name.capitalize() + "Backward1", (Node,), {"backward": backward})

    def method(input):
        def compute(s):
            res = fn(s)
            if res._grad_fn is not None:
                res._grad_fn = None
                record(node_cls, (s,), res)
            return res
        return inplace(input, compute)
    method.__name__ = name + "_"
    return node_cls, method


AsinhBackward1, asinh_ = _no_inplace_derivative("asinh", asinh)
AcoshBackward1, acosh_ = _no_inplace_derivative("acosh", acosh)
AtanhBackward1, atanh_ = _no_inplace_derivative("atanh", atanh)
arcsin_, arccos_, arctan_, arcsinh_, arccosh_, arctanh_ = asin_, acos_, atan_, asinh_, acosh_, atanh_
atan2_ = _inplace(atan2)
arctan2_ = atan2_
deg2rad_, rad2deg_, sinc_ = (_inplace(f) for f in (deg2rad, rad2deg, sinc))


def square_(input):
    return _pw.pow_(input, 2)
