"""`torch.masked`'s reductions and normalizations that see only the elements where `mask` is
True (a bool tensor broadcast to the input's shape; None means every element).

Each works by filling the masked-out elements with the operation's identity (0 for sum, 1 for
prod, -inf for amax and logsumexp, +inf for amin) and running the ordinary op; means, variances
and norms divide by the count of elements kept. A slice with nothing kept gives what that
identity gives (sum 0, mean nan, amax -inf), as PyTorch's does. Everything is built from ember
ops, so gradients flow through the kept elements.

Given a MaskedTensor, they use its data and mask and answer a plain tensor, as PyTorch's.
"""
import builtins
import functools
import math

from .. import dtypes as _dt
from .. import ops as _ops
from ..linalg import vector_norm as _vector_norm
from ._maskedtensor import MaskedTensor

__all__ = ["amax", "amin", "argmax", "argmin", "cumprod", "cumsum", "log_softmax",
           "logsumexp", "mean", "norm", "normalize", "prod", "softmax", "softmin", "std", "sum",
           "var"]


def _unwrap(function):
    """Let `function` take a MaskedTensor: its data is the input, its mask the mask."""
    @functools.wraps(function)
    def wrapped(input, *args, mask=None, **kwargs):
        if isinstance(input, MaskedTensor):
            if mask is not None:
                raise ValueError("mask must be None when input is a MaskedTensor")
            input, mask = input.get_data(), input.get_mask()
        return function(input, *args, mask=mask, **kwargs)
    return wrapped


def _mask_for(input, mask):
    if mask is None:
        return _ops.ones_like(input, dtype=_dt.bool)
    if mask.dtype is not _dt.bool:
        raise ValueError(f"mask must have dtype bool, got {mask.dtype}")
    return _ops.broadcast_to(mask, input.shape)


def _extreme(dtype, largest):
    if dtype.is_floating_point:
        return math.inf if largest else -math.inf
    if dtype is _dt.bool:
        return largest
    info = _dt.iinfo(dtype)
    return info.max if largest else info.min


def _filled(input, mask, fill, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    return _ops.where(_mask_for(input, mask), input, _ops.full_like(input, fill))


def _dims(input, dim):
    if dim is None:
        return tuple(range(input.dim()))
    return (dim,) if isinstance(dim, builtins.int) else tuple(dim)


@_unwrap
def sum(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    return _ops.sum(_filled(input, mask, 0), _dims(input, dim), keepdim=keepdim, dtype=dtype)


@_unwrap
def prod(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    filled = _filled(input, mask, 1, dtype)
    for d in sorted((d % builtins.max(input.dim(), 1) for d in _dims(input, dim)),
                    reverse=True):
        filled = _ops.prod(filled, d, keepdim=True)
    return filled if keepdim else filled.reshape(_kept_shape(input, dim))


def _kept_shape(input, dim):
    dims = {d % builtins.max(input.dim(), 1) for d in _dims(input, dim)}
    return tuple(s for i, s in enumerate(input.shape) if i not in dims)


@_unwrap
def amax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    filled = _filled(input, mask, _extreme(dtype or input.dtype, largest=False), dtype)
    return _ops.amax(filled, _dims(input, dim), keepdim=keepdim)


@_unwrap
def amin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    filled = _filled(input, mask, _extreme(dtype or input.dtype, largest=True), dtype)
    return _ops.amin(filled, _dims(input, dim), keepdim=keepdim)


@_unwrap
def argmax(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    # PyTorch answers the index in the input's dtype (or `dtype`)
    filled = _filled(input, mask, _extreme(dtype or input.dtype, largest=False), dtype)
    return _ops.argmax(filled, dim, keepdim=keepdim).to(dtype or input.dtype)


@_unwrap
def argmin(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    filled = _filled(input, mask, _extreme(dtype or input.dtype, largest=True), dtype)
    return _ops.argmin(filled, dim, keepdim=keepdim).to(dtype or input.dtype)


def _count(input, mask, dim, keepdim):
    return _ops.sum(_mask_for(input, mask), _dims(input, dim), keepdim=keepdim)


@_unwrap
def mean(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    total = sum(input, dim, keepdim=keepdim, dtype=dtype, mask=mask)
    return total / _count(input, mask, dim, keepdim)


@_unwrap
def var(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if dtype is not None:
        input = input.to(dtype)
    count = _count(input, mask, dim, keepdim=True)
    centre = sum(input, dim, keepdim=True, mask=mask) / count
    squares = sum((input - centre) ** 2, dim, keepdim=keepdim, mask=mask)
    count = count if keepdim else count.reshape(squares.shape)
    return squares / _ops.clamp_min(count - correction, 0)


@_unwrap
def std(input, dim=None, unbiased=None, *, correction=None, keepdim=False, dtype=None,
        mask=None):
    return _ops.sqrt(var(input, dim, unbiased, correction=correction, keepdim=keepdim,
                         dtype=dtype, mask=mask))


@_unwrap
def norm(input, ord=2.0, dim=None, *, keepdim=False, dtype=None, mask=None):
    fill = math.inf if ord == -math.inf else 0
    return _vector_norm(_filled(input, mask, fill, dtype), ord, _dims(input, dim),
                        keepdim=keepdim)


@_unwrap
def logsumexp(input, dim=None, *, keepdim=False, dtype=None, mask=None):
    filled = _filled(input, mask, -math.inf, dtype)
    return _ops.logsumexp(filled, _dims(input, dim), keepdim=keepdim)


@_unwrap
def softmax(input, dim, *, dtype=None, mask=None):
    filled = _filled(input, mask, -math.inf, dtype)
    return _ops.softmax(filled, dim)


@_unwrap
def log_softmax(input, dim, *, dtype=None, mask=None):
    filled = _filled(input, mask, -math.inf, dtype)
    return _ops.log_softmax(filled, dim)


@_unwrap
def softmin(input, dim, *, dtype=None, mask=None):
    filled = _filled(-input, mask, -math.inf, dtype)
    return _ops.softmax(filled, dim)


@_unwrap
def normalize(input, ord, dim, *, eps=1e-12, dtype=None, mask=None):
    filled = _filled(input, mask, 0, dtype)
    length = _vector_norm(filled, ord, dim, keepdim=True)
    return filled / _ops.clamp_min(length, eps)


@_unwrap
def cumsum(input, dim, *, dtype=None, mask=None):
    return _ops.cumsum(_filled(input, mask, 0, dtype), dim)


@_unwrap
def cumprod(input, dim, *, dtype=None, mask=None):
    return _ops.cumprod(_filled(input, mask, 1, dtype), dim)
