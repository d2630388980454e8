"""Window functions for spectral analysis: hann, hamming, blackman, bartlett, kaiser.

Each is computed in float64 on the host's formula over n = 0 .. N-1 (N = window_length + 1
when `periodic`, then the last point dropped) and made a tensor of the requested dtype and
device, a leaf that may require grad, as PyTorch's factories give.
"""
import math

import numpy as np

from .. import dtypes as _dt
from .creation import tensor

__all__ = ["hann_window", "hamming_window", "blackman_window", "bartlett_window",
           "kaiser_window"]
METHODS = []


def _window(fname, window_length, periodic, dtype, device, requires_grad, values):
    d = dtype if dtype is not None else _dt.get_default_dtype()
    if not d.is_floating_point:
        raise RuntimeError(
            f"{fname} expects floating point dtypes, got: TensorOptions(dtype="
            f"{d._cpp_name}, device={device or 'cpu'}, layout=Strided (default), "
            "requires_grad=false (default), pinned_memory=false, memory_format=(nullopt))")
    if window_length < 0:
        raise RuntimeError(f"{fname} requires non-negative window_length, got "
                           f"window_length={window_length}")
    if window_length <= 1:
        arr = np.ones(window_length)
    else:
        n = window_length + 1 if periodic else window_length
        arr = values(np.arange(n, dtype=np.float64), n)[:window_length]
    return tensor(arr, dtype=d, device=device, requires_grad=requires_grad)


def _cosine_sum(coefficients):
    def values(k, n):
        phase = k * (2.0 * math.pi / (n - 1))
        return sum(c * np.cos(j * phase) for j, c in enumerate(coefficients))
    return values


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum((alpha, -beta)))


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum((0.5, -0.5)))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_sum((0.42, -0.5, 0.08)))


def _bartlett(k, n):
    return 1.0 - np.abs(k * (2.0 / (n - 1)) - 1.0)


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   _bartlett)


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   _kaiser(beta))


def _kaiser(beta):
    from .unary.bessel import _bessel
    i0 = _bessel(0, False)

    def values(k, n):
        half = (n - 1) / 2.0
        r = (k - half) / half
        arg = beta * np.sqrt(np.maximum(1.0 - r * r, 0.0))
        return i0(np, arg) / i0(np, np.array(float(beta)))
    return values
