"""Rounding and classification: floor, ceil, trunc (fix), round, frac; the predicates isnan,
isinf, isfinite, isposinf, isneginf, isreal, signbit, isclose; and nan_to_num, which replaces
what they detect. These ops are about a number's representation rather than its value as a
smooth function: rounding has a zero gradient, the predicates none.
"""
import builtins

import numpy as np

from ... import dtypes as _dt
from ..._tensor import make_tensor, xp_of
from .._graph import Node, record
from .._writes import write_out
from .. import pointwise as _pw
from ._common import (_HALF, _both_tensors, _compute, _inplace, _need_tensor, _not_implemented,
                      _zeros)

__all__ = [
    "floor", "ceil", "round", "trunc", "fix", "frac", "nan_to_num", "isnan", "isinf",
    "isfinite", "isposinf", "isneginf", "isreal", "isclose", "signbit", "floor_", "ceil_",
    "round_", "trunc_", "fix_", "frac_", "nan_to_num_",
]


# ==== rounding (zero gradient) =======================================================================
def _rounding(input, fname, kernel, node_cls, out, complex_message=None, vml=True):
    _need_tensor(fname, input)
    d = input.dtype
    if d is _dt.bool:
        raise _not_implemented(f"{fname}_vml_cpu" if vml else f"{fname}_cpu", d)
    if d.is_complex:
        if complex_message is not None:
            raise NotImplementedError(complex_message)
        raise _not_implemented(f"{fname}_vml_cpu" if vml else f"{fname}_cpu", d)
    if d._kind:
        _pw._common.barebones_unary(input, fname, vml)
    arr = input._array
    if arr.dtype.kind in "iu":
        res = make_tensor(arr.copy(), input._device)
    else:
        res = make_tensor(_compute(xp_of(input), arr, kernel), input._device)
    if out is not None:
        return write_out(out, res, fname)
    record(node_cls, (input,), res)
    return res


class _ZeroGrad(Node):
    def backward(self, grad):
        return _zeros(grad)


class FloorBackward0(_ZeroGrad):
    pass


class CeilBackward0(_ZeroGrad):
    pass


class TruncBackward0(_ZeroGrad):
    pass


class RoundBackward0(_ZeroGrad):
    pass


class RoundBackward1(_ZeroGrad):
    pass


def floor(input, *, out=None):
    return _rounding(input, "floor", lambda xp, a: xp.floor(a), FloorBackward0, out,
                     "floor is not supported for complex inputs")


def ceil(input, *, out=None):
    return _rounding(input, "ceil", lambda xp, a: xp.ceil(a), CeilBackward0, out,
                     "ceil is not supported for complex inputs")


def trunc(input, *, out=None):
    return _rounding(input, "trunc", lambda xp, a: xp.trunc(a), TruncBackward0, out,
                     "trunc is not supported for complex inputs")


fix = trunc


def round(input, *, decimals=0, out=None):
    if decimals == 0:
        return _rounding(input, "round", lambda xp, a: xp.rint(a), RoundBackward0, out)
    _need_tensor("round", input)
    if not input.dtype.is_floating_point:
        raise _not_implemented("round_cpu", input.dtype)
    neg = decimals < 0
    power = 10.0 ** builtins.abs(decimals)

    def kernel(xp, a):
        p = a.dtype.type(power)
        return xp.rint(a / p) * p if neg else xp.rint(a * p) / p
    return _rounding(input, "round", kernel, RoundBackward1, out)


class FracBackward0(Node):
    def backward(self, grad):
        return grad


def frac(input, *, out=None):
    _need_tensor("frac", input)
    if not input.dtype.is_floating_point:
        raise _not_implemented("frac_cpu", input.dtype)
    return _rounding(input, "frac", lambda xp, a: a - xp.trunc(a), FracBackward0, out)


# ==== classification (no gradient) ====================================================================
def _predicate(input, fname, fn, *, integer_value=False, complex_error=None):
    """A bool-valued test; integer and bool inputs give `integer_value` everywhere."""
    _need_tensor(fname, input)
    arr = input._array
    xp = xp_of(input)
    if input.dtype._kind:
        arr = _pw._common.barebones_unary(input, fname, False)[0]
    if arr.dtype.kind in "biu":
        res = xp.full(arr.shape, integer_value, dtype=bool)
    else:
        if complex_error is not None and arr.dtype.kind == "c":
            raise complex_error
        if arr.dtype in _HALF:
            arr = arr.astype(np.float32)
        res = xp.asarray(fn(xp, arr))
    return make_tensor(res, input._device)


def isnan(input):
    return _predicate(input, "isnan", lambda xp, a: xp.isnan(a))


def isinf(input):
    return _predicate(input, "isinf", lambda xp, a: xp.isinf(a))


def isfinite(input):
    return _predicate(input, "isfinite", lambda xp, a: xp.isfinite(a), integer_value=True)


def isposinf(input, *, out=None):
    res = _predicate(input, "isposinf", lambda xp, a: a == np.inf,
                     complex_error=RuntimeError("isposinf does not support complex inputs."))
    return write_out(out, res, "isposinf") if out is not None else res


def isneginf(input, *, out=None):
    res = _predicate(input, "isneginf", lambda xp, a: a == -np.inf,
                     complex_error=RuntimeError("isneginf does not support complex inputs."))
    return write_out(out, res, "isneginf") if out is not None else res


def isreal(input):
    _need_tensor("isreal", input)
    if input._array.dtype.kind == "c":
        return make_tensor(xp_of(input).asarray(input._array.imag == 0), input._device)
    return make_tensor(xp_of(input).ones(input._array.shape, dtype=bool), input._device)


def signbit(input, *, out=None):
    _need_tensor("signbit", input)
    arr = input._array
    if arr.dtype.kind == "c":
        raise NotImplementedError("signbit is not implemented for complex tensors.")
    xp = xp_of(input)
    if arr.dtype.kind == "i":
        res = arr < 0
    elif arr.dtype.kind in "bu":
        res = xp.zeros(arr.shape, dtype=bool)
    else:
        res = xp.signbit(arr.astype(np.float32) if arr.dtype in _HALF else arr)
    res = make_tensor(xp.asarray(res), input._device)
    return write_out(out, res, "signbit") if out is not None else res


def _barebones_isclose(input, other, rtol, atol, equal_nan):
    """PyTorch's isclose on a barebones dtype: its kernels refuse all but complex32, which
    is compared as complex64."""
    d = input.dtype
    if d._kind is _dt.FLOAT8:
        raise _not_implemented("mul_cpu_reduced_float", d)
    if d is not _dt.complex32:
        raise _not_implemented("copy_" if d._kind is _dt.FLOAT4 else "eq_cpu", d)
    return isclose(input.to(_dt.complex64), other.to(_dt.complex64), rtol, atol, equal_nan)


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    _both_tensors("isclose", input, other)
    if input.dtype is not other.dtype:
        raise RuntimeError(f"{input.dtype._scalar_name} did not match {other.dtype._scalar_name}")
    if input.dtype._kind and input.dtype._kind is not _dt.UINT:
        return _barebones_isclose(input, other, rtol, atol, equal_nan)
    if input.dtype.is_complex and equal_nan:
        raise RuntimeError("isclose with equal_nan=True is not supported for complex inputs.")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol:g}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol:g}")
    xp = xp_of(input)
    a, b = input._array, other._array
    if other._device != input._device:
        _pw.common_device(input, other)
    close = a == b
    if equal_nan and input.dtype.is_floating_point:
        close = close | (xp.isnan(a) & xp.isnan(b))
    if rtol == 0 and atol == 0:
        return make_tensor(xp.asarray(close), input._device)
    d = input.dtype
    if d.is_floating_point or d.is_complex:
        work = d.np
        allowed = (xp.abs(b * b.dtype.type(rtol)) + b.dtype.type(atol)) if d.is_floating_point \
            else xp.abs(b * rtol) + atol
        actual = xp.abs(a - b)
        if d.is_complex:
            allowed = allowed.real.astype(actual.dtype, copy=False)
    else:
        work = _dt.get_default_dtype().np
        fa = a.astype(work) if d is _dt.bool else a
        fb = b.astype(work) if d is _dt.bool else b
        allowed = xp.abs(fb.astype(work) * work.type(rtol)) + work.type(atol)
        diff = fa - fb
        actual = xp.abs(diff).astype(work) if d is not _dt.bool else xp.abs(diff)
    with np.errstate(invalid="ignore"):
        close = close | (xp.isfinite(actual) & (actual <= allowed))
    return make_tensor(xp.asarray(close), input._device)


# ==== nan_to_num, angle, positive, float_power ============================================================
class NanToNumBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * isfinite(t)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None, *, out=None):
    _need_tensor("nan_to_num", input)
    arr = input._array
    xp = xp_of(input)
    if arr.dtype.kind in "biu":
        res = make_tensor(arr.copy(), input._device)
        return write_out(out, res, "nan_to_num") if out is not None else res

    def fix(a):
        info = _dt.finfo(_dt.FROM_NUMPY[a.dtype])
        hi = info.max if posinf is None else posinf
        lo = info.min if neginf is None else neginf
        dtype = a.dtype
        t = dtype.type
        # (CuPy's where gives float32 for a bfloat16 array and scalar: cast back at the end)
        a = xp.where(xp.isnan(a), t(nan), a)
        a = xp.where(a == np.inf, t(hi), a)
        return xp.where(a == -np.inf, t(lo), a).astype(dtype, copy=False)
    if arr.dtype.kind == "c":
        value = fix(arr.real) + 1j * fix(arr.imag)
        value = value.astype(arr.dtype)
    else:
        value = fix(arr)
    res = make_tensor(xp.asarray(value), input._device)
    if out is not None:
        return write_out(out, res, "nan_to_num")
    node = record(NanToNumBackward0, (input,), res)
    if node is not None:
        node.save_for_backward(input)
    return res


# ==== in-place forms ==============================================================================
floor_, ceil_, trunc_, frac_, round_ = (_inplace(f) for f in (floor, ceil, trunc, frac, round))
fix_ = trunc_
nan_to_num_ = _inplace(nan_to_num)
