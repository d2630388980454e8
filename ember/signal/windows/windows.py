"""The window functions of `torch.signal.windows`. Each is computed in float64 over
n = 0 .. N-1 (for `sym=False`, N = M + 1 and the last point dropped, so the window is
periodic) and returned as a leaf tensor of the requested dtype and device. The cosine sums,
Bartlett and Kaiser formulas are the ones the top-level `*_window` factories use."""
import math
import numbers

import numpy as np

from ... import dtypes as _dt
from ..._layout import strided
from ...ops.creation import tensor
from ...ops.windows import _bartlett, _cosine_sum, _kaiser

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]

_NUTTALL = (0.3635819, 0.4891775, 0.1365995, 0.0106411)


def _make(name, M, sym, dtype, layout, device, requires_grad, values):
    """Check the arguments as PyTorch does, in its order, then build the window."""
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    d = dtype if dtype is not None else _dt.get_default_dtype()
    if d not in (_dt.float32, _dt.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {d}")
    if not isinstance(M, numbers.Integral) or isinstance(M, bool):
        raise TypeError(f"{name}(): argument 'M' must be int, not {type(M).__name__}")
    if M <= 1:
        arr = np.ones(M)
    else:
        n = M if sym else M + 1
        arr = values(np.arange(n, dtype=np.float64), n)[:M]
    return tensor(arr, dtype=d, device=device, requires_grad=requires_grad)


def _alternating(coefficients):
    """PyTorch's a_k: w[n] = sum (-1)^k a_k cos(2 pi k n / (N - 1))."""
    return _cosine_sum(tuple(c if k % 2 == 0 else -c for k, c in enumerate(coefficients)))


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None,
                   requires_grad=False):
    if not isinstance(a, (list, tuple)):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    return _make("general_cosine", M, sym, dtype, layout, device, requires_grad,
                 _alternating([float(c) for c in a]))


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None,
                    requires_grad=False):
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return general_cosine(M, a=list(_NUTTALL), sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return _make("blackman", M, sym, dtype, layout, device, requires_grad,
                 _alternating((0.42, 0.5, 0.08)))


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return _make("bartlett", M, sym, dtype, layout, device, requires_grad, _bartlett)


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    return _make("cosine", M, sym, dtype, layout, device, requires_grad,
                 lambda k, n: np.sin(math.pi * (k + 0.5) / n))


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=strided,
                device=None, requires_grad=False):
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")

    def values(k, n):
        middle = (n - 1) / 2.0 if center is None else center
        return np.exp(-np.abs(k - middle) / tau)
    return _make("exponential", M, sym, dtype, layout, device, requires_grad, values)


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None,
             requires_grad=False):
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    return _make("gaussian", M, sym, dtype, layout, device, requires_grad,
                 lambda k, n: np.exp(-0.5 * ((k - (n - 1) / 2.0) / std) ** 2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None,
           requires_grad=False):
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    return _make("kaiser", M, sym, dtype, layout, device, requires_grad, _kaiser(beta))
