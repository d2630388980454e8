"""Argument parsing and PyTorch's errors for the pooling ops: kernel, stride, padding and
dilation tuples, the input's rank, the output size.
"""
import builtins

import numpy as np

from ..._tensor import Tensor
from ._common import _pool_out

# ---- argument parsing and checks -----------------------------------------------------------
_WORDS = {1: "one", 2: "two", 3: "three"}


def _ints(value, nd, fname, what, allow_empty=False):
    if isinstance(value, (builtins.int, np.integer)) and not isinstance(value, builtins.bool):
        return (builtins.int(value),) * nd
    if isinstance(value, Tensor):
        value = value.tolist()
    vals = tuple(builtins.int(v) for v in value)
    if allow_empty and not vals:
        return None
    if len(vals) == 1:
        return vals * nd
    if len(vals) != nd:
        if fname == "max_pool1d":
            raise RuntimeError(f"max_pool1d() {what} must be an int, list of ints or tuple of "
                               f"ints of size 1 but got size {len(vals)}")
        if fname == "avg_pool1d":
            raise RuntimeError(f"avg_pool1d() argument '{what}' should contain one int "
                               f"(got {len(vals)})")
        if fname == "avg_pool3d" and what == "kernel_size":
            raise RuntimeError("avg_pool3d: kernel_size must be a single int, or a tuple of "
                               "three ints")
        if what in ("kernel_size", "stride", "padding", "dilation"):
            tail = {"kernel_size": "must either be a single int, or a tuple of",
                    "stride": "must either be omitted, a single int, or a tuple of",
                    "padding": "must either be a single int, or a tuple of",
                    "dilation": "must be either a single int, or a tuple of"}[what]
            raise RuntimeError(f"{fname}: {what} {tail} {_WORDS[nd]} ints")
        raise RuntimeError(f"{fname}: {what} must be {nd}")
    return vals


def _batch_check(input, nd, fname, kind):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    ok = input.ndim in (nd + 1, nd + 2)
    if fname == "max_pool1d":
        if not ok or 0 in input.shape[input.ndim - 2:]:
            raise RuntimeError("max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                               f"dim batch size for input, but got:{list(input.shape)}")
        return
    if fname == "avg_pool1d" and not ok:
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           "for argument #1 'self' (while checking arguments for avg_pool1d)")
    if not ok:
        if kind == "avg" and nd == 2:
            if input.ndim < 3:  # PyTorch reads the size of dim -3 before it checks the rank
                lo, hi = -builtins.max(input.ndim, 1), builtins.max(input.ndim, 1) - 1
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{lo}, {hi}], but got -3)")
            raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                               f"size for input, but got:{list(input.shape)}")
        raise RuntimeError(f"non-empty {nd + 1}D or {nd + 2}D (batch mode) tensor expected for "
                           "input")
    if 0 in input.shape[input.ndim - nd - 1:]:
        if nd == 3:
            raise RuntimeError(f"{fname}{'_with_indices_out_cpu_template' if kind == 'max' else ''}"
                               f"(): Expected input's non-batch dimensions to have positive "
                               f"length, but input has a shape of {list(input.shape)} and "
                               "non-batch dimension 0 has length zero!")
        raise RuntimeError(f"Expected {nd + 1}D or {nd + 2}D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")


def _pool_params(input, nd, fname, kind, kernel_size, stride, padding, dilation, ceil_mode):
    kernel = _ints(kernel_size, nd, fname, "kernel_size")
    stride = kernel if stride is None else (_ints(stride, nd, fname, "stride", True) or kernel)
    padding = _ints(padding, nd, fname, "padding")
    dilation = _ints(dilation, nd, fname, "dilation")
    if fname == "max_pool1d":
        for what, v in (("kernel_size", kernel), ("stride", stride), ("dilation", dilation)):
            if v[-1] <= 0:
                raise RuntimeError(f"max_pool1d() {what} must be greater than zero, but got "
                                   f"{v[-1]}")
        if padding[-1] < 0:
            raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {padding[-1]}")
        if padding[-1] > kernel[-1] // 2:
            raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but "
                               f"got padding={padding[-1]} and kernel_size={kernel[-1]}")
    if any(s == 0 for s in stride) or any(k == 0 for k in kernel):
        raise RuntimeError("stride should not be zero")
    if any(k < 0 for k in kernel):
        raise RuntimeError(f"kernel size should be greater than zero, but got "
                           + " ".join(f"k{c}: {k}" for c, k in zip("TDHW"[-nd:], kernel)))
    if any(d <= 0 for d in dilation):
        names = ("T", "H", "W")[3 - nd:]
        raise RuntimeError("dilation should be greater than zero, but got " +
                           " ".join(f"dilation{c}: {d}" for c, d in zip(names, dilation)))
    for p, k, d in zip(padding, kernel, dilation):
        if p < 0 or p > (k if kind == "avg" else (k - 1) * d + 1) // 2:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={p}, kernel_size={k} and dilation={d}")
    size = tuple(input.shape[input.ndim - nd:])
    osz = tuple(_pool_out(s, k, p, t, d, ceil_mode)
                for s, k, p, t, d in zip(size, kernel, padding, stride, dilation))
    if any(o <= 0 for o in osz):
        if fname == "max_pool1d":
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {osz[-1]}")
        if fname == "avg_pool3d":
            raise RuntimeError(f"input image (T: {size[0]} H: {size[1]} W: {size[2]}) smaller "
                               f"than kernel size (kT: {kernel[0]} kH: {kernel[1]} kW: "
                               f"{kernel[2]})")
        c = input.shape[input.ndim - nd - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(str(v) for v in (c,) + size)}). "
                           f"Calculated output size: ({'x'.join(str(v) for v in (c,) + osz)}). "
                           "Output size is too small")
    return kernel, stride, padding, dilation, size, osz


def _one(v):
    if isinstance(v, (builtins.int, np.integer)):
        return builtins.int(v)
    return builtins.int(tuple(v)[0])
