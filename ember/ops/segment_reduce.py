"""`segment_reduce`: sum, mean, max, min or prod over consecutive segments of one axis, given
by `lengths` or `offsets` (whose leading dims are data's before `axis`). Floating dtypes only,
as PyTorch's kernels; an empty segment gives `initial`, or the reduction's identity (NaN for a
mean). The backward is first-order only: PyTorch has no derivative of it, and neither has ember
(the gradient's node raises as PyTorch's does)."""
import math
import numbers

import numpy as np

from .._tensor import Tensor, _wrap_dim, make_tensor, xp_of
from ._dual import refuse_tangent
from ._graph import Node, record
from .creation import _convert_scalar

__all__ = ["segment_reduce"]
METHODS = []

# reduce name -> (kind, the ufunc name of its fold)
_KINDS = {"sum": ("sum", "add"), "mean": ("mean", "add"), "prod": ("prod", "multiply"),
          "max": ("max", "maximum"), "amax": ("max", "maximum"),
          "min": ("min", "minimum"), "amin": ("min", "minimum")}
_EMPTY = {"sum": 0.0, "mean": math.nan, "prod": 1.0, "max": -math.inf, "min": math.inf}
_FLOATS = ("float16", "bfloat16", "float32", "float64")
_TORCH_CHECK = " to be true, but got false.  (Could this error message be improved?  If so, " \
    "please report an enhancement request to PyTorch.)"


def _fold(xp, name, x, starts, ends):
    """The ufunc `name`'s reduction of the rows x[starts[k]:ends[k]] (segments in order, not
    overlapping); an empty segment's row is left unspecified."""
    n, k = x.shape[0], starts.shape[0]
    if n == 0 or k == 0:
        return xp.zeros((k,) + x.shape[1:], x.dtype)
    ufunc = getattr(xp, name)
    if xp is np:  # reduceat between each start and end (one padding row makes end n valid)
        bounds = np.stack([starts, ends], 1).reshape(-1)
        return ufunc.reduceat(np.concatenate([x, x[:1]]), bounds, axis=0)[::2]
    # a device has no reduceat: a segmented Hillis-Steele scan, each row taking in the row
    # `step` back while that is still in its segment; a segment's last row then holds its fold
    run = xp.arange(n) - starts[_segment_of(xp, starts, n)]
    run = run.reshape((n,) + (1,) * (x.ndim - 1))
    step = 1
    while step < n:
        back = xp.concatenate([x[:step], x[:-step]])
        x = xp.where(run >= step, ufunc(back, x), x)
        step *= 2
    return x[xp.maximum(ends - 1, 0)]


def _segment_of(xp, starts, n):
    """Per row, the last segment starting at or before it (0 before the first)."""
    return xp.maximum(xp.searchsorted(starts, xp.arange(n), side="right") - 1, 0)


def _check_args(data, reduce, lengths, indices, offsets, axis, unsafe, initial):
    """PyTorch's argument parser's TypeErrors."""
    def refuse(name, want, value, position=None):
        where = f" (position {position})" if position else ""
        raise TypeError(f"segment_reduce(): argument '{name}'{where} must be {want}, not "
                        f"{type(value).__name__}")
    if not isinstance(data, Tensor):
        refuse("data", "Tensor", data, 1)
    if not isinstance(reduce, str):
        refuse("reduce", "str", reduce, 2)
    for name, value in (("lengths", lengths), ("indices", indices), ("offsets", offsets)):
        if value is not None and not isinstance(value, Tensor):
            refuse(name, "Tensor", value)
    if isinstance(axis, bool) or not isinstance(axis, numbers.Integral):
        refuse("axis", "int", axis)
    if not isinstance(unsafe, (bool, np.bool_)):
        refuse("unsafe", "bool", unsafe)
    if initial is not None and not isinstance(initial, (numbers.Number, Tensor)):
        refuse("initial", "Number", initial)


def _bounds(xp, seg, is_offsets, shape, ax, check):
    """(starts, ends) of every segment, flat over data's rows (shape[:ax] x shape[ax]), with
    PyTorch's checks of the values (`check`: not on meta, which has none)."""
    a = seg._array.astype(np.int64)
    if is_offsets:
        starts, ends = a[..., :-1], a[..., 1:]
    else:
        ends = xp.cumsum(a, -1)
        starts = ends - a
    n = shape[ax]
    rows = (xp.arange(math.prod(shape[:ax])) * n).reshape(shape[:ax] + (1,))
    if check and starts.size:  # one host read for both checks
        bad = xp.stack([(ends < starts).any(), ((starts < 0) | (ends > n)).any()]).tolist()
        if bad[0]:
            raise RuntimeError("Expected segment_length >= 0" + _TORCH_CHECK)
        if bad[1]:  # PyTorch reads outside data here (garbage or a crash): ember refuses
            raise RuntimeError(f"segment_reduce(): segments run outside data.size({ax}) = {n}")
    return (starts + rows).reshape(-1), (ends + rows).reshape(-1)


class _BackwardNotImplemented(Node):
    def backward(self, *grads):
        raise RuntimeError("derivative for aten::_segment_reduce_backward is not implemented")


_BackwardNotImplemented.__name__ = _BackwardNotImplemented.__qualname__ = "NotImplemented"


class SegmentReduceBackward0(Node):
    def backward(self, grad):
        data, result = self.saved_tensors
        xp, x = xp_of(data), data._array
        if data.is_meta or grad.is_meta:  # no values: only the gradient's shape and dtype
            g = make_tensor(xp.zeros(x.shape, x.dtype), grad._device)
        else:
            g = make_tensor(self._gradient(xp, grad._array, x, result._array), grad._device)
        record(_BackwardNotImplemented, (grad, data), g)  # (PyTorch has no double backward)
        return g

    def _gradient(self, xp, go, x, out):
        starts, ends, shape = self.starts, self.ends, x.shape
        rows = math.prod(shape[:self.axis + 1])
        rest = math.prod(shape[self.axis + 1:])
        x = x.reshape(rows, rest)
        go, out = go.reshape(starts.shape[0], rest), out.reshape(starts.shape[0], rest)
        sid = _segment_of(xp, starts, rows)
        inside = ((xp.arange(rows) < ends[sid]) & (xp.arange(rows) >= starts[sid]))[:, None]
        g, out_r = go[sid], out[sid]
        if self.kind == "mean":
            g = g / (ends - starts)[sid][:, None]
        elif self.kind in ("max", "min"):  # shared evenly by the elements equal to the result
            hit = ((x == out_r) | (xp.isnan(x) & xp.isnan(out_r))) & inside
            count = _fold(xp, "add", hit.astype(np.int64), starts, ends)
            g = xp.where(hit, g / xp.maximum(count[sid], 1), 0)
        elif self.kind == "prod":
            g = self._prod_grad(xp, g, x, out_r, sid, starts, ends)
        return xp.where(inside, g, 0).astype(x.dtype).reshape(shape)

    def _prod_grad(self, xp, g, x, out_r, sid, starts, ends):
        """g times each element's product of the rest of its segment (and initial): g * out
        / x (in that order, as PyTorch rounds), save where x is 0 or NaN, whose product comes
        from the others' counts of zeros and NaNs and the product of their plain values."""
        zero, nan = x == 0, xp.isnan(x)
        plain = ~(zero | nan)
        prod = _fold(xp, "multiply", xp.where(plain, x, 1), starts, ends)
        if self.initial is not None:
            prod = prod * x.dtype.type(self.initial)
        zeros = _fold(xp, "add", zero.astype(np.int64), starts, ends)[sid] - zero
        nans = _fold(xp, "add", nan.astype(np.int64), starts, ends)[sid] - nan
        rest = prod[sid] * xp.where(nans > 0, math.nan, xp.where(zeros > 0, 0.0, 1.0))
        return xp.where(plain, g * out_r / xp.where(plain, x, 1), g * rest.astype(x.dtype))


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    _check_args(data, reduce, lengths, indices, offsets, axis, unsafe, initial)
    refuse_tangent(data, "segment_reduce")  # PyTorch has no forward formula
    if indices is not None:
        raise RuntimeError("segment_reduce(): indices based reduction is not supported yet.")
    if reduce not in _KINDS:
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, got "
                           f"{reduce}")
    if lengths is None and offsets is None:
        raise RuntimeError("segment_reduce(): Either lengths or offsets must be defined.")
    kind, ufunc_name = _KINDS[reduce]
    shape, ax = data._array.shape, _wrap_dim(axis, data._array.ndim)
    seg, name = (offsets, "offsets") if offsets is not None else (lengths, "lengths")
    sshape = seg._array.shape  # (offsets win where both are given, as PyTorch's)
    if len(shape) < len(sshape):
        raise RuntimeError(f"Expected data.dim() >= {name}_value.dim()" + _TORCH_CHECK)
    if ax != len(sshape) - 1:
        raise RuntimeError(f"segment_reduce(): Expected axis to be the last dimension of {name} "
                           f"but got {ax}.")
    nseg = sshape[-1] - (name == "offsets")
    out_shape = shape[:ax] + (nseg,) + shape[ax + 1:]
    if nseg < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {nseg}: "
                           f"[{', '.join(map(str, out_shape))}]")
    if sshape[:-1] != shape[:ax]:  # PyTorch reads past smaller ones (or crashes): ember refuses
        raise RuntimeError(f"segment_reduce(): Expected {name}'s leading dims {list(sshape[:-1])}"
                           f" to equal data's {list(shape[:ax])}")
    xp, check = xp_of(data), not (data.is_meta or seg.is_meta)
    if check and name == "lengths" and not unsafe:
        a = seg._array
        if a.size == 0:
            raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() "
                               "== 0. Specify the reduction dim with the 'dim' argument.")
        negative, sums = xp.stack([(a < 0).any(), ~(a.sum(-1) == shape[ax]).all()]).tolist()
        if negative:
            raise RuntimeError("lengths contains negative value!")
        if sums:
            raise RuntimeError("segment_reduce(): Expected all rows of lengths along axis to sum "
                               "to data.size(lengths.dim()-1) when !unsafe.")
    if check and seg.dtype.name not in ("int32", "int64"):
        raise NotImplementedError(f'"_segment_reduce_{name}_cpu_kernel1" not implemented for '
                                  f"'{seg.dtype._scalar_name}'")
    if check and data.dtype.name not in _FLOATS:
        raise NotImplementedError(f"\"_segment_reduce_cpu\" not implemented for "
                                  f"'{data.dtype._scalar_name}'")
    if initial is not None:  # (a 0-dim tensor is a Number to PyTorch's parser)
        initial = _convert_scalar(initial.item() if isinstance(initial, Tensor) else initial,
                                  data.dtype)
    starts, ends = _bounds(xp, seg, name == "offsets", shape, ax, check)
    res = make_tensor(_reduced(xp, kind, ufunc_name, data._array, starts, ends, ax, initial)
                      .reshape(out_shape) if check else xp.zeros(out_shape, data._array.dtype),
                      data._device)  # (meta: no values to reduce)
    node = record(SegmentReduceBackward0, (data,), res)
    if node is not None:
        node.save_for_backward(data, res)
        node.kind, node.axis, node.initial, node.starts, node.ends = kind, ax, initial, starts, ends
    return res


def _reduced(xp, kind, ufunc_name, x, starts, ends, ax, initial):
    """The (segments, rest) array of the reduction, in x's dtype."""
    rows = x.reshape(math.prod(x.shape[:ax + 1]), math.prod(x.shape[ax + 1:]))
    folded = _fold(xp, ufunc_name, rows, starts, ends)
    count = (ends - starts)[:, None]
    if initial is not None:
        folded = getattr(xp, ufunc_name)(folded, x.dtype.type(initial))
    if kind == "mean":
        folded = folded / xp.maximum(count, 1)
    empty = _EMPTY[kind] if initial is None else initial
    return xp.where(count == 0, x.dtype.type(empty), folded).astype(x.dtype)
