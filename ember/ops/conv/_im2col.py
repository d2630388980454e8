"""Array routines over any number of spatial dims: padding, the strided window view, im2col
(one copy in destination order) and its adjoint col2im, and the thread-local scratch memory
their large temporaries live in."""
import functools
import itertools
import math
import threading

import numpy as np

from ..._parallel import matmul as _products


# ---- scratch memory ------------------------------------------------------------------------
_local = threading.local()
_SCRATCH_MIN, _SCRATCH_MAX = 1 << 20, 1 << 30


def scratch(xp, slot, shape, dtype):
    """An uninitialised array that is only used inside one op call (never returned). `shape`
    a tuple. The view made for a (slot, shape, dtype) is kept and handed out again while its
    slot's buffer stands: a Winograd step asks for ~900 scratch arrays, and making each view
    anew took ~4 us of Python and NumPy calls."""
    if xp is np:
        views = getattr(_local, "views", None)
        if views is not None:
            view = views.get((slot, shape, dtype))
            if view is not None:
                return view
    n = math.prod(shape) * np.dtype(dtype).itemsize
    if xp is not np or not _SCRATCH_MIN <= n <= _SCRATCH_MAX:
        return xp.empty(shape, dtype)
    bufs = getattr(_local, "bufs", None)
    if bufs is None:
        bufs = _local.bufs = {}
        _local.views = {}
    buf = bufs.get(slot)
    views = _local.views
    if buf is None or buf.nbytes < n:
        buf = bufs[slot] = np.empty(n, np.uint8)
        for key in [k for k in views if k[0] == slot]:  # views of the slot's old buffer
            del views[key]
    if len(views) >= _SCRATCH_VIEWS:  # many shapes come and go: start over
        views.clear()
    view = views[(slot, shape, dtype)] = buf[:n].view(dtype).reshape(shape)
    return view


_SCRATCH_VIEWS = 512


def copied(xp, view, slot):
    """A contiguous copy of `view`: in the scratch memory of `slot` on the host (a fresh array
    for `slot` None); a device, whose scratch is a fresh array anyway, makes a fresh one in
    one call, not an allocation and a copy (each call is host time there)."""
    if xp is not np:
        return view.copy()
    col = scratch(xp, slot, view.shape, view.dtype) if slot else xp.empty(view.shape, view.dtype)
    col[...] = view
    return col


# ---- array routines --------------------------------------------------------------------------
def _strided(xp):
    return xp.lib.stride_tricks.as_strided


def pad_array(xp, a, lo, hi, value=0, slot=None):
    """`a` (N, C, *S) padded by lo/hi per spatial dim (negative amounts crop)."""
    if any(p < 0 for p in lo) or any(p < 0 for p in hi):
        a = a[(slice(None), slice(None)) + tuple(
            slice(max(-l, 0), s - max(-h, 0)) for s, l, h in zip(a.shape[2:], lo, hi))]
        lo, hi = [max(p, 0) for p in lo], [max(p, 0) for p in hi]
    if not any(lo) and not any(hi):
        return a
    shape = a.shape[:2] + tuple(s + l + h for s, l, h in zip(a.shape[2:], lo, hi))
    every = (slice(None),)
    if xp is not np and value == 0:  # a device: one memset and one copy (see pad_channels_last)
        out = xp.zeros(shape, a.dtype)
        out[every * 2 + tuple(slice(l, l + s) for l, s in zip(lo, a.shape[2:]))] = a
        return out
    out = scratch(xp, slot, shape, a.dtype) if slot else xp.empty(shape, a.dtype)
    for d, (l, h) in enumerate(zip(lo, hi)):  # fill only the borders
        ax = every * (2 + d)
        if l:
            out[ax + (slice(0, l),)] = value
        if h:
            out[ax + (slice(shape[2 + d] - h, None),)] = value
    out[every * 2 + tuple(slice(l, l + s) for l, s in zip(lo, a.shape[2:]))] = a
    return out


def windows(xp, a, kernel, stride, dilation, out_size):
    """A strided view (N, C, *kernel, *out_size) of `a` (N, C, *S): every window, no copy."""
    st = a.strides
    return _strided(xp)(a, a.shape[:2] + tuple(kernel) + tuple(out_size),
                        st[:2] + tuple(s * d for s, d in zip(st[2:], dilation))
                        + tuple(s * t for s, t in zip(st[2:], stride)))


def out_size(size, kernel, stride, dilation):
    return tuple((s - d * (k - 1) - 1) // t + 1
                 for s, k, t, d in zip(size, kernel, stride, dilation))


def im2col(xp, a, kernel, stride, dilation, slot="col", osz=None):
    """The contiguous (N, C, *kernel, *out) copy of the windows of an (already padded) `a`.
    One copy in destination order: each input plane is read while it sits in cache."""
    if osz is None:
        osz = out_size(a.shape[2:], kernel, stride, dilation)
    return copied(xp, windows(xp, a, kernel, stride, dilation, osz), slot), osz


def col2im(xp, col, size, kernel, stride, dilation, lo, hi):
    """Adjoint of im2col: (N, C, *kernel, *out) summed back into (N, C, *size), one strided
    accumulation per kernel offset (windows of one offset never overlap); on a device by
    phases where they apply (`sum_by_phase`)."""
    n = len(size)
    osz = col.shape[2 + n:]
    padded = tuple(s + l + h for s, l, h in zip(size, lo, hi))
    every = (slice(None),) * 2
    if by_phase(xp, kernel, stride, dilation):
        # (N, C, out_1, kernel_1, out_2, kernel_2, ...): a view
        out = sum_by_phase(xp, col.transpose((0, 1) + tuple(
            a for i in range(n) for a in (2 + n + i, 2 + i))), 2, kernel, stride, padded)
    else:
        out = xp.zeros(col.shape[:2] + padded, col.dtype)
        for off in itertools.product(*[range(k) for k in kernel]):
            target = every + tuple(slice(o * d, o * d + t * (m - 1) + 1, t)
                                   for o, d, t, m in zip(off, dilation, stride, osz))
            part = out[target]  # summed in place (see col2im_channels_last)
            xp.add(part, col[every + off], out=part)
    if any(lo) or any(hi) or out.shape[2:] != tuple(size):  # (by phase: whole strides)
        out = xp.ascontiguousarray(out[every + tuple(slice(l, l + s) for l, s in zip(lo, size))])
    return out


def by_phase(xp, kernel, stride, dilation):
    """Whether a col2im sums its kernel offsets by phase (`sum_by_phase`): on a device (one
    call per phase group, not per offset: each call is host time there), with no dilation
    and a dim whose stride and kernel are both over 1 (else every group is one offset). The
    host adds per offset: in the batched layout the phase view's innermost axis is a few
    elements long (measured 1.3-2.2x slower there)."""
    return xp is not np and all(d == 1 for d in dilation) and \
        any(t > 1 and k > 1 for k, t in zip(kernel, stride))


def sum_by_phase(xp, col, lead, kernel, stride, padded):
    """out[..., o + t*w, ...] += col[..., w, o, ...] over every kernel offset o and window w of
    each spatial dim (stride t, dilation 1), where `col`'s axes lead + 2i, lead + 2i + 1 are dim
    i's windows and kernel offsets, and out has the `padded` spatial dims there, rounded up to
    whole strides (crop it). Offsets q*t .. q*t + t-1 land on distinct phases of the t-wide
    blocks of out (block q + w, phase o - q*t), so, out viewed as (block, phase) pairs, each
    such group is one add: a 3x3 kernel at stride 2 takes 4 adds, not 9. Every element still
    takes its terms in kernel-offset order (a phase's offsets come in ascending groups), so
    the sums are those of one add per offset to the bit."""
    shape, phased_shape, sums = _phase_plan(col.shape, lead, tuple(kernel), tuple(stride),
                                            tuple(padded))
    out = xp.zeros(shape, col.dtype)
    phased = out.reshape(phased_shape)
    for target, source in sums:
        part = phased[target]
        xp.add(part, col[source], out=part)
    return out


@functools.lru_cache(maxsize=256)
def _phase_plan(col_shape, lead, kernel, stride, padded):
    """sum_by_phase's out shape, its (block, phase) view's shape and the (target, source)
    index of each group's add (cached: a model's few shapes come back every step)."""
    nd = len(kernel)
    osz = col_shape[lead:lead + 2 * nd:2]
    head, tail = col_shape[:lead], col_shape[lead + 2 * nd:]
    every = (slice(None),) * lead
    blocks = [-(-p // t) for p, t in zip(padded, stride)]
    shape = head + tuple(b * t for b, t in zip(blocks, stride)) + tail
    phased_shape = head + tuple(a for b, t in zip(blocks, stride) for a in (b, t)) + tail
    sums = []
    for group in itertools.product(*[range(-(-k // t)) for k, t in zip(kernel, stride)]):
        widths = [min(t, k - q * t) for q, t, k in zip(group, stride, kernel)]
        sums.append((every + tuple(a for q, m, r in zip(group, osz, widths)
                                   for a in (slice(q, q + m), slice(0, r))),
                     every + tuple(a for q, t, r in zip(group, stride, widths)
                                   for a in (slice(None), slice(q * t, q * t + r)))))
    return shape, phased_shape, tuple(sums)


_COMPUTE = {np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.complex64),
            np.dtype(np.complex128), np.dtype(np.int64), np.dtype(np.int32)}


def _matmul(xp, a, b, out=None):
    if a.dtype not in _COMPUTE:  # half, bfloat16, small ints: BLAS works in float32
        res = _products(xp, a.astype(np.float32), b.astype(np.float32)).astype(a.dtype)
        if out is None:
            return res
        out[...] = res
        return out
    return _products(xp, a, b, out=out)


# The most bytes one im2col buffer may take: a larger batch is convolved in slices, so that
