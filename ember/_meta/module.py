"""The meta device's array module (its `xp`): NumPy's names, making meta arrays.

A function of arrays is NumPy's own: given a meta array, NumPy hands the call to the array's
protocols (`rules.py`). What makes an array from sizes or host data (`empty`, `zeros`,
`arange`, `asarray` ...) is answered here with a meta array of the right shape and dtype.
Random numbers draw nothing: a meta tensor has no values to fill.
"""
import math
import types

import numpy as np

from . import rules
from .array import ndarray


def _dtype(dtype, default=np.float64):
    return np.dtype(default if dtype is None else dtype)


def empty(shape, dtype=None, order="C"):
    return ndarray.empty((shape,) if isinstance(shape, (int, np.integer)) else shape,
                         _dtype(dtype), order)


zeros = ones = empty


def full(shape, fill_value, dtype=None, order="C"):
    if dtype is None:
        dtype = fill_value.dtype if isinstance(fill_value, ndarray) else \
            np.full((), fill_value).dtype
    return empty(shape, dtype, order)


def arange(start, stop=None, step=1, dtype=None):
    if stop is None:
        start, stop = 0, start
    count = max(0, math.ceil((stop - start) / step))
    return ndarray.empty((count,), np.arange(start, start, step, dtype=dtype).dtype)


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    dtype = np.linspace(np.zeros((), getattr(start, "dtype", None) or np.asarray(start).dtype),
                        0, 0, dtype=dtype).dtype
    result = ndarray.empty((num,), dtype)
    return (result, ndarray.empty((), dtype)) if retstep else result


def eye(N, M=None, k=0, dtype=float, order="C"):  # noqa: N803 (NumPy's names)
    return ndarray.empty((N, N if M is None else M), _dtype(dtype))


def identity(n, dtype=None):
    return ndarray.empty((n, n), _dtype(dtype))


def tri(N, M=None, k=0, dtype=float):  # noqa: N803
    return eye(N, M, k, dtype)


def asarray(a, dtype=None, order=None, copy=None, blocking=False):
    """Host data onto the meta device keeps only its shape and dtype."""
    if isinstance(a, ndarray):
        return rules._asarray(a, dtype, copy=copy)
    host = np.asarray(a, dtype=dtype)
    return ndarray.laid_out(host.shape, host.dtype, (host,))  # in the host array's layout


def array(obj, dtype=None, copy=True, order="K", subok=False, ndmin=0, blocking=False):
    result = asarray(obj, dtype)
    if result.ndim < ndmin:
        result = result.reshape((1,) * (ndmin - result.ndim) + result.shape)
    return result


def ascontiguousarray(a, dtype=None):
    return rules._contiguous(a, dtype) if isinstance(a, ndarray) else asarray(a, dtype)


def _drawn(size, dtype, params=()):
    """A draw's array: its shape from `size`, or else from its parameters' broadcast."""
    if size is None:
        size = np.broadcast_shapes(*(getattr(p, "shape", ()) for p in params))
    return empty(size, dtype)


class _Stream:
    """A meta generator (`xp.random.default_rng()`): a draw has a shape, and no values."""

    def random(self, size=None, dtype=np.float64, out=None):
        return out if out is not None else _drawn(size, dtype)

    standard_normal = random

    def integers(self, low, high=None, size=None, dtype=np.int64, endpoint=False):
        return _drawn(size, dtype, (low, high))

    def uniform(self, low=0.0, high=1.0, size=None):
        return _drawn(size, np.float64, (low, high))

    def standard_gamma(self, shape, size=None, dtype=np.float64, out=None):
        return _drawn(size, dtype, (shape,))

    def binomial(self, n, p, size=None):
        return _drawn(size, np.int64, (n, p))

    def poisson(self, lam=1.0, size=None):
        return _drawn(size, np.int64, (lam,))


random = types.SimpleNamespace(default_rng=lambda seed=None: _Stream())
lib = types.SimpleNamespace(stride_tricks=types.SimpleNamespace(
    as_strided=rules.strided,
    sliding_window_view=np.lib.stride_tricks.sliding_window_view))
linalg, fft = np.linalg, np.fft


def __getattr__(name):
    """The rest of NumPy's names: its functions meet meta arrays through their protocols."""
    return getattr(np, name)
