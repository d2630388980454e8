"""Indexing: `t[...]` and `t[...] = v`, `index_put`, `copy_`, and `nonzero`.

Basic indices (ints, slices, None, Ellipsis) make views through a chain of view ops
(select, slice, unsqueeze), so the result's grad_fn is PyTorch's (`SelectBackward0` for
`x[:, 1]`). A write `t[idx] = v` is `copy_`/`fill_` on such a view: with autograd, the
base becomes the output of CopySlices (see `_writes.inplace`).

Advanced indices (integer and boolean tensors, lists) follow PyTorch's order: the basic
items are applied first as views (an int is a `select`, so it never joins the advanced
dims), then the remaining index arrays (one per dim of the view, a k-dim mask counting k)
gather a copy (`IndexBackward0`) or are written through `index_put_`. Where the advanced
dims land is then NumPy's rule on the view: in place when adjacent, in front otherwise.
The gradient of a gather is an accumulating `index_put` done with `bincount` on linear
indices (`_accumulate.accumulate_flat`), never `np.add.at`; on a device, by a deterministic
sorted segment sum (`_accumulate.add_rows_on_device`), never by racing atomic adds.
"""
import builtins
import warnings

import numpy as np

from .._memory_format import c_ordered, iterator_strides, laid_out, plainly_contiguous
from .._meta.array import NONZERO, refuse_masks
from .. import _dtype_casts as _casts, dtypes as _dt
from .._tensor import Tensor, make_tensor
from ..device import assert_on_device, checks_on_host
from ._graph import Node, record
from ._writes import (
    before_write, check_inference_write, check_no_internal_overlap, inplace, tracks, writable,
    write_out, write_watchers)
from ._index_put_forms import (NUMBERS as _NUMBERS, checked_number as _checked_number,
                               fill_mask, fill_where, put_values, scalar_like as _scalar_like,
                               value_for as _value_for, warn_expanded_put)
from ._accumulate import accumulate_flat, add_along
from .shape import SliceBackward0, make_view_of, select, shift_empty_view, unsqueeze

__all__ = ["nonzero", "index_put", "argwhere", "nonzero_static"]
METHODS = ["__getitem__", "__setitem__", "copy_", "nonzero", "index_put_", "argwhere",
           "nonzero_static"]

def _xp(t):
    from .._tensor import xp_of
    return xp_of(t)


# ---- parsing an index --------------------------------------------------------------------------
def _as_items(index):
    """The index as a tuple of items (PyTorch's treatSequenceAsTuple for lists)."""
    if isinstance(index, tuple):
        return index
    if isinstance(index, list) and len(index) < 32:
        for obj in index:
            if isinstance(obj, (Tensor, list, tuple, slice)) or obj is None or obj is Ellipsis:
                warnings.warn(
                    "Using a non-tuple sequence for multidimensional indexing is deprecated and "
                    "will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In "
                    "pytorch 2.9 this will be interpreted as tensor index, x[torch.tensor(seq)], "
                    "which will result either in an error or a different result", UserWarning,
                    stacklevel=4)
                return tuple(index)
    return (index,)


def _index_sequence(i):
    """A sequence other than list/tuple/array (range, deque, a user's sequence class), which
    PyTorch takes as an index the way it takes a list."""
    return (isinstance(i, builtins.range) or hasattr(type(i), "__len__")
            and hasattr(type(i), "__getitem__")
            and not isinstance(i, (str, bytes, dict, np.ndarray, np.generic, Tensor)))


def _expand_index(index, ndim):
    """The index as a tuple with Ellipsis expanded, and whether it is all basic."""
    if ndim == 0 and not isinstance(index, (tuple, list)):
        # a lone int or slice fails in the op itself, before any count of indices
        if isinstance(index, slice):
            raise IndexError("slice() cannot be applied to a 0-dim tensor.")
        if isinstance(index, (builtins.int, np.integer)) and not isinstance(
                index, (builtins.bool, np.bool_)):
            raise IndexError(_ZERO_DIM_INDEX)
    items = _as_items(index)
    basic = True
    consumed = 0
    if not isinstance(index, (tuple, list, Tensor, builtins.int, slice)) and _index_sequence(index):
        items = (list(index),)  # a range, a deque ...: PyTorch indexes with it as with a list
    for i in items:
        if i is None or i is Ellipsis:
            continue
        t = type(i)
        if t is builtins.int or t is slice:
            consumed += 1
        elif t is builtins.bool or t is np.bool_:
            basic = False
        elif isinstance(i, (builtins.int, np.integer)):
            consumed += 1
        elif isinstance(i, Tensor):
            kind = i._array.dtype.kind
            if i._array.dtype == np.uint8 or kind == "b":
                basic = False
                consumed += i._array.ndim
            else:
                consumed += 1
                if i._array.ndim or kind not in "iu":
                    basic = False
        elif isinstance(i, (list, tuple, np.ndarray)):
            basic = False
            consumed += 1
        elif isinstance(i, str):
            raise TypeError("new(): invalid data type 'str'")
        elif _index_sequence(i):
            return _expand_index(tuple(list(x) if x is i else x for x in items), ndim)
        else:
            raise IndexError("only integers, slices (`:`), ellipsis (`...`), None and long or "
                             f"byte Variables are valid indices (got {type(i).__name__})")
    ells = [k for k, i in enumerate(items) if i is Ellipsis]
    if consumed > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    if ells:
        # PyTorch lets the first ellipsis take every dim left over; any later one takes none
        k = ells[0]
        rest = tuple(i for i in items[k + 1:] if i is not Ellipsis) if len(ells) > 1 \
            else items[k + 1:]
        items = items[:k] + (slice(None),) * (ndim - consumed) + rest
    return items, basic


def _slice(t, dim, start, stop, step):
    size = t._array.shape[dim]
    if step <= 0:
        raise ValueError("slice step cannot be zero" if step == 0 else
                         "step must be greater than zero")
    start, stop, _ = slice(start, stop, step).indices(size)
    stop = builtins.max(start, stop)
    if start == 0 and stop == size and step == 1:
        return t
    index = (slice(None),) * dim + (slice(start, stop, step),)
    out = make_view_of(t, t._array[index], lambda b: _slice(b, dim, start, stop, step))
    shift_empty_view(out, t, dim, start)
    node = record(SliceBackward0, (t,), out)
    if node is not None:
        node.dim, node.start, node.length, node.step = dim, start, out._array.shape[dim], step
    return out


_ZERO_DIM_INDEX = ("invalid index of a 0-dim tensor. Use `tensor.item()` in Python or "
                   "`tensor.item<T>()` in C++ to convert a 0-dim tensor to a number")


def _select(t, dim, i, real):
    """select, with PyTorch's message naming the dim of the indexed tensor (`real`)."""
    i = builtins.int(i)
    n = t._array.shape[dim]
    if not -n <= i < n:
        raise IndexError(f"index {i} is out of bounds for dimension {real} with size {n}")
    return select(t, dim, i)


def _basic_getitem(t, index):
    dim = real = 0
    for i in index:
        if i is None:
            t = unsqueeze(t, dim)
            dim += 1
        elif isinstance(i, slice):
            t = _slice(t, dim, i.start, i.stop, 1 if i.step is None else i.step)
            dim += 1
        else:
            if t._array.ndim == 0:
                raise IndexError(_ZERO_DIM_INDEX)
            t = _select(t, dim, i, real)
        real += 1 if i is not None else 0
    return t


def _index_array(i, dev, xp):
    """An advanced index item as a backend array (bool or integer)."""
    if isinstance(i, Tensor):
        arr = i._array
        if i._device != dev:
            if i._device.type != "cpu":
                raise RuntimeError(f"indices should be either on cpu or on the same device as the "
                                   f"indexed tensor ({dev})")
            arr = xp.asarray(arr)
        if arr.dtype not in (np.int64, np.int32, np.uint8, np.bool_):
            raise IndexError("tensors used as indices must be long, int, byte or bool tensors")
    else:
        # a sequence becomes an index tensor: bool stays bool, anything else is cast to long
        from .creation import tensor
        try:
            arr = tensor(i)._array
        except (TypeError, ValueError):
            raise TypeError(f"new(): invalid data type '{_first_leaf_type(i)}'") from None
        if arr.dtype != np.bool_:
            arr = arr.astype(np.int64)
        if xp is not np:
            arr = xp.asarray(arr)
    if arr.dtype == np.uint8:
        warnings.warn("indexing with dtype torch.uint8 is now deprecated, please use a dtype "
                      "torch.bool instead.", UserWarning, stacklevel=4)
        arr = arr.astype(np.bool_)
    return arr


def _first_leaf_type(x):
    while isinstance(x, (list, tuple)) and x:
        x = x[0]
    return type(x).__name__


def _prepare(self, items):
    """Apply the basic items of an (Ellipsis-expanded) index as views; return the view and
    its advanced index: a tuple with, per dim of the view, slice(None) or an index array."""
    xp = _xp(self)
    t, dim, real = self, 0, 0
    adv = []  # (dim, array)
    for i in items:
        if i is None:
            t = unsqueeze(t, dim)
            dim += 1
        elif isinstance(i, slice):
            t = _slice(t, dim, i.start, i.stop, 1 if i.step is None else i.step)
            dim += 1
            real += 1
        elif isinstance(i, (builtins.bool, np.bool_)) or (
                isinstance(i, Tensor) and i._array.ndim == 0 and i._array.dtype.kind == "b"):
            t = unsqueeze(t, dim)
            adv.append((dim, xp.zeros(1 if builtins.bool(i) else 0, dtype=np.int64)))
            dim += 1
        elif isinstance(i, (builtins.int, np.integer)) or (
                isinstance(i, Tensor) and i._array.ndim == 0 and i._array.dtype.kind in "iu"
                and i._array.dtype != np.uint8):
            if t._array.ndim == 0:
                raise IndexError(_ZERO_DIM_INDEX)
            t = _select(t, dim, i, real)
            real += 1
        else:
            arr = _index_array(i, self._device, xp)
            adv.append((dim, arr))
            k = arr.ndim if arr.dtype == np.bool_ else 1
            dim += k
            real += k
    return t, _finish_index(t._array.shape, adv, xp, t._device)


def _finish_index(shape, adv, xp, dev):
    """Check masks, broadcasting and bounds (on the host for the CPU; on `dev` otherwise, as
    PyTorch's CUDA kernels assert on the device); the index tuple for the view's array."""
    for d, arr in adv:
        if arr.dtype == np.bool_:
            for j, n in enumerate(arr.shape):
                if d + j >= len(shape) or shape[d + j] != n:
                    raise IndexError(f"The shape of the mask {list(arr.shape)} at index {j} does "
                                     f"not match the shape of the indexed tensor {list(shape)} "
                                     f"at index {d + j}")
    if len(adv) == 1 and adv[0][1].dtype == np.bool_ and adv[0][1].ndim:
        d, arr = adv[0]
        return (slice(None),) * d + (arr,)
    per_dim, given = [], []  # given: the positions in per_dim of the caller's integer indices
    for d, arr in adv:
        if arr.dtype == np.bool_:
            per_dim.extend(zip(range(d, d + arr.ndim), arr.nonzero()) if arr.ndim
                           else [(d, xp.zeros(builtins.int(arr), np.int64))])
        else:
            given.append(len(per_dim))
            per_dim.append((d, arr))
    shapes = [a.shape for _, a in per_dim]
    try:
        bshape = np.broadcast_shapes(*shapes)
    except ValueError:
        raise IndexError("shape mismatch: indexing tensors could not be broadcast together with "
                         f"shapes {', '.join(str(list(s)) for s in shapes)}") from None
    if checks_on_host(dev):
        _check_bounds(shape, per_dim, bshape, xp)
    else:  # meanwhile the indices wrap into range, so a scatter stays inside the array
        for k in given:
            d, arr = per_dim[k]
            if not arr.size:
                continue
            if not shape[d]:  # every index is out of range: no need to look at them
                raise IndexError("index is out of bounds for dimension with size 0")
            assert_on_device(dev, (arr < -shape[d]) | (arr >= shape[d]),
                             'index: Assertion `-sizes[i] <= index && index < sizes[i] && '
                             '"index out of bounds"`')
            per_dim[k] = d, arr % shape[d]
    index = [slice(None)] * (per_dim[-1][0] + 1)
    for d, arr in per_dim:
        index[d] = arr
    return tuple(index)


def _check_bounds(shape, per_dim, bshape, xp):
    bad_any = False
    for d, arr in per_dim:
        if arr.size and (builtins.int(arr.min()) < -shape[d] or builtins.int(arr.max()) >= shape[d]):
            bad_any = True
            break
    if not bad_any:
        return
    # PyTorch reports the first bad element in iteration order, then the first bad dim of it.
    bad = xp.stack([xp.broadcast_to((arr < -shape[d]) | (arr >= shape[d]), bshape).reshape(-1)
                    for d, arr in per_dim])
    pos = builtins.int(bad.any(axis=0).argmax())
    k = builtins.int(bad[:, pos].argmax())
    d, arr = per_dim[k]
    value = builtins.int(xp.broadcast_to(arr, bshape).reshape(-1)[pos])
    if shape[d] == 0:
        raise IndexError("index is out of bounds for dimension with size 0")
    # PyTorch names the position among the index tensors, not the tensor's dim
    raise IndexError(f"index {value} is out of bounds for dimension {k} with size {shape[d]}")


def _result_shape(shape, index):
    """The shape `array[index]` has, for an index made by `_finish_index`."""
    out, adv, adv_at, dim, prev_adv, separated = [], [], None, 0, None, False
    for k, i in enumerate(index):
        if isinstance(i, slice):
            out.append(shape[dim])
            dim += 1
            continue
        if adv_at is None:
            adv_at = len(out)
        elif prev_adv != k - 1:
            separated = True
        prev_adv = k
        if i.dtype == np.bool_:
            adv.append((builtins.int(i.sum()),))
            dim += i.ndim
        else:
            adv.append(i.shape)
            dim += 1
    bshape = list(np.broadcast_shapes(*adv)) if adv else []
    if separated:
        adv_at = 0
    return tuple(out[:adv_at] + bshape + out[adv_at:] + list(shape[dim:]))


# ---- linear indices ------------------------------------------------------------------------------
def linear_index(shape, index, xp):
    """The flat (C-order) positions in an array of `shape` that `array[index]` reads, shaped
    as the result; without materialising an arange over the whole array."""
    lin = None
    stride = 1
    strides = []
    for n in reversed(shape):
        strides.append(stride)
        stride *= n
    strides.reverse()
    for d, n in enumerate(shape):
        coord = xp.arange(n, dtype=np.int64) * strides[d]
        coord = xp.broadcast_to(coord.reshape((1,) * d + (n,) + (1,) * (len(shape) - d - 1)), shape)
        part = coord[index]
        lin = part if lin is None else lin + part
    if lin is None:  # a 0-dim array
        return xp.zeros(_result_shape(shape, index), np.int64)
    return lin


# ---- the gather (`x[idx]`) and its inverse (`index_put`) -----------------------------------------
class IndexBackward0(Node):
    def backward(self, grad):
        full = make_tensor(_xp(grad).zeros(self._meta[0][0], grad._array.dtype), grad._device)
        return _index_put(full, self.index, grad, True, owned=True)


def _index(t, index):
    out = make_tensor(_casts.on_bits(lambda a: _laid_out_as_pytorch(t, index, a[index]),
                                     t._array), t._device)
    node = record(IndexBackward0, (t,), out)
    if node is not None:
        node.index = index
    return out


def _laid_out_as_pytorch(t, index, result):
    """An advanced index's `result` (of `t`'s array) in PyTorch's layout: its TensorIterator
    lays the result out by the strides of `t` (0 along the indexed dims) and then of the index
    arrays, where NumPy follows the input's order in its own way. A contiguous input indexed
    by contiguous arrays gives a contiguous result there (NumPy's may not be)."""
    arrays = [i for i in index if not isinstance(i, slice)]
    if result.ndim < 2 or not result.size:
        return result
    if plainly_contiguous(t._array) and all(a.flags.c_contiguous for a in arrays):
        return c_ordered(result)
    shape, strides = t._array.shape, t.stride()
    dims = [d for d, i in enumerate(index) if not isinstance(i, slice)]
    if len(arrays) == 1 and arrays[0].dtype == np.bool_:  # a mask: its nonzero() columns
        dims = list(builtins.range(dims[0], dims[0] + arrays[0].ndim))
        positions, per_index = (0,), [(1,)] * len(dims)
    else:
        bshape = np.broadcast_shapes(*(a.shape for a in arrays))
        positions = tuple(builtins.range(len(bshape)))
        per_index = [tuple(s // a.itemsize for s in _xp(t).broadcast_to(a, bshape).strides)
                     for a in arrays]
    adjacent = dims == list(builtins.range(dims[0], dims[-1] + 1))
    first = dims[0] if adjacent else 0
    rest = [d for d in builtins.range(len(shape)) if d not in dims]
    # result dims: the rest before `first`, the index dims, then the rest after
    src = [strides[d] for d in rest[:first]] + [0] * len(positions) + \
        [strides[d] for d in rest[first:]]
    operands = [src]
    for index_strides in per_index:
        operand = [0] * result.ndim
        for p, s in zip(positions, index_strides):
            operand[first + p] = s
        operands.append(operand)
    wanted = iterator_strides(result.shape, operands)
    if tuple(s // result.itemsize for s in result.strides) == wanted:
        return result
    return laid_out(_xp(t), result, wanted)


class IndexPutBackward0(Node):
    def backward(self, grad):
        g_self = g_values = None
        if self._next[0][0] is not None:
            g_self = grad if self.accumulate else _index_put(grad, self.index, _zero(grad), False)
        if self._next[1][0] is not None:
            g_values = _index(grad, self.index)
        return g_self, g_values


def _zero(like):
    return make_tensor(_xp(like).zeros((), like._array.dtype), like._device)


def _broadcast_values(vals, shape, index, xp, strip=False):
    if fill_mask(index, vals) is not None:
        return vals.reshape(())  # fits whatever the mask selects, without counting it
    target = _result_shape(shape, index)
    if strip:  # `x[idx] = v` drops v's leading size-1 dims (PyTorch's slicePrefix1sSize)
        k = 0
        while k < vals.ndim - len(target) and vals.shape[k] == 1:
            k += 1
        vals = vals.reshape(vals.shape[k:])
    if vals.shape != target:
        try:
            vals = xp.broadcast_to(vals, target)
        except ValueError:
            raise RuntimeError(f"shape mismatch: value tensor of shape {list(vals.shape)} cannot "
                               f"be broadcast to indexing result of shape {list(target)}") from None
    return vals


def _put_arrays(arr, index, vals, accumulate, xp):
    """Write (or add) `vals` into `arr[index]` in place; `arr` is C-contiguous."""
    mask = None if accumulate else fill_mask(index, vals)
    if mask is not None:
        fill_where(arr, index, mask, vals, xp)
        return
    if not accumulate:
        arr[index] = vals
        return
    vals = _broadcast_values(vals, arr.shape, index, xp)
    d = len(index) - 1
    last = index[-1]
    if all(isinstance(i, slice) or i.dtype == np.bool_ for i in index):
        arr[index] += vals  # a mask never repeats a position
        return
    if d >= 0 and not isinstance(last, slice) and last.dtype != np.bool_ and \
            all(isinstance(i, slice) for i in index[:-1]):
        # one integer index along one dim (embedding-like): add whole rows
        rows = vals.reshape(arr.shape[:d] + (last.size,) + arr.shape[d + 1:])
        add_along(arr, d, last.reshape(-1), rows, xp)
        return
    lin = linear_index(arr.shape, index, xp)
    accumulate_flat(arr.reshape(-1), lin.reshape(-1), vals.reshape(-1))


def _index_put(t, index, values, accumulate, owned=False):
    """Out of place `t[index] = values` (or `+=`): `values` a Tensor of t's dtype. `owned`:
    t is a fresh temporary (a backward's zeros) whose memory the result may take over."""
    xp = _xp(t)
    arr = t._array if owned else t._array.copy(order="C")
    vals = _broadcast_values(values._array, arr.shape, index, xp)
    _put_arrays(arr, index, vals, accumulate, xp)
    out = make_tensor(arr, t._device)
    node = record(IndexPutBackward0, (t, values), out)
    if node is not None:
        node.index, node.accumulate = index, accumulate
    return out


def _put_index(t, indices, fname="index_put", arg=0):
    """The index tuple of `index_put(t, indices, ...)`: one tensor per dim (a mask: k dims)."""
    if isinstance(indices, Tensor) or not isinstance(indices, (tuple, list)):
        raise TypeError(f"{fname}(): argument 'indices' (position {arg + 1}) must be tuple of "
                        f"Tensors, not {type(indices).__name__}")
    if len(indices) > t._array.ndim:
        raise IndexError(f"too many indices for tensor of dimension {t._array.ndim} (got "
                         f"{len(indices)})")
    xp = _xp(t)
    adv, dim = [], 0
    for k, i in enumerate(indices):
        if not isinstance(i, Tensor):
            raise TypeError(f"expected Tensor as element {k} in argument {arg}, but got "
                            f"{type(i).__name__}")
        arr = _index_array(i, t._device, xp)
        adv.append((dim, arr))
        dim += arr.ndim if arr.dtype == np.bool_ else 1
    if not adv:
        return (Ellipsis,)
    return _finish_index(t._array.shape, adv, xp, t._device)


def _check_put_dtype(t, values):
    if values.dtype is not t.dtype:
        raise RuntimeError(f"Index put requires the source and destination dtypes match, got "
                           f"{t.dtype._scalar_name} for the destination and "
                           f"{values.dtype._scalar_name} for the source.")


def index_put(input, indices, values, accumulate=False):
    """Out of place `input[indices] = values` (`+=` with accumulate); differentiable."""
    _check_put_dtype(input, values)
    index = _put_index(input, indices, "index_put", 1)
    return _index_put(input, index, put_values(input, index, values, accumulate), accumulate)


def _index_put_method(self, indices, values, accumulate=False):
    _check_put_dtype(self, values)
    index = _put_index(self, indices)
    return _index_put(self, index, put_values(self, index, values, accumulate), accumulate)


# The method's messages count arguments after self (PyTorch's argument parser), so it is a
# function of its own, bound here rather than through METHODS.
_index_put_method.__name__ = "index_put"
Tensor.index_put = _index_put_method


def index_put_(input, indices, values, accumulate=False):
    _check_put_dtype(input, values)
    index = _put_index(input, indices, "index_put_")
    values = put_values(input, index, values, accumulate)
    warn_expanded_put(input, index, values._array, accumulate)
    if not tracks(input, (values,)):
        if write_watchers:
            before_write(input)
        xp = _xp(input)
        vals = _broadcast_values(values._array, input._array.shape, index, xp)
        if accumulate and not input._array.flags.c_contiguous:
            arr = input._array.copy()
            _put_arrays(arr, index, vals, True, xp)
            writable(input._array)[...] = arr
        else:
            _put_arrays(writable(input._array), index, vals, accumulate, xp)
        input._vc.value += 1
        return input
    return inplace(input, lambda s: _index_put(s, index, values, accumulate), (values,),
                   allow_overlap=True)


# ---- __getitem__ / __setitem__ -----------------------------------------------------------------
def __getitem__(self, index):
    # `t[i]`, `t[a:b]`, `t[:, i]`: ints and slices, no more than the dims, are basic items
    # as they stand (what _expand_index would give, without its general parsing)
    kind = type(index)
    if (kind is builtins.int or kind is slice) and self._array.ndim:
        idx, basic = (index,), True
    elif kind is tuple and len(index) <= self._array.ndim and _ints_and_slices(index):
        idx, basic = index, True
    else:
        idx, basic = _expand_index(index, self._array.ndim)
    if basic:
        out = _basic_getitem(self, idx)
        if out is self:  # `t[:]`, `t[...]`: still a new view object, as in PyTorch
            out = make_view_of(self, self._array.view(), lambda b: b[...])
            from .shape import AliasBackward0
            record(AliasBackward0, (self,), out)
        return out
    view, np_idx = _prepare(self, idx)
    if self._device.type == "meta":
        refuse_masks(np_idx)
    return _index(view, np_idx)


def _ints_and_slices(items):
    for i in items:
        if type(i) is not builtins.int and type(i) is not slice:
            return False
    return True


def _tracked_write(self, value):
    return tracks(self, (value,))


def _write_whole(self, value):
    """`t[...] = value` where the index selects all of `t`: PyTorch's copy (CopyBackwards) of
    a value of t's shape, else a fill from a 0-dim value (a number made one, FillBackward3),
    else a copy of the broadcast value; a leaf's own error where it requires grad."""
    if not isinstance(value, Tensor):
        value = _scalar_like(value, self)
    # (a 0-dim value on another device than a CPU would be read to the host by fill_)
    if value._array.shape != self._array.shape and not value._array.ndim and \
            (value._device == self._device or value._device.type == "cpu"):
        from .creation import fill_
        fill_(self, value)
    else:
        copy_(self, _value_for(self, value))


def __setitem__(self, index, value):
    if self._inference:
        check_inference_write(self)
    if value is None or isinstance(value, (str, bytes, dict, set)):
        # PyTorch takes only tensors and numbers; ember still takes lists and NumPy values
        raise TypeError(f"can't assign a {type(value).__name__} to a {self.type()}")
    idx, basic = _expand_index(index, self._array.ndim)
    if isinstance(value, Tensor) and value._device != self._device and value._array.ndim:
        raise RuntimeError(f"expected device {self._device} but got device {value._device}")
    if basic:
        if isinstance(value, Tensor) and value._array.shape:
            _value_for(_basic_getitem(self, idx), value)
        if not _tracked_write(self, value):
            try:
                target = self._array[idx]
            except IndexError:
                _basic_getitem(self, idx)  # raises NumPy's error in PyTorch's words
                raise
            if 0 in getattr(target, "strides", ()):
                check_no_internal_overlap(target)  # `x.expand(3, 4)[0] = v`, as PyTorch
            if write_watchers:
                before_write(self)
            if isinstance(value, Tensor):
                value = value._host() if value._device.type != self._device.type \
                    else value._array
            elif isinstance(value, _NUMBERS):
                value = _checked_number(value, self)
            writable(self._array)[idx] = value
            self._vc.value += 1
            return
        target = _basic_getitem(self, idx)
        if 0 in target._array.strides:  # fill_ would allow it; `t[idx] = v` does not
            check_no_internal_overlap(target._array)
        if target is self:  # the whole tensor: written itself, not a view of it, as PyTorch
            _write_whole(self, value)
        elif isinstance(value, Tensor):
            copy_(target, _value_for(target, value))
        else:
            from .creation import fill_
            fill_(target, value)
        return
    value_t = value if isinstance(value, Tensor) else _scalar_like(value, self)
    if value_t._device != self._device:
        from .conversion import _move
        value_t = make_tensor(_move(value_t._array, value_t._device, self._device), self._device)
    _check_put_dtype(self, value_t)
    view, np_idx = _prepare(self, idx)
    xp = _xp(self)
    vals = value_t._array
    if vals.ndim:
        k = 0
        while k < vals.ndim and vals.shape[k] == 1:
            k += 1
        if k:
            value_t = value_t.reshape(vals.shape[k:])
    vals = _broadcast_values(value_t._array, view._array.shape, np_idx, xp)
    warn_expanded_put(view, np_idx, vals)
    if not _tracked_write(self, value_t):
        if write_watchers:
            before_write(self)
        _put_arrays(writable(view._array), np_idx, vals, False, xp)
        self._vc.value += 1
        return
    inplace(view, lambda s: _index_put(s, np_idx, value_t, False), (value_t,),
            allow_overlap=True)


# ---- copy_ -------------------------------------------------------------------------------------
class CopyBackwards(Node):
    def backward(self, grad):
        from .creation import zeros_like
        return zeros_like(grad), grad


def copy_(self, src, non_blocking=False):
    if not isinstance(src, Tensor):
        if not isinstance(src, (builtins.bool, builtins.int, builtins.float, builtins.complex,
                                np.generic)):
            raise TypeError(f"copy_(): argument 'src' (position 1) must be Tensor, not "
                            f"{type(src).__name__}")
        from .creation import tensor
        src = tensor(src, device=self._device)
    if src is self:  # PyTorch skips a copy onto itself (even into expanded memory)
        return self
    return inplace(self, lambda s: _copied(s, src), (src,))


def _copied(s, src):
    """The value `s.copy_(src)` leaves in s: src moved, broadcast and cast to s."""
    from .conversion import _move
    from .._tensor import xp_of
    shape = s._array.shape
    same_shape = src._array.shape == shape  # the common copy, which needs no broadcast
    if not same_shape:
        if not _broadcastable(shape, src):
            raise RuntimeError(_size_mismatch(shape, src._array.shape))
        if np.broadcast_shapes(shape, src._array.shape) != shape:
            raise RuntimeError(f"output with shape {list(shape)} doesn't match the broadcast "
                               f"shape {list(_broadcast_or(shape, src))}")
    arr = _move(src._array, src._device, s._device)
    if not same_shape:
        arr = xp_of(s).broadcast_to(arr, shape)
    if s.dtype._kind or src.dtype._kind:
        arr = _casts.astype(arr, s.dtype)
    out = make_tensor(arr.astype(s._array.dtype, copy=False), s._device)
    record(CopyBackwards, (s, src), out)
    return out


def _size_mismatch(a_shape, b_shape):
    """PyTorch's message for shapes that do not broadcast."""
    n = builtins.max(len(a_shape), len(b_shape))
    for k in range(1, n + 1):
        a = a_shape[-k] if k <= len(a_shape) else 1
        b = b_shape[-k] if k <= len(b_shape) else 1
        if a != b and a != 1 and b != 1:
            return (f"The size of tensor a ({a}) must match the size of tensor b ({b}) at "
                    f"non-singleton dimension {n - k}")
    return ""


def _broadcastable(shape, src):
    try:
        np.broadcast_shapes(shape, src._array.shape)
        return True
    except ValueError:
        return False


def _broadcast_or(shape, src):
    return np.broadcast_shapes(shape, src._array.shape) if _broadcastable(shape, src) \
        else src._array.shape


# ---- nonzero -----------------------------------------------------------------------------------
def nonzero(input, *, out=None, as_tuple=False):
    if input._device.type == "meta":  # its shape is the count of nonzero values
        raise NotImplementedError(NONZERO)
    arr = input._array
    if input.dtype._kind:
        _casts.refuse(input.dtype, "nonzero_count_cpu", (_dt.COMPLEX32,))
        arr = _casts.complex32_to_complex64(arr)
    xp = _xp(input)
    if as_tuple:
        idx = arr.nonzero() if arr.ndim else xp.nonzero(arr.reshape(1))
        return tuple(make_tensor(i.astype(np.int64, copy=False), input._device) for i in idx)
    if arr.ndim == 0:
        res = xp.zeros((1 if builtins.bool(arr) else 0, 0), np.int64)
    else:
        res = xp.stack(arr.nonzero(), axis=1).astype(np.int64, copy=False)
    res = make_tensor(res, input._device)
    if out is not None:
        from ._writes import write_out
        return write_out(out, res, "nonzero")
    return res


def argwhere(input):
    return nonzero(input)


def nonzero_static(input, *, size, fill_value=-1, out=None):
    """`nonzero` with exactly `size` rows: the first `size` indices, then rows of
    `fill_value` (a shape known before the values are, as compilers want)."""
    if not isinstance(size, builtins.int) or isinstance(size, builtins.bool) or size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    if out is not None:
        if not isinstance(out, Tensor) or out.dtype.name != "int64":
            raise RuntimeError("nonzero_static: Expected out tensor to have scalar type Long but "
                               f"got scalar type{getattr(out.dtype, '_scalar_name', out)}")
        return write_out(out, nonzero_static(input, size=size, fill_value=fill_value),
                         "nonzero_static")
    if input._device.type == "meta":  # its shape is known before its values: (size, dim)
        return make_tensor(_xp(input).empty((size, input._array.ndim), np.int64), input._device)
    found = nonzero(input)
    arr = found._array[:size]
    if arr.shape[0] < size:
        xp = _xp(input)
        pad = xp.full((size - arr.shape[0], arr.shape[1]), fill_value, np.int64)
        arr = xp.concatenate([arr, pad])
    return make_tensor(arr.copy(), input._device)
