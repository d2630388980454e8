"""Three-operand pointwise ops: lerp, addcmul and addcdiv, with their backward nodes, the
broadcast and device checks they share (PyTorch's messages), then their in-place forms.
"""
import builtins

import numpy as np

from ... import dtypes as _dt
from ..._tensor import Tensor, make_tensor
from ...device import is_writeable
from .._graph import Node, record
from .._writes import before_write, tracks, write_out, write_watchers
from .. import pointwise as _pw
from ..pointwise import broadcast_shapes_or_none
from ._common import _HALF, _inplace, _module, _need_tensor, _not_implemented, _promoted

__all__ = [
    "lerp", "addcmul", "addcdiv", "lerp_", "addcmul_", "addcdiv_",
]


# ==== lerp, addcmul, addcdiv =========================================================================
def _broadcast_shape(*tensors):
    """The broadcast shape of the tensors, with PyTorch's error naming the first clash."""
    shape = ()
    for t in tensors:
        s = t._array.shape
        if len(s) > len(shape):
            shape = (1,) * (len(s) - len(shape)) + tuple(shape)
        s = (1,) * (len(shape) - len(s)) + tuple(s)
        new = []
        for i, (a, b) in enumerate(zip(shape, s)):
            if a != b and a != 1 and b != 1:
                raise RuntimeError(f"The size of tensor a ({a}) must match the size of tensor b "
                                   f"({b}) at non-singleton dimension {i}")
            new.append(b if a == 1 else a)
        shape = tuple(new)
    return shape


def _device_arrays(tensors, np_dtype):
    """The tensors' arrays as `np_dtype` on their common device (0-dim CPU tensors may join
    tensors on another device, as in PyTorch), and that device."""
    dev = tensors[0]._device
    for t in tensors[1:]:
        if dev.type == "cpu" and t._device.type != "cpu":
            dev = t._device
    arrays = []
    for t in tensors:
        a = t._array.astype(np_dtype, copy=False)
        if t._device != dev:
            if t._device.type != "cpu" or a.ndim != 0:
                raise RuntimeError("Expected all tensors to be on the same device, but found "
                                   f"at least two devices, {dev} and {t._device}!")
            a = _pw._on(a, dev, t._device)
        arrays.append(a)
    return arrays, dev


def _check_scalar_fits(value, d):
    if isinstance(value, builtins.complex) and not d.is_complex:
        raise RuntimeError(f"value cannot be converted to type {d._cpp_name} without "
                           "overflow")


class LerpBackward0(Node):
    """Scalar weight."""

    def backward(self, grad):
        w = self.weight
        ga = grad * (1 - w) if self._next[0][0] is not None else None
        gb = grad * w if self._next[1][0] is not None else None
        return ga, gb


class LerpBackward1(Node):
    """Tensor weight."""

    def backward(self, grad):
        a, b, w = self.saved_tensors
        ga = grad * (1 - w).conj() if self._next[0][0] is not None else None
        gb = grad * w.conj() if self._next[1][0] is not None else None
        gw = grad * (b - a).conj() if self._next[2][0] is not None else None
        return ga, gb, gw


def _lerp_arrays(xp, a, b, w):
    diff = b - a
    if not hasattr(w, "shape"):  # a number: only its branch is computed
        return a + w * diff if builtins.abs(w) < 0.5 else b - diff * (1 - w)
    small = xp.abs(w) < 0.5
    return xp.where(small, a + w * diff, b - diff * (1 - w))


def lerp(input, end, weight, *, out=None):
    _need_tensor("lerp", input)
    _need_tensor("lerp", end, "end", 2)
    d = input.dtype
    if d._kind:
        raise _not_implemented("lerp_kernel_scalar" if not isinstance(weight, Tensor)
                               else "lerp_kernel_tensor", d)
    if end.dtype is not d:
        raise RuntimeError(f"expected dtype {d._cpp_name} for `end` but got dtype "
                           f"{end.dtype._cpp_name}")
    w_tensor = isinstance(weight, Tensor)
    if w_tensor and weight.dtype is not d and weight._array.ndim > 0:
        raise RuntimeError(f"expected dtype {d._cpp_name} for `weight` but got dtype "
                           f"{weight.dtype._cpp_name}")
    if not (d.is_floating_point or d.is_complex):
        raise _not_implemented("lerp_kernel_tensor" if w_tensor else "lerp_kernel_scalar", d)
    if not w_tensor:
        _check_scalar_fits(_pw._as_scalar(weight, "lerp"), d)
    tensors = (input, end, weight) if w_tensor else (input, end)
    _broadcast_shape(*tensors)
    work = np.float32 if d.np in _HALF else d.np
    arrays, dev = _device_arrays(tensors, work)
    a, b = arrays[0], arrays[1]
    w = arrays[2] if w_tensor else weight
    xp = _module(a)
    res = make_tensor(xp.asarray(_lerp_arrays(xp, a, b, w)).astype(d.np, copy=False), dev)
    if out is not None:
        return write_out(out, res, "lerp")
    node = record(LerpBackward1 if w_tensor else LerpBackward0, tensors, res)
    if node is not None:
        if w_tensor:
            node.save_for_backward(input, end, weight)
        else:
            node.weight = weight
    return res


def _ternary_operands(fname, input, tensor1, tensor2, value):
    _need_tensor(fname, input)
    _need_tensor(fname, tensor1, "tensor1", 2)
    _need_tensor(fname, tensor2, "tensor2", 3)
    d = _promoted(input, tensor1, tensor2)
    _check_scalar_fits(value, d)
    _broadcast_shape(input, tensor1, tensor2)
    arrays, dev = _device_arrays((input, tensor1, tensor2),
                                 np.float32 if d.np in _HALF else d.np)
    if not (d.is_floating_point or d.is_complex):
        value = builtins.int(value)
    return d, dev, arrays, value


class AddcmulBackward0(Node):
    def backward(self, grad):
        t1, t2 = self.saved_tensors
        v = self.value
        g1 = grad * (t2 * v).conj() if self._next[1][0] is not None else None
        g2 = grad * (t1 * v).conj() if self._next[2][0] is not None else None
        return grad, g1, g2


def addcmul(input, tensor1, tensor2, *, value=1, out=None):
    d, dev, (a, b, c), v = _ternary_operands("addcmul", input, tensor1, tensor2, value)
    if d is _dt.bool:
        raise _not_implemented("addcmul_cpu_out", d)
    res = make_tensor(_module(a).asarray(a + v * b * c).astype(d.np, copy=False), dev)
    if out is not None:
        return write_out(out, res, "addcmul")
    node = record(AddcmulBackward0, (input, tensor1, tensor2), res)
    if node is not None:
        node.value = value
        node.save_for_backward(tensor1, tensor2)
    return res


_ADDCDIV_INT = (
    "Integer division with addcdiv is no longer supported, and in a future  release addcdiv "
    "will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be "
    "implemented as (input + value * torch.trunc(tensor1 / tensor2)).to(input.dtype) for "
    "integer inputs and as (input + value * tensor1 / tensor2) for float inputs. The future "
    "addcdiv behavior is just the latter implementation: (input + value * tensor1 / tensor2), "
    "for all dtypes.")


class AddcdivBackward0(Node):
    def backward(self, grad):
        t1, t2 = self.saved_tensors
        v = self.value
        g1 = grad * (v / t2).conj() if self._next[1][0] is not None else None
        g2 = (-grad * (v * t1 / (t2 * t2)).conj()) if self._next[2][0] is not None else None
        return grad, g1, g2


def addcdiv(input, tensor1, tensor2, *, value=1, out=None):
    for t in (tensor1, tensor2):
        if isinstance(t, Tensor) and not (t.dtype.is_floating_point or t.dtype.is_complex):
            continue
        break
    else:
        if isinstance(tensor1, Tensor) and isinstance(tensor2, Tensor):
            raise RuntimeError(_ADDCDIV_INT)
    d, dev, (a, b, c), v = _ternary_operands("addcdiv", input, tensor1, tensor2, value)
    res = make_tensor(_module(a).asarray(a + v * b / c).astype(d.np, copy=False), dev)
    if out is not None:
        return write_out(out, res, "addcdiv")
    node = record(AddcdivBackward0, (input, tensor1, tensor2), res)
    if node is not None:
        node.value = value
        node.save_for_backward(tensor1, tensor2)
    return res


# ==== in-place forms ==============================================================================
# Optimisers (Adam's moments and update) call these on every parameter at every step: when
# autograd does not record the call they update self's memory directly, with the rounding of
# the out-of-place kernels above, instead of computing a new array and copying it back.
_DIRECT = (np.dtype(np.float32), np.dtype(np.float64))
_general_lerp_ = _inplace(lerp)


def _direct_target(self, tensors, value):
    """self's array when the op may update it in place: not recorded by autograd, a number
    `value`, every operand a float32/float64 tensor of self's dtype and device broadcasting to
    self's shape, self writable and not expanded. None: the general path (and its errors)."""
    arr = self._array
    if type(value) not in (builtins.int, builtins.float) or arr.dtype not in _DIRECT \
            or not is_writeable(arr) or 0 in arr.strides or tracks(self, tensors):
        return None
    for t in tensors:
        if not isinstance(t, Tensor) or t.is_sparse or t._array.dtype != arr.dtype \
                or t._device != self._device \
                or broadcast_shapes_or_none(arr.shape, t._array.shape) != arr.shape:
            return None
    return arr


def lerp_(self, end, weight):
    a = _direct_target(self, (end,), weight)
    if a is None:
        return _general_lerp_(self, end, weight)
    if write_watchers:
        before_write(self)
    diff = end._array - a
    if builtins.abs(weight) < 0.5:
        diff *= weight
        a += diff
    else:
        diff *= 1 - weight
        _module(a).subtract(end._array, diff, out=a)
    self._vc.value += 1
    return self


def _ternary_inplace(op, term):
    """addcmul_/addcdiv_: self += term(value, tensor1, tensor2) directly when allowed."""
    general = _inplace(op)

    def method(self, tensor1, tensor2, *, value=1):
        a = _direct_target(self, (tensor1, tensor2), value)
        if a is None:
            return general(self, tensor1, tensor2, value=value)
        if write_watchers:
            before_write(self)
        a += term(value, tensor1._array, tensor2._array)
        self._vc.value += 1
        return self
    method.__name__ = op.__name__ + "_"
    return method


addcmul_ = _ternary_inplace(addcmul, lambda v, b, c: v * b * c)
addcdiv_ = _ternary_inplace(addcdiv, lambda v, b, c: v * b / c)
