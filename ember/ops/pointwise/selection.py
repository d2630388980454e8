"""Ops whose result takes, element by element, one of its operands or a bound: clamp (clip,
clamp_min, clamp_max), where, maximum and minimum, with their backward nodes.
"""
import numpy as np

from ... import _dtype_casts as _casts, dtypes as _dt
from ..._memory_format import in_iterator_order
from ..._select import select
from ..._tensor import Tensor, make_tensor, xp_of
from .._graph import Node, node_of, record, record_number
from .._writes import write_out, with_out
from ._common import (BinaryNode, _as_scalar, _promote, _raise_if_not_broadcastable, binary,
                      common_device, operands)

__all__ = ["clamp", "clip", "clamp_min", "clamp_max", "where", "maximum", "minimum"]


# ---- clamp, where, maximum, minimum -------------------------------------------------------
class ClampBackward1(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        mask = ones_mask = None
        if self.min is not None:
            mask = t >= self.min
        if self.max is not None:
            ones_mask = t <= self.max
            mask = ones_mask if mask is None else mask & ones_mask
        # a select, not a product: a NaN/inf incoming gradient stays out of clamped
        # elements, as in PyTorch
        return where(mask, grad, 0)


def scalar_clamp_dtype(input, *bounds):
    """The dtype of clamp's result for Python-number bounds."""
    d = input.dtype
    for bound in bounds:
        if bound is not None:
            d = _promote(d, input._array.ndim > 0, type(_as_scalar(bound, "clamp")), None)
    return d


def clamp(input, min=None, max=None, *, out=None):
    if input.dtype._kind:
        _refuse_clamp(input, "clamp_scalar_cpu" if not isinstance(min, Tensor) and
                      not isinstance(max, Tensor) else "clamp_cpu")
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if isinstance(min, Tensor) or isinstance(max, Tensor):
        return _clamp_tensor(input, min, max, out)
    arr = input._array
    d = scalar_clamp_dtype(input, min, max)
    if out is not None and out.dtype is not d:  # PyTorch's structured kernel: no cast to out
        raise RuntimeError(f"Found dtype {out.dtype._scalar_name} but expected {d._scalar_name}")
    if arr.dtype is not d.np:
        arr = arr.astype(d.np)
    if not (d.is_floating_point or d.is_complex or d is _dt.bool):
        min, max = _integer_bounds(d, min, max)
    xp = xp_of(input)
    res = xp.clip(arr, min, max) if min is None or max is None or min <= max else xp.full_like(arr, max)
    res = make_tensor(xp.asarray(res, dtype=d.np), input._device)  # NumPy's 0-d clip: a scalar
    node = record(ClampBackward1, (input,), res)
    if node is not None:
        node.min, node.max = min, max
        node.save_for_backward(input)
    if out is not None:  # after recording: write_out refuses a result that requires grad
        return write_out(out, res, "clamp")
    return res


class ClampBackward0(Node):
    """clamp with tensor bounds, PyTorch's formulas: the input keeps the gradient where
    min <= x <= max (a NaN bound or input keeps none); min takes it where x < min < max, and
    max where x > max or max < min (min > max makes every result max)."""

    def backward(self, grad):
        saved = self.saved_tensors
        x, bounds = saved[0], dict(zip(self.bound_names, saved[1:]))
        lo, hi = bounds.get("min"), bounds.get("max")
        keep = x >= lo if lo is not None else None
        if hi is not None:
            keep = x <= hi if keep is None else keep & (x <= hi)
        grads = [where(keep, grad, 0)]
        for name in self.bound_names:
            if name == "min":
                takes = x < lo if hi is None else (x < lo) & (lo < hi)
            else:
                takes = x > hi if lo is None else (x > hi) | (hi < lo)
            grads.append(where(takes, grad, 0))
        return tuple(grads)


def _integer_bounds(d, *bounds):
    """An integer tensor's number bounds converted to its dtype first, as PyTorch does: one
    that does not fit is an error (an int8 tensor clamped to 300), and a negative one wraps
    into an unsigned dtype (uint8's -1 is 255)."""
    from ..creation import _convert_scalar
    out = []
    for bound in bounds:
        if bound is not None and d is _dt.int64 and not -2 ** 63 <= bound < 2 ** 64:
            raise OverflowError("int too big to convert")
        out.append(None if bound is None else _convert_scalar(bound, d))
    return out


def _clamp_tensor(input, min, max, out):
    from ..._state import grad as _grad_state
    bounds = [(name, b if isinstance(b, Tensor) or b is None else make_tensor(
        xp_of(input).asarray(b), input._device)) for name, b in (("min", min), ("max", max))]
    bounds = [(name, b) for name, b in bounds if b is not None]
    enabled = _grad_state.enabled
    _grad_state.enabled = False  # one node for the whole clamp, recorded below
    try:
        res = input
        for name, b in bounds:  # NumPy's maximum/minimum carry a NaN bound through
            res = maximum(res, b) if name == "min" else minimum(res, b)
    finally:
        _grad_state.enabled = enabled
    node = record(ClampBackward0, (input,) + tuple(b for _, b in bounds), res)
    if node is not None:
        node.bound_names = tuple(name for name, _ in bounds)
        node.save_for_backward(input, *(b for _, b in bounds))
    if out is not None:
        return write_out(out, res, "clamp")
    return res


clip = clamp


class ClampMinBackward0(ClampBackward1):
    pass


class ClampMaxBackward0(ClampBackward1):
    pass


class ClampMinBackward1(BinaryNode):
    """clamp_min with a tensor bound: the gradient goes to whichever side was kept (a NaN
    input sends it to neither, as PyTorch's formula does)."""

    def backward(self, grad):
        t, bound = self.saved_tensors
        keep, other = (t >= bound, t < bound) if self.is_min else (t <= bound, t > bound)
        gt = grad * keep if self._next[0][0] is not None else None
        gb = grad * other if self._next[1][0] is not None else None
        return gt, gb


class ClampMaxBackward1(ClampMinBackward1):
    pass


def _one_sided_clamp(input, bound, is_min, scalar_cls, tensor_cls):
    if isinstance(bound, Tensor):
        fn = np.maximum if is_min else np.minimum
        res = binary(input, bound, fn, tensor_cls, tensor_cls.__name__)
        if type(node_of(res)) is tensor_cls:
            node_of(res).is_min = is_min
        return res
    res = clamp(input, min=bound) if is_min else clamp(input, max=bound)
    if type(node_of(res)) is ClampBackward1:
        node_of(res).__class__ = scalar_cls
    return res


def _refuse_clamp(input, kernel):
    if input.dtype is _dt.complex32:
        raise NotImplementedError("clamp is not supported for complex types")
    _casts.refuse(input.dtype, kernel)


@with_out("clamp_min")
def clamp_min(input, min):
    if input.dtype._kind:
        _refuse_clamp(input, "clamp_min_scalar_cpu")
    return _one_sided_clamp(input, min, True, ClampMinBackward0, ClampMinBackward1)


@with_out("clamp_max")
def clamp_max(input, max):
    return _one_sided_clamp(input, max, False, ClampMaxBackward0, ClampMaxBackward1)


class WhereBackward0(Node):
    """Edges for `input` and `other`; a Python-number one has the edge (None, 0)."""

    def backward(self, grad):
        (cond,) = self.saved_tensors
        ga = where(cond, grad, 0) if self._next[0][0] is not None else None
        gb = where(cond, 0, grad) if self._next[1][0] is not None else None
        return ga, gb


def _where(condition, input=None, other=None, *, out=None):
    if input is None and other is None:
        from ..indexing import nonzero
        return nonzero(condition, as_tuple=True)
    if condition._array.dtype != np.bool_:
        raise RuntimeError(f"where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {condition.dtype._scalar_name}")
    ta, tb = isinstance(input, Tensor), isinstance(other, Tensor)
    if ta or tb:
        x, y, d, dev = operands(input, other, "where")
    else:
        d = _dt.promote_operands([(_dt.scalar_dtype(input), None), (_dt.scalar_dtype(other), None)])
        x, y, dev = input, other, condition._device
    if condition._device != dev and condition._array.ndim != 0:
        common_device(condition, input if ta else other)
    try:
        if _casts.bits_of(d.np) is not None and hasattr(x, "dtype") and hasattr(y, "dtype") \
                and x.dtype == d.np == y.dtype:  # float8, bfloat16: on their bits
            res = _casts.on_bits(lambda a, b: np.where(condition._array, a, b), x, y)
        else:
            res = select(condition._array, x, y)
    except ValueError:
        _raise_if_not_broadcastable(condition._array, x, y)
        raise
    if res.dtype != d.np:
        res = res.astype(d.np)
    if not condition._array.flags.c_contiguous:  # (the condition is TensorIterator's first)
        res = in_iterator_order(res, (condition._array, x, y), dev)
    res = make_tensor(res, dev)
    if ta and tb:
        node = record(WhereBackward0, (input, other), res)
    elif ta or tb:
        node = record_number(WhereBackward0, input if ta else other, other if ta else input,
                             res, not ta)
    else:
        node = None
    if node is not None:
        node.save_for_backward(condition)
    if out is not None:  # after recording: write_out refuses a result that requires grad
        return write_out(out, res, "where")
    return res


class _Where:
    """`torch.where(condition, input, other)`; as a Tensor method the tensor is `input`:
    `x.where(condition, y)` (a descriptor, since METHODS binds this same object)."""

    __name__ = __qualname__ = "where"
    __doc__ = _where.__doc__

    def __call__(self, condition, input=None, other=None, *, out=None):
        return _where(condition, input, other, out=out)

    def __get__(self, obj, cls=None):
        if obj is None:
            return self

        def method(condition, other):
            return _where(condition, obj, other)
        method.__name__ = "where"
        return method


where = _Where()


class MaximumBackward0(BinaryNode):
    def backward(self, grad):
        # PyTorch's formula: a tie halves the gradient, and each side is zeroed only where
        # the other wins, so a NaN (which compares false) takes the whole gradient on both
        # sides; where() rather than a product, so an infinite gradient gives 0 where dropped
        a, b = self.saved_tensors
        half = where(a == b, grad * 0.5, grad)
        a_loses, b_loses = (a < b, a > b) if self.is_max else (a > b, a < b)
        return where(a_loses, 0.0, half), where(b_loses, 0.0, half)


def _complex_tensor(x):
    return isinstance(x, Tensor) and x.dtype.is_complex


def maximum(input, other, *, out=None):
    if _complex_tensor(input) or _complex_tensor(other):
        raise RuntimeError("maximum not implemented for complex tensors.")
    if isinstance(input, Tensor) and input.dtype._kind:
        _casts.refuse(input.dtype, "maximum_cpu")
    res = binary(input, other, np.maximum, MaximumBackward0, "maximum", out)
    if type(node_of(res)) is MaximumBackward0:
        node_of(res).is_max = True
    return res


def minimum(input, other, *, out=None):
    if _complex_tensor(input) or _complex_tensor(other):
        raise RuntimeError("minimum not implemented for complex tensors.")
    if isinstance(input, Tensor) and input.dtype._kind:
        _casts.refuse(input.dtype, "minimum_cpu")
    res = binary(input, other, np.minimum, MinimumBackward0, "minimum", out)
    if type(node_of(res)) is MinimumBackward0:
        node_of(res).is_max = False
    return res


class MinimumBackward0(MaximumBackward0):
    pass
