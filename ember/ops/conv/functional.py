"""conv1d/2d/3d, conv_transpose1d/2d/3d and `convolution`: argument checks with PyTorch's
errors, then the graph ops."""
import builtins

import numpy as np

from ..._tensor import Tensor
from ..._state import autocast as _autocast, warn_once
from .._autocast import lower
from ._graph_ops import _conv, _conv_transpose, laid_out


# ---- argument checking -----------------------------------------------------------------------
def _int_tuple(value, n, what, fname):
    if isinstance(value, (builtins.int, np.integer)) and not isinstance(value, builtins.bool):
        return (builtins.int(value),) * n
    if isinstance(value, Tensor):
        value = value.tolist()
    try:
        vals = tuple(value)
    except TypeError:
        raise TypeError(f"{fname}(): argument '{what}' must be tuple of ints, not "
                        f"{type(value).__name__}") from None
    for v in vals:
        if not isinstance(v, (builtins.int, np.integer)) or isinstance(v, builtins.bool):
            raise TypeError(f"{fname}(): argument '{what}' must be tuple of ints, but found "
                            f"element of type {type(v).__name__} at pos 0")
    vals = tuple(builtins.int(v) for v in vals)
    if len(vals) == 1 and n > 1:
        vals = vals * n
    if len(vals) != n:
        raise RuntimeError(f"expected {what} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got "
                           f"{what}={list(vals)}")
    return vals



def _sizes(shape):
    return " x ".join(str(s) for s in shape)


def _check_tensor(t, what, fname, pos):
    if not isinstance(t, Tensor):
        raise TypeError(f"{fname}(): argument '{what}' (position {pos}) must be Tensor, not "
                        f"{type(t).__name__}")


def _prepare(input, weight, bias, nd, fname, transposed):
    """Shared checks; returns (batched input, unbatched?)."""
    _check_tensor(input, "input", fname, 1)
    _check_tensor(weight, "weight", fname, 2)
    if input.ndim not in (nd + 1, nd + 2):
        raise RuntimeError(f"Expected {nd + 1}D (unbatched) or {nd + 2}D (batched) input to "
                           f"{fname}, but got input of size: {list(input.shape)}")
    unbatched = input.ndim == nd + 1
    if unbatched:
        input = input.unsqueeze(0)
    if bias is not None:  # the bias's dtype first, as PyTorch checks them
        _check_tensor(bias, "bias", fname, 3)
        if bias.dtype is not input.dtype:
            raise RuntimeError(f"Input type ({input.dtype._cpp_name}) and bias type "
                               f"({bias.dtype._cpp_name}) should be the same")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype._scalar_name} but found "
                           f"{weight.dtype._scalar_name}")
    if input.dtype.name == "bool":
        raise NotImplementedError(f"\"slow_conv{nd}d_cpu\" not implemented for 'Bool'")
    if input._device != weight._device:
        raise RuntimeError(f"Input type ({input.device}) and weight type ({weight.device}) "
                           "should be the same")
    return input, unbatched


def _dilation_words(dilation, transposed):
    """How PyTorch prints a bad dilation: 1-d convolutions run as 2-d ones with a leading 1;
    the transposed kernels name each axis."""
    if len(dilation) == 1:
        dilation = [1] + dilation
    if not transposed:
        return str(dilation)
    names = ["depth", "height", "width"][-len(dilation):]
    return ", ".join(f"dilation_{n}: {d}" for n, d in zip(names, dilation))


def _check_params(input, weight, bias, stride, dilation, groups, transposed):
    if any(s <= 0 for s in stride):
        raise RuntimeError("non-positive stride is not supported")
    if any(d <= 0 for d in dilation):
        raise RuntimeError(f"dilation should be greater than zero, but got "
                           f"{_dilation_words(list(dilation), transposed)}")
    if groups <= 0:
        raise RuntimeError("non-positive groups is not supported")
    shape_w = list(weight.shape)
    if weight.ndim != input.ndim:
        raise RuntimeError(f"Expected {weight.ndim}-dimensional input for {weight.ndim}-dimensional "
                           f"weight {shape_w}, but got {input.ndim}-dimensional input of size "
                           f"{list(input.shape)} instead")
    if not transposed and shape_w[0] < groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be at least {groups} at "
                           f"dimension 0, but got weight of size {shape_w} instead")
    if shape_w[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by {groups} "
                           f"at dimension 0, but got weight of size [{shape_w}] instead")
    c = input.shape[1]
    if not transposed:
        if c != shape_w[1] * groups:
            raise RuntimeError(f"Given groups={groups}, weight of size {shape_w}, expected "
                               f"input{list(input.shape)} to have {shape_w[1] * groups} channels, "
                               f"but got {c} channels instead")
        n_out = shape_w[0]
    else:
        if c != shape_w[0]:
            raise RuntimeError(f"Given transposed=1, weight of size {shape_w}, expected "
                               f"input{list(input.shape)} to have {shape_w[0]} channels, but got "
                               f"{c} channels instead")
        n_out = shape_w[1] * groups
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != n_out):
        pre = "Given transposed=1, weight" if transposed else "Given weight"
        raise RuntimeError(f"{pre} of size {shape_w}, expected bias to be 1-dimensional with "
                           f"{n_out} elements, but got bias of size {list(bias.shape)} instead")


def _conv_nd(nd, fname, input, weight, bias, stride, padding, dilation, groups):
    if _autocast.active:
        input, weight, bias = lower(input, weight, bias)
    input, unbatched = _prepare(input, weight, bias, nd, fname, False)
    if weight.ndim != nd + 2:
        nd = max(weight.ndim - 2, 1)
    stride = _int_tuple(stride, nd, "stride", fname)
    dilation = _int_tuple(dilation, nd, "dilation", fname)
    groups = builtins.int(groups)
    kernel = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            lo = hi = (0,) * nd
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise RuntimeError("padding='same' is not supported for strided convolutions")
            total = [d * (k - 1) for d, k in zip(dilation, kernel)]
            lo = tuple(t // 2 for t in total)
            hi = tuple(t - t // 2 for t in total)
            if lo != hi:
                warn_once("Using padding='same' with even kernel lengths and odd dilation may "
                          "require a zero-padded copy of the input be created")
        else:
            raise RuntimeError(f"Invalid padding string: '{padding}'")
    else:
        lo = hi = _int_tuple(padding, nd, "padding", fname)
        if any(p < 0 for p in lo):
            raise RuntimeError("negative padding is not supported")
    _check_params(input, weight, bias, stride, dilation, groups, False)
    padded = tuple(s + l + h for s, l, h in zip(input.shape[2:], lo, hi))
    eff = tuple(d * (k - 1) + 1 for d, k in zip(dilation, kernel))
    if any(e > s for e, s in zip(eff, padded)):
        raise RuntimeError(f"Calculated padded input size per channel: ({_sizes(padded)}). "
                           f"Kernel size: ({_sizes(eff)}). Kernel size can't be greater than "
                           "actual input size")
    out = laid_out(_conv(input, weight, bias, (stride, lo, hi, dilation, groups)), input, weight)
    return out.squeeze(0) if unbatched else out


def _conv_transpose_nd(nd, fname, input, weight, bias, stride, padding, output_padding, groups,
                       dilation):
    if _autocast.active:
        input, weight, bias = lower(input, weight, bias)
    input, unbatched = _prepare(input, weight, bias, nd, fname, True)
    if weight.ndim != nd + 2:
        nd = max(weight.ndim - 2, 1)
    if isinstance(padding, str):
        raise TypeError(f"{fname}(): argument 'padding' must be tuple of ints, not str")
    stride = _int_tuple(stride, nd, "stride", fname)
    padding = _int_tuple(padding, nd, "padding", fname)
    output_padding = _int_tuple(output_padding, nd, "output_padding", fname)
    dilation = _int_tuple(dilation, nd, "dilation", fname)
    groups = builtins.int(groups)
    if any(p < 0 for p in padding):
        raise RuntimeError("negative padding is not supported")
    _check_params(input, weight, bias, stride, dilation, groups, True)
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        if nd == 1:  # PyTorch checks 1-d as 2-d of height 1
            output_padding, stride, dilation = ((0,) + output_padding, (1,) + stride,
                                                (1,) + dilation)
        names = ("depth", "height", "width")[3 - len(stride):]
        parts = [f"output_padding_{n}: {v}" for n, v in zip(names, output_padding)]
        parts += [f"stride_{n}: {v}" for n, v in zip(names, stride)]
        parts += [f"dilation_{n}: {v}" for n, v in zip(names, dilation)]
        raise RuntimeError("output padding must be smaller than either stride or dilation, but "
                           "got " + " ".join(parts))
    kernel = tuple(weight.shape[2:])
    size = tuple((i - 1) * s - 2 * p + d * (k - 1) + op + 1 for i, s, p, d, k, op in
                 zip(input.shape[2:], stride, padding, dilation, kernel, output_padding))
    if any(s <= 0 for s in size):
        one = (1,) if nd == 1 else ()  # PyTorch computes 1-d as 2-d of height 1
        raise RuntimeError(f"Given input size per channel: ({_sizes(one + input.shape[2:])}). "
                           f"Calculated output size per channel: ({_sizes(one + size)}). Output "
                           "size is too small")
    out = laid_out(
        _conv_transpose(input, weight, bias, (stride, padding, padding, dilation, groups), size),
        input, weight)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd(1, "conv1d", input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd(2, "conv2d", input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd(3, "conv3d", input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose_nd(1, "conv_transpose1d", input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose_nd(2, "conv_transpose2d", input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0, groups=1,
                     dilation=1):
    return _conv_transpose_nd(3, "conv_transpose3d", input, weight, bias, stride, padding,
                              output_padding, groups, dilation)


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """`torch.convolution`: batched input, any number of spatial dims."""
    nd = weight.ndim - 2
    if transposed:
        return _conv_transpose_nd(nd, "convolution", input, weight, bias, stride, padding,
                                  output_padding, groups, dilation)
    return _conv_nd(nd, "convolution", input, weight, bias, stride, padding, dilation, groups)
