"""PyTorch's top-level (ATen) forms of operations ember has under other names: conv_tbc,
native_dropout, the deprecated norms (frobenius_norm, nuclear_norm, norm_except_dim,
native_norm), grid_sampler_2d/3d, the 4-tuple embedding_bag and embedding_renorm_,
slice_inverse, the top-level as_strided_ and resize_as_, binomial, empty_permuted.

Each one checks its arguments as PyTorch does and then runs the ember op it stands for, so
its gradient is that op's.
"""
import builtins

import numpy as np

from .. import dtypes as _dt
from .._sparse import SparseTensor
from .._tensor import _wrap_dim, make_tensor, xp_of
from . import strided as _strided
from ._graph import Node, grad_disabled, record
from ._writes import write_out
from ._grid_sample import grid_sampler
from .conv import conv1d
from .creation import empty
from .decompositions.norms import matrix_norm, vector_norm
from .._state import warn_once
from .normalization.dropout import _bernoulli_keep
from .normalization.embedding import _embedding_bag, _embedding_renorm
from ._draws import _rng

__all__ = ["conv_tbc", "native_dropout", "frobenius_norm", "nuclear_norm", "native_norm",
           "norm_except_dim", "grid_sampler_2d", "grid_sampler_3d", "embedding_bag",
           "embedding_renorm_", "slice_inverse", "as_strided_", "resize_as_", "binomial",
           "empty_permuted"]
METHODS = ["slice_inverse"]
FUNCTIONAL = ["conv_tbc"]


def conv_tbc(input, weight, bias, pad=0):
    """A 1-D convolution over (time, batch, channel) input with a (kernel_width, in_channels,
    out_channels) weight, `pad` zeros at both ends of time."""
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    if weight.shape[2] != bias.shape[0]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output channels).")
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)


def native_dropout(input, p, train):
    """(output, keep mask): in training (train True or None) each element is kept with
    probability 1 - p and scaled by 1 / (1 - p); otherwise the output is a copy."""
    if train is None or train:
        if p < 0 or p > 1:
            raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={1 - p}")
        if not (input.is_floating_point() or input.is_complex()):
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{input.dtype._scalar_name}")
        keep = _bernoulli_keep(input, input.shape, p)
        scale = 0.0 if p == 1 else 1.0 / (1.0 - p)
        factor = make_tensor((keep * scale).astype(input._array.dtype), input._device)
        return input * factor, make_tensor(keep.astype(np.bool_), input._device)
    xp = xp_of(input)
    return input.clone(), make_tensor(xp.ones(input.shape, dtype=np.bool_), input._device)


def frobenius_norm(input, dim, keepdim=False, *, out=None):
    """Deprecated: the 2-norm over at most two dims."""
    warn_once("at::frobenius_norm is deprecated and it is just left for JIT "
               "compatibility. It will be removed in a future PyTorch release. Please use "
               "`linalg.vector_norm(A, 2., dim, keepdim)` instead")
    dim = [dim] if isinstance(dim, builtins.int) else list(dim)
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions "
                           "instead.")
    res = vector_norm(input, 2, dim or None, keepdim)
    return res if out is None else write_out(out, res, "frobenius_norm")


def nuclear_norm(input, dim=None, keepdim=False, *, out=None):
    """Deprecated: the sum of singular values; `nuclear_norm(input, keepdim)` or
    `nuclear_norm(input, dim, keepdim)` over the two dims of `dim` (default the last two)."""
    warn_once("at::nuclear_norm is deprecated and it is just left for JIT "
               "compatibility. It will be removed in a future PyTorch release. Please use "
               "`linalg.matrix_norm(A, 'nuc', dim, keepdim)` instead")
    if isinstance(dim, builtins.bool):
        dim, keepdim = None, dim
    res = matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)
    return res if out is None else write_out(out, res, "nuclear_norm")


def native_norm(input, p=2, dim=None, keepdim=False, dtype=None):
    """The p-norm of a sparse tensor's values (PyTorch runs it on sparse tensors only, and
    only as a full reduction)."""
    if not isinstance(input, SparseTensor):
        raise NotImplementedError("Could not run 'aten::native_norm' with arguments from the "
                                  f"'{input.device.type.upper()}' backend. 'aten::native_norm' "
                                  "is only available for sparse tensors.")
    if dim is not None and sorted(_wrap_dim(d, input.ndim) for d in dim) != \
            list(builtins.range(input.ndim)) and len(dim):
        raise RuntimeError("norm_sparse currently only supports full reductions, so 'dim' must "
                           "either be empty or contain all dimensions of the input")
    values = input.coalesce().values()
    res = vector_norm(values, 2 if p is None else p, None, False, dtype=dtype)
    if keepdim and dim is not None:
        res = res.reshape((1,) * input.ndim)
    return res


def norm_except_dim(v, pow=2, dim=0):
    """The `pow`-norm of every slice of `v` along `dim`, keeping v's rank (weight norm's
    denominator); dim -1 gives the norm of the whole tensor."""
    if dim == -1:
        return vector_norm(v, pow)
    dim = _wrap_dim(dim, v.ndim)
    others = [d for d in builtins.range(v.ndim) if d != dim]
    return vector_norm(v, pow, others, True)


def _grid_sampler_nd(nd, input, grid, interpolation_mode, padding_mode, align_corners):
    if input.ndim != nd + 2 or grid.ndim != nd + 2:
        raise RuntimeError(f"grid_sampler(): expected {nd + 2}D input and grid with same number "
                           f"of dimensions, but got input with sizes {list(input.shape)} and "
                           f"grid with sizes {list(grid.shape)}")
    return grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_2d(input, grid, interpolation_mode, padding_mode, align_corners):
    """`grid_sampler` of 4-D input; modes as integers (0 bilinear, 1 nearest, 2 bicubic;
    0 zeros, 1 border, 2 reflection)."""
    return _grid_sampler_nd(2, input, grid, interpolation_mode, padding_mode, align_corners)


def grid_sampler_3d(input, grid, interpolation_mode, padding_mode, align_corners):
    """`grid_sampler` of 5-D input (bilinear or nearest)."""
    if input.ndim == 5 and interpolation_mode == 2:
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    return _grid_sampler_nd(3, input, grid, interpolation_mode, padding_mode, align_corners)


def _check_index_dtype(indices, fname, position):
    if indices.dtype not in (_dt.int64, _dt.int32):
        raise RuntimeError(f"Expected tensor for argument #{position} 'indices' to have one of "
                           f"the following scalar types: Long, Int; but got {indices.type()} "
                           f"instead (while checking arguments for {fname})")


def embedding_bag(weight, indices, offsets, scale_grad_by_freq=False, mode=0, sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """The native form of F.embedding_bag: integer `mode` (0 sum, 1 mean, 2 max) and four
    results (output, offset2bag, bag_size, max_indices), as PyTorch's CPU kernel fills them:
    sum mode leaves offset2bag empty (unless padding_idx is given) and bag_size zero, mean
    mode repeats bag_size as max_indices."""
    if mode not in (0, 1, 2):
        raise RuntimeError(f"embedding_bag: unknown mode {mode}")
    name = ("sum", "mean", "max")[mode]
    out, bag, counts, argrow = _embedding_bag(weight, indices, offsets, scale_grad_by_freq, name,
                                      per_sample_weights, include_last_offset, padding_idx,
                                      builtins.bool(sparse))
    xp = xp_of(weight)
    dev = weight._device
    nbags = out.shape[0]
    counts = xp.asarray(counts).astype(np.int64)

    index_dtype = indices._array.dtype

    def t(a):
        return make_tensor(xp.asarray(a).astype(index_dtype), dev)
    if mode == 0:
        # PyTorch's CPU kernel skips offset2bag on its fast path (no padding_idx, not float64)
        fast = padding_idx is None and weight.dtype is not _dt.float64
        offset2bag = xp.zeros(0, np.int64) if fast else bag
        zeros = xp.zeros(nbags, np.int64)
        return out, t(offset2bag), t(zeros), t(zeros.copy())
    if mode == 1:
        return out, t(bag), t(counts), t(counts.copy())
    return out, t(bag), t(counts), t(xp.where(argrow < 0, 0, argrow))


def embedding_renorm_(input, indices, max_norm, norm_type):
    """Rescales, in place, each row of `input` named in `indices` whose `norm_type`-norm
    exceeds `max_norm` to that norm."""
    _check_index_dtype(indices, "embedding_renorm_", 2)
    if input.ndim != 2:
        raise RuntimeError(f"embedding_renorm_(): expected self to be 2D, got {input.ndim}D")
    _embedding_renorm(input, indices._array.astype(np.int64, copy=False), max_norm, norm_type)
    return input


class SliceInverseBackward0(Node):
    def backward(self, grad):
        index = [builtins.slice(None)] * grad.ndim
        index[self.dim] = builtins.slice(self.start, self.end, self.step)
        part = grad[tuple(index)]
        rest = grad.slice_scatter(part.mul(0), self.dim, self.start, self.end, self.step)
        return part, rest


def slice_inverse(input, src, dim=0, start=None, end=None, step=1):
    """The inverse of slicing `src`: `input` (a slice of src's storage) seen with src's sizes,
    strides and offset. The gradient splits as PyTorch's: `input` gets the output's gradient
    sliced as `input` was, `src` the rest."""
    with grad_disabled():
        res = _strided.as_strided(input, tuple(src.shape), src.stride(), src.storage_offset())
    node = record(SliceInverseBackward0, (input, src), res)
    if node is not None:
        node.dim, node.start, node.end, node.step = _wrap_dim(dim, src.ndim), start, end, step
    return res


def as_strided_(input, size, stride, storage_offset=None):
    """`Tensor.as_strided_` as a function."""
    return _strided.as_strided_(input, size, stride, storage_offset)


def resize_as_(input, the_template, *, memory_format=None):
    """`Tensor.resize_as_` as a function."""
    return _strided.resize_as_(input, the_template, memory_format)


def binomial(count, prob, generator=None):
    """Binomial draws of `count` trials with success probability `prob` (broadcast), in
    count's dtype. Not differentiable (PyTorch defines no derivative)."""
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{count.dtype._scalar_name}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {prob.dtype._scalar_name} but expected "
                           f"{count.dtype._scalar_name}")
    xp = xp_of(count)
    n, p = xp.broadcast_arrays(count._array.astype(np.float64), prob._array.astype(np.float64))
    rng = _rng(count._device, generator)
    draws = rng.binomial(n.astype(np.int64), xp.clip(p, 0.0, 1.0))
    return make_tensor(xp.asarray(draws).astype(count._array.dtype), count._device)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An uninitialised tensor of `size` whose memory holds its dims in the order
    `physical_layout` (outermost first)."""
    size = [builtins.int(s) for s in size]
    order = [builtins.int(d) for d in physical_layout]
    if len(size) != len(order):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    if sorted(order) != list(builtins.range(len(order))):
        raise RuntimeError("Duplicate dim not allowed")
    physical = empty([size[d] for d in order], dtype=dtype, layout=layout, device=device,
                     pin_memory=pin_memory)
    inverse = [order.index(d) for d in builtins.range(len(order))]
    # a tensor of its own (no view of `physical`) over the permuted memory
    res = make_tensor(physical._array.transpose(inverse), physical._device)
    if requires_grad:
        res.requires_grad_(True)
    return res
