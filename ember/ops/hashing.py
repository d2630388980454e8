"""`hash_tensor`: the XOR of the elements' bit patterns, as uint64, over all dims or `dim`.
Each element widens first to a 64-bit word as PyTorch's kernel does: floating values to
float64's bits, integers and bools to their (two's complement) int64 value."""
import builtins

import numpy as np

from .. import dtypes as _dt
from .._tensor import _wrap_dim, make_tensor, xp_of
from ._writes import write_out

__all__ = ["hash_tensor"]
METHODS = ["hash_tensor"]


def _words(input):
    a = input._array
    if input.dtype.is_complex:
        raise NotImplementedError(f'"xor_sum_cpu" not implemented for '
                                  f"'{input.dtype._scalar_name}'")
    if input.dtype.is_floating_point:
        return a.astype(np.float64).view(np.uint64)
    if input._array.dtype == np.uint64:
        return a.copy()
    return a.astype(np.int64).view(np.uint64)


def _xor_last(xp, words):
    """XOR-reduce the last axis by folding halves (backend ufuncs need no reduce support)."""
    while words.shape[-1] > 1:
        n = words.shape[-1]
        if n % 2:
            pad = xp.zeros(words.shape[:-1] + (1,), np.uint64)
            words = xp.concatenate([words, pad], -1)
            n += 1
        words = words[..., :n // 2] ^ words[..., n // 2:]
    if words.shape[-1] == 0:
        return xp.zeros(words.shape[:-1], np.uint64)
    return words[..., 0]


def hash_tensor(input, dim=(), *, keepdim=False, mode=0, out=None):
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    dims = [dim] if isinstance(dim, builtins.int) else list(dim)
    if not dims and input.numel() == 0:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' "
                           "argument.")
    xp = xp_of(input)
    words = _words(input)
    ndim = words.ndim
    axes = sorted({_wrap_dim(d, builtins.max(ndim, 1)) for d in dims}) if dims else \
        list(builtins.range(ndim))
    for d in axes:
        if words.shape[d] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {d} to have non-zero size.")
    kept = [d for d in builtins.range(ndim) if d not in axes]
    moved = words.transpose(kept + axes).reshape([words.shape[d] for d in kept] + [-1]) \
        if ndim else words.reshape(1)
    res = _xor_last(xp, moved)
    if keepdim:
        res = res.reshape([1 if d in axes else words.shape[d] for d in builtins.range(ndim)])
    res = make_tensor(xp.array(res, copy=True), input._device)
    return write_out(out, res, "hash_tensor") if out is not None else res
