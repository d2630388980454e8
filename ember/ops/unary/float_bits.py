"""Two-operand math on exponents and integers: logaddexp, logaddexp2, ldexp, frexp,
nextafter, gcd and lcm, with their backward nodes and in-place forms.
"""
import math

import numpy as np

from ... import dtypes as _dt
from ..._tensor import make_tensor, xp_of
from .._graph import Node, record
from .._writes import inplace, write_out
from ..pointwise import BinaryNode, binary
from ...return_types import return_type
from ._common import (_HALF, _both_tensors, _inplace, _module, _need_tensor, _not_implemented,
                      _opmath, _promoted, _zeros)
from .elementary import exp2

__all__ = ["logaddexp", "logaddexp2", "ldexp", "ldexp_", "frexp", "nextafter", "gcd", "gcd_",
           "lcm", "lcm_", "nextafter_"]
_INPLACE_METHODS = ["ldexp_", "nextafter_", "gcd_", "lcm_"]
_LN2 = math.log(2.0)


def _floating_only(fname, input, other):
    _both_tensors(fname, input, other)
    d = _promoted(input, other)
    if not d.is_floating_point:
        raise _not_implemented(f"{fname}_cpu", d)
    return d


# ==== logaddexp, logaddexp2 =======================================================================
class LogaddexpBackward0(BinaryNode):
    def backward(self, grad):
        a, b = self.saved_tensors
        ga = grad / (1 + (b - a).exp()) if self._next[0][0] is not None else None
        gb = grad / (1 + (a - b).exp()) if self._next[1][0] is not None else None
        return ga, gb


class Logaddexp2Backward0(BinaryNode):
    def backward(self, grad):
        a, b = self.saved_tensors
        ga = grad / (1 + exp2(b - a)) if self._next[0][0] is not None else None
        gb = grad / (1 + exp2(a - b)) if self._next[1][0] is not None else None
        return ga, gb


def logaddexp(input, other, *, out=None):
    _floating_only("logaddexp", input, other)
    return binary(input, other, _opmath(lambda x, y: _module(x, y).logaddexp(x, y)),
                  LogaddexpBackward0, "logaddexp", out)


def logaddexp2(input, other, *, out=None):
    _floating_only("logaddexp2", input, other)
    return binary(input, other, _opmath(lambda x, y: _module(x, y).logaddexp2(x, y)),
                  Logaddexp2Backward0, "logaddexp2", out)


# ==== ldexp, frexp, nextafter ======================================================================
class LdexpBackward0(BinaryNode):
    def backward(self, grad):
        a, b = self.saved_tensors
        scale = exp2(b.to(grad.dtype))
        if not (b.dtype.is_floating_point or b.dtype.is_complex):
            # PyTorch's formula takes pow(2, other) in other's integer dtype: 0 below 2**0
            scale = scale * (b >= 0)
        ga = grad * scale if self._next[0][0] is not None else None
        gb = grad * a * scale * _LN2 if self._next[1][0] is not None else None
        return ga, gb


def _ldexp_arrays(x, y):
    xp = _module(x, y)
    if x.dtype in _HALF:
        return (x.astype(np.float32) * xp.exp2(y.astype(np.float32))).astype(x.dtype)
    return x * xp.exp2(y)


def ldexp(input, other, *, out=None):
    """`input * 2 ** other`; integer operands give the default float dtype."""
    _both_tensors("ldexp", input, other)
    return binary(input, other, _ldexp_arrays, LdexpBackward0, "ldexp", out, float_result=True)


def ldexp_(input, other):
    _both_tensors("ldexp_", input, other)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"ldexp can't be cast to the desired output type "
                           f"{input.dtype._scalar_name}")
    return inplace(input, lambda s: ldexp(s, other), (other,))


class FrexpBackward0(Node):
    def backward(self, grad):
        (exponent,) = self.saved_tensors
        return grad / exp2(exponent.to(grad.dtype))


frexp_result = return_type("frexp", ("mantissa", "exponent"))
frexp_out_result = return_type("frexp_out", ("mantissa", "exponent"))


def frexp(input, *, out=None):
    _need_tensor("frexp", input)
    if not input.dtype.is_floating_point:
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    xp, arr = xp_of(input), input._array
    if arr.dtype == _dt.bfloat16.np:  # every bfloat16 is exact in float32
        m, e = xp.frexp(arr.astype(np.float32))
        m = m.astype(arr.dtype)
    else:
        m, e = xp.frexp(arr)
    mantissa = make_tensor(m, input._device)
    exponent = make_tensor(e.astype(np.int32, copy=False), input._device)
    if out is not None:
        write_out(out[0], mantissa, "frexp")
        write_out(out[1], exponent, "frexp")
        return frexp_out_result(out[0], out[1])
    node = record(FrexpBackward0, (input,), mantissa)
    if node is not None:
        node.save_for_backward(exponent)
    return frexp_result(mantissa, exponent)


class NextafterBackward0(BinaryNode):
    """PyTorch's formula: the gradient passes to `input`, none to `other`."""
    saves = False

    def backward(self, grad):
        gb = _zeros(grad) if self._next[1][0] is not None else None
        return grad, gb


def nextafter(input, other, *, out=None):
    _floating_only("nextafter", input, other)
    return binary(input, other, lambda x, y: _module(x, y).nextafter(x, y), NextafterBackward0,
                  "nextafter", out)


# ==== gcd, lcm ==============================================================================
def _integer_op(fname, kernel):
    def op(input, other, *, out=None):
        _both_tensors(fname, input, other)
        d = _promoted(input, other)
        if d.is_floating_point or d.is_complex or d is _dt.bool:
            raise _not_implemented(f"{fname}_cpu", d)
        return binary(input, other, lambda x, y: getattr(_module(x, y), kernel)(x, y), None,
                      fname, out)
    op.__name__ = fname
    return op


gcd = _integer_op("gcd", "gcd")
lcm = _integer_op("lcm", "lcm")


# ==== in-place forms ================================================================================
nextafter_, gcd_, lcm_ = (_inplace(f) for f in (nextafter, gcd, lcm))
