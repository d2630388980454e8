"""2-d max pooling on a device as one kernel each way (float32 and float64): the forward scans
each window as PyTorch's kernel does, and the backward gathers, for each input element, the
gradients of the windows it won (no atomics: the same bits on every run). The general path
took ~50 array calls forward (the separable max's winner tracking, the padded copy, the flat
indices) and ~15 backward where windows overlap (`_common._scatter_by_window_groups`); a
device's step is bound by the host issuing calls (`_device_kernels`).

The kernels are C index arithmetic the tests' CuPy stand-in runs with NumPy; before first use
each is checked against a small case (`_trial`)."""
import numpy as np

from .. import _device_kernels

_WINDOW = ("int64 height, int64 width, int64 kh, int64 kw, int64 oh, int64 ow, int64 sh, "
           "int64 sw, int64 ph, int64 pw, int64 dh, int64 dw")

# PyTorch's scan: row-major over the window's elements inside the image, a greater value or a
# NaN takes the lead (so the first maximum, or the last NaN, wins), starting from the first
# element inside (the index an all -inf window reports)
_MAX_POOL = _device_kernels.Kernel(
    "ember_max_pool2d", "raw T x, T lowest, " + _WINDOW, "T y, int64 at",
    "ptrdiff_t q = i % ow; ptrdiff_t p = i / ow % oh; ptrdiff_t plane = i / (ow * oh);"
    "ptrdiff_t top = p * sh - ph; ptrdiff_t left = q * sw - pw;"
    "ptrdiff_t first_row = top < 0 ? top + (dh - 1 - top) / dh * dh : top;"
    "ptrdiff_t first_col = left < 0 ? left + (dw - 1 - left) / dw * dw : left;"
    "T m = lowest; ptrdiff_t best = first_row * width + first_col;"
    "for (int ki = 0; ki < kh; ki++) {"
    " ptrdiff_t r = top + ki * dh;"
    " for (int kj = 0; kj < kw; kj++) {"
    "  ptrdiff_t c = left + kj * dw;"
    "  bool inside = r >= 0 && r < height && c >= 0 && c < width;"
    "  T v = inside ? x[(plane * height + r) * width + c] : lowest;"
    "  bool take = inside && (v > m || v != v);"
    "  m = take ? v : m;"
    "  best = take ? r * width + c : best;"
    " }"
    "}"
    "y = m; at = best",
    trial=lambda xp, dtype: _trial(xp, dtype, "forward"))

# gx[plane, r, c] = the sum of gy over the windows whose winner is (r, c), in float64 and in
# the windows' row-major order (as the CPU's bincount sums them)
_MAX_POOL_GRAD = _device_kernels.Kernel(
    "ember_max_pool2d_grad", "raw T gy, raw int64 at, " + _WINDOW, "T gx",
    "ptrdiff_t c = i % width; ptrdiff_t r = i / width % height;"
    "ptrdiff_t plane = i / (width * height); ptrdiff_t me = r * width + c;"
    "double s = 0;"
    "for (int ki = 0; ki < kh; ki++) {"
    " ptrdiff_t a = r + ph - (kh - 1 - ki) * dh;"
    " bool row = a >= 0 && a % sh == 0 && a / sh < oh;"
    " ptrdiff_t first = (plane * oh + a / sh) * ow;"
    " for (int kj = 0; kj < kw; kj++) {"
    "  ptrdiff_t b = c + pw - (kw - 1 - kj) * dw;"
    "  bool won = row && b >= 0 && b % sw == 0 && b / sw < ow && at[first + b / sw] == me;"
    "  s += won ? double(gy[first + b / sw]) : 0;"
    " }"
    "}"
    "gx = T(s)",
    trial=lambda xp, dtype: _trial(xp, dtype, "backward"))


def applies(xp, a):
    """Whether max pooling of `a` takes these kernels: a device whose kernels run for its
    dtype (float32 or float64)."""
    return _device_kernels.usable(xp, a)


def _window_args(size, window, osz):
    kernel, stride, padding, dilation = window
    return (size[0], size[1], kernel[0], kernel[1], osz[0], osz[1], stride[0], stride[1],
            padding[0], padding[1], dilation[0], dilation[1])


def max_pool2d(xp, a, window, osz):
    """(maxima, flat in-plane indices of the winners), each of shape a's leading dims + osz;
    `window` is (kernel, stride, padding, dilation)."""
    if not a.flags.c_contiguous:  # read by C-order index
        a = xp.ascontiguousarray(a)
    shape = a.shape[:-2] + tuple(osz)
    count = a.size // (a.shape[-2] * a.shape[-1]) * osz[0] * osz[1]
    vals, at = _MAX_POOL(xp, a, a.dtype.type(-np.inf),
                         *_window_args(a.shape[-2:], window, osz), size=count)
    return vals.reshape(shape), at.reshape(shape)


def max_pool2d_grad(xp, gy, at, size, window):
    """The gradient of max_pool2d's input: gy (*lead, *osz) summed at the winners `at` into
    (*lead, *size)."""
    if not gy.flags.c_contiguous:
        gy = xp.ascontiguousarray(gy)
    if not at.flags.c_contiguous:
        at = xp.ascontiguousarray(at)
    osz = gy.shape[-2:]
    count = gy.size // (osz[0] * osz[1]) * size[0] * size[1]
    gx = _MAX_POOL_GRAD(xp, gy, at, *_window_args(size, window, osz), size=count)
    return gx.reshape(gy.shape[:-2] + tuple(size))


# ---- the check before first use: forward and backward against what PyTorch's kernels give on
# a small case with overlapping, padded, dilated windows, ties, a NaN and -inf; the device
# compares, and a difference fails the next read as a device-side assert does
_TRIAL_WINDOW = ((3, 2), (2, 1), (1, 1), (1, 2))


def _trial_case(dtype):
    x = (np.arange(2 * 5 * 6) % 3).astype(dtype).reshape(2, 5, 6)  # ties in every window
    x[0, 1, 2] = np.nan
    x[1, :2] = -np.inf
    kernel, stride, padding, dilation = _TRIAL_WINDOW
    osz = tuple((s + 2 * p - d * (k - 1) - 1) // t + 1
                for s, k, t, p, d in zip(x.shape[1:], kernel, stride, padding, dilation))
    vals = np.empty((2,) + osz, dtype)
    at = np.empty((2,) + osz, np.int64)
    for plane in range(2):  # PyTorch's scan, written out
        for p in range(osz[0]):
            for q in range(osz[1]):
                rows = [p * stride[0] - padding[0] + k * dilation[0] for k in range(kernel[0])]
                cols = [q * stride[1] - padding[1] + k * dilation[1] for k in range(kernel[1])]
                inside = [(r, c) for r in rows for c in cols if 0 <= r < 5 and 0 <= c < 6]
                m, best = -np.inf, inside[0][0] * 6 + inside[0][1]
                for r, c in inside:
                    v = x[plane, r, c]
                    if v > m or v != v:
                        m, best = v, r * 6 + c
                vals[plane, p, q], at[plane, p, q] = m, best
    gy = (np.arange(vals.size) % 5 + 1).astype(dtype).reshape(vals.shape)
    gx = np.zeros((2, 30))
    for plane in range(2):
        np.add.at(gx[plane], at[plane].reshape(-1), gy[plane].reshape(-1))
    return x, osz, vals, at, gy, gx.astype(dtype).reshape(x.shape)


def _trial(xp, dtype, which):
    x, osz, vals, at, gy, gx = _trial_case(dtype)
    if which == "forward":
        got_vals, got_at = max_pool2d(xp, xp.asarray(x), _TRIAL_WINDOW, osz)
        want = xp.asarray(vals)
        bad = ((got_vals != want) & ~(xp.isnan(got_vals) & xp.isnan(want))) | \
            (got_at != xp.asarray(at))
    else:
        bad = max_pool2d_grad(xp, xp.asarray(gy), xp.asarray(at), x.shape[1:],
                              _TRIAL_WINDOW) != xp.asarray(gx)
    _device_kernels.trial_verdict(xp, bad, "ember_max_pool2d" if which == "forward" else
                                  "ember_max_pool2d_grad", f"max_pool2d's {which}")
