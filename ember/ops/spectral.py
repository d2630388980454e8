"""Discrete Fourier transforms (`torch.fft`), on the device's array module's FFT.

As in PyTorch, every transform is one of three primitives, each with its own backward node:
  c2c  complex -> complex, forward (e^-i) or inverse (e^+i) direction      FftC2CBackward0
  r2c  real -> complex, forward direction, full or one-sided (last dim)    FftR2CBackward0
  c2r  one-sided complex -> real, inverse direction                        FftC2RBackward0
each computed unscaled and then scaled by a normalisation mode: none, 1/sqrt(n) or 1/n, with
n the product of the transformed signal sizes. The adjoint of a primitive is the other
direction with the same scaling mode, which is what each backward computes (with ember ops,
so second derivatives work). Inputs are resized to the requested sizes first with
narrow (SliceBackward0) and constant_pad_nd (ConstantPadNdBackward0), as PyTorch does.
"""
import builtins
import math

import numpy as np

from .. import dtypes as _dt
from .._tensor import _wrap_dim, make_tensor, Tensor, xp_of
from ._graph import Node, record
from ._writes import write_out

__all__ = []
METHODS = []

_NONE, _ROOT, _FULL = 0, 1, 2
_COMPLEX = {np.dtype(np.float32): np.complex64, np.dtype(np.float64): np.complex128,
            np.dtype(np.complex64): np.complex64, np.dtype(np.complex128): np.complex128}


def _norm_mode(norm, forward):
    if norm is None or norm == "backward":
        return _NONE if forward else _FULL
    if norm == "forward":
        return _FULL if forward else _NONE
    if norm == "ortho":
        return _ROOT
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _scale(arr, mode, n):
    if mode == _NONE:
        return arr
    factor = 1.0 / (math.sqrt(n) if mode == _ROOT else n)
    return arr * arr.real.dtype.type(factor)


def _signal_size(shape, dims):
    return math.prod(shape[d] for d in dims)


# ---- the three primitives -------------------------------------------------------------------
class FftC2CBackward0(Node):
    def backward(self, grad):
        return _c2c(grad, self.dims, self.mode, not self.forward)


def _c2c(x, dims, mode, forward):
    xp = xp_of(x)
    arr = x._array
    if dims:
        y = xp.fft.fftn(arr, axes=dims) if forward else xp.fft.ifftn(arr, axes=dims, norm="forward")
        y = _scale(y, mode, _signal_size(arr.shape, dims)).astype(arr.dtype, copy=False)
    else:
        y = arr.copy()
    out = make_tensor(y, x._device)
    node = record(FftC2CBackward0, (x,), out)
    if node is not None:
        node.dims, node.mode, node.forward = dims, mode, forward
    return out


class FftR2CBackward0(Node):
    def backward(self, grad):
        from .spatial import constant_pad_nd
        from .complex_views import real
        if self.onesided:
            last = self.dims[-1]
            full = self._meta[0][0][last]
            missing = full - grad.shape[last]
            if missing > 0:
                pad = [0, 0] * (grad.ndim - 1 - last) + [0, missing]
                grad = constant_pad_nd(grad, pad)
        return real(_c2c(grad, self.dims, self.mode, False))


def _r2c(x, dims, mode, onesided):
    xp = xp_of(x)
    arr = x._array
    y = xp.fft.rfftn(arr, axes=dims) if onesided else xp.fft.fftn(arr, axes=dims)
    y = _scale(y, mode, _signal_size(arr.shape, dims)).astype(_COMPLEX[arr.dtype], copy=False)
    out = make_tensor(y, x._device)
    node = record(FftR2CBackward0, (x,), out)
    if node is not None:
        node.dims, node.mode, node.onesided = dims, mode, onesided
    return out


class FftC2RBackward0(Node):
    def backward(self, grad):
        g = _r2c(grad, self.dims, self.mode, True)
        last = self.dims[-1]
        double = grad.shape[last] - g.shape[last]
        if double > 0:
            from .creation import ones
            w = ones(g.shape[last], dtype=grad.dtype, device=grad.device)
            w[1:1 + double] = 2
            g = g * w.reshape((-1,) + (1,) * (g.ndim - 1 - last))
        return g


def _c2r(x, dims, mode, last_size):
    xp = xp_of(x)
    arr = x._array
    sizes = [arr.shape[d] for d in dims[:-1]] + [last_size]
    y = xp.fft.irfftn(arr, s=sizes, axes=dims, norm="forward")
    y = _scale(y, mode, math.prod(sizes)).astype(arr.real.dtype, copy=False)
    out = make_tensor(y, x._device)
    node = record(FftC2RBackward0, (x,), out)
    if node is not None:
        node.dims, node.mode = dims, mode
    return out


# ---- argument handling ------------------------------------------------------------------------
def _promote(fname, x, require_real=False, to_complex=False, real_message="a real"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{fname}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    d = x.dtype
    if d.is_complex:
        if require_real:
            raise RuntimeError(f"{fname} expects {real_message} input tensor, but got "
                               f"{d._scalar_name}")
        return x
    if not d.is_floating_point:
        x = x.to(_dt.get_default_dtype())
    elif x._array.dtype not in _COMPLEX:
        raise RuntimeError(f"Unsupported dtype {d._scalar_name}")
    if to_complex:
        x = x.to(_dt.FROM_NUMPY[np.dtype(_COMPLEX[x._array.dtype])])
    return x


def _check_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def _resize(x, dims, sizes):
    """Slices then zero-pads `x` so that dims[i] has sizes[i] elements."""
    from .shape import narrow
    from .spatial import constant_pad_nd
    for d, s in zip(dims, sizes):
        if s < x.shape[d]:
            x = narrow(x, d, 0, s)
    pad = [0] * (2 * x.ndim)
    grow = False
    for d, s in zip(dims, sizes):
        if s > x.shape[d]:
            pad[2 * (x.ndim - 1 - d) + 1] = s - x.shape[d]
            grow = True
    if grow:
        x = constant_pad_nd(x, pad)
    return x


def _one_dim(x, n, dim):
    d = _wrap_dim(dim, x.ndim)
    if n is None:
        n = x.shape[d]
    _check_n(n)
    return d, n


def _n_dims(x, s, dim, default_all=True):
    """PyTorch's canonicalisation of (s, dim) for the n-dimensional transforms."""
    ndim = x.ndim
    if dim is not None:
        dims = [_wrap_dim(d, ndim) for d in ((dim,) if isinstance(dim, builtins.int) else dim)]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has {ndim} "
                               "dimensions.")
        dims = list(range(ndim - len(s), ndim))
    else:
        dims = list(range(ndim))
    if s is None:
        sizes = [x.shape[d] for d in dims]
    else:
        sizes = [x.shape[d] if v == -1 else builtins.int(v) for d, v in zip(dims, s)]
    for v in sizes:
        _check_n(v)
    return dims, sizes


def _finish(result, out, fname):
    return result if out is None else write_out(out, result, fname)


# ---- public transforms ------------------------------------------------------------------------
def fft(input, n=None, dim=-1, norm=None, *, out=None):
    x = _promote("fft", input)
    d, n = _one_dim(x, n, dim)
    mode = _norm_mode(norm, True)
    x = _resize(x, [d], [n])
    res = _c2c(x, (d,), mode, True) if x.dtype.is_complex else _r2c(x, (d,), mode, False)
    return _finish(res, out, "fft_fft")


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    x = _promote("ifft", input)
    d, n = _one_dim(x, n, dim)
    mode = _norm_mode(norm, False)
    x = _resize(x, [d], [n])
    if x.dtype.is_complex:
        res = _c2c(x, (d,), mode, False)
    else:
        res = _r2c(x, (d,), mode, False).conj()
    return _finish(res, out, "fft_ifft")


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    x = _promote("rfft", input, require_real=True)
    d, n = _one_dim(x, n, dim)
    x = _resize(x, [d], [n])
    return _finish(_r2c(x, (d,), _norm_mode(norm, True), True), out, "fft_rfft")


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    x = _promote("irfft", input, to_complex=True)
    d = _wrap_dim(dim, x.ndim)
    n = 2 * (x.shape[d] - 1) if n is None else n
    _check_n(n)
    x = _resize(x, [d], [n // 2 + 1])
    return _finish(_c2r(x, (d,), _norm_mode(norm, False), n), out, "fft_irfft")


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    x = _promote("hfft", input, to_complex=True)
    d = _wrap_dim(dim, x.ndim)
    n = 2 * (x.shape[d] - 1) if n is None else n
    _check_n(n)
    x = _resize(x, [d], [n // 2 + 1])
    return _finish(_c2r(x.conj(), (d,), _norm_mode(norm, True), n), out, "fft_hfft")


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    x = _promote("ihfft", input, require_real=True)
    d, n = _one_dim(x, n, dim)
    x = _resize(x, [d], [n])
    return _finish(_r2c(x, (d,), _norm_mode(norm, False), True).conj(), out, "fft_ihfft")


def fftn(input, s=None, dim=None, norm=None, *, out=None, _fname="fftn", _forward=True):
    x = _promote(_fname, input, to_complex=True)
    dims, sizes = _n_dims(x, s, dim)
    x = _resize(x, dims, sizes)
    return _finish(_c2c(x, tuple(dims), _norm_mode(norm, _forward), _forward), out,
                   f"fft_{_fname}")


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    return fftn(input, s, dim, norm, out=out, _fname="ifftn", _forward=False)


def rfftn(input, s=None, dim=None, norm=None, *, out=None, _fname="rfftn"):
    x = _promote("rfftn", input, require_real=True, real_message="a real-valued")
    dims, sizes = _n_dims(x, s, dim)
    x = _resize(x, dims, sizes)
    return _finish(_r2c(x, tuple(dims), _norm_mode(norm, True), True), out, f"fft_{_fname}")


def _one_sided(fname, input, s, dim):
    """(input resized, dims, the real output's last size) of a c2r transform over n dims:
    the last dim holds size // 2 + 1 of the output's (twice the input's less one unless `s`
    says)."""
    x = _promote(fname, input, to_complex=True)
    dims, sizes = _n_dims(x, s, dim)
    last = 2 * (x.shape[dims[-1]] - 1) if s is None or s[-1] == -1 else sizes[-1]
    _check_n(last)
    sizes[-1] = last // 2 + 1
    return _resize(x, dims, sizes), dims, last


def irfftn(input, s=None, dim=None, norm=None, *, out=None, _fname="irfftn"):
    x, dims, last = _one_sided(_fname, input, s, dim)
    return _finish(_c2r(x, tuple(dims), _norm_mode(norm, False), last), out, f"fft_{_fname}")


def hfftn(input, s=None, dim=None, norm=None, *, out=None, _fname="hfftn"):
    """The real n-d FFT of a one-sided Hermitian signal, as PyTorch computes it: a forward
    c2c over all but the last dim, then hfft's conjugate c2r over the last."""
    x, dims, last = _one_sided(_fname, input, s, dim)
    mode = _norm_mode(norm, True)
    if len(dims) > 1:
        x = _c2c(x, tuple(dims[:-1]), mode, True)
    return _finish(_c2r(x.conj(), (dims[-1],), mode, last), out, f"fft_{_fname}")


def ihfftn(input, s=None, dim=None, norm=None, *, out=None, _fname="ihfftn"):
    """hfftn's inverse, as PyTorch computes it: the one-sided r2c over the last dim with the
    inverse's normalisation, conjugated, then an inverse c2c over the other dims."""
    if isinstance(input, Tensor) and input.dtype.is_complex:
        raise RuntimeError(f"Only supports floating-point dtypes, but found: "
                           f"{input.dtype._scalar_name}")
    x = _promote(_fname, input)
    dims, sizes = _n_dims(x, s, dim)
    x = _resize(x, dims, sizes)
    mode = _norm_mode(norm, False)
    y = _r2c(x, (dims[-1],), mode, True)
    if len(dims) == 1:
        return _finish(y.conj(), out, f"fft_{_fname}")
    from .complex_views import conj_physical
    return _finish(_c2c(conj_physical(y), tuple(dims[:-1]), mode, False), out, f"fft_{_fname}")


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return hfftn(input, s, dim, norm, out=out, _fname="hfft2")


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return ihfftn(input, s, dim, norm, out=out, _fname="ihfft2")


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return fftn(input, s, dim, norm, out=out, _fname="fft2")


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return fftn(input, s, dim, norm, out=out, _fname="ifft2", _forward=False)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return rfftn(input, s, dim, norm, out=out, _fname="rfft2")


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    return irfftn(input, s, dim, norm, out=out, _fname="irfft2")


# ---- frequencies and shifts -------------------------------------------------------------------
def fftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
            pin_memory=False):
    from .ranges import arange
    k = arange(n, dtype=dtype or _dt.get_default_dtype(), device=device)
    k[(n + 1) // 2:] -= n
    res = k * (1.0 / (n * d)) if n else k
    res = res.detach().requires_grad_(requires_grad)
    return _finish(res, out, "fft_fftfreq")


def rfftfreq(n, d=1.0, *, out=None, dtype=None, layout=None, device=None, requires_grad=False,
             pin_memory=False):
    from .ranges import arange
    k = arange(n // 2 + 1, dtype=dtype or _dt.get_default_dtype(), device=device)
    res = k * (1.0 / (n * d) if n * d else math.inf)
    res = res.detach().requires_grad_(requires_grad)
    return _finish(res, out, "fft_rfftfreq")


def _shift(input, dim, inverse):
    from .rearrange import roll
    dims = list(range(input.ndim)) if dim is None else (
        [dim] if isinstance(dim, builtins.int) else list(dim))
    dims = [_wrap_dim(d, input.ndim) for d in dims]
    shifts = [(input.shape[d] + 1) // 2 if inverse else input.shape[d] // 2 for d in dims]
    return roll(input, shifts, dims)


def fftshift(input, dim=None):
    return _shift(input, dim, False)


def ifftshift(input, dim=None):
    return _shift(input, dim, True)
