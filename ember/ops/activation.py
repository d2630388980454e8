"""Activation functions, with derivatives (the softmax family is ops/softmax_family.py).

Each forward computes on backend arrays (float16/bfloat16 in float32, as PyTorch's opmath
does) and records a node named as PyTorch's; every backward is written with ember ops, so
second derivatives work. In-place forms (`elu_`, `F.leaky_relu(x, inplace=True)` ...) go
through `_writes.inplace` and name their node as PyTorch does (`EluBackward1` ...).

`erf` is taken from `ember.ops.unary_special` when that family provides it; otherwise a
local, float64-accurate `_erf_array` (series + continued fraction) serves GELU.
"""
import builtins
import math

import numpy as np

from .. import dtypes as _dt
from .._dtype_casts import cast_if_needed
from .._memory_format import c_ordered
from .._select import select
from ..device import backend_of
from .._tensor import _wrap_dim, make_tensor, xp_of
from .._vml import ufunc as vml_ufunc
from .._state import autocast as _autocast, grad as _grad_state
from . import _device_kernels
from ._gelu_cpu import _SQRT_2_PI, gelu_single, gelu_single_grad
from ._autocast import lower
from ._graph import Node, first_order_arrays, record
from ._writes import write_out, with_out
from ._writes import inplace as _inplace, inplace_saving_result
from .pointwise import relu as _relu_op
from .pointwise import relu_, sigmoid, tanh, where
from .pointwise._common import as_array
from .pointwise.unary_core import sigmoid_array

__all__ = ["selu", "selu_", "celu", "celu_", "prelu", "rrelu", "rrelu_", "hardshrink",
           "threshold", "threshold_"]
METHODS = ["hardshrink", "prelu"]
FUNCTIONAL = ["relu", "relu_", "relu6", "leaky_relu", "leaky_relu_", "elu", "elu_", "selu",
              "selu_", "celu", "celu_", "gelu", "silu", "mish", "hardtanh", "hardtanh_",
              "hardsigmoid", "hardswish", "softplus", "softsign", "tanhshrink", "softshrink",
              "hardshrink", "threshold", "threshold_", "glu", "logsigmoid", "prelu", "rrelu",
              "rrelu_"]

_LOW = None


def _low_precision():
    global _LOW
    if _LOW is None:
        _LOW = (np.dtype(np.float16), _dt.bfloat16.np)
    return _LOW


def _check_float(input, kernel):
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{input.dtype._scalar_name}\'')


def _compute(arr, fn):
    """fn(arr) in opmath: half and bfloat16 computed in float32, cast back."""
    if arr.dtype in _low_precision():
        return fn(arr.astype(np.float32)).astype(arr.dtype)
    return fn(arr)


def _act(input, fn, node_cls, attrs=None, kernel=None):
    """A pointwise activation: forward `fn` on the array, node saving the input."""
    if kernel is not None:
        _check_float(input, kernel)
    res = make_tensor(_compute(input._array, fn), input._device)
    node = record(node_cls, (input,), res)
    if node is not None:
        node.save_for_backward(input)
        if attrs:
            node.__dict__.update(attrs)
    return res


def _in_place(input, op, node_cls, *args):
    return _inplace(input, lambda s: op(s, *args, _node=node_cls), ())


# ---- relu and its clipped / leaky relatives ---------------------------------------------------
def relu(input, inplace=False):
    """`F.relu` (the op itself is `ember.relu`, in ops/pointwise/unary_core.py)."""
    return relu_(input) if inplace else _relu_op(input)


class HardtanhBackward0(Node):
    """Saves the input, or (hardtanh_) the result, which gives the same mask: a value at or
    past a bound is clipped to it."""

    def backward(self, grad):
        (x,) = self.saved_tensors
        # PyTorch drops the gradient where x <= min_val or x >= max_val: NaN passes it (a
        # product with the mask, as relu's backward, for speed: relu6 fills MobileNets)
        return grad * ~((x <= self.min_val) | (x >= self.max_val))


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False, *, _node=HardtanhBackward0):
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    if inplace:
        if input._array.dtype.kind == "f" and not input.dtype._kind and inplace_saving_result(
                input, lambda a: xp_of(input).clip(a, min_val, max_val, out=a),
                HardtanhBackward0, min_val=min_val, max_val=max_val):
            return input  # in one pass (relu6 after every convolution of a MobileNet)
        return _in_place(input, hardtanh, HardtanhBackward0, min_val, max_val)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        lo, hi = math.ceil(min_val), math.floor(max_val)
        return make_tensor(xp_of(input).clip(input._array, lo, hi).astype(input._array.dtype),
                           input._device)
    return _act(input, lambda a: a.clip(min_val, max_val), _node,
                {"min_val": min_val, "max_val": max_val})


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    return hardtanh(input, min_val, max_val, inplace=True)


def relu6(input, inplace=False):
    return hardtanh(input, 0.0, 6.0, inplace)


class LeakyReluBackward0(Node):
    def backward(self, grad):
        (x,) = self.saved_tensors
        arrays = first_order_arrays(grad, x)
        if arrays is not None:
            g, xa = arrays
            xp = xp_of(grad)
            if type(g) is not np.ndarray and _device_kernels.usable(xp, g, xa):
                return make_tensor(_LEAKY_RELU_GRAD(xp, g, xa, g.dtype.type(self.negative_slope)),
                                   grad._device)
            return make_tensor(select(xa > 0, g, g * self.negative_slope), grad._device)
        # the slope multiplies in the gradient's dtype (a float64 gradient gets all of 0.01)
        return where(x > 0, grad, grad * self.negative_slope)


class LeakyReluBackward1(LeakyReluBackward0):
    """leaky_relu_'s node: it saves the result, whose sign is the input's for a slope of 0 or
    more; PyTorch refuses a negative slope here, when the gradient is asked for."""

    def backward(self, grad):
        if self.negative_slope < 0:
            raise RuntimeError(
                "In-place leakyReLu backward calculation is triggered with a negative slope "
                "which is not supported. This is caused by calling in-place forward function "
                "with a negative slope, please call out-of-place version instead. File an "
                "issue at https://github.com/pytorch/pytorch if you do require supporting "
                "in-place leakRelu backward calculation with negative slope")
        return super().backward(grad)


_FAST_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))
# leaky relu on a device, forward (in place too: the output is the input) and backward, one
# launch each where the select and its operands took three or four
_LEAKY_RELU = _device_kernels.Kernel("ember_leaky_relu", "T x, T s", "T y",
                                     "y = x > 0 ? x : x * s")
_LEAKY_RELU_GRAD = _device_kernels.Kernel("ember_leaky_relu_grad", "T g, T x, T s", "T d",
                                          "d = x > 0 ? g : g * s")


def _leaky(xp, a, negative_slope, out=None):
    """select(a > 0, a, a * negative_slope), into `out` where given (`a` itself, in place).
    For a NumPy float32 or float64 array and a positive slope it is max(a, a * slope) (min
    past a slope of 1): the larger (smaller) of the two is a for a > 0 and the product
    otherwise, with the same bits, NaN and -0 included; two SIMD passes, where the select took
    five (a (64, 128, 16, 16) float32 forward: 3.0 -> 1.2 ms). Other slopes keep the select:
    at 0, inf * 0 is NaN; below 0, max(+0, -0) may give either zero."""
    if type(a) is np.ndarray:
        if a.dtype in _FAST_FLOATS and negative_slope > 0:
            scaled = np.multiply(a, negative_slope, out=np.empty_like(a))  # (0-d: an array)
            pick = np.maximum if negative_slope <= 1 else np.minimum
            return pick(a, scaled, out=scaled if out is None else out)
    elif _device_kernels.usable(xp, a):
        s = a.dtype.type(negative_slope)
        return _LEAKY_RELU(xp, a, s) if out is None else _LEAKY_RELU(xp, a, s, out)
    result = select(a > 0, a, a * negative_slope).astype(a.dtype, copy=False)
    if out is None:
        return result
    out[...] = result
    return out


def leaky_relu(input, negative_slope=0.01, inplace=False, *, _node=LeakyReluBackward0):
    if inplace:
        xp = xp_of(input)
        if input._array.dtype.kind == "f" and not input.dtype._kind and inplace_saving_result(
                input, lambda a: _leaky(xp, a, negative_slope, out=a), LeakyReluBackward1,
                negative_slope=negative_slope):
            return input  # in one pass (a DCGAN discriminator's activation)
        return _in_place(input, leaky_relu, LeakyReluBackward1, negative_slope)
    return _act(input, lambda a: _leaky(xp_of(input), a, negative_slope), _node,
                {"negative_slope": negative_slope}, "leaky_relu_cpu")


def leaky_relu_(input, negative_slope=0.01):
    return leaky_relu(input, negative_slope, inplace=True)


class ThresholdBackward0(Node):
    def backward(self, grad):
        (x,) = self.saved_tensors
        return where(x <= self.threshold, 0.0, grad)  # NaN passes the gradient, as PyTorch


class ThresholdBackward1(ThresholdBackward0):
    pass


@with_out("threshold")
def threshold(input, threshold, value, inplace=False, *, _node=ThresholdBackward0):
    if inplace:
        return _in_place(input, globals()["threshold"], ThresholdBackward1, threshold, value)
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        a = input._array
        return make_tensor(select(a <= threshold, value, a).astype(a.dtype), input._device)
    th = threshold
    # x <= threshold takes the value: NaN stays NaN, as in PyTorch
    return _act(input, lambda a: select(a <= th, a.dtype.type(value), a).astype(a.dtype), _node,
                {"threshold": th})


def threshold_(input, threshold, value):
    return globals()["threshold"](input, threshold, value, inplace=True)


# ---- the ELU family ---------------------------------------------------------------------------
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


class EluBackward0(Node):
    """out = scale*x (x > 0), scale*alpha*(exp(x*input_scale) - 1) otherwise."""

    def backward(self, grad):
        (x,) = self.saved_tensors
        arrays = first_order_arrays(grad, x)
        if arrays is not None:
            g, xa = arrays
            neg = as_array(np.multiply(xa, self.input_scale))
            vml_ufunc(np.exp, neg, out=neg)  # (the exp of the tensor path below)
            neg *= self.scale * self.alpha * self.input_scale
            neg *= g
            return make_tensor(select(xa <= 0, neg, g * self.scale), grad._device)
        neg = (x * self.input_scale).exp() * (self.scale * self.alpha * self.input_scale)
        # PyTorch's branch is x <= 0: a NaN input takes the linear side's gradient
        return where(x <= 0, grad * neg, grad * self.scale)


class EluBackward1(EluBackward0):
    pass


class CeluBackward0(EluBackward0):
    pass


class CeluBackward1(EluBackward0):
    pass


def _elu(input, alpha, scale, input_scale, node, kernel="elu_cpu"):
    def fn(a):
        neg = np.expm1(a * a.dtype.type(input_scale)) * a.dtype.type(scale * alpha)
        return select(a > 0, a * a.dtype.type(scale), neg).astype(a.dtype)
    return _act(input, fn, node, {"alpha": alpha, "scale": scale, "input_scale": input_scale},
                kernel)


def elu(input, alpha=1.0, inplace=False, *, _node=EluBackward0):
    if inplace:
        return _in_place(input, elu, EluBackward1, alpha)
    return _elu(input, alpha, 1.0, 1.0, _node)


def elu_(input, alpha=1.0):
    return elu(input, alpha, inplace=True)


def selu(input, inplace=False, *, _node=EluBackward0):
    if inplace:
        return _in_place(input, selu, EluBackward1)
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, 1.0, _node)


def selu_(input):
    return selu(input, inplace=True)


def celu(input, alpha=1.0, inplace=False, *, _node=CeluBackward0):
    if inplace:
        return _in_place(input, celu, CeluBackward1, alpha)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError")
    return _elu(input, alpha, 1.0, 1.0 / alpha, _node)


def celu_(input, alpha=1.0):
    return celu(input, alpha, inplace=True)


# ---- erf (for GELU) ---------------------------------------------------------------------------
def _erf_array(x, xp=np):
    """erf to float64 accuracy on any backend (`xp`, the array module of x's device): a
    positive-term series below 3, the continued fraction of erfc above."""
    dt = x.dtype
    a = xp.abs(x.astype(np.float64))
    s = xp.minimum(a, 3.0)
    term = s.copy()
    total = s.copy()
    two_s2 = 2.0 * s * s
    for n in builtins.range(1, 90):
        term = term * two_s2 / (2 * n + 1)
        total = total + term
    small = 2.0 / math.sqrt(math.pi) * xp.exp(-s * s) * total
    b = xp.maximum(a, 3.0)
    f = b.copy()
    for k in builtins.range(80, 0, -1):
        f = b + (k / 2.0) / f
    large = 1.0 - xp.exp(-b * b) / (math.sqrt(math.pi) * f)
    res = xp.where(a < 3.0, small, large)
    return (xp.sign(x) * res).astype(dt)


class ErfBackward0(Node):
    def backward(self, grad):
        (x,) = self.saved_tensors
        return grad * ((-(x * x)).exp() * (2.0 / math.sqrt(math.pi)))


def _erf(input):
    from . import unary_special
    op = getattr(unary_special, "erf", None)
    if op is not None:
        return op(input)
    xp = xp_of(input)
    return _act(input, lambda a: _erf_array(a, xp), ErfBackward0)


def _erf_arr(a, device):
    from . import unary_special
    if getattr(unary_special, "erf", None) is not None:
        return unary_special.erf(make_tensor(a, device))._array
    return _erf_array(a, backend_of(device).xp)


# ---- GELU, SiLU, Mish -------------------------------------------------------------------------


class GeluBackward0(Node):
    def backward(self, grad):
        (x,) = self.saved_tensors
        kept = getattr(self, "_kept", None)
        if kept is not None and not _grad_state.enabled and grad._array.dtype == np.float32 \
                and xp_of(grad) is np:
            d = gelu_single_grad(x._array, kept, grad._array, self.approximate)
            return make_tensor(d, grad._device)
        if self.approximate == "tanh":
            inner = (x + x * x * x * 0.044715) * _SQRT_2_PI
            t = tanh(inner)
            d_inner = (x * x * (3 * 0.044715) + 1) * _SQRT_2_PI
            d = (t + 1) * 0.5 + x * 0.5 * (1 - t * t) * d_inner
        else:
            arrays = first_order_arrays(grad, x)
            xp = xp_of(grad)
            if arrays is not None and _device_kernels.usable(xp, *arrays):
                return make_tensor(_gelu_grad_on_device(xp, *arrays), grad._device)
            cdf = (_erf(x * (1 / math.sqrt(2.0))) + 1) * 0.5
            pdf = (x * x * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
            d = cdf + x * pdf
        return grad * d


# GELU's exact form on a device as one kernel each way (the array calls it replaces: 5 forward,
# about 15 backward), with the general path's operations in its order: erf as the device's
# erf op takes it, in float64 for float32 (`_special`), then rounded back.
_GELU = _device_kernels.Kernel("ember_gelu", "T x, T half, T one, T r2", "T y",
                               "y = x * half * (one + T(erf(double(x * r2))))")
_GELU_GRAD = _device_kernels.Kernel(
    "ember_gelu_grad", "T g, T x, T half, T one, T r2, T mhalf, T rpi", "T d",
    "d = g * ((T(erf(double(x * r2))) + one) * half + x * (exp(x * x * mhalf) * rpi))")


def _gelu_on_device(xp, a):
    t = a.dtype.type
    return _GELU(xp, a, t(0.5), t(1), t(1 / math.sqrt(2.0)))


def _gelu_grad_on_device(xp, g, a):
    t = a.dtype.type
    return _GELU_GRAD(xp, g, a, t(0.5), t(1), t(1 / math.sqrt(2.0)), t(-0.5),
                      t(1 / math.sqrt(2 * math.pi)))


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    if input._array.dtype == np.float32 and xp_of(input) is np:
        keep = input.requires_grad and _grad_state.enabled
        res_arr, kept = gelu_single(input._array, approximate, keep)
        res = make_tensor(res_arr, input._device)
        node = record(GeluBackward0, (input,), res)
        if node is not None:
            node.save_for_backward(input)
            node.approximate = approximate
            node._kept = kept
        return res
    if approximate == "tanh":
        def fn(a):
            inner = (a + a * a * a * a.dtype.type(0.044715)) * a.dtype.type(_SQRT_2_PI)
            return cast_if_needed(a * a.dtype.type(0.5) * (1 + np.tanh(inner)), a.dtype)
    else:
        dev = input._device

        def fn(a):
            xp = xp_of(input)
            if _device_kernels.usable(xp, a):
                return _gelu_on_device(xp, a)
            return cast_if_needed(a * a.dtype.type(0.5) *
                                  (1 + _erf_arr(a * a.dtype.type(1 / math.sqrt(2.0)), dev)),
                                  a.dtype)
    return _act(input, fn, GeluBackward0, {"approximate": approximate}, "GeluKernelImpl")


def _silu_array(a):
    """x / (1 + exp(-x)), PyTorch's formula (float16 in float32, as sigmoid_array)."""
    r = as_array(np.negative(a, dtype=np.float32) if a.dtype == np.float16 else np.negative(a))
    np.exp(r, out=r)
    r += 1
    np.divide(a, r, out=r)
    return r.astype(a.dtype, copy=False)


class SiluBackward0(Node):
    def backward(self, grad):
        (x,) = self.saved_tensors
        arrays = first_order_arrays(grad, x)
        if arrays is not None:  # the formula below, pass by pass
            g, xa = arrays
            s = sigmoid_array(xa)
            d = as_array(np.subtract(1, s))
            d *= xa
            d += 1
            d *= s
            d *= g
            return make_tensor(d, grad._device)
        s = sigmoid(x)
        return grad * (s * (1 + x * (1 - s)))


def silu(input, inplace=False):
    if inplace:
        return inplace_(input, silu)
    return _act(input, _silu_array, SiluBackward0, None,
                "silu_cpu")


class MishBackward0(Node):
    def backward(self, grad):
        (x,) = self.saved_tensors
        t = tanh(softplus(x))
        return grad * (t + x * sigmoid(x) * (1 - t * t))


def mish(input, inplace=False):
    if inplace:
        return inplace_(input, mish)
    def fn(a):  # x tanh(log1p(exp(x))), PyTorch's formula (exp's overflow gives tanh(inf) = 1)
        wide = a.astype(np.float32) if a.dtype == np.float16 else a
        r = as_array(np.exp(wide))
        np.log1p(r, out=r)
        np.tanh(r, out=r)
        r *= wide
        return r.astype(a.dtype, copy=False)
    return _act(input, fn, MishBackward0, None, "mish_cpu")


def inplace_(input, op):
    return _inplace(input, op, ())


# ---- hard sigmoid / swish, softplus, shrinks ---------------------------------------------------
_ONE_SIXTH_F32 = float(np.float32(1.0 / 6.0))


class HardsigmoidBackward0(Node):
    def backward(self, grad):
        (x,) = self.saved_tensors
        # PyTorch's slope is 1/6 rounded to float32 whatever the dtype
        return where((x > -3.0) & (x < 3.0), grad * _ONE_SIXTH_F32, 0.0)


def hardsigmoid(input, inplace=False):
    if inplace:
        return inplace_(input, hardsigmoid)
    return _act(input, lambda a: ((a + 3).clip(0, 6) / a.dtype.type(6)).astype(a.dtype),
                HardsigmoidBackward0, None, "hardsigmoid_cpu")


class HardswishBackward0(Node):
    def backward(self, grad):
        (x,) = self.saved_tensors
        arrays = first_order_arrays(grad, x)
        if arrays is not None:
            g, xa = arrays
            mid = as_array(np.divide(xa, 3.0))
            mid += 0.5
            mid *= g
            return make_tensor(select(xa <= -3.0, 0.0, select(xa < 3.0, mid, g)), grad._device)
        # PyTorch: 0 for x <= -3, x / 3 + 1/2 for -3 < x < 3, 1 otherwise (NaN included)
        return where(x <= -3.0, 0.0, where(x < 3.0, grad * (x / 3.0 + 0.5), grad))


def hardswish(input, inplace=False):
    if inplace:
        return inplace_(input, hardswish)
    return _act(input, lambda a: (a * (a + 3).clip(0, 6) / a.dtype.type(6)).astype(a.dtype),
                HardswishBackward0, None, "hardswish_cpu")


class SoftplusBackward0(Node):
    def backward(self, grad):
        (x,) = self.saved_tensors
        arrays = first_order_arrays(grad, x)
        if arrays is not None:
            g, xa = arrays
            bx = np.multiply(xa, self.beta)
            d = select(bx > self.threshold, 1.0, sigmoid_array(bx))
            d *= g
            return make_tensor(d, grad._device)
        bx = x * self.beta
        return grad * where(bx > self.threshold, 1.0, sigmoid(bx))


def softplus(input, beta=1.0, threshold=20.0):
    def fn(a):  # PyTorch's formula: x where beta x > threshold, else log1p(exp(beta x)) / beta
        wide = a.astype(np.float32) if a.dtype == np.float16 else a  # exp(12) overflows float16
        ba = wide * wide.dtype.type(beta)
        soft = as_array(np.exp(ba))
        np.log1p(soft, out=soft)
        soft /= wide.dtype.type(beta)
        return select(ba > threshold, wide, soft).astype(a.dtype, copy=False)
    return _act(input, fn, SoftplusBackward0, {"beta": beta, "threshold": threshold},
                "softplus_cpu")


def softsign(input):
    return input / (input.abs() + 1)


def tanhshrink(input):
    return input - input.tanh()


class SoftshrinkBackward0(Node):
    def backward(self, grad):
        (x,) = self.saved_tensors
        return where((x >= -self.lambd) & (x <= self.lambd), 0.0, grad)  # NaN passes it


def softshrink(input, lambd=0.5):
    if lambd < 0:
        top = float(np.finfo(np.float32 if input.dtype is _dt.bfloat16 else
                             input._array.dtype).max) if input.dtype.is_floating_point else 0
        raise RuntimeError(f"lambda must be in range [0, {top:g}] for input dtype "
                           f"{input.dtype._scalar_name}, but found {lambd:g}")
    def fn(a):
        lam = a.dtype.type(lambd)
        # inside the band x * 0, as PyTorch: NaN stays NaN, and -x's side gives -0
        return select(a > lam, a - lam, select(a < -lam, a + lam, a * 0)).astype(a.dtype)
    return _act(input, fn, SoftshrinkBackward0, {"lambd": lambd}, "softshrink_cpu")


class HardshrinkBackward0(Node):
    def backward(self, grad):
        (x,) = self.saved_tensors
        return where((x >= -self.lambd) & (x <= self.lambd), 0.0, grad)  # NaN passes it


def hardshrink(input, lambd=0.5, *, out=None):
    def fn(a):
        return select((a >= -lambd) & (a <= lambd), 0, a).astype(a.dtype)  # NaN stays
    res = _act(input, fn, HardshrinkBackward0, {"lambd": lambd}, "hardshrink_cpu")
    return res if out is None else write_out(out, res, "hardshrink")


class LogSigmoidBackward0(Node):
    def backward(self, grad):
        (x,) = self.saved_tensors
        arrays = first_order_arrays(grad, x)
        if arrays is not None:
            g, xa = arrays
            d = as_array(sigmoid_array(np.negative(xa)))
            d *= g
            return make_tensor(d, grad._device)
        return grad * sigmoid(-x)


def logsigmoid(input):
    def fn(a):
        a = c_ordered(a)  # PyTorch's result is contiguous whatever the input's layout
        return (np.minimum(a, 0) - np.log1p(np.exp(-np.abs(a)))).astype(a.dtype)
    return _act(input, fn, LogSigmoidBackward0, None, "log_sigmoid_cpu")


# ---- GLU, PReLU, RReLU -------------------------------------------------------------------------
class GluBackward0(Node):
    def backward(self, grad):
        (x,) = self.saved_tensors
        h = x.shape[self.dim] // 2
        a, b = x.narrow(self.dim, 0, h), x.narrow(self.dim, h, h)
        s = sigmoid(b)
        from .shape import stack
        # stacked on a new axis before the halves, then merged: the two halves back to back
        return stack([grad * s, grad * a * s * (1 - s)], self.dim).reshape(x.shape)


def glu(input, dim=-1):
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    _check_float(input, "glu_cpu")
    h = n // 2

    def fn(arr):
        a = arr[(slice(None),) * d + (slice(0, h),)]
        b = arr[(slice(None),) * d + (slice(h, n),)]
        return (a * sigmoid_array(b)).astype(arr.dtype)
    return _act(input, fn, GluBackward0, {"dim": d})


class PreluKernelBackward0(Node):
    def backward(self, grad):
        x, w = self.saved_tensors
        pos = x > 0
        gx = grad * where(pos, 1.0, w) if self._next[0][0] is not None else None
        gw = grad * where(pos, 0.0, x) if self._next[1][0] is not None else None
        return gx, gw


def prelu(input, weight):
    if _autocast.active:
        input, weight = lower(input, weight)
    n = weight.numel()
    channels = input.shape[1] if input.ndim >= 2 else 1
    if n != 1 and n != channels:
        raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                           f"parameter numbers = {n} and channel size = {channels}.")
    if weight.ndim > 1 or (weight.ndim == 1 and input.ndim >= 2):
        shape = [1] * input.ndim
        if input.ndim >= 2:
            shape[1] = n
        weight = weight.reshape(shape) if input.ndim >= 1 else weight.reshape(())
    x, w = input._array, weight._array
    if w.dtype != x.dtype:
        w = w.astype(x.dtype)
    res = make_tensor(_compute(x, lambda a: select(a > 0, a, a * w.astype(a.dtype))
                               .astype(a.dtype)), input._device)
    node = record(PreluKernelBackward0, (input, weight), res)
    if node is not None:
        node.save_for_backward(input, weight)
    return res


class RreluWithNoiseBackward0(Node):
    def backward(self, grad):
        (noise,) = self.saved_tensors
        return grad * noise


class RreluWithNoiseBackward1(RreluWithNoiseBackward0):
    pass


def rrelu(input, lower=1.0 / 8.0, upper=1.0 / 3.0, training=False, inplace=False, *,
          generator=None, _node=RreluWithNoiseBackward0):
    if inplace:
        return _inplace(input, lambda s: rrelu(s, lower, upper, training, generator=generator,
                                              _node=RreluWithNoiseBackward1), ())
    _check_float(input, "leaky_relu_cpu")
    arr = input._array
    if training:  # x times the slope in opmath (float for half types), then rounded
        slopes = _rrelu_noise(input, lower, upper, generator)
        res = make_tensor((arr * slopes).astype(arr.dtype), input._device)
        noise = slopes.astype(arr.dtype)
    else:
        noise = select(arr >= 0, 1.0, (lower + upper) / 2).astype(arr.dtype)
        res = make_tensor((arr * noise).astype(arr.dtype), input._device)
    node = record(_node, (input,), res)
    if node is not None:
        node.save_for_backward(make_tensor(noise, input._device))
    return res


def _rrelu_noise(input, lower, upper, generator):
    """The training slopes, in x's opmath dtype: 1 for positive x, else a draw from U(lower,
    upper). As PyTorch's CPU kernel: only the x <= 0 elements draw, in order, u (53 bits)
    scaled in double (not fused, unlike the uniform_ kernel's) between the bounds held in
    the opmath type."""
    from ..random import generator_for
    from . import _torch_stream as ts
    arr = input._array
    rng = generator_for(input._device, generator).rng
    drawn = arr <= 0
    bits = ts.stream(rng)
    held = np.float64 if arr.dtype == np.float64 else np.float32
    if bits is None:  # a device's generator: a draw for every element, the others unused
        slopes = lower + (upper - lower) * rng.random(arr.shape)
        return select(drawn, slopes, 1.0).astype(held)
    lo, hi = float(held(lower)), float(held(upper))
    at = np.flatnonzero(drawn)
    slopes = ts.uniform01(bits, (at.size,), True) * (hi - lo) + lo
    noise = np.ones(arr.size, held)
    noise[at] = slopes.astype(held)
    return noise.reshape(arr.shape)


def rrelu_(input, lower=1.0 / 8.0, upper=1.0 / 3.0, training=False, generator=None):
    return rrelu(input, lower, upper, training, inplace=True, generator=generator)
