"""Fake quantization (quantization-aware training): values rounded to a quantized grid and
back, `(clamp(round(x / scale) + zero_point, quant_min, quant_max) - zero_point) * scale`, in
the input's floating dtype. As in PyTorch's kernels, x is multiplied by the float32 reciprocal
of the scale, rounded half to even (a floating zero point added first), and clamped
NaN-ignoring (fmax/fmin); the gradient is the straight-through estimator, `grad` where the
rounded value fell inside [quant_min, quant_max] and 0 elsewhere (the node keeps that mask)."""
import numpy as np

from .. import dtypes as _dt
from .._tensor import Tensor, _wrap_dim, make_tensor, xp_of
from ._graph import Node, record

__all__ = ["fake_quantize_per_tensor_affine", "fake_quantize_per_channel_affine"]
METHODS = []


class _MaskBackward(Node):
    def backward(self, grad):
        return grad * self.mask


class FakeQuantizePerTensorAffineCachemaskBackward0(_MaskBackward):
    pass


class FakeQuantizePerTensorAffineCachemaskTensorQparamsBackward0(_MaskBackward):
    pass


class FakeQuantizePerChannelAffineCachemaskBackward0(_MaskBackward):
    pass


def _check_range(quant_min, quant_max, zero_points):
    if quant_min > quant_max:
        raise RuntimeError("`quant_min` should be less than or         equal to `quant_max`.")
    if ((zero_points < quant_min) | (zero_points > quant_max)).any():
        raise RuntimeError("`zero_point` must be between `quant_min` and `quant_max`.")


def _fake_quantize(input, scale, zero_point, quant_min, quant_max, node):
    """`input` fake-quantized with `scale` and `zero_point` (arrays broadcasting against it),
    recorded as `node`."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError('"fake_quantize_tensor_cachemask_kernel_type_handling" not '
                                  f"implemented for '{input.dtype._scalar_name}'")
    xp, a = xp_of(input), input._array
    work = np.dtype(np.float32) if a.dtype.itemsize < 4 else a.dtype  # half in float32
    inverse = (np.float32(1.0) / scale.astype(np.float32)).astype(work)
    floating = zero_point.dtype.kind == "f"  # a fractional zero point is added before rounding
    zero_point = zero_point.astype(work)
    q = a.astype(work) * inverse
    if floating:
        q += zero_point
    q = xp.rint(q, out=q)  # half to even, as nearbyint
    if not floating:
        q += zero_point
    inside = (q >= quant_min) & (q <= quant_max)
    q = xp.fmin(xp.fmax(q, work.type(quant_min)), work.type(quant_max))
    out = ((q - zero_point) * scale.astype(work)).astype(a.dtype)
    res = make_tensor(out, input._device)
    recorded = record(node, (input,), res)
    if recorded is not None:
        recorded.mask = make_tensor(inside, input._device)
    return res


def fake_quantize_per_tensor_affine(input, scale, zero_point, quant_min, quant_max):
    """One scale and zero point for the whole tensor: numbers, or 0-dim (1-element)
    tensors (a node of its own name in PyTorch's graph)."""
    tensors = isinstance(scale, Tensor)
    xp = xp_of(input)
    if tensors:
        scale_a, zero_a = scale._array.reshape(()), zero_point._array.reshape(())
        _check_range(quant_min, quant_max, zero_a)
    else:
        _check_range(quant_min, quant_max, np.asarray(int(zero_point)))
        scale_a, zero_a = xp.asarray(float(scale)), xp.asarray(int(zero_point))
    node = FakeQuantizePerTensorAffineCachemaskTensorQparamsBackward0 if tensors else \
        FakeQuantizePerTensorAffineCachemaskBackward0
    return _fake_quantize(input, scale_a, zero_a, quant_min, quant_max, node)


def fake_quantize_per_channel_affine(input, scale, zero_point, axis, quant_min, quant_max):
    """A scale and zero point per slice along `axis` (1-d tensors of that dim's size); the
    zero points int32, float32 or float16, as PyTorch takes them."""
    if zero_point.dtype not in (_dt.int32, _dt.float32, _dt.float16):
        raise RuntimeError(f"Zero-point must be Int32, Float or Half, found "
                           f"{zero_point.dtype._scalar_name}")
    if axis < 0:
        raise RuntimeError("`axis` must be between 0 and number of dimensions of input")
    d = _wrap_dim(axis, input.dim())
    n = input.shape[d]
    if scale.dim() != 1 or zero_point.dim() != 1 or scale.numel() != n or \
            zero_point.numel() != n:
        raise RuntimeError("dimensions of scale and zero-point are not consistent with input "
                           "tensor")
    _check_range(quant_min, quant_max, zero_point._array)
    shape = [1] * input.dim()
    shape[d] = n
    return _fake_quantize(input, scale._array.reshape(shape), zero_point._array.reshape(shape),
                          quant_min, quant_max, FakeQuantizePerChannelAffineCachemaskBackward0)
