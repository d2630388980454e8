"""Autocast's casts, called by the ops autocast covers, only when `_state.autocast.active`
is set (one attribute read on their hot path).

As PyTorch's CPU autocast: the ops of its lower-precision list (matmul, mm, bmm, addmm,
baddbmm, addbmm, linear, conv*, prelu, scaled_dot_product_attention, vecdot) cast their
floating inputs to the autocast dtype; the ops of its float32 list (the losses, prod, cdist)
cast lower-precision inputs up to float32. float64 tensors are never cast, and a cast is a
differentiable `to`, so gradients reach float32 parameters in float32.
"""
from .._state import autocast as _autocast
from .._tensor import Tensor


def _target(t, policy):
    if not isinstance(t, Tensor) or not t.dtype.is_floating_point or t.dtype.itemsize == 8:
        return None
    kind = t._device.type
    thread = _autocast.thread
    dtype = thread.dtypes.get(kind)
    if dtype is None:
        return None
    want = dtype if policy == "lower" else _float32()
    return None if t.dtype is want else want


def _float32():
    from ..dtypes import float32
    return float32


def _cast(policy, tensors):
    out = []
    for t in tensors:
        d = _target(t, policy)
        out.append(t if d is None else t.to(d))
    return out


def lower(*tensors):
    """The tensors in the autocast dtype of their device (the lower-precision policy)."""
    return _cast("lower", tensors)


def fp32(*tensors):
    """The tensors in float32 (the float32 policy of autocast)."""
    return _cast("fp32", tensors)
