"""The machinery of the pooling ops: window geometry, the separable max over a box of kernel
offsets (with the winning offsets and PyTorch's flat indices), the scatter/gather node pairs
of max pooling's backward and of unpooling, the linear node pairs of average pooling, and
1-d pooling run as 2-d. Fractional max pooling uses it too.
"""
import itertools
import math

import numpy as np

from ..._parallel import map_parts, thread_cuts
from ..._tensor import make_tensor, xp_of
from .._graph import Node, record
from ..conv import pad_array
from .._accumulate import accumulate_flat
from . import _device_pool

# ---- geometry ----------------------------------------------------------------------------
def _pool_out(size, k, pad, stride, dil, ceil_mode):
    out = (size + 2 * pad - dil * (k - 1) - 1 + (stride - 1 if ceil_mode else 0)) // stride + 1
    if ceil_mode and (out - 1) * stride >= size + pad:
        out -= 1
    return out


def _planes(a, nd):
    """Array with every leading dim folded into one plane axis: (1, P, *S)."""
    return a.reshape((1, -1) + a.shape[a.ndim - nd:])


def _axis_take(a, ax, sel):
    return a[(slice(None),) * ax + (sel,)]


def _strided_selectors(k, stride, dil, out):
    return [slice(j * dil, j * dil + stride * (out - 1) + 1, stride) for j in range(k)]


def _offset_dtype(k):
    return np.int8 if k < 127 else np.int16 if k < 32767 else np.int32


def _separable_max(xp, a, selectors, need_idx):
    """Max over the box of offsets, one spatial dim at a time (last first). `selectors[d]`
    lists, per kernel offset, the slice or index array picking that offset's element of
    every window along dim d. Returns the maxima and, if asked, per dim the winning offset
    (PyTorch's order: row-major first maximum; a NaN wins and the last NaN stays).

    Masked writes (`copyto(where=)`) are ~20x slower than arithmetic in NumPy, so winners
    are tracked arithmetically: `which += m * (j - which)`, with `m = v > best or v is NaN`
    (the NaN rule needs no look at the data, so the device is never asked whether a NaN
    is there: no host sync)."""
    nd = len(selectors)
    floating = a.dtype.kind not in "biu"  # bfloat16's NumPy kind is "V"
    cur, won = a, {}
    for d in range(nd - 1, -1, -1):
        ax = a.ndim - nd + d
        sels = selectors[d]
        best = _axis_take(cur, ax, sels[0]).copy()
        if not need_idx:
            for sel in sels[1:]:
                xp.maximum(best, _axis_take(cur, ax, sel), out=best)
            cur = best
            continue
        dt = _offset_dtype(len(sels))
        which = xp.zeros(best.shape, dt)
        carried = {e: _axis_take(w, ax, sels[0]).copy() for e, w in won.items()}
        m = xp.empty(best.shape, bool)
        nan = xp.empty(best.shape, bool) if floating else None
        step = xp.empty(best.shape, dt)
        for j, sel in enumerate(sels[1:], 1):
            v = _axis_take(cur, ax, sel)
            xp.greater(v, best, out=m)
            if floating:
                xp.not_equal(v, v, out=nan)
                xp.logical_or(m, nan, out=m)
            xp.maximum(best, v, out=best)
            xp.subtract(dt(j), which, out=step)
            step *= m
            which += step
            for e, w in won.items():
                c = carried[e]
                xp.subtract(_axis_take(w, ax, sel), c, out=step)
                step *= m
                c += step
        carried[d] = which
        won, cur = carried, best
    return cur, won


def _flat_index(xp, won, positions, size):
    """PyTorch's flat index into each input plane from per-dim winning offsets;
    `positions[d](offsets)` maps dim d's offsets to input coordinates (broadcast)."""
    nd = len(size)
    flat = None
    for d in range(nd):
        pos = positions[d](won[d].astype(np.int64))
        if flat is None:
            flat = pos
        else:
            flat *= size[d]
            flat += pos
    return flat


def _index_shape(nd, d, n):
    return (n,) + (1,) * (nd - 1 - d)


# ---- scatter / gather by flat plane indices (max pool backward, unpooling) ---------------
class _Scatter(Node):
    """out = zeros with the input placed (summed, if windows overlap) at `indices`."""

    def backward(self, grad):
        return _gather(grad, self.indices, self.size, self.pair, self.accumulate)


class _Gather(Node):
    """out = the input read at `indices` (max pooling's values, seen as a function).
    `window`: 2-d max pooling's (kernel, stride, padding, dilation), where its device kernel
    made it (the backward's kernel then gathers by window)."""

    window = None

    def backward(self, grad):
        return _scatter(grad, self.indices, self.size, self.pair, self.accumulate,
                        self.window)


def _set_pair(node, indices, size, pair, accumulate):
    node.indices, node.size, node.pair, node.accumulate = indices, size, pair, accumulate


def window_groups(kernel, stride, dilation):
    """Max pooling's `accumulate` where windows overlap: per dim, how many consecutive windows
    can cover one input element (its window's extent over the stride, rounded up)."""
    return tuple(-(-(d * (k - 1) + 1) // t) for k, t, d in zip(kernel, stride, dilation))


def _scatter_by_window_groups(xp, vals, idx, n, groups, osz):
    """Max pooling's backward on a device: the values (P, *osz) summed at their flat plane
    indices, deterministically, in a few array calls. Outputs whose indices agree modulo
    `groups` have disjoint windows, so their winners are distinct elements: each such set is
    added by one scatter in which no two values meet, the sets in a fixed order, in float64
    (as the CPU's bincount sums). The general segmented sum (_accumulate.add_rows_on_device)
    sorts all indices and takes ~6 array calls per doubling of their count."""
    planes = vals.shape[0]
    shape = (planes,) + tuple(osz)
    vals = vals.reshape(shape).astype(np.float64)
    idx = idx.reshape(shape)
    rows = (xp.arange(planes, dtype=np.int64) * n).reshape((planes,) + (1,) * len(osz))
    out = xp.zeros(planes * n, np.float64)
    for residue in itertools.product(*[range(g) for g in groups]):
        part = (slice(None),) + tuple(slice(r, None, g) for r, g in zip(residue, groups))
        xp.add.at(out, idx[part] + rows, vals[part])
    return out.reshape(planes, n)


# Planes (a batch's channels) are pooled independently: a large pooling (or its backward) is
# cut into parts of its planes for the intra-op threads, each part's max, indices and scatter
# its own (the same bits as one thread). Measured max_pool2d fwd+bwd at 2 threads against 1:
# ResNet-18's 3x3 stride-2 pool of 25 MB 0.58 of the time, 2x2 of 2 MB 0.80; under 2 MB
# 0.88-0.93, within the noise (`/work/notes/s13/pool_thr.py`).
THREADED_MIN_BYTES = 2 << 20


def plane_cuts(xp, a, axis=1):
    """Slices of the planes (axis `axis`) of a for the intra-op threads, or None."""
    if xp is not np:
        return None
    return thread_cuts(a.shape[axis], a.nbytes, THREADED_MIN_BYTES)


def scatter_array(xp, vals, idx, size, accumulate, osz=None):
    """Planes (P, L) of values put at flat indices (P, L) of planes (P, prod(size)).
    `accumulate`: False, True (repeated indices add up), or max pooling's `window_groups`
    (they add up, and the outputs `osz` (L = prod(osz)) fall into disjoint-window sets)."""
    planes, n = vals.shape[0], math.prod(size)
    if type(accumulate) is tuple and xp is not np and vals.dtype.kind == "f" and vals.size:
        out = _scatter_by_window_groups(xp, vals, idx, n, accumulate, osz)
        return out.astype(vals.dtype)
    out = xp.zeros((planes, n), vals.dtype)
    cuts = plane_cuts(xp, out, axis=0)
    if cuts is None:
        _scatter_planes(xp, out, vals, idx, accumulate)
    else:
        map_parts(lambda s: _scatter_planes(xp, out[s], vals[s], idx[s], accumulate), cuts)
    return out


def _scatter_planes(xp, out, vals, idx, accumulate):
    """scatter_array's sum or placement into `out` (P, n), a fresh zero array."""
    planes, n = out.shape
    if accumulate:  # bincount on the host, a deterministic scatter-add on a device
        rows = xp.arange(planes, dtype=np.int64)[:, None] * n
        accumulate_flat(out.reshape(-1), (idx + rows).reshape(-1), vals.reshape(-1))
    else:
        xp.put_along_axis(out, idx, vals, axis=1)


def _scatter(src, indices, size, pair, accumulate, window=None):
    """src (*lead, *out) to (*lead, *size); `window`: see _Gather."""
    xp = xp_of(src)
    nd = len(size)
    lead = src.shape[:src.ndim - nd]
    if window is not None and _device_pool.applies(xp, src._array):
        out = _device_pool.max_pool2d_grad(xp, src._array, indices, size, window)
    else:
        planes = math.prod(lead)
        cells = math.prod(src.shape[src.ndim - nd:])  # not -1: an empty batch reshapes too
        out = scatter_array(xp, src._array.reshape(planes, cells),
                            indices.reshape(planes, cells), size, accumulate,
                            src.shape[src.ndim - nd:]).reshape(tuple(lead) + tuple(size))
    res = make_tensor(out, src._device)
    node = record(pair[0], (src,), res)
    if node is not None:
        _set_pair(node, indices, size, pair, accumulate)
    return res


def _gather(src, indices, size, pair, accumulate):
    """src (*lead, *size) read at indices (*lead, *out)."""
    xp = xp_of(src)
    nd = len(size)
    lead = src.shape[:src.ndim - nd]
    planes = math.prod(lead)
    cells = math.prod(indices.shape[indices.ndim - len(size):])
    out = xp.take_along_axis(src._array.reshape(planes, math.prod(size)),
                             indices.reshape(planes, cells), axis=1)
    res = make_tensor(out.reshape(indices.shape), src._device)
    node = record(pair[1], (src,), res)
    if node is not None:
        _set_pair(node, indices, size, pair, accumulate)
    return res


def _pair_of(gather_name, scatter_name):
    g = type(gather_name, (_Gather,), {})
    s = type(scatter_name, (_Scatter,), {})
    return (s, g)


_MAXPOOL = {nd: _pair_of(f"MaxPool{nd}DWithIndicesBackward0",
                         f"MaxPool{nd}DWithIndicesBackwardBackward0") for nd in (2, 3)}
_ADAPTIVE_MAX = {nd: _pair_of(f"AdaptiveMaxPool{nd}DBackward0",
                              f"AdaptiveMaxPool{nd}DBackwardBackward0") for nd in (2, 3)}
_UNPOOL = {nd: _pair_of(f"MaxPoolDoubleBackward{nd}D", f"MaxUnpool{nd}DBackward0")
           for nd in (2, 3)}


def _max_result(x, vals, flat, size, pair, accumulate, return_indices, nd, window=None):
    """Wrap max pooling's values (and indices) and record the gather node (`window`: see
    _Gather)."""
    dev = x._device
    lead = x.shape[:x.ndim - nd]
    osz = vals.shape[vals.ndim - nd:] if vals is not None else ()
    out = make_tensor(vals.reshape(tuple(lead) + tuple(osz)), dev)
    idx = None
    if flat is not None:
        flat = flat.reshape(tuple(lead) + tuple(osz))
        node = record(pair[1], (x,), out)
        if node is not None:
            _set_pair(node, flat, size, pair, accumulate)
            node.window = window
        if return_indices:
            idx = make_tensor(flat, dev)
    return (out, idx) if return_indices else out


# ---- linear ops paired with their adjoints (avg pooling) -----------------------------------
class _Linear(Node):
    def backward(self, grad):
        return _linear(grad, self.adjoint, self.fn, self.pair[::-1])


def _linear(x, fn, adjoint, pair):
    out = make_tensor(fn(xp_of(x), x._array), x._device)
    node = record(pair[0], (x,), out)
    if node is not None:
        node.fn, node.adjoint, node.pair = fn, adjoint, pair
    return out


def _linear_pair(name):
    return (type(name, (_Linear,), {}), type(name.replace("Backward0", "BackwardBackward0"),
                                              (_Linear,), {}))


_AVG = {nd: _linear_pair(f"AvgPool{nd}DBackward0") for nd in (2, 3)}
_ADAPTIVE_AVG = {nd: _linear_pair(f"AdaptiveAvgPool{nd}DBackward0") for nd in (2, 3)}


def _padded_planes(xp, a, nd, padding, kernel, stride, dilation, osz, value, slot):
    size = a.shape[a.ndim - nd:]
    hi = [(o - 1) * t + d * (k - 1) + 1 - s - p
          for o, t, d, k, s, p in zip(osz, stride, dilation, kernel, size, padding)]
    return pad_array(xp, _planes(a, nd), list(padding), hi, value=value, slot=slot)


def _grad_enabled():
    from ..._state import grad
    return grad.enabled


def _pool1d_via_2d(fn, input, *args):
    """PyTorch pools 1-d inputs as 2-d ones of height 1 (grad_fn: SqueezeBackward1)."""
    res = fn(input.unsqueeze(-2), *args)
    if isinstance(res, tuple):
        return tuple(r.squeeze(-2) for r in res)
    return res.squeeze(-2)
