"""Pooling: max/avg/adaptive/lp pooling and unpooling, with derivatives.

Windows are strided views (no copies) of a padded input. Max and sum over a box of
kernel offsets are separable, so an N-d pool is N one-dimensional passes (last spatial dim
first), each looping over that dim's kernel offsets only: 2+2 passes for a 2x2 window
instead of 4. Max pooling keeps, per pass, which offset won (in PyTorch's row-major
first-maximum order, NaN winning), and ends with PyTorch's flat indices into each input
plane. Its backward scatters through those indices (a plain put when windows cannot
overlap, one `bincount` pass when they can: never `np.add.at`). Adaptive average pooling
is a matmul per spatial dim with a small averaging matrix.

Every op here is linear in its gradient, so each backward is another graph op whose own
backward is the forward again: double backward comes for free.
"""
import builtins
import math

import numpy as np

from .._tensor import Tensor, make_tensor
from ._graph import Node, record
from .conv import pad_array
from .pointwise import xp_of

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d",
           "adaptive_avg_pool1d", "adaptive_max_pool1d"]
METHODS = []
FUNCTIONAL = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
              "max_pool2d_with_indices", "max_pool3d_with_indices", "max_unpool1d",
              "max_unpool2d", "max_unpool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
              "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
              "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
              "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
              "adaptive_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d"]

_DIMS = {1: "1D", 2: "2D", 3: "3D"}


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
    are tracked arithmetically: `which += m * (j - which)`."""
    nd = len(selectors)
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
        step = xp.empty(best.shape, dt)
        for j, sel in enumerate(sels[1:], 1):
            v = _axis_take(cur, ax, sel)
            xp.greater(v, best, out=m)
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
    if need_idx and cur.dtype.kind in "fc" and bool(xp.isnan(cur).any()):
        return _separable_max_nan(xp, a, selectors)
    return cur, won


def _separable_max_nan(xp, a, selectors):
    """The exact NaN rule (a NaN beats everything; later NaNs win), with masked writes."""
    nd = len(selectors)
    cur, won = a, {}
    for d in range(nd - 1, -1, -1):
        ax = a.ndim - nd + d
        sels = selectors[d]
        best = _axis_take(cur, ax, sels[0]).copy()
        which = xp.zeros(best.shape, _offset_dtype(len(sels)))
        carried = {e: _axis_take(w, ax, sels[0]).copy() for e, w in won.items()}
        for j, sel in enumerate(sels[1:], 1):
            v = _axis_take(cur, ax, sel)
            m = (v > best) | (v != v)
            xp.copyto(best, v, where=m)
            xp.copyto(which, j, where=m)
            for e, w in won.items():
                xp.copyto(carried[e], _axis_take(w, ax, sel), where=m)
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
    """out = the input read at `indices` (max pooling's values, seen as a function)."""

    def backward(self, grad):
        return _scatter(grad, self.indices, self.size, self.pair, self.accumulate)


def _set_pair(node, indices, size, pair, accumulate):
    node.indices, node.size, node.pair, node.accumulate = indices, size, pair, accumulate


def scatter_array(xp, vals, idx, size, accumulate):
    """Planes (P, L) of values put at flat indices (P, L) of planes (P, prod(size))."""
    planes, n = vals.shape[0], math.prod(size)
    if accumulate and vals.dtype.kind == "f" and xp is np:
        rows = np.arange(planes, dtype=np.int64)[:, None] * n
        summed = np.bincount((idx + rows).ravel(), weights=vals.ravel(), minlength=planes * n)
        return summed.astype(vals.dtype, copy=False).reshape(planes, n)
    out = xp.zeros((planes, n), vals.dtype)
    if accumulate:  # device arrays: the backend's scatter-add (CuPy's is atomic adds)
        xp.add.at(out, (xp.arange(planes)[:, None], idx), vals)
    else:
        xp.put_along_axis(out, idx, vals, axis=1)
    return out


def _scatter(src, indices, size, pair, accumulate):
    """src (*lead, *out) to (*lead, *size)."""
    xp = xp_of(src)
    nd = len(size)
    lead = src.shape[:src.ndim - nd]
    planes = math.prod(lead)
    out = scatter_array(xp, src._array.reshape(planes, -1), indices.reshape(planes, -1), size,
                        accumulate)
    res = make_tensor(out.reshape(tuple(lead) + tuple(size)), src._device)
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
    out = xp.take_along_axis(src._array.reshape(planes, -1), indices.reshape(planes, -1), axis=1)
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


def _max_result(x, vals, flat, size, pair, accumulate, return_indices, nd):
    """Wrap max pooling's values (and indices) and record the gather node."""
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


def _padded_planes(xp, a, nd, padding, kernel, stride, dilation, osz, value, slot):
    size = a.shape[a.ndim - nd:]
    hi = [(o - 1) * t + d * (k - 1) + 1 - s - p
          for o, t, d, k, s, p in zip(osz, stride, dilation, kernel, size, padding)]
    return pad_array(xp, _planes(a, nd), list(padding), hi, value=value, slot=slot)


# ---- max pooling -----------------------------------------------------------------------------
def _lowest(dtype):
    if dtype.kind in "fc":
        return -np.inf
    if dtype.kind == "b":
        return False
    return np.iinfo(dtype).min


def _max_pool(input, nd, fname, kernel_size, stride, padding, dilation, ceil_mode,
              return_indices):
    kernel, stride, padding, dilation, size, osz = _pool_params(
        input, nd, fname, "max", kernel_size, stride, padding, dilation, ceil_mode)
    xp = xp_of(input)
    a = input._array
    need_idx = return_indices or (input._requires_grad and _grad_enabled())
    padded = _padded_planes(xp, a, nd, padding, kernel, stride, dilation, osz,
                            _lowest(a.dtype), "pool")
    sels = [_strided_selectors(k, t, d, o) for k, t, d, o in zip(kernel, stride, dilation, osz)]
    vals, won = _separable_max(xp, padded, sels, need_idx)
    flat = None
    if need_idx:
        positions = [_position_fn(xp, nd, d, osz[d], stride[d], padding[d], dilation[d])
                     for d in range(nd)]
        flat = _flat_index(xp, won, positions, size)
    overlap = any(t < d * (k - 1) + 1 for t, d, k in zip(stride, dilation, kernel))
    return _max_result(input, vals, flat, size, _MAXPOOL[nd], overlap, return_indices, nd)


def _position_fn(xp, nd, d, o, stride, pad, dil):
    base = (xp.arange(o, dtype=np.int64) * stride - pad).reshape(_index_shape(nd, d, o))

    def position(off):  # in place on the fresh int64 offsets
        if dil != 1:
            off *= dil
        off += base
        return off
    return position


def _grad_enabled():
    from .._state import grad
    return grad.enabled


def _pool1d_via_2d(fn, input, *args):
    """PyTorch pools 1-d inputs as 2-d ones of height 1 (grad_fn: SqueezeBackward1)."""
    res = fn(input.unsqueeze(-2), *args)
    if isinstance(res, tuple):
        return tuple(r.squeeze(-2) for r in res)
    return res.squeeze(-2)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    _batch_check(input, 1, "max_pool1d", "max")
    if not (input.dtype.is_floating_point) and not return_indices and not input._requires_grad:
        raise NotImplementedError(f"\"max_pool1d_impl\" not implemented for "
                                  f"'{_type_name(input)}'")
    _pool_params(input, 1, "max_pool1d", "max", kernel_size, stride, padding, dilation, ceil_mode)
    k, s = _one(kernel_size), (_one(stride) if stride not in (None, [], ()) else None)
    return _pool1d_via_2d(
        lambda x: _max_pool(x, 2, "max_pool2d", (1, k), (1, s if s is not None else k),
                            (0, _one(padding)), (1, _one(dilation)), ceil_mode,
                            return_indices), input)


def _one(v):
    if isinstance(v, (builtins.int, np.integer)):
        return builtins.int(v)
    return builtins.int(tuple(v)[0])


def _type_name(t):
    from ._graph import _type_name as name
    return name(t.dtype)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    _batch_check(input, 2, "max_pool2d", "max")
    return _max_pool(input, 2, "max_pool2d", kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    _batch_check(input, 3, "max_pool3d", "max")
    return _max_pool(input, 3, "max_pool3d", kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=True):
    return max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


# ---- average pooling -----------------------------------------------------------------------
def _counts(xp, size, k, stride, pad, o, include_pad):
    start = np.arange(o) * stride - pad
    end = np.minimum(start + k, size + pad)
    if include_pad:
        return end - start
    return np.minimum(end, size) - np.maximum(start, 0)


def _avg_pool(input, nd, fname, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    kernel, stride, padding, dilation, size, osz = _pool_params(
        input, nd, fname, "avg", kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    xp = xp_of(input)
    if divisor_override is not None:
        divisor = builtins.float(divisor_override)
    else:
        divisor = np.ones((), np.float64)
        for d in range(nd):
            c = _counts(xp, size[d], kernel[d], stride[d], padding[d], osz[d], count_include_pad)
            divisor = divisor * c.reshape(_index_shape(nd, d, osz[d]))
        if xp is not np:
            divisor = xp.asarray(divisor)
    lead = input.shape[:input.ndim - nd]
    sels = [_strided_selectors(k, t, 1, o) for k, t, o in zip(kernel, stride, osz)]

    def fn(xp, a):
        padded = _padded_planes(xp, a, nd, padding, kernel, stride, dilation, osz, 0, "pool")
        cur = padded
        for d in range(nd - 1, -1, -1):
            ax = cur.ndim - nd + d
            acc = _axis_take(cur, ax, sels[d][0]).copy()
            for sel in sels[d][1:]:
                acc += _axis_take(cur, ax, sel)
            cur = acc
        if cur.dtype.kind in "iub":
            cur = xp.trunc(cur / divisor).astype(cur.dtype)
        else:
            cur /= xp.asarray(divisor, dtype=cur.dtype) if not isinstance(divisor, float) \
                else cur.dtype.type(divisor)
        return cur.reshape(tuple(lead) + osz)

    def adjoint(xp, g):
        cur = _planes(g, nd) / (xp.asarray(divisor, dtype=g.dtype) if not isinstance(divisor, float)
                                else g.dtype.type(divisor))
        for d in range(nd):
            ax = cur.ndim - nd + d
            full = list(cur.shape)
            full[ax] = (osz[d] - 1) * stride[d] + kernel[d]
            full[ax] = builtins.max(full[ax], size[d] + 2 * padding[d])
            out = xp.zeros(full, g.dtype)
            for sel in sels[d]:
                out[(slice(None),) * ax + (sel,)] += cur
            cur = out
        cur = cur[(slice(None),) * 2 + tuple(slice(p, p + s) for p, s in zip(padding, size))]
        return xp.ascontiguousarray(cur).reshape(tuple(lead) + size)

    return _linear(input, fn, adjoint, _AVG[nd])


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    _batch_check(input, 1, "avg_pool1d", "avg")
    _ints(kernel_size, 1, "avg_pool1d", "kernel_size")
    k = _one(kernel_size)
    s = _ints(stride, 1, "avg_pool1d", "stride", True) if stride is not None else None
    s = k if not s else s[0]
    return _pool1d_via_2d(
        lambda x: _avg_pool(x, 2, "avg_pool2d", (1, k), (1, s), (0, _one(padding)), ceil_mode,
                            count_include_pad, None), input)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    _batch_check(input, 2, "avg_pool2d", "avg")
    return _avg_pool(input, 2, "avg_pool2d", kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    _batch_check(input, 3, "avg_pool3d", "avg")
    return _avg_pool(input, 3, "avg_pool3d", kernel_size, stride, padding, ceil_mode,
                     count_include_pad, divisor_override)


# ---- adaptive pooling ----------------------------------------------------------------------
def _adaptive_bounds(size, out):
    o = np.arange(out)
    return (o * size) // out, -((-(o + 1) * size) // out)


def _adaptive_size(input, output_size, nd, fname):
    if output_size is None:
        raise TypeError(f"{fname}(): argument 'output_size' (position 2) must be tuple of ints, "
                        "not NoneType")
    if isinstance(output_size, (builtins.int, np.integer)):
        vals = (builtins.int(output_size),) * nd
    else:
        vals = tuple(output_size)
        if nd == 1 and len(vals) != 1:
            raise RuntimeError(f"{fname}() argument 'output_size' should contain one int "
                               f"(got {len(vals)})")
        if len(vals) != nd:
            if "max" in fname:
                raise RuntimeError(f"{fname}(): internal error: output_size.size() must be {nd}")
            raise RuntimeError(f"{fname}: output_size must be {nd}")
    size = tuple(input.shape[input.ndim - nd:])
    return tuple(s if v is None else builtins.int(v) for v, s in zip(vals, size))


def _adaptive_check(input, nd, fname, kind):
    if not isinstance(input, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if input.ndim not in (nd + 1, nd + 2):
        sep = ": " if kind == "max" else " "
        raise RuntimeError(f"{fname}(): Expected {nd + 1}D or {nd + 2}D tensor, but got"
                           f"{sep}{list(input.shape)}")
    if (kind == "max" or nd == 3) and 0 in input.shape[input.ndim - nd - 1:]:
        dim = input.shape.index(0, input.ndim - nd - 1)
        raise RuntimeError(f"{fname}(): Expected input to have non-zero size for non-batch "
                           f"dimensions, but input has sizes {list(input.shape)} with dimension "
                           f"{dim} being empty")


def _adaptive_avg(input, nd, fname, output_size):
    _adaptive_check(input, nd, fname, "avg")
    osz = _adaptive_size(input, output_size, nd, fname)
    if any(o < 0 for o in osz):
        inner = ", ".join(str(o) for o in osz) if nd < 3 else \
            f"{osz[0]}, {osz[1]},{osz[2]}"
        raise RuntimeError(f"adaptive_avg_pool{nd}d: elements of output_size must be greater "
                           f"than or equal to 0 but received {{{inner}}}")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f"\"adaptive_avg_pool{nd}d\" not implemented for "
                                  f"'{_type_name(input)}'")
    size = tuple(input.shape[input.ndim - nd:])
    if nd == 2 and osz == (1, 1) and input.numel():
        return input.mean((-2, -1), keepdim=True)
    xp = xp_of(input)
    mats = []
    for s, o in zip(size, osz):
        start, end = _adaptive_bounds(s, o)
        pos = np.arange(s)[:, None]
        m = ((pos >= start) & (pos < end)) / np.maximum(end - start, 1)
        mats.append(xp.asarray(m))

    def apply(xp, a, transpose):
        cur = a
        for d in range(nd - 1, -1, -1):
            m = mats[d].T if transpose else mats[d]
            m = m.astype(a.dtype)
            ax = cur.ndim - nd + d
            if ax == cur.ndim - 1:
                cur = xp.matmul(cur, m)
            elif ax == cur.ndim - 2:
                cur = xp.matmul(m.T, cur)
            else:
                cur = xp.moveaxis(xp.matmul(xp.moveaxis(cur, ax, -1), m), -1, ax)
        return xp.ascontiguousarray(cur)

    return _linear(input, lambda xp, a: apply(xp, a, False), lambda xp, g: apply(xp, g, True),
                   _ADAPTIVE_AVG[nd])


def adaptive_avg_pool1d(input, output_size):
    if isinstance(input, Tensor) and input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           "for argument #1 'self' (while checking arguments for "
                           "adaptive_avg_pool1d)")
    (o,) = _adaptive_size(input, output_size, 1, "adaptive_avg_pool1d")
    if o < 0:
        raise RuntimeError(f"adaptive_avg_pool2d: elements of output_size must be greater than "
                           f"or equal to 0 but received {{1, {o}}}")
    return _pool1d_via_2d(lambda x: _adaptive_avg(x, 2, "adaptive_avg_pool2d", (1, o)), input)


def adaptive_avg_pool2d(input, output_size):
    return _adaptive_avg(input, 2, "adaptive_avg_pool2d", output_size)


def adaptive_avg_pool3d(input, output_size):
    return _adaptive_avg(input, 3, "adaptive_avg_pool3d", output_size)


def _adaptive_max(input, nd, fname, output_size, return_indices):
    _adaptive_check(input, nd, fname, "max")
    osz = _adaptive_size(input, output_size, nd, fname)
    if any(o < 0 for o in osz):
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{builtins.min(osz)}: {list(input.shape[:input.ndim - nd]) + list(osz)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"adaptive_max_pool{nd}d\" not implemented for "
                                  f"'{_type_name(input)}'")
    xp = xp_of(input)
    size = tuple(input.shape[input.ndim - nd:])
    need_idx = return_indices or (input._requires_grad and _grad_enabled())
    sels, positions = [], []
    overlap = False
    for d, (s, o) in enumerate(zip(size, osz)):
        start, end = _adaptive_bounds(s, o)
        kmax = builtins.int((end - start).max()) if o else 1
        overlap = overlap or (o and s % o != 0)
        table = np.minimum(start[None, :] + np.arange(kmax)[:, None], np.maximum(end - 1, 0))
        table = xp.asarray(table)
        sels.append([table[j] for j in range(kmax)])
        positions.append(_adaptive_position(xp, table, nd, d, o))
    if 0 in osz or input.numel() == 0:
        lead = input.shape[:input.ndim - nd]
        vals = xp.zeros(tuple(lead) + osz, input._array.dtype)
        flat = xp.zeros(vals.shape, np.int64) if need_idx else None
        return _max_result(input, vals, flat, size, _ADAPTIVE_MAX[nd], True, return_indices, nd)
    vals, won = _separable_max(xp, _planes(input._array, nd), sels, need_idx)
    flat = _flat_index(xp, won, positions, size) if need_idx else None
    return _max_result(input, vals, flat, size, _ADAPTIVE_MAX[nd], overlap, return_indices, nd)


def _adaptive_position(xp, table, nd, d, o):
    shape = _index_shape(nd, d, o)
    cols = xp.arange(o).reshape(shape)
    return lambda off: table[off, cols]


def adaptive_max_pool1d(input, output_size, return_indices=False):
    if isinstance(input, Tensor) and input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional tensor "
                           "for argument #1 'self' (while checking arguments for "
                           "adaptive_max_pool1d)")
    if isinstance(input, Tensor) and 0 in input.shape[-2:]:
        dim = input.shape.index(0, input.ndim - 2)
        raise RuntimeError(f"adaptive_max_pool1d(): Expected input to have non-zero size for "
                           f"non-batch dimensions, but input has sizes {list(input.shape)} with "
                           f"dimension {dim} being empty")
    (o,) = _adaptive_size(input, output_size, 1, "adaptive_max_pool1d")
    return _pool1d_via_2d(lambda x: _adaptive_max(x, 2, "adaptive_max_pool2d", (1, o),
                                                  return_indices), input)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    return _adaptive_max(input, 2, "adaptive_max_pool2d", output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    return _adaptive_max(input, 3, "adaptive_max_pool3d", output_size, return_indices)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=True):
    return adaptive_max_pool3d(input, output_size, True)


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
                           f"{_type_name(indices)}")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input tensor "
                           f"({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    xp = xp_of(input)
    idx = indices._array
    n = math.prod(size)
    if idx.size and (builtins.int(idx.min()) < 0 or builtins.int(idx.max()) >= n):
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
    return _max_unpool(input, indices, 2, "max_unpool2d", kernel_size, stride, padding,
                       output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    return _max_unpool(input, indices, 3, "max_unpool3d", kernel_size, stride, padding,
                       output_size)


# ---- power-average pooling (PyTorch's composite) -------------------------------------------
def _lp(out, norm_type, n):
    from .pointwise import abs as _abs, relu, sign
    return (sign(out) * relu(_abs(out))).mul(n).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    out = avg_pool1d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, _one(kernel_size))


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    k = _ints(kernel_size, 2, "lp_pool2d", "kernel_size")
    out = avg_pool2d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, k[0] * k[1])


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    k = _ints(kernel_size, 3, "lp_pool3d", "kernel_size")
    out = avg_pool3d(input.pow(norm_type), kernel_size, stride, 0, ceil_mode)
    return _lp(out, norm_type, math.prod(k))
