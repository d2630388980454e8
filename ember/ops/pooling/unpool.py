"""Max unpooling (max_unpool1d/2d/3d): values put back at max pooling's flat indices, with
PyTorch's output-size and index checks.
"""
import builtins
import math

from ..._memory_format import follow_channels_last
from ...device import assert_on_device, checks_on_host
from ._checks import _ints, _one
from ._common import _UNPOOL, _scatter

# ---- unpooling ---------------------------------------------------------------------------
def _max_unpool(input, indices, nd, fname, kernel_size, stride, padding, output_size):
    kernel = _ints(kernel_size, nd, fname, "kernel_size")
    stride = kernel if stride is None else _ints(stride, nd, fname, "stride")
    padding = _ints(padding, nd, fname, "padding")
    size_in = tuple(input.shape[input.ndim - nd:])
    default = tuple((i - 1) * s - 2 * p + k for i, s, p, k in zip(size_in, stride, padding, kernel))
    if output_size is None:
        size = default
    else:
        size = tuple(builtins.int(v) for v in output_size)
        if len(size) == nd + 2:
            size = size[2:]
        if len(size) != nd:
            raise ValueError(f"output_size should be a sequence containing {nd} or {nd + 2} "
                             f"elements, but it has a length of '{len(size)}'")
        for d in range(nd):
            lo, hi = default[d] - stride[d], default[d] + stride[d]
            if not lo < size[d] < hi:
                raise ValueError(f"invalid output_size \"{tuple(output_size)}\" (dim {d} must be "
                                 f"between {lo} and {hi})")
    return _unpool(input, indices, nd, size)


def _unpool(input, indices, nd, size):
    if indices.dtype.name != "int64":
        raise RuntimeError(f"elements in indices should be type int64 but got: "
                           f"{indices.dtype._scalar_name}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    idx = indices._array
    n = math.prod(size)
    if n and not checks_on_host(input._device):
        assert_on_device(input._device, (idx < 0) | (idx >= n),
                         "max_unpool: Assertion `maxind >= 0 && maxind < outputImageSize`")
        idx = idx % n
    elif idx.size and (builtins.int(idx.min()) < 0 or builtins.int(idx.max()) >= n):
        bad = builtins.int(idx.max()) if builtins.int(idx.max()) >= n else builtins.int(idx.min())
        raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of size "
                           f"{'x'.join(str(s) for s in size)})")
    return _scatter(input, idx, size, _UNPOOL[nd], False)


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    k = _one(kernel_size)
    s = k if stride is None else _one(stride)
    p = _one(padding)
    if output_size is not None:
        output_size = tuple(output_size)[-1:]
    default = (input.shape[-1] - 1) * s - 2 * p + k
    size = default if output_size is None else builtins.int(output_size[0])
    if output_size is not None and not default - s < size < default + s:
        raise ValueError(f"invalid output_size \"{output_size}\" (dim 0 must be between "
                         f"{default - s} and {default + s})")
    out = _unpool(input.unsqueeze(-1), indices.unsqueeze(-1), 2, (size, 1))
    return out.squeeze(-1)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return follow_channels_last(_max_unpool(input, indices, 2, "max_unpool2d", kernel_size,
                                            stride, padding, output_size), input)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, 3, "max_unpool3d", kernel_size, stride, padding,
                       output_size)
