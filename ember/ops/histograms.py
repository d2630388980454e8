"""Counting ops: bincount, histc, histogram, histogramdd and isin.

None of them is differentiable. PyTorch still records bincount, histc's sibling histogram
and their weights in the graph (a node named "NotImplemented" whose backward raises), so a
user sees the same grad_fn and the same error; histc and isin give results outside it.
"""
import builtins
import math

import numpy as np

from .._meta import refuse_on_meta
from .. import dtypes as _dt
from .._tensor import make_tensor, Tensor, xp_of
from ._graph import Node, record
from ._writes import write_out
from ._accumulate import bincount_sized
from .ranges import _line
from .pointwise import operands
from .reduction import return_type

__all__ = ["bincount", "histc", "histogram", "histogramdd", "isin"]
METHODS = ["bincount", "histc", "histogram"]  # PyTorch has no Tensor.isin

histogram_result = return_type("histogram", ("hist", "bin_edges"))
histogramdd_result = return_type("histogramdd", ("hist", "bin_edges"))


class _NotImplementedBackward(Node):
    op = ""

    def backward(self, *grads):
        raise RuntimeError(f"derivative for aten::{self.op} is not implemented")


_NotImplementedBackward.__name__ = _NotImplementedBackward.__qualname__ = "NotImplemented"


def _record_not_implemented(op, inputs, *outputs):
    node = record(_NotImplementedBackward, tuple(t for t in inputs if t is not None), *outputs)
    if node is not None:
        node.op = op
        node._out_meta = tuple((t._array.shape, t.dtype, t._device) for t in outputs)


def _need_tensor(fname, value, name, position):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fname}(): argument '{name}' (position {position}) must be Tensor, not "
                        f"{type(value).__name__}")


def _g(v):
    """A double as C++ streams print it (6 significant digits)."""
    return f"{v:g}"


# ---- bincount ---------------------------------------------------------------------------------
def bincount(input, weights=None, minlength=0):
    _need_tensor("bincount", input, "input", 1)
    refuse_on_meta("aten::bincount", input, weights)
    d = input.dtype
    if d.is_floating_point or d.is_complex or d is _dt.bool or d._kind:
        raise NotImplementedError(f'"bincount_cpu" not implemented for \'{d._scalar_name}\'')
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    xp, arr, dev = xp_of(input), input._array, input._device
    if arr.ndim == 1 and arr.size == 0:
        return make_tensor(xp.zeros(minlength, dtype=np.int64), dev)
    if arr.ndim != 1 or builtins.int(arr.min()) < 0:
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    if weights is not None and (weights._array.ndim != 1 or weights._array.shape[0] != arr.shape[0]):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    idx = arr.astype(np.int64, copy=False)
    if weights is None:
        return make_tensor(xp.bincount(idx, minlength=minlength).astype(np.int64, copy=False), dev)
    # float weights keep float32; every other dtype is summed as double, as PyTorch does
    out_dtype = np.float32 if weights.dtype is _dt.float32 else np.float64
    counts = xp.bincount(idx, weights=weights._array.astype(np.float64), minlength=minlength)
    res = make_tensor(counts.astype(out_dtype), dev)
    _record_not_implemented("bincount", (weights,), res)
    return res


# ---- histc and histogram -----------------------------------------------------------------------
def _bin_positions(xp, flat, edges, linear_search):
    """The bin of each element (-1 outside the edges), PyTorch's way: by linear
    interpolation between the outer edges (histc), corrected by one step against the
    edges when `linear_search` (histogram with a bin count), or by binary search (bins
    given as a tensor: `edges` not evenly spaced)."""
    nb = edges.shape[0] - 1
    lo, hi = edges[0], edges[-1]
    inside = (flat >= lo) & (flat <= hi)
    if linear_search is None:
        pos = xp.searchsorted(edges, flat, side="right") - 1
    else:
        safe = xp.where(inside, flat, lo)
        pos = ((safe - lo) * nb / (hi - lo)).astype(np.int64)
        pos = xp.clip(pos, 0, nb)
        if linear_search:
            pos = xp.where(safe < edges[pos], pos - 1, pos)
            nxt = xp.minimum(pos + 1, nb)
            pos = xp.where((pos < nb) & (safe >= edges[nxt]), pos + 1, pos)
    pos = xp.where(pos >= nb, nb - 1, pos)
    return xp.where(inside, pos, -1)


def _count(xp, flat, weights, edges, linear_search, dtype):
    nb = edges.shape[0] - 1
    pos = _bin_positions(xp, flat, edges, linear_search)
    # elements outside the edges go to a spare bin past the end (a boolean selection would
    # read its count on a device)
    pos = xp.where(pos >= 0, pos, nb)
    w = None if weights is None else weights.astype(np.float64)
    return bincount_sized(xp, pos, w, nb + 1)[:nb].astype(dtype)


def _check_bins(bins, dim=0):
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for dimension "
                           f"{dim}")


def _extrema(arr):
    return builtins.float(arr.min()), builtins.float(arr.max())


def histc(input, bins=100, min=0, max=0, *, out=None):
    _need_tensor("histc", input, "input", 1)
    d = input.dtype
    if d._kind:  # PyTorch's histc finds the range first, with a kernel none of these have
        raise NotImplementedError(f'"aminmax_cpu" not implemented for \'{d._scalar_name}\'')
    if not d.is_floating_point:
        raise NotImplementedError(f'"histogram_cpu" not implemented for \'{d._scalar_name}\'')
    _check_bins(bins)
    arr, xp = input._array, xp_of(input)
    lo, hi = builtins.float(min), builtins.float(max)
    if lo == hi and arr.size > 0 and input._device.type != "meta":  # meta: no values to span
        lo, hi = _extrema(arr)
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_g(lo)}, {_g(hi)}] is not finite")
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    edges = _edges(xp, lo, hi, bins, d)
    res = make_tensor(_count(xp, arr.reshape(-1), None, edges, False, arr.dtype), input._device)
    return write_out(out, res, "histc") if out is not None else res


def _edges(xp, lo, hi, bins, d):
    edges = _line(lo, hi, bins + 1, d, "linspace").astype(d.np)
    return edges if xp is np else xp.asarray(edges)


def _check_float_input(input):
    d = input.dtype
    if d not in (_dt.float32, _dt.float64):
        raise NotImplementedError(f'"histogramdd" not implemented for \'{d._scalar_name}\'')
    return d


def _histogramdd(input, points, bins, range, weight, density, weight_fits, input_shape):
    """The histogram of the rows of `points` (M, N) over N dims, PyTorch's histogramdd: `bins`
    holds per dim a bin count or a Tensor of edges; `weight` (M values when `weight_fits`)
    weighs the rows. Returns (hist array, edge arrays)."""
    d, xp = input.dtype, xp_of(input)
    n = points.shape[1]
    for k, b in enumerate(bins):
        if isinstance(b, Tensor):
            if b._array.ndim != 1:
                raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, but "
                                   f"got {b._array.ndim} dimensions in the bins tensor for "
                                   f"dimension {k}")
            _check_bins(b._array.shape[0] - 1, k)
            if b.dtype is not d:
                raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should have "
                                   f"the same dtype, but got input with dtype {d._cpp_name} "
                                   f"and bins for dimension {k} with dtype "
                                   f"{b.dtype._cpp_name}")
        else:
            _check_bins(b, k)
    if weight is not None:
        if weight.dtype is not d:
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor and "
                               f"weight tensor should have the same dtype, but got "
                               f"input({d._cpp_name}), and "
                               f"weight({weight.dtype._cpp_name})")
        if not weight_fits:
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should have "
                               f"the same shape as the input tensor excluding its innermost "
                               f"dimension, but got input with shape {list(input_shape)} and "
                               f"weight with shape {list(weight._array.shape)}")
    if range is not None and len(range) != 2 * n:
        raise RuntimeError(f"torch.histogramdd: for a {n}-dimensional histogram range should have "
                           f"{2 * n} elements, but got {len(range)}")
    edges, positions = [], []
    for k, b in enumerate(bins):
        col = points[:, k]
        if isinstance(b, Tensor):
            e = b._array
            positions.append(_bin_positions(xp, col, e, None))
        else:
            lo, hi = 0.0, 1.0
            if range is not None:
                lo, hi = builtins.float(range[2 * k]), builtins.float(range[2 * k + 1])
            elif col.size > 0:
                lo, hi = _extrema(col)
            if lo == hi:
                lo, hi = lo - 0.5, hi + 0.5
            elif lo > hi:
                raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                                   f"{_g(lo)} max {_g(hi)} for dimension {k}")
            if not (np.isfinite(lo) and np.isfinite(hi)):
                raise RuntimeError(f"torch.histogramdd: dimension {k}'s range [{_g(lo)}, "
                                   f"{_g(hi)}] is not finite")
            e = _edges(xp, lo, hi, b, d)
            positions.append(_bin_positions(xp, col, e, True))
        edges.append(e)
    shape = tuple(e.shape[0] - 1 for e in edges)
    if not shape:  # no dims: PyTorch's empty product of counts
        return xp.zeros((), dtype=d.np), edges
    keep = xp.ones(points.shape[0], dtype=bool)
    for pos in positions:
        keep &= pos >= 0
    flat = xp.zeros(points.shape[0], dtype=np.int64)
    for pos, nb in zip(positions, shape):
        flat = flat * nb + xp.where(keep, pos, 0)
    w = None if weight is None else weight._array.reshape(-1).astype(np.float64)
    size = math.prod(shape)
    hist = bincount_sized(xp, xp.where(keep, flat, size), w, size + 1)[:size]
    hist = hist.astype(d.np).reshape(shape)
    if density:
        volume = xp.ones(shape, dtype=d.np)
        for k, e in enumerate(edges):
            widths = (e[1:] - e[:-1]).reshape((-1,) + (1,) * (len(shape) - 1 - k))
            volume = volume * widths
        hist = (hist / (hist.sum() * volume)).astype(d.np, copy=False)
    return hist, edges


def histogram(input, bins, *, range=None, weight=None, density=False, out=None):
    _need_tensor("histogram", input, "input", 1)
    refuse_on_meta("aten::histogram.bins_tensor" if isinstance(bins, Tensor) else
                   "aten::histogram.bin_ct", input)
    _check_float_input(input)
    points = input._array.reshape(-1, 1)
    # PyTorch reshapes input to (numel, 1) and weight to (numel,): any weight shape of that size
    flat_weight = None if weight is None else weight.reshape(-1)
    fits = weight is None or weight._array.size == points.shape[0]
    hist, edges = _histogramdd(input, points, [bins], range, flat_weight, density, fits,
                               points.shape)
    dev = input._device
    hist_t = make_tensor(hist, dev)
    edges_t = make_tensor(edges[0].copy() if isinstance(bins, Tensor) else edges[0], dev)
    if out is not None:
        write_out(out[0], hist_t, "histogram")
        write_out(out[1], edges_t, "histogram")
        return histogram_result(out[0], out[1])
    _record_not_implemented("histogram",
                            (input, bins if isinstance(bins, Tensor) else None, weight),
                            hist_t, edges_t)
    return histogram_result(hist_t, edges_t)


def histogramdd(input, bins, *, range=None, weight=None, density=False):
    """The N-dimensional histogram of the rows of `input` (its last dim holds the N
    coordinates); `bins` is a count, a count per dim, or a Tensor of edges per dim."""
    _need_tensor("histogramdd", input, "input", 1)
    refuse_on_meta("aten::_histogramdd_bin_edges", input)
    counts = isinstance(bins, (list, tuple)) and all(isinstance(b, int) for b in bins)
    if not (isinstance(bins, int) or counts or (isinstance(bins, (list, tuple)) and
                                                all(isinstance(b, Tensor) for b in bins))):
        raise TypeError(f"histogramdd() received an invalid combination of arguments - got "
                        f"(Tensor, {type(bins).__name__}), but expected one of:\n"
                        " * (Tensor input, int bins, tuple of floats range = None, Tensor weight "
                        "= None, bool density = False)\n"
                        " * (Tensor input, tuple of ints bins, tuple of floats range = None, "
                        "Tensor weight = None, bool density = False)\n"
                        " * (Tensor input, tuple of Tensors bins, tuple of floats range = None, "
                        "Tensor weight = None, bool density = False)\n")
    _check_float_input(input)
    arr = input._array
    if arr.ndim < 2:
        raise RuntimeError("torch.histogramdd: input tensor should have at least 2 dimensions")
    n = arr.shape[-1]
    if isinstance(bins, int):
        bins = [bins] * n
    elif counts and len(bins) != n:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    elif len(bins) != n:
        raise RuntimeError(f"torch.histogramdd: expected {n} sequences of bin edges for a "
                           f"{n}-dimensional histogram but got {len(bins)}")
    points = arr.reshape(-1, n)
    fits = weight is None or tuple(weight._array.shape) == arr.shape[:-1]
    flat_weight = weight.reshape(-1) if weight is not None and fits else weight
    hist, edges = _histogramdd(input, points, list(bins), range, flat_weight, density, fits,
                               arr.shape)
    dev = input._device
    hist_t = make_tensor(hist, dev)
    edges_t = tuple(make_tensor(e.copy() if isinstance(b, Tensor) else e, dev)
                    for e, b in zip(edges, bins))
    tensors = any(isinstance(b, Tensor) for b in bins)
    _record_not_implemented("_histogramdd_from_bin_tensors" if tensors else
                            "_histogramdd_from_bin_cts",
                            (input, *(b for b in bins if isinstance(b, Tensor)), weight),
                            hist_t, *edges_t)
    return histogramdd_result(hist_t, edges_t)


# ---- isin --------------------------------------------------------------------------------------
_ISIN_SIGNATURES = (
    " * (Tensor elements, Tensor test_elements, *, bool assume_unique = False, bool invert = "
    "False, Tensor out = None)\n"
    " * (Number element, Tensor test_elements, *, bool assume_unique = False, bool invert = "
    "False, Tensor out = None)\n"
    " * (Tensor elements, Number test_element, *, bool assume_unique = False, bool invert = "
    "False, Tensor out = None)\n")


def isin(elements, test_elements, *, assume_unique=False, invert=False, out=None):
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError(f"isin() received an invalid combination of arguments - got "
                        f"({type(elements).__name__}, {type(test_elements).__name__}), but "
                        f"expected one of:\n{_ISIN_SIGNATURES}")
    x, y, d, dev = operands(elements, test_elements, "isin")
    if d is _dt.bool or d.is_complex:
        raise RuntimeError(f"Unsupported input type encountered for isin(): {d._scalar_name}")
    ref = elements if isinstance(elements, Tensor) else test_elements
    xp = xp_of(ref)
    x, y = xp.asarray(x, dtype=d.np), xp.asarray(y, dtype=d.np)
    res = make_tensor(xp.isin(x, y, invert=invert), dev)
    return write_out(out, res, "isin") if out is not None else res
