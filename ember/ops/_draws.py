"""Drawing from a generator, for ops/random_ops.py and the ops that sample (dropout, rrelu,
gumbel noise): a CPU generator's draws are PyTorch's (through `_torch_stream`), a device's
come from its own generator's `random`, `standard_normal` and `integers`."""
import math

import numpy as np

from .. import _dtype_casts as _casts, dtypes as _dt
from .. import random as _random
from . import _torch_stream as _ts
from ._fma import fused_multiply_add


# ---- drawing from a generator -----------------------------------------------------------
def _rng(dev, generator):
    if generator is not None and not isinstance(generator, _random.Generator):
        raise TypeError(f"received an invalid combination of arguments - got "
                        f"(generator={type(generator).__name__}), but expected a torch.Generator")
    return _random.generator_for(dev, generator).rng


def _uniform01(rng, shape, d):
    """Uniform [0, 1) in dtype `d` (float32 for float16 and bfloat16, which round it, as
    PyTorch's CPU kernel does; on a device they draw on their own mantissa grid)."""
    bits = _ts.stream(rng)
    if bits is not None:
        return _ts.uniform01(bits, shape, d is _dt.float64 or d is _dt.complex128)
    if d is _dt.float64 or d is _dt.complex128:
        u = rng.random(shape, dtype=np.float64)
    else:
        u = rng.random(shape, dtype=np.float32)
    if d is _dt.float16 or d is _dt.bfloat16:
        scale = float(1 << (11 if d is _dt.float16 else 8))
        u = (u * scale) // 1.0 / scale
    return u


def bernoulli_mask(rng, shape, p):
    """A bool array of `shape`, True with probability p (a number): PyTorch's CPU draws on a
    CPU generator (u < p, u of 53 bits)."""
    if _ts.stream(rng) is not None:
        return _ts.bernoulli_mask(rng, shape, p)
    return rng.random(shape) < p


def _standard_normal(rng, shape, d):
    wide = np.float64 if d in (_dt.float64, _dt.complex128) else np.float32
    return rng.standard_normal(shape, dtype=wide)


def _complex(re, im, d):
    if d is _dt.complex32:  # drawn in float16 parts, as PyTorch's ComplexHalf
        return _casts.astype((re + 1j * im).astype(np.complex64), d)
    return (re + 1j * im).astype(d.np)


def _rand_array(rng, shape, d):
    if (d is _dt.float16 or d is _dt.bfloat16) and _ts.stream(rng) is not None:
        return _ts.uniform_half(_ts.stream(rng), shape, d, 0, 1)
    if d.is_complex and _ts.stream(rng) is not None:  # PyTorch draws (re, im) in turn
        pairs = _uniform01(rng, tuple(shape) + (2,), d)
        return _complex(pairs[..., 0], pairs[..., 1], d)
    if d.is_complex:
        return _complex(_uniform01(rng, shape, d), _uniform01(rng, shape, d), d)
    return _uniform01(rng, shape, d).astype(d.np, copy=False)


def _randn_array(rng, shape, d):
    if _ts.stream(rng) is not None and not d.is_complex:
        out = _ts.normal(rng, shape, d)
        if out is not None:
            return out
    if d.is_complex:  # PyTorch: each part has variance 1/2, the whole variance 1
        s = math.sqrt(0.5)
        return _complex(_standard_normal(rng, shape, d) * s, _standard_normal(rng, shape, d) * s, d)
    return _standard_normal(rng, shape, d).astype(d.np, copy=False)


def _normal_array(rng, shape, d, mean, std):
    """N(mean, std^2) draws in dtype `d`: PyTorch's own where its stream is reproduced (the
    mean and std applied inside, as its kernel applies them), else scaled standard draws."""
    if _ts.stream(rng) is not None and not d.is_complex:
        out = _ts.normal(rng, shape, d, mean, std)
        if out is not None:
            return out
    return _affine_inplace(_randn_array(rng, shape, d), std, mean)


def _affine_inplace(a, scale, shift):
    """a * scale + shift written into the fresh draw `a` (already in the tensor's dtype): a
    layer's initialisation draws millions of values, and fresh temporaries of that size cost
    more in page faults than the arithmetic. A float32 or float64 draw on the CPU is fused
    instead (one rounding, as PyTorch's kernel)."""
    if isinstance(a, np.ndarray) and a.dtype == np.float32:
        return _ts.fused_float32(a, scale, shift)
    if isinstance(a, np.ndarray) and a.dtype == np.float64:
        a[...] = fused_multiply_add(a, np.float64(scale), shift)
        return a
    a *= scale
    a += shift
    return a


def _width(low, high, a):
    """high - low for scaling the draw `a`: in float32 for a float32 draw on the CPU, where
    PyTorch rounds both bounds to float32 before subtracting."""
    if isinstance(a, np.ndarray) and a.dtype == np.float32:
        return np.float32(high) - np.float32(low)
    return high - low


def _integers(rng, low, high_inclusive, shape):
    """int64 draws in [low, high_inclusive] (inclusive, so the full int64 range fits). From
    PyTorch's stream as its kernel draws: low + word % span, a random64() word where the span
    needs more than 32 bits (wrapping as its unsigned sum does)."""
    bits = _ts.stream(rng)
    if bits is None:
        return rng.integers(low, high_inclusive, size=shape, dtype=np.int64, endpoint=True)
    return _ts.integers(bits, low, high_inclusive, shape)
