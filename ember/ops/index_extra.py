"""Index arithmetic and writes along index sets: `unravel_index`, `narrow_copy`,
`index_reduce` / `index_reduce_` (prod, mean, amax, amin), `fill_diagonal_`.

index_reduce is scatter_reduce with its index spread along `dim` (one implementation of the
reductions and their derivatives), under PyTorch's own checks, messages and node name.
fill_diagonal_ fills strided views of the tensor, as PyTorch does (its grad_fn is CopySlices).
"""
import builtins

import numpy as np

from .. import dtypes as _dt
from .._state import warn_once
from .._tensor import _wrap_dim, make_tensor, xp_of
from ..device import checks_on_host
from ._graph import record
from ._writes import inplace, with_out
from .shape import NarrowBackward0, narrow

__all__ = ["unravel_index", "narrow_copy", "index_reduce"]
METHODS = ["narrow_copy", "index_reduce", "index_reduce_", "fill_diagonal_"]


# ---- unravel_index ------------------------------------------------------------------------------
def unravel_index(indices, shape):
    if indices.is_complex() or indices.is_floating_point() or indices.dtype is _dt.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got torch.{indices.dtype.name}")
    if isinstance(shape, (builtins.int, np.integer)):
        shape = (builtins.int(shape),)
    elif isinstance(shape, (list, tuple)):
        for n in shape:
            if not isinstance(n, (builtins.int, np.integer)):
                raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                                f"{type(n)}")
        shape = tuple(builtins.int(n) for n in shape)
    else:
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got {type(shape)}")
    if builtins.any(n < 0 for n in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {tuple(shape)}")
    xp = xp_of(indices)
    idx = indices._array.astype(np.int64)
    coords, stride = [], 1
    for n in reversed(shape):
        # PyTorch's arithmetic: floor division then a floored remainder (out-of-range wraps)
        coords.append(xp.remainder(xp.floor_divide(idx, stride), n) if n else idx * 0)
        stride *= n
    return tuple(make_tensor(c, indices._device) for c in reversed(coords))


# ---- narrow_copy --------------------------------------------------------------------------------
class NarrowCopyBackward0(NarrowBackward0):
    pass


@with_out("narrow_copy")
def narrow_copy(input, dim, start, length):
    if input._array.ndim and dim >= input._array.ndim:  # PyTorch's own check, before narrow's
        raise RuntimeError("Expected dim < static_cast<int64_t>(self_sizes.size()) to be true, "
                           "but got false.  (Could this error message be improved?  If so, please "
                           "report an enhancement request to PyTorch.)")
    if input.is_sparse:
        return _sparse_narrow_copy(input, dim, start, length)
    view = narrow(input.detach(), dim, start, length)
    out = make_tensor(view._array.copy(), input._device)
    node = record(NarrowCopyBackward0, (input,), out)
    if node is not None:
        d = _wrap_dim(dim, input._array.ndim)
        s = builtins.int(start)
        node.dim, node.start, node.length = d, s + input._array.shape[d] if s < 0 else s, length
    return out


def _sparse_narrow_copy(input, dim, start, length):
    """A sparse COO tensor's narrow_copy: along a sparse dim the entries inside the window,
    their indices shifted; along a dense dim the values narrowed. Uncoalesced, with no
    gradient (PyTorch's has no derivative for sparse inputs); coalesced where the input was.
    As in PyTorch, `dim` and `start` are not counted from the end."""
    from .._sparse import make_sparse
    shape = list(input._array.shape)
    if not 0 <= dim < len(shape):
        raise RuntimeError(f"Dimension {dim} out of range. Expecting 0 <= dim < {len(shape)}.")
    d, s = dim, builtins.int(start)
    if s < 0 or length < 0 or s + length > shape[d]:
        raise RuntimeError("Invalid range to narrow. range(start, start+length) must be a subset "
                           f"of range(0, {shape[d]}).")
    ind, val, sd = input._ind._array, input._val._array, input.sparse_dim()
    if d < sd:
        keep = (ind[d] >= s) & (ind[d] < s + length)
        ind = ind[:, keep].copy()
        ind[d] -= s
        val = val[keep]
    else:
        val = val[(slice(None),) * (d - sd + 1) + (slice(s, s + length),)].copy()
    shape[d] = length
    dev = input._device
    return make_sparse(make_tensor(ind, dev), make_tensor(val, dev), tuple(shape),
                       input._coalesced)


# ---- index_reduce ---------------------------------------------------------------------------------
_INDEX_REDUCTIONS = ("prod", "mean", "amax", "amin")


def _index_reduce(input, dim, index, source, reduce, include_self):
    from .gather_scatter.scatter import scatter_reduce
    from .strided import _renamed
    if reduce not in _INDEX_REDUCTIONS:
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    warn_once("index_reduce() is in beta and the API may change at any time.")
    shape, sshape = input._array.shape, source._array.shape
    d = _wrap_dim(dim, len(shape))
    if index._array.ndim > 1:
        raise IndexError(f"index_reduce_(): Index is supposed to be a vector, but got dim: "
                         f"{index._array.ndim} with type: {index.dtype._scalar_name} and size: "
                         f"{list(index.shape)}")
    if index._array.dtype not in (np.int64, np.int32):
        raise RuntimeError(f"index_reduce_(): Expected dtype int32/int64 for index but got: "
                           f"{index.dtype._scalar_name}")
    if input.dtype is not source.dtype:
        raise RuntimeError(f"index_reduce_(): self ({input.dtype._scalar_name}) and source "
                           f"({source.dtype._scalar_name}) must have the same scalar type")
    s1, ss1 = shape or (1,), sshape or (1,)
    n = index._array.size
    if len(shape) != len(sshape) or builtins.any(a != b for k, (a, b) in enumerate(zip(s1, ss1))
                                                 if k != d):
        raise RuntimeError("source tensor shape must match self tensor shape, excluding the "
                           f"specified dimension. Got self.shape = {list(shape)} source.shape = "
                           f"{list(sshape)}")
    if n != ss1[d]:
        raise RuntimeError(f"index_reduce_(): Number of indices ({n}) should be equal to "
                           f"source.size(dim): ({ss1[d]}), for dim: {d}")
    idx = index._array.reshape(-1).astype(np.int64, copy=False)
    if checks_on_host(input._device) and idx.size and \
            (builtins.int(idx.min()) < 0 or builtins.int(idx.max()) >= s1[d]):
        raise IndexError("index out of range in self")  # on a device, scatter_reduce asserts
    xp = xp_of(input)
    spread = xp.broadcast_to(idx.reshape((1,) * d + (n,) + (1,) * (len(s1) - d - 1)), ss1)
    spread = make_tensor(xp.ascontiguousarray(spread), input._device)
    x, src = (input, source) if shape else (input.reshape(1), source.reshape(1))
    out = scatter_reduce(x, d, spread, src, reduce, include_self=include_self)
    if not shape:
        out = out.reshape(())
    elif out._grad_fn is not None:
        _renamed(out._grad_fn, "IndexReduceBackward0")
    return out


@with_out("index_reduce")
def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    return _index_reduce(input, dim, index, source, reduce, include_self)


def index_reduce_(self, dim, index, source, reduce, *, include_self=True):
    return inplace(self, lambda s: _index_reduce(s, dim, index, source, reduce, include_self),
                   (source,))


# ---- fill_diagonal_ ---------------------------------------------------------------------------------
def fill_diagonal_(self, fill_value, wrap=False):
    shape = self._array.shape
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    strides = self.stride()
    step, offset = builtins.sum(strides), self.storage_offset()
    self.as_strided((builtins.min(shape),), (step,), offset).fill_(fill_value)
    if wrap and len(shape) == 2:
        rows, cols = shape
        for start in range(cols + 1, rows, cols + 1):  # a tall matrix starts over below a gap row
            m = builtins.min(cols, rows - start)
            self.as_strided((m,), (step,), offset + start * strides[0]).fill_(fill_value)
    return self
