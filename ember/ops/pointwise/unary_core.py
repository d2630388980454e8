"""The core one-input ops: neg, abs, exp, log, sqrt, sin, cos, tanh, sigmoid, relu, conj,
sgn and sign, each with its backward node, and `unary`, the body they share (the other
elementwise functions live in the `unary` family).
"""
import numpy as np

from ... import dtypes as _dt
from ..._state import ThreadLocal
from ..._tensor import make_tensor, Tensor, xp_of
from ..._vml import ufunc as vml_ufunc
from .. import _device_kernels
from .._graph import Node, first_order_arrays, not_a_tensor, record
from .._writes import write_out, with_out
from ._common import as_array, barebones_unary, round_back

__all__ = ["neg", "negative", "abs", "absolute", "exp", "log", "sqrt", "sin", "cos", "tanh",
           "sigmoid", "relu", "conj", "sgn", "sign"]


# ---- unary math --------------------------------------------------------------------------
def unary(input, fn, node_cls, save, out=None, fname="op", to_float=True):
    """The body of a unary op. `save`: 'input', 'result' or None: what backward needs."""
    try:
        arr = input._array
    except AttributeError:
        raise not_a_tensor(fname, input) from None
    back = None
    if input.dtype._kind:
        arr, back = barebones_unary(input, fname, to_float)
    if to_float and arr.dtype.kind in "biu":
        arr = arr.astype(_dt.get_default_dtype().np)
    res = vml_ufunc(fn, arr)
    res = make_tensor(res if back is None else round_back(res, back), input._device)
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
    if not isinstance(input, Tensor):
        raise not_a_tensor("neg", input)
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
    if isinstance(input, Tensor) and input.dtype is _dt.bool:
        raise NotImplementedError("\"abs_cpu\" not implemented for 'Bool'")
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
        arrays = first_order_arrays(grad, r)
        if arrays is not None:  # grad * (1 - r * r), in place
            g, ra = arrays
            d = as_array(np.multiply(ra, ra))
            np.subtract(1, d, out=d)
            d *= g
            return make_tensor(d, grad._device)
        return grad * (1 - r * r).conj()


def tanh(input, *, out=None):
    return unary(input, np.tanh, TanhBackward0, "result", out, "tanh")


class SigmoidBackward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        arrays = first_order_arrays(grad, r)
        if arrays is not None:  # grad * (r * (1 - r)), in place
            g, ra = arrays
            d = as_array(np.subtract(1, ra))
            d *= ra
            d *= g
            return make_tensor(d, grad._device)
        return grad * (r * (1 - r)).conj()


def sigmoid_array(x):
    """1 / (1 + exp(-x)), PyTorch's formula: exp overflows to inf far left, and 1 / inf is
    the 0 the sigmoid rounds to there. float16 computes in float32, as PyTorch's kernel does
    (exp(-x) overflows float16 from x = -11, where the sigmoid is still 1.7e-5)."""
    r = as_array(np.negative(x, dtype=np.float32) if x.dtype == np.float16 else np.negative(x))
    np.exp(r, out=r)
    r += 1
    if r.dtype.kind == "f":  # 1 / r: reciprocal's bits, in ~0.7 of its time
        np.divide(1, r, out=r)
    else:
        np.reciprocal(r, out=r)
    return r.astype(x.dtype, copy=False)


def sigmoid(input, *, out=None):
    return unary(input, sigmoid_array, SigmoidBackward0, "result", out, "sigmoid")


_RELU_GRAD = _device_kernels.Kernel("ember_relu_grad", "T g, T y", "T d",
                                    "d = g * (1 - (y <= 0))")


class ReluBackward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        # PyTorch drops the gradient where r <= 0, so a NaN result passes it. A product with
        # the mask, not where(): NumPy's where runs 3-5x slower on a mixed mask, and relu's
        # backward is in every CNN's step (an infinite gradient gives NaN where PyTorch's
        # select gives 0; a GradScaler skips such a step either way). The result r is 0, NaN
        # or positive (a later change to it fails the version check), so r != 0 is that mask
        # in one pass, where ~(r <= 0) took two (a (32, 16, 28, 28) backward 213 -> 144 us).
        arrays = first_order_arrays(grad, r)
        if arrays is not None:
            g, y = arrays
            if type(g) is not np.ndarray and _device_kernels.usable(xp_of(grad), g, y):
                return make_tensor(_RELU_GRAD(xp_of(grad), g, y), grad._device)  # 1 launch, not 3
            return make_tensor(g * (y != 0), grad._device)
        return grad * (r != 0)


# NumPy's maximum takes its SIMD loop only when both operands walk memory with unit stride:
# against a scalar 0 (stride 0) it runs a scalar loop, 3x slower (2 MB of float32: 0.62 vs
# 0.19 ms). So relu's 0 is an array: a read-only block of zeros per thread, grown as needed
# and never written (when calloc maps it fresh, as for large sizes, its pages are the kernel's
# shared zero page: no memory, and reads that hit the cache). Small inputs keep the scalar:
# their cost is the call itself.
_ZEROS_FROM = 4096  # elements
_FAST_MAX = (np.dtype(np.float32), np.dtype(np.float64))
_zeros_local = ThreadLocal()


def _zeros_as(x):
    """A read-only zero array of x's shape, dtype and strides (x a NumPy float32/float64
    array; its strides, so that the result keeps x's layout: NumPy lays out the result of
    operands whose orders conflict in C order, and a channels_last relu must stay so), or None
    where x's strides reach outside its size (negative or gapped: the scalar loop takes it)."""
    n = x.size * x.itemsize
    buf = getattr(_zeros_local, "buf", None)
    if buf is None or buf.nbytes < n:
        buf = np.zeros(max(n, 1 << 20), np.uint8)
        buf.flags.writeable = False
        _zeros_local.buf = buf
    if x.flags.c_contiguous:
        return buf[:n].view(x.dtype).reshape(x.shape)
    if min(x.strides) < 0 or sum((k - 1) * s for k, s in zip(x.shape, x.strides)) + \
            x.itemsize > n:
        return None
    return np.ndarray(x.shape, x.dtype, buffer=buf, strides=x.strides)


def _relu(x):
    if x.dtype == np.bool_:
        return x
    if type(x) is np.ndarray and x.size >= _ZEROS_FROM and x.dtype in _FAST_MAX:
        zeros = _zeros_as(x)
        if zeros is not None:
            return np.maximum(x, zeros)
    return np.maximum(x, x.dtype.type(0))


def relu_into(xp, a):
    """relu of the float array `a` written into `a` itself (one pass; `_relu`'s zeros)."""
    zeros = _zeros_as(a) if type(a) is np.ndarray and a.size >= _ZEROS_FROM and \
        a.dtype in _FAST_MAX else None
    xp.maximum(a, a.dtype.type(0) if zeros is None else zeros, out=a)


def relu(input):
    if not isinstance(input, Tensor):
        raise not_a_tensor("relu", input)
    if input._array.dtype == np.bool_:
        raise RuntimeError("Boolean inputs not supported for relu")
    if input.dtype._kind:  # PyTorch's relu is a clamp_min(0)
        if input.dtype is _dt.complex32:
            raise NotImplementedError("clamp is not supported for complex types")
        raise NotImplementedError(f'"clamp_min_scalar_cpu" not implemented for '
                                  f"'{input.dtype._scalar_name}'")
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
        if not self._saved:  # real: flat, so zeros (not grad * 0, NaN for a NaN gradient)
            return grad.new_zeros(grad.shape)
        # complex z/|z|: (g - conj(g) sgn(z)^2) / (2|z|), and 0 at z = 0, as PyTorch
        from .selection import where  # selection imports this module
        (x,) = self.saved_tensors
        a = x.abs()
        s = sgn(x)
        res = (grad - grad.conj() * s * s) / (a * 2)
        return where(a == 0, 0.0, res)


class SignBackward0(SgnBackward0):
    """torch.sign's node (sgn's is SgnBackward0): both are flat, a zero gradient."""


@with_out("sgn")
def sgn(input):
    save = "input" if getattr(input, "is_complex", None) and input.is_complex() else None
    return unary(input, _sgn, SgnBackward0, save, None, "sgn", to_float=False)


def sign(input, *, out=None):
    if not isinstance(input, Tensor):
        raise not_a_tensor("sign", input)
    if input.dtype.is_complex:
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support complex numbers. "
                           "Please use torch.sgn instead.")
    return unary(input, _sgn, SignBackward0, None, out, "sign", to_float=False)


def _sgn(x):
    if x.dtype.kind == "c":
        a = np.abs(x)
        return np.where(a == 0, 0, x / np.where(a == 0, 1, a)).astype(x.dtype)
    if x.dtype == np.bool_:
        return x.copy()
    if type(x) is np.ndarray and x.dtype.kind == "f":
        return _float_sign(x)
    s = np.sign(x)
    if x.dtype.kind in "iu":
        return s
    # PyTorch's sign is (0 < x) - (x < 0): NaN gives 0, and -0 gives +0 (in every float dtype)
    return (np.where(s == s, s, 0) + 0).astype(x.dtype, copy=False)


def _float_sign(x):
    """PyTorch's sign of a NumPy float array, (0 < x) - (x < 0), as one subtraction of the two
    masks (3x faster than NumPy's sign with its NaN and -0 mended; the same bits)."""
    return np.subtract(x > 0, x < 0, dtype=x.dtype)
