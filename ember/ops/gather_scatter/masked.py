"""The masked ops: masked_fill, masked_select and masked_scatter (a boolean mask broadcast
against the input), with their backward nodes and in-place forms.
"""
import builtins

import numpy as np

from ..._meta import refuse_on_meta
from ... import _dtype_casts as _casts, dtypes as _dt
from ..._memory_format import c_ordered
from ..._tensor import Tensor, make_tensor
from ...device import assert_on_device, checks_on_host
from .._graph import Node, record
from .._writes import inplace, warn_expanded, write_out
from ._common import _broadcast, _index_arr, _xp, _zeros

__all__ = [
    "masked_fill", "masked_select", "masked_scatter", "masked_fill_", "masked_scatter_",
]


# ---- masked ops ----------------------------------------------------------------------------------
class MaskedFillBackward0(Node):
    def backward(self, grad):
        return masked_fill(grad, self.mask, 0)


class MaskedFillBackward1(Node):
    def backward(self, grad):
        from ..pointwise import where
        g_self = masked_fill(grad, self.mask, 0) if self._next[0][0] is not None else None
        g_value = where(self.mask, grad, 0).sum() if self._next[1][0] is not None else None
        return g_self, g_value


def masked_fill(input, mask, value):
    if mask._array.dtype != np.bool_:
        raise RuntimeError("masked_fill_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype._cpp_name}")
    tensor_value = isinstance(value, Tensor)
    if tensor_value and value._array.ndim:
        raise RuntimeError("masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value._array.ndim} dimension(s).")
    if not tensor_value and not isinstance(value, (builtins.bool, builtins.int, builtins.float,
                                                   builtins.complex, np.generic)):
        name = type(value).__name__
        raise TypeError(f"masked_fill() received an invalid combination of arguments - got "
                        f"(Tensor, {name}), but expected one of:\n * (Tensor mask, Tensor value)\n"
                        f"      didn't match because some of the arguments have invalid types: "
                        f"(Tensor, !{name}!)\n * (Tensor mask, Number value)\n      didn't match "
                        f"because some of the arguments have invalid types: (Tensor, !{name}!)\n")
    _broadcast(mask._array.shape, input._array.shape)
    xp = _xp(input)
    arr = c_ordered(input._array)  # PyTorch's result is contiguous whatever the input's layout
    if input.dtype._kind:
        _casts.refuse(input.dtype, "masked_fill", (_dt.COMPLEX32,))
        value = value.item() if tensor_value else value
        tensor_value = False
        fill = _casts.astype(xp.asarray(value, np.complex64), _dt.complex32)
        where = _index_arr(mask, input)
        res = make_tensor(_casts.on_bits(lambda f, a: xp.where(where, f, a), fill, arr),
                          input._device)
        node = record(MaskedFillBackward0, (input,), res)
        if node is not None:
            node.mask = mask
        return res
    if tensor_value:
        fill = _index_arr(value, input)
    else:  # PyTorch's checked conversion: no dropped imaginary part, no wrapped integer
        from ..creation import _convert_scalar
        fill = _convert_scalar(value, input.dtype)
    res_arr = xp.where(_index_arr(mask, input), xp.asarray(fill).astype(arr.dtype), arr)
    res = make_tensor(res_arr.astype(arr.dtype, copy=False), input._device)
    if tensor_value:
        node = record(MaskedFillBackward1, (input, value), res)
    else:
        node = record(MaskedFillBackward0, (input,), res)
    if node is not None:
        node.mask = mask
    return res


def masked_fill_(self, mask, value):
    if mask._array.dtype == np.bool_:
        _broadcast(self._array.shape, mask._array.shape)
    warn_expanded(self, "masked_fill_", "tensor[mask] = scalar")
    return inplace(self, lambda s: masked_fill(s, mask, value), (value,), allow_overlap=True)


class MaskedSelectBackward0(Node):
    def backward(self, grad):
        shape = _broadcast(self._meta[0][0], self.mask._array.shape)
        return masked_scatter(_zeros(shape, grad), self.mask, grad)


def masked_select(input, mask, *, out=None):
    refuse_on_meta("aten::masked_select", input, mask)
    if input.dtype._kind:
        _casts.refuse(input.dtype, "masked_select", (_dt.FLOAT8, _dt.COMPLEX32))
    if mask._array.dtype != np.bool_:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = _broadcast(mask._array.shape, input._array.shape)
    xp = _xp(input)
    arr = xp.broadcast_to(input._array, shape)
    res = make_tensor(arr[xp.broadcast_to(_index_arr(mask, input), shape)], input._device)
    if out is not None:
        return write_out(out, res, "masked_select")
    node = record(MaskedSelectBackward0, (input,), res)
    if node is not None:
        node.mask = mask
    return res


class MaskedScatterBackward0(Node):
    def backward(self, grad):
        g_self = masked_fill(grad, self.mask, 0) if self._next[0][0] is not None else None
        g_src = None
        if self._next[1][0] is not None:
            from ..shape import cat
            shape = self._meta[1][0]
            n = 1
            for s in shape:
                n *= s
            sel = masked_select(grad, self.mask)
            pad = n - sel._array.size
            if pad > 0:
                sel = cat([sel, _zeros((pad,), grad)])
            elif pad < 0:  # too short a source (a device-side assert on cuda, now pending)
                sel = sel[:n]
            g_src = sel.reshape(shape)
        return g_self, g_src


def _check_scatter_mask(mask):
    if mask._array.dtype == np.uint8:
        import warnings
        warnings.warn("masked_scatter_ received a mask with dtype torch.uint8, this behavior is "
                      "now deprecated,please use a mask with dtype torch.bool instead.",
                      UserWarning, stacklevel=3)
    if mask._array.dtype != np.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype._scalar_name}")


def masked_scatter(input, mask, source):
    _check_scatter_mask(mask)
    if mask._array.dtype != np.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype._scalar_name}")
    if source.dtype is not input.dtype:
        raise RuntimeError("masked_scatter: expected self and source to have same dtypes but got"
                           f"{input.dtype._scalar_name} and {source.dtype._scalar_name}")
    shape = _broadcast(input._array.shape, mask._array.shape)
    xp = _xp(input)
    res_arr = xp.broadcast_to(input._array, shape).copy()
    m = xp.broadcast_to(_index_arr(mask, input), shape)
    if checks_on_host(input._device):
        n = builtins.int(m.sum())
        if n > source._array.size:
            raise RuntimeError("Number of elements of source < number of ones in mask")
        res_arr[m] = source._array.reshape(-1)[:n]
    else:
        res_arr = _scatter_in_order_on_device(xp, input._device, res_arr, m, source._array)
    res = make_tensor(res_arr, input._device)
    node = record(MaskedScatterBackward0, (input, source), res)
    if node is not None:
        node.mask = mask
    return res


def _scatter_in_order_on_device(xp, dev, out, m, src):
    """`out[m] = src[:m.sum()]` without reading the count on the host (as PyTorch's CUDA
    kernel: each True takes the source element its running count names; too short a source
    is a device-side assert)."""
    flat = m.reshape(-1)
    pos = xp.cumsum(flat.astype(np.int64)) - 1
    src = src.reshape(-1)
    if pos.size:
        assert_on_device(dev, pos[-1:] >= src.size, "Assertion `totalElements <= srcSize`")
    if not src.size:
        return out
    taken = xp.take(src, xp.clip(pos, 0, src.size - 1))
    return xp.where(flat, taken, out.reshape(-1)).reshape(out.shape)


def masked_scatter_(self, mask, source):
    _check_scatter_mask(mask)
    if mask._array.dtype != np.bool_:
        raise RuntimeError("masked_scatter_ only supports boolean masks, but got mask with dtype "
                           f"{mask.dtype._scalar_name}")
    shape, mshape = self._array.shape, mask._array.shape
    if len(mshape) > len(shape) or _broadcast(shape, mshape) != tuple(shape):
        raise RuntimeError(f"expand(CPUBoolType{{{list(mshape)}}}, size={list(shape)}): the number "
                           f"of sizes provided ({len(shape)}) must be greater or equal to the "
                           f"number of dimensions in the tensor ({len(mshape)})")
    return inplace(self, lambda s: masked_scatter(s, mask, source), (source,))
