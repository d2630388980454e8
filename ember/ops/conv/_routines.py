"""The three array routines every convolution rests on: `conv_forward`, its adjoint in the
input `conv_transpose_forward`, and its adjoint in the weight `conv_weight_grad`."""
import math

import numpy as np

from ... import _dnnl
from ..._blas import warm_up
from ..._parallel import intra_threads, map_parts, matmul as _products, thread_cuts
from . import _device_columns, _layout
from ._channels_last import (_from_rows, _rows, _weight_matrix, col2im_channels_last,
                             flipped_weight_matrix, im2col_channels_last)
from ._im2col import _COMPUTE, _matmul, col2im, im2col, out_size, pad_array, scratch
from ._shifted import ShiftedCopies, shifted_forward, shifted_weight_grad
from ._winograd import _unsplit, winograd_backward, winograd_forward, winograd_weight_grad


# ResNet-18 at batch 256 on a GPU needs a few hundred MB of scratch per layer, not GBs. A
# device's budget is twice the CPU's: its step is bound by the host's calls, which a batch in
# slices multiplies, and ResNet-18's stem and first stage at batch 64 (460-470 MB of columns)
# then go whole.
COL_BUDGET = 1 << 28
DEVICE_COL_BUDGET = 1 << 29


def _col_budget(a):
    return COL_BUDGET if isinstance(a, np.ndarray) else DEVICE_COL_BUDGET


# A forward whose weight gradient is to come keeps its im2col columns for it (sparing the
# weight gradient a second padded copy and column copy: measured at 1 thread on CIFAR
# ResNet's stride-2 layers, 2.4 and 1.4 ms of a 6 and 4 ms weight gradient) when they take
# at most this many bytes; larger ones (ResNet-18's 7x7 stem at batch 8: 59 MB) are made
# again rather than held through the forward.
KEEP_COL_BYTES = 1 << 25


class KeptColumns:
    """The columns a forward kept for its weight gradient: `layout` "channels_last" (the
    (N*L, K*C) matrix) or "batched" (N, g, C/g * K, L), of the samples `part` of the batch
    (a forward on several threads keeps one per thread)."""

    def __init__(self, layout, col, part=slice(None)):
        self.layout, self.col, self.part = layout, col, part


def _kept_tiles(kept):
    """Winograd's kept transformed input out of a forward's `keep` list, or None."""
    return kept if kept and isinstance(kept[0], np.ndarray) else None


def _kept_copies(kept):
    """The shifted-row path's kept copies (ShiftedCopies) of a forward's `keep` list, or None."""
    return kept if kept and isinstance(kept[0], ShiftedCopies) else None


def _kept_columns(kept):
    """The KeptColumns of a forward's `keep` list (one per part of the batch), or None."""
    return kept if kept and isinstance(kept[0], KeptColumns) else None


# A batch is cut into one part per intra-op thread when its im2col columns take at least this
# many bytes: each part's copies and product are then long calls (see `_parallel`). Measured
# fwd+bwd (input and weight gradients) at 2 threads, the pool's parts against the BLAS's own
# threads: ResNet-18's 7x7 stem 0.73 of the time, CIFAR ResNet's 3x3 stride-2 16->32 layer
# (4.7 MB of columns) 0.78, ResNet-18's 64->128 (14 MB) 1.0 (`/work/notes/s13/layer_ab.py`).
THREADED_MIN_COL_BYTES = 4 << 20


def _thread_parts(xp, n, per_sample):
    """Slices of a batch of n for the intra-op threads, or None (a device, or `thread_cuts`'s
    reasons: columns of `per_sample` bytes a sample under THREADED_MIN_COL_BYTES in all ...),
    of at least half THREADED_MIN_COL_BYTES each."""
    if xp is not np:
        return None
    return thread_cuts(n, n * per_sample, THREADED_MIN_COL_BYTES, THREADED_MIN_COL_BYTES // 2)


def _batch_slices(x, kernel, p, osz):
    """Slices of the batch whose im2col buffers each fit the budget (None: all of it fits)."""
    if osz is None:
        stride, lo, hi, dil, _ = p
        padded = tuple(s + l + h for s, l, h in zip(x.shape[2:], lo, hi))
        osz = out_size(padded, kernel, stride, dil)
    return _slices_within_budget(x.shape[0], x.shape[1] * math.prod(kernel) * math.prod(osz) *
                                 x.dtype.itemsize, _col_budget(x))


def _slices_within_budget(n, per_sample, budget):
    """Slices of a batch of n whose columns (`per_sample` bytes a sample) each fit `budget`
    bytes, or None where all of it fits."""
    step = max(1, budget // max(per_sample, 1))
    if n <= step:
        return None
    return [slice(i, min(i + step, n)) for i in range(0, n, step)]


# ---- oneDNN's kernels, where it is installed (`_dnnl`) ----------------------------------------
# A convolution of fewer multiply-adds runs on one of oneDNN's threads. Where NumPy's OpenBLAS
# has threads of its own (MKL not on OpenMP's, `_gemm.threaded`), OpenMP's spinning workers
# took their cores: DigitsCNN's 0.3M and 9.4M multiply-add layers on 2 threads made its step
# 4.4x PyTorch's. On one runtime the line hardly matters (DigitsCNN 1.13-1.18 with every layer
# on 2 threads, 1.11-1.14 with this line; the CNN 1.40-1.48 either way).
ONEDNN_PARALLEL_MIN_MACS = 1 << 24


def _onednn_threads(n, o, c, y_spatial, kernel):
    macs = n * o * c * math.prod(y_spatial) * math.prod(kernel)
    return intra_threads() if macs >= ONEDNN_PARALLEL_MIN_MACS else 1


# ---- a 1x1 convolution of channels_last memory: one product, no copies ---------------------
# A model turned channels_last keeps its activations (N, C, *S) in (N, *S, C) memory
# (`_memory_format.follow_channels_last`). There a pointwise convolution (1x1 kernel, stride
# 1, no padding, groups 1) is a plain product of that memory's (N*L, C) rows with w's (O, C):
# its result is channels_last as it comes out, where the general routines would copy the input
# into their own layout and the result out of it (a ResNet bottleneck's 16 -> 32 1x1 layer at
# 32x32, batch 32, fwd+bwd: 10.7 -> see the note).
def _pointwise(w_shape, p):
    stride, lo, hi, _, g = p
    return g == 1 and all(k == 1 for k in w_shape[2:]) and all(s == 1 for s in stride) \
        and not any(lo) and not any(hi)


def _channels_last_rows(xp, a):
    """a (N, C, *S)'s memory as (N * L, C) rows when it is laid out channels_last, else None."""
    if a.ndim < 3 or a.dtype not in _COMPUTE:
        return None
    m = xp.moveaxis(a, 1, -1)
    return m.reshape(-1, a.shape[1]) if m.flags.c_contiguous and m.size else None


def _from_channels_last_rows(xp, rows, like, channels):
    """(N * L, channels) rows as an (N, channels, *S) array of `like`'s sizes, channels_last."""
    return xp.moveaxis(rows.reshape((like.shape[0],) + like.shape[2:] + (channels,)), -1, 1)


def conv_forward(xp, x, w, p, osz=None, keep=None, weight_matrix=_weight_matrix):
    """Convolution of arrays x (N, C, *S) and w (O, C/g, *K) with params `p`; `osz` keeps
    only the first windows (the adjoint of a transposed convolution with output_padding). A
    list `keep` receives what the weight gradient can reuse (Winograd's transformed input).
    `weight_matrix(w)` gives w's _weight_matrix where the channels-last columns take it (a
    caller holding w as a view may know a faster way)."""
    if xp is np:
        warm_up()
    rows = _channels_last_rows(xp, x) if _pointwise(w.shape, p) and osz in (None, x.shape[2:]) \
        else None
    if rows is not None:
        o = w.shape[0]
        return _from_channels_last_rows(xp, _products(xp, rows, w.reshape(o, -1).T), x, o)
    stride, lo, hi, dil, g = p
    kernel = w.shape[2:]
    if osz is None:
        padded = tuple(s + l + h for s, l, h in zip(x.shape[2:], lo, hi))
        osz = out_size(padded, kernel, stride, dil)
    if xp is np and _dnnl.applies(x, w):  # oneDNN's kernels where it is installed
        y = _dnnl.forward(x, w, p, osz, _onednn_threads(x.shape[0], w.shape[0], w.shape[1],
                                                         osz, kernel))
        if y is not None:
            return y
    n, o = x.shape[0], w.shape[0]
    job = "forward" if keep is None else "forward_kept"
    if _layout.shifted_ok(xp, x, x.shape[1], o, kernel, p, osz):
        return shifted_forward(xp, x, w, lo, osz, keep)  # in chunks of its own
    if _layout.winograd_ok(xp, x, x.shape[1], o, kernel, p, osz, job):
        return winograd_forward(xp, x, w, lo, osz, keep)  # in chunks of its own
    parts = _batch_slices(x, kernel, p, osz)
    if parts is not None:
        return xp.concatenate([conv_forward(xp, x[s], w, p, osz, weight_matrix=weight_matrix)
                               for s in parts])
    if _device_columns.applies(xp, x, w, p):
        return _device_columns.forward(xp, x, w, p, osz)
    held = keep is not None and xp is np and x.dtype in _COMPUTE and \
        x.shape[1] * math.prod(kernel) * n * math.prod(osz) * x.itemsize <= KEEP_COL_BYTES
    parts = _thread_parts(xp, n, x.shape[1] * math.prod(kernel) * math.prod(osz) *
                          x.itemsize)
    channels_last = _layout.channels_last_ok(x, g, x.shape[1], kernel, math.prod(osz))
    if parts is None:
        return _columns_forward(xp, x, w, p, osz, keep if held else None,
                                wm=weight_matrix(w) if channels_last else None)
    y = xp.empty((n, o) + tuple(osz), x.dtype)
    keeps = [[] if held else None for _ in parts]
    wm = weight_matrix(w) if channels_last else None  # once, not once a part
    map_parts(lambda k: _columns_forward(xp, x[parts[k]], w, p, osz, keeps[k], y[parts[k]], wm),
              range(len(parts)))
    if held:
        keep.extend(KeptColumns(c.layout, c.col, s) for s, (c,) in zip(parts, keeps))
    return y


def _columns_forward(xp, x, w, p, osz, keep, out=None, wm=None):
    """conv_forward by im2col and one product, into `out` when given; a list `keep` receives
    the columns. `wm`: w's _weight_matrix, when the caller has it."""
    stride, lo, hi, dil, g = p
    kernel = w.shape[2:]
    n, o = x.shape[0], w.shape[0]
    slot = None if keep is not None else "col"  # kept columns live in their own memory
    if _layout.channels_last_ok(x, g, x.shape[1], kernel, math.prod(osz)):
        col = im2col_channels_last(xp, x, kernel, p, osz, slot)
        if keep is not None:
            keep.append(KeptColumns("channels_last", col))
        wm = _weight_matrix(w) if wm is None else wm
        return _from_rows(xp, _products(xp, col, wm.T), n, osz, out)
    xpad = pad_array(xp, x, lo, hi, slot="pad")
    col, osz = im2col(xp, xpad, kernel, stride, dil, slot=slot, osz=osz)
    # explicit sizes, not -1: an empty batch (N = 0) must reshape too
    col = col.reshape(n, g, (x.shape[1] // g) * math.prod(kernel), math.prod(osz))
    if keep is not None:
        keep.append(KeptColumns("batched", col))
    y = _matmul(xp, w.reshape(g, o // g, -1), col,
                out=None if out is None else out.reshape(n, g, o // g, math.prod(osz)))
    return y.reshape((n, o) + osz)


def conv_transpose_forward(xp, y, w, p, size):
    """The adjoint of `conv_forward` in x: y (N, O, *out) to (N, C, *size)."""
    if xp is np:
        warm_up()
    stride, lo, hi, dil, g = p
    kernel, nd = w.shape[2:], len(size)
    o, cg = w.shape[:2]
    rows = _channels_last_rows(xp, y) if _pointwise(w.shape, p) and tuple(size) == y.shape[2:] \
        else None
    if rows is not None:  # (N * L, O) @ (O, C)
        return _from_channels_last_rows(xp, _products(xp, rows, w.reshape(o, cg)), y, cg)
    if xp is np and _dnnl.applies(y, w):
        x = _dnnl.backward_data(y, w, p, size, _onednn_threads(
            y.shape[0], o, cg, y.shape[2:], kernel))
        if x is not None:
            return x
    if _device_columns.applies(xp, y, w, p):
        parts = _slices_within_budget(y.shape[0], g * cg * math.prod(kernel) *
                                      math.prod(y.shape[2:]) * y.dtype.itemsize,
                                      DEVICE_COL_BUDGET)
        if parts is not None:
            return xp.concatenate([conv_transpose_forward(xp, y[s], w, p, size) for s in parts])
        return _device_columns.transpose(xp, y, w, p, size)
    if all(s == 1 for s in stride):
        # Stride 1: a convolution with the flipped, transposed kernel (im2col + one matmul
        # beats matmul + col2im: no scatter pass at all).
        flip = (Ellipsis,) + (slice(None, None, -1),) * nd
        if g == 1:  # (C, O, *K): two views
            wf = w.swapaxes(0, 1)[flip]
        else:
            wf = w.reshape((g, o // g, cg) + kernel).swapaxes(1, 2)
            wf = wf[flip].reshape((g * cg, o // g) + kernel)
        lo2 = [d * (k - 1) - l for d, k, l in zip(dil, kernel, lo)]
        hi2 = [s - m - l2 + d * (k - 1)
               for s, m, l2, d, k in zip(size, y.shape[2:], lo2, dil, kernel)]
        p2 = ((1,) * nd, lo2, hi2, dil, g)
        if xp is np and g == 1:  # the channels-last matrix of the view from w in one copy
            return conv_forward(xp, y, wf, p2, weight_matrix=lambda _: flipped_weight_matrix(w))
        if xp is np:  # (a device's products copy the view into their matrices themselves)
            wf = xp.ascontiguousarray(wf)
        return conv_forward(xp, y, wf, p2)
    n, osz = y.shape[0], y.shape[2:]
    parity = _layout.parity_transpose_ok(xp, y, g, kernel, stride, dil)
    per_sample = g * cg * math.prod(kernel) * math.prod(osz) * y.dtype.itemsize
    if not parity and n > 1 and n * per_sample > _col_budget(y):
        step = max(1, _col_budget(y) // per_sample)
        return xp.concatenate([conv_transpose_forward(xp, y[i:i + step], w, p, size)
                               for i in range(0, n, step)])
    parts = _thread_parts(xp, n, per_sample)
    if parts is None:
        return _columns_transpose(xp, y, w, p, size, parity)
    x = xp.empty((n, g * cg) + tuple(size), y.dtype)
    wm = _weight_matrix(w) if not parity and _layout.channels_last_ok(y, g, cg, kernel) else None
    map_parts(lambda s: x.__setitem__(s, _columns_transpose(xp, y[s], w, p, size, parity, wm)),
              parts)
    return x


def _columns_transpose(xp, y, w, p, size, parity, wm=None):
    """conv_transpose_forward of a stride > 1 by products and a column sum, on one thread
    (`parity`: by parity_conv_transpose; `wm`: w's _weight_matrix, when the caller has it)."""
    stride, lo, hi, dil, g = p
    kernel = w.shape[2:]
    o, cg = w.shape[:2]
    n, osz = y.shape[0], y.shape[2:]
    if parity:
        return parity_conv_transpose(xp, y, w, lo, size)
    if _layout.channels_last_ok(y, g, cg, kernel):
        wm = _weight_matrix(w) if wm is None else wm
        col = _products(xp, _rows(xp, y), wm)  # (N*L, K*C)
        return col2im_channels_last(xp, col, n, cg, size, kernel, stride, dil, lo, hi, osz)
    if not y.flags.c_contiguous:  # BLAS wants unit strides (a summed loss gives stride 0)
        y = xp.ascontiguousarray(y)
    wm = w.reshape(g, o // g, -1).swapaxes(1, 2)
    ym = y.reshape(n, g, o // g, math.prod(osz))
    col = scratch(xp, "col", (n, g, wm.shape[1], ym.shape[-1]), y.dtype) \
        if y.dtype in _COMPUTE else None
    col = _matmul(xp, wm, ym, out=col)
    col = col.reshape((n, g * cg) + tuple(kernel) + tuple(osz))
    return col2im(xp, col, size, kernel, stride, dil, lo, hi)


def parity_conv_transpose(xp, y, w, lo, size):
    """The adjoint in x of a stride-2 2-d convolution (dilation 1, groups 1, padding `lo`
    before): y (N, O, oh, ow) to (N, C, *size), summed in Winograd's parity-split layout
    (a, r, N, b, s, C) (padded pixel (2r + a, 2s + b); `_split`), where kernel offset (i, j)
    of output (t, u) lands at [i % 2, t + i // 2, :, j % 2, u + j // 2]: each offset's
    sum is over runs of ow * C contiguous numbers, not of single pixels 2 apart. One product
    (oh*N*ow, O) @ (O, C) per offset gives the columns in the same (t, N, u, C) order; the
    split is then undone by four parity copies (`_unsplit`)."""
    n, o, oh, ow = y.shape
    c, kh, kw = w.shape[1:]
    rows = scratch(xp, "rows", (oh, n, ow, o), y.dtype)
    rows[...] = y.transpose(2, 0, 3, 1)
    col = scratch(xp, "col", (kh * kw, oh * n * ow, c), y.dtype)
    _matmul(xp, rows.reshape(1, -1, o), w.transpose(2, 3, 0, 1).reshape(kh * kw, o, c),
            out=col)
    col = col.reshape(kh, kw, oh, n, ow, c)
    d = scratch(xp, "parity", (2, oh + (kh - 1) // 2, n, 2, ow + (kw - 1) // 2, c), y.dtype)
    d[...] = 0
    for i in range(kh):
        for j in range(kw):
            d[i % 2, i // 2:i // 2 + oh, :, j % 2, j // 2:j // 2 + ow] += col[i, j]
    x = xp.empty((n, c) + tuple(size), y.dtype)
    _unsplit(xp, d, lo, x)
    return x


def conv_weight_grad(xp, x, gy, p, w_shape, kept=None):
    """d<gy, conv(x, w)>/dw: (O, C/g, *K). `kept`: what conv_forward's `keep` received."""
    if xp is np:
        warm_up()
    stride, lo, hi, dil, g = p
    kernel = tuple(w_shape[2:])
    if _pointwise(w_shape, p):
        x_rows, gy_rows = _channels_last_rows(xp, x), _channels_last_rows(xp, gy)
        if x_rows is not None and gy_rows is not None:  # (O, N * L) @ (N * L, C)
            return _products(xp, gy_rows.T, x_rows).reshape(w_shape)
    if xp is np and _dnnl.applies(x, gy):
        gw = _dnnl.backward_weights(x, gy, p, w_shape, _onednn_threads(
            x.shape[0], w_shape[0], w_shape[1], gy.shape[2:], kernel))
        if gw is not None:
            return gw
    if _layout.shifted_ok(xp, x, w_shape[1], w_shape[0], kernel, p, gy.shape[2:]):
        return shifted_weight_grad(xp, x, gy, w_shape, lo, _kept_copies(kept))
    if _layout.winograd_ok(xp, x, w_shape[1], w_shape[0], kernel, p, gy.shape[2:], "weight"):
        return winograd_weight_grad(xp, x, gy, lo, _kept_tiles(kept))
    columns = _kept_columns(kept)
    if columns is not None:
        return _weight_in_shape(xp, columns[0].layout, _summed(xp, [
            lambda c=c: _column_weight_terms(xp, c.layout, c.col, gy[c.part], g, w_shape)
            for c in columns]), w_shape)
    parts = _batch_slices(x, kernel, p, gy.shape[2:])
    if parts is not None:
        gw = conv_weight_grad(xp, x[parts[0]], gy[parts[0]], p, w_shape)
        for s in parts[1:]:
            gw += conv_weight_grad(xp, x[s], gy[s], p, w_shape)
        return gw
    if _device_columns.applies(xp, x, gy, p):
        return _device_columns.weight_grad(xp, x, gy, p, w_shape)
    layout = "channels_last" if _layout.channels_last_ok(x, g, x.shape[1], kernel) else \
        "batched"
    parts = _thread_parts(xp, x.shape[0], x.shape[1] * math.prod(kernel) *
                          math.prod(gy.shape[2:]) * x.itemsize) or [slice(None)]
    return _weight_in_shape(xp, layout, _summed(xp, [
        lambda s=s: _columns_weight_terms(xp, layout, x[s], gy[s], p, w_shape)
        for s in parts]), w_shape)


def _summed(xp, terms):
    """The sum of the terms' results (functions of no argument), computed on the intra-op
    threads and added in the terms' order (the same bits on every run)."""
    if len(terms) == 1:
        return terms[0]()
    results = map_parts(lambda term: term(), terms)
    total = results[0]
    for r in results[1:]:
        total += r
    return total


def _columns_weight_terms(xp, layout, x, gy, p, w_shape):
    """conv_weight_grad's term of x's im2col columns in `layout`, on one thread."""
    stride, lo, hi, dil, g = p
    kernel = tuple(w_shape[2:])
    if layout == "channels_last":
        col = im2col_channels_last(xp, x, kernel, p, gy.shape[2:])
    else:
        xpad = pad_array(xp, x, lo, hi, slot="pad")
        col, osz = im2col(xp, xpad, kernel, stride, dil, osz=gy.shape[2:])
        col = col.reshape(x.shape[0], g, (x.shape[1] // g) * math.prod(kernel),
                          math.prod(osz))
    return _column_weight_terms(xp, layout, col, gy, g, w_shape)


def _column_weight_terms(xp, layout, col, gy, g, w_shape):
    """The weight gradient from x's im2col columns in `layout` (see KeptColumns), in the
    layout's own order (channels_last: the (O, K*C) matrix); the terms of a batch's parts add
    in it, and `_weight_in_shape` then lays out their sum once."""
    if layout == "channels_last":
        # (O, N*L) @ (N*L, K*C): the sum over N*L inside BLAS. The product as (K*C, O) takes
        # as long, but its layout's copy to (O, C, *K) reads each output's K numbers from
        # K*C*O apart: measured at 1 thread with the copy, ResNet-18's 512-channel layer
        # 25.4 -> 15.5 ms, 256 -> 512 12.5 -> 7.6, the smaller layers even
        # (`/work/notes/s17/weight_grad_order.py`).
        return _products(xp, _rows(xp, gy).T, col)
    n, o = gy.shape[:2]
    gym = (gy if gy.flags.c_contiguous else xp.ascontiguousarray(gy)).reshape(
        n, g, o // g, math.prod(gy.shape[2:]))  # (no call for an array that is contiguous)
    # summed over the batch in the weight's shape: a fresh array (a reshaped sum is a view,
    # which gradient accumulation would copy)
    return _matmul(xp, gym, col.swapaxes(-1, -2)).reshape((n,) + tuple(w_shape)).sum(0)


def _weight_in_shape(xp, layout, gw, w_shape):
    """A weight gradient in `layout`'s order (`_column_weight_terms`) as (O, C/g, *K)."""
    if layout != "channels_last":
        return gw
    nd = len(w_shape) - 2  # (O, K*C) to (O, C, *K), in one copy
    gw = gw.reshape((w_shape[0],) + tuple(w_shape[2:]) + (w_shape[1],))
    return xp.ascontiguousarray(gw.transpose((0, nd + 1) + tuple(range(1, nd + 1))))


def conv_backward(xp, x, gy, w, p, kept=None):
    """Both gradients (input, weight) of conv_forward(x, w, p) with output gradient gy from one
    Winograd pass (`winograd_backward`: one transform of gy serves both; measured 0.9-0.8x the
    time of the two apart on CIFAR ResNet's and ResNet-18's layers) or, on a device, from one
    copy of gy (`_device_columns.backward`); None where neither applies: the two then go
    their own ways."""
    if xp is np:
        warm_up()
        if _dnnl.applies(x, w, gy):
            return None  # oneDNN's two kernels, one for each gradient
    elif _device_columns.applies(xp, x, w, p) and \
            _batch_slices(x, w.shape[2:], p, gy.shape[2:]) is None:
        return _device_columns.backward(xp, x, gy, w, p)
    if not _layout.winograd_ok(xp, x, w.shape[1], w.shape[0], w.shape[2:], p, gy.shape[2:],
                               "weight"):
        return None
    return winograd_backward(xp, x, gy, w, p[1], True, _kept_tiles(kept))
