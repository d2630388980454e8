"""GELU on float32 CPU arrays (ops/activation.py's fast path): the exact form's normal CDF
as a logistic of a fitted polynomial, the tanh form, and their backward, each a few in-place
passes over L2-sized blocks."""
import builtins
import math

import numpy as np

from .. import _dnnl_layers
from .._gemm import threaded
from .._parallel import intra_threads
from .._vml import function

_SQRT_2_PI = math.sqrt(2.0 / math.pi)


# ---- GELU on float32 CPU arrays: few in-place passes, and the forward keeps for the backward
# what it computed anyway (the normal CDF, or the tanh) so the backward does not redo it.
_GELU_BLOCK = 1 << 14
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


# Phi(x) = (1 + tanh(x h(x^2))) / 2 = 1 / (1 + exp(-2 x h(x^2))) holds exactly for
# h(u) = atanh(2 Phi(sqrt u) - 1) / sqrt u, a smooth function; the tanh form of GELU is its
# first two terms. This degree-6 polynomial is a weighted minimax fit of h on u in [0, 5.5^2]
# (tools/fit_normal_cdf.py), weighted by how much an error in h moves Phi. Past the fit, h only
# grows (x h(x^2) >= 9.08 from x = 5.5, where Phi rounds to 0 or 1 in float32, and a float32
# overflow gives +-inf, whose exp is 0 or inf), so u needs no clamp: the values are those of u
# clamped at 5.5^2, to the bit (checked on 4.2M points, +-3e38, +-inf and NaN among them).
_CDF32_H = tuple(np.float32(c) for c in (
    0.7978849414677254, 0.03633308453628088, -3.259492805120967e-05, -5.530621621748143e-05,
    3.964749011592337e-06, -1.3226374233460466e-07, 1.7561829824208403e-09))
_CDF32_NEG2H = tuple(np.float32(-2.0) * c for c in _CDF32_H)  # -2 h: exact (a power of two)
# elements per block: a block and its scratch (3 x 256 KB) stay in one core's L2, where the 17
# passes run 1.3x faster than over a whole array that spills to the shared cache
_CDF_BLOCK = 1 << 16


def _normal_cdf_single(x):
    """Phi(x) = (1 + erf(x / sqrt 2)) / 2 of a contiguous 1-d float32 array, in float32: the
    logistic form above, 17 in-place passes per L2-sized block, one of them an exp (NumPy's
    float32 tanh took twice exp's time: the tanh form was 1.25x slower; the erf rational before
    it 2x). Measured against float64 on 20M points (tools/fit_normal_cdf.py): Phi within 2.3
    ulp for x > 0 and 1.4e-7 absolute anywhere; gelu within 3.4 ulp for x > 0 (PyTorch's
    float32 kernel: 6.8). Phi is
    exactly 0 far left (gelu(-inf) is NaN, as in PyTorch); NaN stays NaN. Where MKL is
    installed, its vector math computes Phi in one pass instead (`ember/_vml.py`)."""
    out = function("CdfNorm", x)
    if out is not None:
        return out
    h, out = _CDF32_NEG2H, np.empty_like(x)
    scratch = np.empty(min(_CDF_BLOCK, x.size), np.float32)
    with np.errstate(over="ignore"):  # exp(+large) = inf far left: Phi = 1 / inf = 0, as wanted
        for start in builtins.range(0, x.size, _CDF_BLOCK):
            xb, phi = x[start:start + _CDF_BLOCK], out[start:start + _CDF_BLOCK]
            u = scratch[:xb.size]
            np.multiply(xb, xb, out=u)
            np.multiply(u, h[-1], out=phi)
            for c in h[-2:0:-1]:
                phi += c
                phi *= u
            phi += h[0]
            phi *= xb
            np.exp(phi, out=phi)
            phi += np.float32(1.0)
            np.divide(np.float32(1.0), phi, out=phi)  # reciprocal's bits, 0.7 of its time
    # Far left Phi is tiny and x times its relative error made gelu 10x less accurate than
    # PyTorch's there: those few elements (x < -3; under 1% of a trained MLP's) are computed
    # again by `_normal_tail`, which costs two passes (a compare and a search) over the array.
    tail = np.flatnonzero(x < _CDF_TAIL)
    if tail.size:
        out[tail] = _normal_tail(x[tail])
    return out


_CDF_TAIL = np.float32(-3.0)


def _normal_tail(x):
    """Phi(x) for x < -3, in float64: the normal density over Laplace's continued fraction of
    the Mills ratio, t + 1/(t + 2/(t + 3/(t + ...))) with t = -x, 16 levels deep. Relative
    error under 6e-9 from x = -3 on (against SciPy's ndtr), and x^2 of a float32 is exact in
    float64. It replaced erfc's general kernel there, which takes 4x as long: on the 17K tail
    elements of 256K at a standard deviation of 2, 1.54-1.61 ms against 0.36-0.38 ms."""
    t = np.negative(x, dtype=np.float64)
    f = t.copy()
    for k in builtins.range(_TAIL_LEVELS, 0, -1):
        np.divide(k, f, out=f)
        f += t
    density = np.square(t)
    density *= -0.5
    np.exp(density, out=density)
    density /= f
    density *= _INV_SQRT_2PI
    return density


_TAIL_LEVELS = 16


# oneDNN's GELU kernels, where it is installed (`ember/_dnnl_layers.py`): the exact form's
# values are PyTorch's to the bit, forward and backward (PyTorch's CPU GELU computes the
# same), in 0.8 ms for 512K values both ways, against 2.0 ms by the NumPy passes below
# (PyTorch: 1.2, with its autograd). On the intra-op threads from ONEDNN_PARALLEL_MIN_ELEMENTS,
# where the products run on OpenMP's threads too (`_gemm.threaded`).
ONEDNN_PARALLEL_MIN_ELEMENTS = 1 << 16
_ONEDNN_FORMS = {"none": "gelu_erf", "tanh": "gelu_tanh"}


class _ByOnednn:
    """What a forward by oneDNN keeps for its backward: nothing (oneDNN's backward takes the
    input), only the mark that it ran."""


BY_ONEDNN = _ByOnednn()


def _onednn_threads(size):
    return intra_threads() if size >= ONEDNN_PARALLEL_MIN_ELEMENTS and threaded() else 1


def gelu_single(a, approximate, keep):
    """(gelu(a), kept) for a float32 NumPy array: kept is Phi(a) (exact form) or the tanh of
    the inner term (tanh form) when `keep`, else None (BY_ONEDNN where oneDNN computed it).
    Exact form: _normal_cdf_single; tanh form: in float32, block by block."""
    y = _dnnl_layers.eltwise(_ONEDNN_FORMS[approximate], a, _onednn_threads(a.size))
    if y is not None:
        # gelu(+inf) = +inf, as PyTorch's scalar kernel (and ember's own) give it; oneDNN's
        # vector kernel, as PyTorch's, gives NaN there. Looked for only where the result has
        # a NaN (one reduction): isposinf's passes over a GPT's activations took 2% of its step
        if y.size and np.isnan(y.max()):
            np.copyto(y, a, where=np.isposinf(a))
        return y, (BY_ONEDNN if keep else None)
    return _gelu_numpy(a, approximate, keep)


def _gelu_numpy(a, approximate, keep):
    """gelu_single by NumPy passes."""
    flat = a.reshape(-1)
    if approximate != "tanh":
        cdf = _normal_cdf_single(flat)
        out = np.multiply(cdf, flat)
        return out.reshape(a.shape), (cdf.reshape(a.shape) if keep else None)
    out = np.empty(flat.shape, np.float32)
    kept = np.empty(flat.shape, np.float32) if keep else None
    for start in builtins.range(0, flat.size, _GELU_BLOCK):
        blk = slice(start, start + _GELU_BLOCK)
        x = flat[blk]
        t = x * x
        t *= np.float32(0.044715)
        t += np.float32(1.0)
        t *= x
        t *= np.float32(_SQRT_2_PI)
        np.tanh(t, out=t)
        if keep:
            kept[blk] = t
        t += np.float32(1.0)
        t *= np.float32(0.5)
        np.multiply(t, x, out=out[blk])
    shape = a.shape
    return out.reshape(shape), (kept.reshape(shape) if keep else None)


def gelu_single_grad(x, kept, grad, approximate):
    """grad * gelu'(x) on float32 arrays from what the forward kept, block by block (as the
    forward's CDF, so each block's passes stay in L2)."""
    if kept is BY_ONEDNN:
        d = _dnnl_layers.eltwise_backward(_ONEDNN_FORMS[approximate], x, grad,
                                          _onednn_threads(x.size))
        if d is not None:
            return d
        kept = _gelu_numpy(x, approximate, True)[1]  # (oneDNN switched off since the forward)
    shape = x.shape
    x, kept, grad = x.reshape(-1), kept.reshape(-1), grad.reshape(-1)  # 0-d would give scalars
    out = np.empty(x.shape, np.float32)
    scratch = np.empty(min(_CDF_BLOCK, x.size), np.float32) if approximate == "tanh" else None
    for start in builtins.range(0, x.size, _CDF_BLOCK):
        blk = slice(start, start + _CDF_BLOCK)
        xb, d = x[blk], out[blk]
        np.multiply(xb, xb, out=d)
        if approximate == "tanh":
            t = kept[blk]
            d *= np.float32(3 * 0.044715)
            d += np.float32(1.0)
            d *= np.float32(0.5 * _SQRT_2_PI)
            d *= xb
            w = scratch[:xb.size]
            np.multiply(t, t, out=w)
            np.subtract(np.float32(1.0), w, out=w)
            d *= w                                     # x/2 (1 - t^2) d(inner)/dx
            np.add(t, np.float32(1.0), out=w)
            w *= np.float32(0.5)
            d += w                                     # + (1 + t) / 2
        else:
            d *= np.float32(-0.5)
            np.exp(d, out=d)
            d *= xb
            d *= np.float32(_INV_SQRT_2PI)             # x pdf(x)
            d += kept[blk]                             # + Phi(x)
        d *= grad[blk]
    return out.reshape(shape)
