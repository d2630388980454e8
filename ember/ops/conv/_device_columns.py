"""1-d and 2-d convolutions on a device by ember's own im2col and col2im kernels (float32 and
float64; 1-d as 2-d of height 1): each is one kernel launch straight from and to
(N, C, H, W), where the general path took a zeroed buffer, a padded copy, a window copy and ~6
view calls (a device's step is bound by the host issuing calls: `_device_kernels`).

The columns are the (C*KH*KW, N*OH*OW) matrix, rows in the weight's (c, ki, kj) order, so that
    forward        y      = W (O, C*K) @ col, then (O, N, L) to (N, O, L),
    input grad     gcol   = W^T @ gy (O, N*L), then col2im (a gather: each input pixel sums
                   the columns that read it, in kernel order; no atomics, the same bits on
                   every run),
    weight grad    gW     = gy (O, N*L) @ col^T,
each one product over the whole batch (with groups, one batched product of the groups' row
blocks). Both gradients share gy's (O, N*L) copy (`backward`). The kernels are C index
arithmetic the tests' CuPy stand-in runs with NumPy; before first use each is compared with
the CPU routines on a small case (`_trial`).

Float32 products compute in TF32 where `torch.backends.cudnn.allow_tf32` says (on by
default), as cuDNN's convolutions do, whatever the matmul setting (`_products`)."""
import math

import numpy as np

from ..._parallel import matmul
from ...backends.cuda import matmul_tf32
from ...backends.cudnn import conv_tf32
from ...device import cuda_float32_products
from .. import _device_kernels
from ._im2col import col2im, im2col, pad_array

_GEOMETRY = ("int64 chans, int64 height, int64 width, int64 kh, int64 kw, int64 oh, int64 ow, "
             "int64 sh, int64 sw, int64 ph, int64 pw, int64 dh, int64 dw, int64 cols")

# col[(c, ki, kj), (n, p, q)] = x[n, c, p*sh - ph + ki*dh, q*sw - pw + kj*dw], 0 off the image
_IM2COL = _device_kernels.Kernel(
    "ember_im2col", "raw T x, " + _GEOMETRY, "T col",
    "ptrdiff_t r = i / cols; ptrdiff_t l = i % cols;"
    "ptrdiff_t n = l / (oh * ow); ptrdiff_t p = l / ow % oh; ptrdiff_t q = l % ow;"
    "ptrdiff_t c = r / (kh * kw); ptrdiff_t ki = r / kw % kh; ptrdiff_t kj = r % kw;"
    "ptrdiff_t y = p * sh - ph + ki * dh; ptrdiff_t z = q * sw - pw + kj * dw;"
    "col = (y >= 0 && y < height && z >= 0 && z < width) ?"
    " x[((n * chans + c) * height + y) * width + z] : T(0)",
    trial=lambda xp, dtype: _trial(xp, dtype, "im2col"))

# x[n, c, y, z] = the sum over kernel offsets (ki, kj) whose window reads (y, z) of
# col[(c, ki, kj), (n, p, q)], p = (y + ph - ki*dh) / sh (q alike) where that divides exactly
_COL2IM = _device_kernels.Kernel(
    "ember_col2im", "raw T col, " + _GEOMETRY, "T x",
    "ptrdiff_t z = i % width; ptrdiff_t y = i / width % height;"
    "ptrdiff_t c = i / (width * height) % chans; ptrdiff_t n = i / (width * height * chans);"
    "ptrdiff_t first = c * kh * kw * cols + n * oh * ow;"
    "T s = T(0);"
    "for (int ki = 0; ki < kh; ki++) {"
    " ptrdiff_t a = y + ph - ki * dh;"
    " bool row = a >= 0 && a % sh == 0 && a / sh < oh;"
    " ptrdiff_t at = first + ki * kw * cols + a / sh * ow;"
    " for (int kj = 0; kj < kw; kj++) {"
    "  ptrdiff_t b = z + pw - kj * dw;"
    "  s += (row && b >= 0 && b % sw == 0 && b / sw < ow) ? col[at + kj * cols + b / sw] : T(0);"
    " }"
    "}"
    "x = s",
    trial=lambda xp, dtype: _trial(xp, dtype, "col2im"))


# y[b, a, k] = m[a, b, k]: the two leading axes of a contiguous (A, B, K) array swapped, one
# kernel where a transposed view's copy and its reshapes took four calls
_SWAP = _device_kernels.Kernel(
    "ember_swap_leading", "raw T m, int64 lead, int64 second, int64 inner", "T y",
    "ptrdiff_t k = i % inner; ptrdiff_t q = i / inner;"
    "y = m[(q % lead * second + q / lead) * inner + k]",
    trial=lambda xp, dtype: _trial(xp, dtype, "swap"))


def _products(xp, a, b, out=None):
    """a @ b on the device, a float32 product in TF32 where cuDNN's convolutions would be
    (`conv_tf32`): CuPy's setting for the products is switched for this one where the
    matmul setting differs, and put back."""
    if a.dtype != np.float32 or conv_tf32() == matmul_tf32():
        return matmul(xp, a, b, out)
    was = cuda_float32_products(xp, conv_tf32())
    try:
        return matmul(xp, a, b, out)
    finally:
        cuda_float32_products(xp, was)


def applies(xp, x, w, p):
    """Whether a convolution of x with w (params p) takes these kernels: 1-d or 2-d, on a
    device whose kernels run for their dtype (float32 or float64)."""
    return x.ndim in (3, 4) and _device_kernels.usable(xp, x, w)


def _plane(a, p=None, osz=None):
    """A 1-d convolution's array, params and output size as a 2-d one's of height 1."""
    if a.ndim == 4:
        return a, p, osz
    if p is not None:
        stride, lo, hi, dil, g = p
        p = ((1,) + tuple(stride), (0,) + tuple(lo), (0,) + tuple(hi), (1,) + tuple(dil), g)
    return a.reshape(a.shape[:2] + (1,) + a.shape[2:]), p, \
        None if osz is None else (1,) + tuple(osz)


def _geometry(n, c, size, kernel, p, osz):
    stride, lo, _, dil, _ = p
    return (c, size[0], size[1], kernel[0], kernel[1], osz[0], osz[1], stride[0], stride[1],
            lo[0], lo[1], dil[0], dil[1], n * osz[0] * osz[1])


def columns(xp, x, kernel, p, osz):
    """The (C*KH*KW, N*OH*OW) column matrix of x (N, C, H, W): one kernel."""
    if not x.flags.c_contiguous:  # the kernel reads x by C-order index
        x = xp.ascontiguousarray(x)
    n, c = x.shape[:2]
    geometry = _geometry(n, c, x.shape[2:], kernel, p, osz)
    rows = c * kernel[0] * kernel[1]
    return _IM2COL(xp, x, *geometry, size=rows * geometry[-1]).reshape(rows, geometry[-1])


def _swap_leading(xp, m, lead, second):
    """m, contiguous (lead * second * K elements as (lead, second, K)), as a contiguous flat
    (second, lead, K) array."""
    if not m.flags.c_contiguous:
        m = xp.ascontiguousarray(m)
    inner = m.size // max(lead * second, 1)
    return _SWAP(xp, m, lead, second, inner, size=m.size)


def _channel_major(xp, gy):
    """gy (N, O, *out) as the contiguous (O, N*L) matrix."""
    n, o = gy.shape[:2]
    return _swap_leading(xp, gy, n, o).reshape(o, -1)


def forward(xp, x, w, p, osz):
    """The convolution of x (N, C, *S) with w (O, C/g, *K), 1-d or 2-d: (N, O, *osz)."""
    shape = x.shape[:1] + w.shape[:1] + tuple(osz)
    x, p, osz = _plane(x, p, osz)
    w = _plane(w)[0]
    n, o, g = x.shape[0], w.shape[0], p[4]
    col = columns(xp, x, w.shape[2:], p, osz)
    if g == 1:
        m = _products(xp, w.reshape(o, -1), col)  # (O, N*L)
    else:  # (O/g, C/g * K) @ (C/g * K, N*L) for each group
        m = _products(xp, w.reshape(g, o // g, -1), col.reshape(g, -1, col.shape[1]))
    return _swap_leading(xp, m, o, n).reshape(shape)


def transpose(xp, gy, w, p, size, gy_rows=None):
    """The adjoint in x of `forward`: gy (N, O, *out) to (N, C, *size). `gy_rows`: gy's
    _channel_major matrix, when the caller has it."""
    shape = gy.shape[:1] + (w.shape[1] * p[4],) + tuple(size)
    gy, p, size = _plane(gy, p, size)
    w = _plane(w)[0]
    n, o, g = gy.shape[0], gy.shape[1], p[4]
    rows = _channel_major(xp, gy) if gy_rows is None else gy_rows
    if g == 1:
        gcol = _products(xp, w.reshape(o, -1).T, rows)  # (C*K, N*L)
    else:  # (C/g * K, O/g) @ (O/g, N*L) for each group
        gcol = _products(xp, w.reshape(g, o // g, -1).swapaxes(1, 2),
                         rows.reshape(g, o // g, -1)).reshape(-1, rows.shape[1])
    c = shape[1]
    geometry = _geometry(n, c, size, w.shape[2:], p, gy.shape[2:])
    return _COL2IM(xp, gcol, *geometry, size=math.prod(shape)).reshape(shape)


def weight_grad(xp, x, gy, p, w_shape, gy_rows=None):
    """The adjoint in w of `forward`: (O, C/g, *K)."""
    rows = _channel_major(xp, gy) if gy_rows is None else gy_rows
    x, p2, osz = _plane(x, p, gy.shape[2:])
    kernel = (1,) * (4 - len(w_shape)) + tuple(w_shape[2:])
    col = columns(xp, x, kernel, p2, osz)  # (C*K, N*L)
    o, g = w_shape[0], p[4]
    gw = xp.empty(w_shape, x.dtype)  # the weight's own array: a view would be copied again
    if g == 1:
        _products(xp, rows, col.T, out=gw.reshape(o, -1))
    else:  # (O/g, N*L) @ (N*L, C/g * K) for each group
        _products(xp, rows.reshape(g, o // g, -1),
                  col.reshape(g, -1, col.shape[1]).swapaxes(1, 2), out=gw.reshape(g, o // g, -1))
    return gw


def backward(xp, x, gy, w, p):
    """(input gradient, weight gradient) from one (O, N*L) copy of gy."""
    rows = _channel_major(xp, gy)
    return (transpose(xp, gy, w, p, x.shape[2:], rows),
            weight_grad(xp, x, gy, p, w.shape, rows))


# ---- the check before first use: each kernel against the CPU's routines on a small case with
# every parameter distinct (padding, stride, dilation, a kernel wider than tall, an image
# not square); whole numbers, so every sum is exact. The device compares, and a difference
# fails the next read as a device-side assert does (a host comparison would cost each
# program a read it did not ask for).
_TRIAL = dict(n=2, c=3, size=(5, 7), kernel=(2, 3),
              p=((2, 1), (1, 2), (1, 2), (1, 2), 1))


def _trial(xp, dtype, which):
    n, c, size, kernel, p = (_TRIAL[k] for k in ("n", "c", "size", "kernel", "p"))
    stride, lo, hi, dil, _ = p
    x = (np.arange(n * c * math.prod(size)) % 11 - 5).astype(dtype).reshape((n, c) + size)
    col, osz = im2col(np, pad_array(np, x, lo, hi), kernel, stride, dil)  # (N, C, *K, *out)
    want_col = col.reshape(n, c * math.prod(kernel), -1).transpose(1, 0, 2).reshape(
        c * math.prod(kernel), -1)
    if which == "im2col":
        got, want = columns(xp, xp.asarray(x), kernel, p, osz), want_col
    elif which == "swap":
        got, want = _swap_leading(xp, xp.asarray(x), n, c), x.swapaxes(0, 1).reshape(-1)
    else:
        got = _COL2IM(xp, xp.asarray(want_col), *_geometry(n, c, size, kernel, p, osz),
                      size=x.size).reshape(x.shape)
        want = col2im(np, col, size, kernel, stride, dil, lo, hi)
    _device_kernels.trial_verdict(xp, got != xp.asarray(want), f"ember_{which}", which)
