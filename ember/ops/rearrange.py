"""Shape ops that split, flip, roll, repeat or stack, and triangles and diagonals.

Splits are views made by `narrow` (they share memory, as PyTorch's do); `diagonal` is a
writable strided view; the rest copy. Each op's backward is written with ember ops.
"""
import builtins
import itertools
import math

import numpy as np

from .. import _dtype_casts as _casts, dtypes as _dt
from .._memory_format import c_ordered, contiguous_format, follow_channels_last, is_dense, suggest
from .._state import warn_once
from .._tensor import _wrap_dim, make_tensor, Tensor, xp_of
from ._graph import Node, grad_disabled, record
from ._writes import inplace, mark_multi_output_views
from ._varargs import varargs_or_keyword
from .shape import (_check_joinable, _infer_size, cat, make_view_of, narrow, shift_empty_view,
                    stack, wrap_dims_once)

__all__ = ["split", "chunk", "split_with_sizes", "unsafe_split", "unsafe_chunk",
           "unsafe_split_with_sizes", "ravel", "diagflat", "broadcast_shapes", "tensor_split", "hsplit", "vsplit", "dsplit", "flip", "fliplr",
           "flipud", "roll", "rot90", "repeat_interleave", "tile", "tril", "triu", "diag",
           "diagonal", "diag_embed", "trace", "meshgrid", "cartesian_prod", "combinations",
           "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_tensors", "hstack", "vstack",
           "dstack", "column_stack", "row_stack", "unflatten", "block_diag", "tril_indices",
           "triu_indices"]
METHODS = ["split", "chunk", "unsafe_split", "unsafe_chunk", "ravel", "diagflat", "tensor_split", "hsplit", "vsplit", "dsplit", "flip", "fliplr",
           "flipud", "roll", "rot90", "repeat", "repeat_interleave", "tile", "tril", "triu",
           "tril_", "triu_", "diag", "diagonal", "diag_embed", "trace", "unflatten"]


# ---- splitting (views) --------------------------------------------------------------------
def _split_sizes(tensor, split_size_or_sections, d):
    if not tensor.dim() and isinstance(split_size_or_sections, (builtins.int, np.integer)):
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    size = tensor.shape[d]
    if isinstance(split_size_or_sections, (builtins.int, np.integer)):
        step = builtins.int(split_size_or_sections)
        if step < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got "
                               f"split_size={step}")
        if not size:  # one empty piece, whatever the size
            return [0]
        if step == 0:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {size}")
        return [builtins.min(step, size - s) for s in range(0, size, step)]
    sizes = [builtins.int(s) for s in split_size_or_sections]
    if builtins.any(s < 0 for s in sizes):
        raise RuntimeError(f"split_with_sizes expects split_sizes have only non-negative entries, "
                           f"but got split_sizes={sizes}")
    if builtins.sum(sizes) != size:
        raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                           f"(input tensor's size at dimension {d}), but got split_sizes={sizes}")
    return sizes


def _pieces(tensor, sizes, d):
    """(start, size, array view) of each piece along dim d."""
    arr, lead = tensor._array, (slice(None),) * d
    out, start = [], 0
    for s in sizes:
        out.append((start, s, arr[lead + (slice(start, start + s),)]))
        start += s
    return out


def _record_split(cls, tensor, out, d):
    node = record(cls, (tensor,), *out)
    if node is not None:
        node.dim = d
        node._out_meta = tuple((o._array.shape, o.dtype, o._device) for o in out)
    return tuple(out)


def _one_of(value, keyword, name, fname):
    """An operand PyTorch's overloads call by two names: the one given (both is an error)."""
    if keyword is None:
        if value is None:
            raise TypeError(f"{fname}() missing required argument '{name}'")
        return value
    if value is not None:
        raise TypeError(f"{fname}() got multiple values for argument '{name}'")
    return keyword


def split(tensor, split_size_or_sections=None, dim=0, *, split_size=None):
    # `torch.split` names the sizes split_size_or_sections, `Tensor.split` split_size: one op takes both
    split_size_or_sections = _one_of(split_size_or_sections, split_size, "split_size_or_sections", "split")
    d = _wrap_dim(dim, tensor.dim())
    sizes = _split_sizes(tensor, split_size_or_sections, d)
    out = [make_view_of(tensor, a, lambda b, start=start, s=s: b.narrow(d, start, s))
           for start, s, a in _pieces(tensor, sizes, d)]
    for (start, _, _), piece in zip(_pieces(tensor, sizes, d), out):
        shift_empty_view(piece, tensor, d, start)
    # one node for all the pieces, as PyTorch's: so they are multi-output views
    mark_multi_output_views(out)
    cls = SplitBackward0 if isinstance(split_size_or_sections, (builtins.int, np.integer)) \
        else SplitWithSizesBackward0
    return _record_split(cls, tensor, out, d)


def _check_sizes_arg(split_sizes, fname, position):
    if isinstance(split_sizes, (builtins.int, np.integer)):
        raise TypeError(f"{fname}(): argument 'split_sizes' (position {position}) must be tuple "
                        f"of ints, not {type(split_sizes).__name__}")
    return list(split_sizes)


def split_with_sizes(input, split_sizes, dim=0, *, _position=2):
    return split(input, _check_sizes_arg(split_sizes, "split_with_sizes", _position), dim)


class SplitBackward0(Node):
    def backward(self, *grads):  # the engine gives zeros for pieces that got no gradient
        return cat(grads, self.dim)


class SplitWithSizesBackward0(SplitBackward0):
    pass


class UnsafeSplitBackward0(SplitBackward0):
    pass


class UnsafeSplitWithSizesBackward0(SplitBackward0):
    pass


def unsafe_split(input, split_size, dim=0):
    """split whose pieces share the input's memory without being views of it (no base, a
    version counter each), so autograd lets them be written in place."""
    d = _wrap_dim(dim, input.dim())
    sizes = _split_sizes(input, split_size, d)
    out = [make_tensor(a, input._device) for _, _, a in _pieces(input, sizes, d)]
    cls = UnsafeSplitBackward0 if isinstance(split_size, (builtins.int, np.integer)) \
        else UnsafeSplitWithSizesBackward0
    return _record_split(cls, input, out, d)


def unsafe_split_with_sizes(input, split_sizes, dim=0, *, _position=2):
    return unsafe_split(input, _check_sizes_arg(split_sizes, "unsafe_split_with_sizes", _position),
                        dim)


def _method(fn):
    """The Tensor method: PyTorch counts `split_sizes` as argument 1 there, not 2."""
    def method(self, split_sizes, dim=0):
        return fn(self, split_sizes, dim, _position=1)
    method.__name__ = fn.__name__
    return method


def _chunk_size(input, chunks, dim):
    """The split size of chunk, or for an empty dim the `chunks` sizes (all 0: PyTorch gives
    that many empty chunks)."""
    if not input.dim():
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    size = input.shape[_wrap_dim(dim, input.dim())]
    return builtins.max(math.ceil(size / chunks), 1) if size else [0] * chunks


def unsafe_chunk(input, chunks, dim=0):
    return unsafe_split(input, _chunk_size(input, chunks, dim), dim)


def chunk(input, chunks, dim=0):
    return split(input, _chunk_size(input, chunks, dim), dim)


def tensor_split(input, indices_or_sections=None, dim=0, *, sections=None, indices=None,
                 tensor_indices_or_sections=None):
    # PyTorch's three overloads name the second operand by its kind
    for name, given in (("sections", sections), ("indices", indices),
                        ("tensor_indices_or_sections", tensor_indices_or_sections)):
        indices_or_sections = _one_of(indices_or_sections, given, name, "tensor_split")
    if not isinstance(indices_or_sections, (builtins.int, np.integer, Tensor, list, tuple)):
        raise TypeError(f"tensor_split() received an invalid combination of arguments - got "
                        f"({type(indices_or_sections).__name__}), but expected one of:\n"
                        f" * (tuple of ints indices, int dim = 0)\n"
                        f" * (Tensor tensor_indices_or_sections, int dim = 0)\n"
                        f" * (int sections, int dim = 0)\n")
    d = _wrap_dim(dim, input.dim())
    size = input.shape[d]
    if isinstance(indices_or_sections, Tensor) and indices_or_sections.dim() == 0:
        indices_or_sections = indices_or_sections.item()
    if isinstance(indices_or_sections, (builtins.int, np.integer)):
        n = builtins.int(indices_or_sections)
        if n <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {n}")
        q, r = divmod(size, n)
        bounds = list(itertools.accumulate([q + 1] * r + [q] * (n - r)))[:-1]
    else:
        bounds = [builtins.int(i) for i in (indices_or_sections.tolist()
                                            if isinstance(indices_or_sections, Tensor)
                                            else indices_or_sections)]
    out, start = [], 0
    for b in bounds + [size]:
        b = builtins.min(builtins.max(b if b >= 0 else b + size, start), size)
        out.append(narrow(input, d, start, b - start))
        start = b
    return tuple(out)


def _split_dim(input, sections, dim, name, min_dim):
    if input.dim() < min_dim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_dim} dimension, "
                           f"but got a tensor with {input.dim()} dimensions!")
    if isinstance(sections, (builtins.int, np.integer)) and input.shape[dim] % sections:
        raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but the "
                           f"size of the dimension {input.shape[dim]} is not divisible by the "
                           f"split_size {sections}!")
    return tensor_split(input, sections, dim)


def hsplit(input, sections=None, *, indices=None):
    sections = _one_of(sections, indices, "indices", "hsplit")
    return _split_dim(input, sections, 1 if input.dim() > 1 else 0, "hsplit", 1)


def vsplit(input, sections=None, *, indices=None):
    sections = _one_of(sections, indices, "indices", "vsplit")
    return _split_dim(input, sections, 0, "vsplit", 2)


def dsplit(input, sections=None, *, indices=None):
    sections = _one_of(sections, indices, "indices", "dsplit")
    return _split_dim(input, sections, 2, "dsplit", 3)


def unflatten(input, dim, sizes):
    d = _wrap_dim(dim, input.dim())
    sizes = list(sizes)
    shape = list(input.shape)
    if not sizes:
        raise RuntimeError("unflatten: sizes must be non-empty")
    try:
        sizes = list(_infer_size(sizes, shape[d]))
    except RuntimeError as e:  # PyTorch rewords the error of sizes that do not fit
        if str(e).startswith("shape '["):
            raise RuntimeError(f"unflatten: Provided sizes {sizes} don't multiply up to the size "
                               f"of dim {dim} ({shape[d]}) in the input tensor") from None
        raise RuntimeError(f"unflatten got an unexpected error:\n{e}") from None
    return input.view(shape[:d] + sizes + shape[d + 1:])


# ---- flips and rolls ---------------------------------------------------------------------------
class FlipBackward0(Node):
    def backward(self, grad):
        return grad.flip(self.dims)


def flip(input, *args, dims=None):
    dims = varargs_or_keyword(args, dims, "dims", "flip")
    if len(dims) == 1 and not isinstance(dims[0], (builtins.int, np.integer)):
        dims = dims[0]  # flip(t, (0, 2)) as well as t.flip(0, 2)
    dims = tuple(dims)
    axes = tuple(wrap_dims_once(dims, input.dim()))
    arr = input._array
    xp = xp_of(input)
    # PyTorch's result is empty_like(input): a dense input's own strides (order "K" keeps
    # them), else the format the input suggests
    order = "K" if is_dense(arr.shape, input.stride()) else "C"
    out = follow_channels_last(make_tensor(_casts.on_bits(
        lambda a: (xp.flip(a, axes) if axes else a).copy(order=order), arr), input._device), input)
    node = record(FlipBackward0, (input,), out)
    if node is not None:
        node.dims = axes
    return out


def fliplr(input):
    if input.dim() < 2:
        raise RuntimeError("Input must be >= 2-d.")
    return flip(input, (1,))


def flipud(input):
    if input.dim() < 1:
        raise RuntimeError("Input must be >= 1-d.")
    return flip(input, (0,))


class RollBackward0(Node):
    def backward(self, grad):
        if self.dims is None:  # rolled flat: rolled back flat, in the input's shape
            return grad.reshape(-1).roll(-self.shifts[0], 0).reshape(self.shape)
        return grad.roll(tuple(-s for s in self.shifts), self.dims)


def roll(input, shifts, dims=None):
    shifts = (shifts,) if isinstance(shifts, (builtins.int, np.integer)) else tuple(shifts)
    if not shifts:
        raise RuntimeError("`shifts` required")
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:0")
        # PyTorch rolls the flattened input inside the kernel: one RollBackward0 over input
        arr = xp_of(input).roll(input._array.reshape(-1), shifts[0]).reshape(input._array.shape)
        out = make_tensor(arr, input._device)
        node = record(RollBackward0, (input,), out)
        if node is not None:
            node.shifts, node.dims, node.shape = shifts, None, input._array.shape
        return out
    dims = (dims,) if isinstance(dims, (builtins.int, np.integer)) else tuple(dims)
    if len(shifts) != len(dims):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)}")
    axes = tuple(_wrap_dim(d, input.dim()) for d in dims)
    # PyTorch's result is contiguous in the layout the input suggests (a transposed input
    # gives a contiguous one, a channels_last one stays channels_last)
    arr = input._array
    if suggest(arr.shape, input.stride()) is contiguous_format:
        arr = c_ordered(arr)
    out = make_tensor(xp_of(input).roll(arr, shifts, axes), input._device)
    node = record(RollBackward0, (input,), out)
    if node is not None:
        node.shifts, node.dims = shifts, axes
    return out


def rot90(input, k=1, dims=(0, 1)):
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    d0, d1 = (_wrap_dim(d, input.dim()) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {d0} and "
                           f"dim1 = {d1}")
    k %= 4
    if k == 1:
        return flip(input, (d1,)).transpose(d0, d1)
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return flip(input, (d0,)).transpose(d0, d1)
    return input.clone()


# ---- repeating -----------------------------------------------------------------------------------
class RepeatBackward0(Node):
    def backward(self, grad):
        shape = self._meta[0][0]
        reps = self.repeats
        lead = len(reps) - len(shape)
        padded = (1,) * lead + tuple(shape)
        # view each axis as (repeat, size) and sum the repeats away
        split_shape = []
        for r, s in zip(reps, padded):
            split_shape += [r, s]
        g = grad.reshape(split_shape).sum(tuple(range(0, 2 * len(reps), 2)))
        return g.reshape(shape)


def repeat(self, *args, repeats=None):
    sizes = varargs_or_keyword(args, repeats, "repeats", "repeat")
    reps = tuple(sizes[0]) if len(sizes) == 1 and not isinstance(sizes[0], (builtins.int, np.integer)) \
        else tuple(builtins.int(s) for s in sizes)
    if len(reps) < self.dim():
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than number "
                           "of dimensions of tensor")
    arr = self._array
    if builtins.min(reps, default=0) < 0:
        padded_shape = (1,) * (len(reps) - arr.ndim) + arr.shape
        shape = [s * r for s, r in zip(padded_shape, reps)]
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{builtins.min(shape)}: {shape}")
    padded = arr.reshape((1,) * (len(reps) - arr.ndim) + arr.shape)
    out = make_tensor(xp_of(self).tile(padded, reps), self._device)
    node = record(RepeatBackward0, (self,), out)
    if node is not None:
        node.repeats = reps
    return out


def tile(input, *args, dims=None):
    """`torch.tile(x, (2, 2))`, `x.tile(2, 2)` or `dims=`."""
    dims = varargs_or_keyword(args, dims, "dims", "tile")
    dims = tuple(dims[0]) if len(dims) == 1 and not isinstance(dims[0], (builtins.int, np.integer)) \
        else tuple(dims)
    if len(dims) < input.dim():
        dims = (1,) * (input.dim() - len(dims)) + dims
    return repeat(input, dims)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    from .creation import tensor
    from .ranges import arange
    if repeats is None:  # repeat_interleave(repeats_tensor): indices repeated by their counts
        counts = input
        return repeat_interleave(arange(counts.numel(), device=counts.device), counts, 0)
    if dim is None:
        input, dim = input.flatten(), 0
    d = _wrap_dim(dim, input.dim())
    n = input.shape[d]
    if isinstance(repeats, Tensor):
        if repeats.is_meta:  # no counts to read: the result's length must be given
            if output_size is None:
                raise RuntimeError("cannot repeat_interleave a meta tensor without output_size")
            from .creation import empty
            return input.index_select(d, empty(output_size, dtype=_dt.int64, device="meta"))
        reps = repeats._host().reshape(-1)
        if reps.size == 1:
            reps = np.full(n, reps[0])
        elif reps.size != n:
            raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                               f"repeats.size(0) = {reps.size} and input.size({d}) = {n}")
    else:
        reps = builtins.int(repeats)
        if reps < 0:  # a number: PyTorch's own words (a tensor of counts: "repeats can not ...")
            raise RuntimeError("Repeats must be non-negative")
        # PyTorch's int form: each slice repeated by a broadcast copy, not a gather
        shape = list(input.shape)
        spread = shape[:d + 1] + [reps] + shape[d + 1:]
        shape[d] *= reps
        return input.unsqueeze(d + 1).expand(spread).clone(
            memory_format=contiguous_format).view(shape)
    if (reps < 0).any():
        raise RuntimeError("repeats can not be negative")
    index = tensor(np.repeat(np.arange(n), reps), device=input.device)
    return input.index_select(d, index)


# ---- triangles and diagonals ---------------------------------------------------------------------
def _tri(input, diagonal, lower, name, cls):
    if input.dim() < 2:
        raise RuntimeError(f"{name}: input tensor must have at least 2 dimensions")
    xp = xp_of(input)
    arr = c_ordered(input._array)  # PyTorch's result is contiguous whatever the input's layout
    rows, cols = arr.shape[-2:]
    keep = xp.tri(rows, cols, diagonal, dtype=bool) if lower else \
        ~xp.tri(rows, cols, diagonal - 1, dtype=bool)
    out = make_tensor(xp.where(keep, arr, arr.dtype.type(0)), input._device)
    node = record(cls, (input,), out)
    if node is not None:
        node.diagonal = diagonal
    return out


class TrilBackward0(Node):
    def backward(self, grad):
        return grad.tril(self.diagonal)


class TriuBackward0(Node):
    def backward(self, grad):
        return grad.triu(self.diagonal)


def _tri_complex32(op, input, diagonal, out):
    res = op(input.to(_dt.complex64), diagonal).to(_dt.complex32)
    return res if out is None else _write(out, res, op.__name__)


def tril(input, diagonal=0, *, out=None):
    if input.dtype is _dt.complex32:  # computed as complex64 (NumPy has no complex half)
        return _tri_complex32(tril, input, diagonal, out)
    if input.dtype._kind:
        _casts.refuse(input.dtype, "tril")
    res = _tri(input, diagonal, True, "tril", TrilBackward0)
    return res if out is None else _write(out, res, "tril")


def triu(input, diagonal=0, *, out=None):
    if input.dtype is _dt.complex32:
        return _tri_complex32(triu, input, diagonal, out)
    if input.dtype._kind:
        _casts.refuse(input.dtype, "triu")
    res = _tri(input, diagonal, False, "triu", TriuBackward0)
    return res if out is None else _write(out, res, "triu")


def _write(out, res, name):
    from ._writes import write_out
    return write_out(out, res, name)


def tril_(self, diagonal=0):
    return inplace(self, lambda s: tril(s, diagonal), allow_overlap=True)  # as PyTorch


def triu_(self, diagonal=0):
    return inplace(self, lambda s: triu(s, diagonal), allow_overlap=True)  # as PyTorch


class DiagonalBackward0(Node):
    def backward(self, grad):
        from .creation import zeros
        full = zeros(self._meta[0][0], dtype=grad.dtype, device=grad.device)
        full.diagonal(self.offset, self.dim1, self.dim2).copy_(grad)
        return full


def diagonal(input, offset=0, dim1=0, dim2=1):
    """A writable view of the diagonal, moved to the last dimension (as PyTorch's)."""
    n = input.dim()
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    arr = input._array
    start = [0] * n
    if offset >= 0:
        start[d2] = builtins.min(offset, arr.shape[d2])
    else:
        start[d1] = builtins.min(-offset, arr.shape[d1])
    sub = arr[tuple(slice(s, None) for s in start)]
    length = builtins.max(builtins.min(sub.shape[d1], sub.shape[d2]), 0)
    others = [i for i in range(n) if i not in (d1, d2)]
    shape = tuple(sub.shape[i] for i in others) + (length,)
    strides = tuple(sub.strides[i] for i in others) + (sub.strides[d1] + sub.strides[d2],)
    view = _casts.as_strided(np, sub, shape, strides) if isinstance(sub, np.ndarray) \
        else xp_of(input).lib.stride_tricks.as_strided(sub, shape, strides)
    out = make_view_of(input, view, lambda b: b.diagonal(offset, d1, d2))
    node = record(DiagonalBackward0, (input,), out)
    if node is not None:
        node.offset, node.dim1, node.dim2 = offset, d1, d2
    return out


class DiagonalBackward0_copy(DiagonalBackward0):  # noqa: N801 (PyTorch's name)
    """torch.diag of a matrix: a copy of the diagonal, not a view."""


class DiagEmbedBackward0(Node):
    def backward(self, grad):
        return grad.diagonal(self.offset, self.dim1, self.dim2)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    from .creation import zeros
    n = input.dim() + 1
    d1, d2 = _wrap_dim(dim1, n), _wrap_dim(dim2, n)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    size = input.shape[-1] + builtins.abs(offset)
    shape = list(input.shape[:-1])
    for d in sorted((d1, d2)):
        shape.insert(d, size)
    full = zeros(shape, dtype=input.dtype, device=input.device)
    full.diagonal(offset, d1, d2)._array[...] = input._array  # full is not tracked: plain write
    node = record(DiagEmbedBackward0, (input,), full)
    if node is not None:
        node.offset, node.dim1, node.dim2 = offset, d1, d2
    return full


def diag(input, diagonal=0, *, out=None):
    if input.dim() == 1:
        res = diag_embed(input, diagonal, 0, 1)
    elif input.dim() == 2:  # a copy of the diagonal, one node (PyTorch's diagonal_copy)
        with grad_disabled():
            res = input.diagonal(diagonal).clone()
        node = record(DiagonalBackward0_copy, (input,), res)
        if node is not None:
            node.offset, node.dim1, node.dim2 = diagonal, 0, 1
    else:
        raise RuntimeError("diag(): Supports 1D or 2D tensors. Got " + f"{input.dim()}D")
    return res if out is None else _write(out, res, "diag")


class TraceBackward0(Node):
    def backward(self, grad):
        from .ranges import eye
        rows, cols = self._meta[0][0]
        return grad * eye(rows, cols, dtype=grad.dtype, device=grad.device)


def trace(input):
    if input.dim() != 2:
        raise RuntimeError("trace: expected a matrix, but got tensor with dim " +
                           str(input.dim()))
    with grad_disabled():
        res = input.diagonal().sum()
    record(TraceBackward0, (input,), res)
    return res


def block_diag(*tensors):
    from .creation import zeros
    from .. import dtypes as _dt
    mats = [t.reshape(1, -1) if t.dim() <= 1 and t.numel() and t.dim() == 1 else
            (t.reshape(1, 1) if t.dim() == 0 else t) for t in tensors]
    dtype = _dt.promote_operands([(t.dtype, 1) for t in mats]) if mats else _dt.float32
    cols = builtins.sum(m.shape[1] for m in mats)
    pieces, c = [], 0
    for m in mats:
        left = zeros(m.shape[0], c, dtype=dtype, device=m.device)
        right = zeros(m.shape[0], cols - c - m.shape[1], dtype=dtype, device=m.device)
        pieces.append(cat([left, m.to(dtype), right], 1))
        c += m.shape[1]
    return cat(pieces, 0) if pieces else zeros(0, 0, dtype=dtype)


def _check_index_extent(row, col):
    for what, n in (("row", row), ("col", col)):
        if n < 0:
            raise RuntimeError(f"{what} must be non-negative, got{n}")  # sic: PyTorch's text


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False,
                 requires_grad=False):
    from .creation import tensor
    from .. import dtypes as _dt
    _check_index_extent(row, col)
    r, c = np.tril_indices(row, offset, col)
    return tensor(np.stack([r, c]), dtype=dtype or _dt.int64, device=device,
                  requires_grad=requires_grad)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None, pin_memory=False,
                 requires_grad=False):
    from .creation import tensor
    from .. import dtypes as _dt
    _check_index_extent(row, col)
    r, c = np.triu_indices(row, offset, col)
    return tensor(np.stack([r, c]), dtype=dtype or _dt.int64, device=device,
                  requires_grad=requires_grad)


# ---- grids, broadcasting and stacking ---------------------------------------------------------
def _tensors(args):
    return list(args[0]) if len(args) == 1 and isinstance(args[0], (list, tuple)) else list(args)


def meshgrid(*tensors, indexing=None):
    tensors = _tensors(tensors)
    if indexing is None:
        warn_once("torch.meshgrid: in an upcoming release, it will be required to pass the "
                  "indexing argument.")
        indexing = "ij"
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f"torch.meshgrid: indexing must be one of \"xy\" or \"ij\", but "
                           f"received: {indexing}")
    for t in tensors:
        if t.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {t}")
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = [t.numel() for t in tensors]
    out = []
    for i, t in enumerate(tensors):
        view = [1] * len(tensors)
        view[i] = -1
        out.append(t.reshape(view).expand(shape))
    if swap:  # "xy": the first two inputs trade places, and so do their grids
        out[0], out[1] = out[1], out[0]
    return tuple(out)


def cartesian_prod(*tensors):
    tensors = _tensors(tensors)
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([g.reshape(-1) for g in grids], 1)


def combinations(input, r=2, with_replacement=False):
    from .creation import tensor
    if input.dim() != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    gen = itertools.combinations_with_replacement if with_replacement else itertools.combinations
    idx = list(gen(range(input.numel()), r))
    if not idx:
        return input.new_empty((0, r) if r else (0,))
    index = tensor(np.array(idx, dtype=np.int64).T, device=input.device)
    return stack([input.index_select(0, row) for row in index], 1)


def atleast_1d(*tensors):
    ts = _tensors(tensors)
    out = [t.reshape(1) if t.dim() == 0 else t for t in ts]
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else tuple(out)


def atleast_2d(*tensors):
    ts = _tensors(tensors)
    out = [t.reshape(1, 1) if t.dim() == 0 else (t.unsqueeze(0) if t.dim() == 1 else t)
           for t in ts]
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else tuple(out)


def atleast_3d(*tensors):
    ts = _tensors(tensors)

    def lift(t):
        if t.dim() == 0:
            return t.reshape(1, 1, 1)
        if t.dim() == 1:
            return t.reshape(1, -1, 1)
        if t.dim() == 2:
            return t.unsqueeze(-1)
        return t
    out = [lift(t) for t in ts]
    return out[0] if len(tensors) == 1 and isinstance(tensors[0], Tensor) else tuple(out)


def broadcast_shapes(*shapes):
    """The shape tensors of these shapes broadcast to, by PyTorch's rules and messages."""
    from .._tensor import Size
    given, shown = [], []  # the error message shows each argument as it was passed
    for s in shapes:
        if isinstance(s, (builtins.int, np.integer)):
            s = (builtins.int(s),)
        shown.append(s)
        s = tuple(s)
        for i, n in enumerate(s):
            if not isinstance(n, (builtins.int, np.integer)):
                raise TypeError(f"torch.Size() takes an iterable of 'int' (item {i} is "
                                f"'{type(n).__name__}')")
        given.append(tuple(builtins.int(n) for n in s))
    ndim = builtins.max((len(s) for s in given), default=0)
    result = [1] * ndim
    for s in given:
        if builtins.any(n < 0 for n in s):
            raise ValueError("Attempting to broadcast a dimension with negative length!")
    for k, s in enumerate(given):
        for j in range(-1, -len(s) - 1, -1):
            n = s[j]
            if n == 1 or n == result[j]:
                continue
            if result[j] != 1:
                raise RuntimeError(f"Attempting to broadcast a dimension of length {n} at {j}! "
                                   f"Mismatching argument at index {k} had {shown[k]!r}; but "
                                   "expected shape "
                                   f"should be broadcastable to {result}")
            result[j] = n
    return Size(result)


def ravel(input):
    """The elements in a 1-D tensor: a view when input is contiguous, else of a copy."""
    return input.contiguous().view(-1)


def diagflat(input, offset=0):
    return diag_embed(ravel(input), offset, 0, 1)


def broadcast_tensors(*tensors):
    ts = _tensors(tensors)
    shapes = [tuple(t.shape) for t in ts]
    try:
        shape = np.broadcast_shapes(*shapes)
    except ValueError:  # PyTorch's RuntimeError, naming the first pair that clashes
        from .pointwise import broadcast_error
        for k in range(1, len(shapes)):
            err = broadcast_error(np.broadcast_shapes(*shapes[:k]), shapes[k])
            if err is not None:
                raise err from None
        raise
    # as PyTorch: a tensor that already has the shape comes back itself, not a view
    return tuple(t if tuple(t.shape) == shape else t.expand(shape) for t in ts)


def hstack(tensors, *, out=None):
    ts = [atleast_1d(t) for t in _check_joinable(tensors, "hstack")]
    return cat(ts, 0 if ts[0].dim() == 1 else 1, out=out)


def vstack(tensors, *, out=None):
    return cat([atleast_2d(t) for t in _check_joinable(tensors, "vstack")], 0, out=out)


def row_stack(tensors, *, out=None):
    return cat([atleast_2d(t) for t in _check_joinable(tensors, "row_stack")], 0, out=out)


def dstack(tensors, *, out=None):
    return cat([atleast_3d(t) for t in _check_joinable(tensors, "dstack")], 2, out=out)


def column_stack(tensors, *, out=None):
    ts = [t.reshape(-1, 1) if t.dim() <= 1 else t
          for t in _check_joinable(tensors, "column_stack")]
    return cat(ts, 1, out=out)


# bound by the ops package beside METHODS (their messages count arguments from self)
Tensor.split_with_sizes = _method(split_with_sizes)
Tensor.unsafe_split_with_sizes = _method(unsafe_split_with_sizes)
