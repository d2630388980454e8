"""Statistics reductions: var and std (with their _mean forms), the vector and nuclear norms,
and logsumexp, with derivatives written in ops (so they differentiate again)."""
import builtins
import math
import warnings

import numpy as np

from .. import dtypes as _dt
from .._tensor import _wrap_dim, xp_of
from ._device_kernels import device_norm2
from ._graph import Node, record
from ._writes import write_out
from .pointwise import where
from .normalization import _fused
from .reduction import (_reduced_size, accumulating, as_array, const, dims_of, keep_dims,
                        tie_weights)

__all__ = ["std", "var", "std_mean", "var_mean", "norm", "logsumexp"]
METHODS = ["std", "var", "norm", "logsumexp"]
# ---- variance and standard deviation -------------------------------------------------------------
def _var_args(dim, unbiased, correction, fname):
    """PyTorch's overloads: var(x, unbiased), var(x, dim, unbiased, keepdim), var(x, dim, *,
    correction, keepdim)."""
    if isinstance(dim, builtins.bool):
        unbiased, dim = dim, None
    if correction is None:
        correction = 0 if unbiased is False else 1
    elif unbiased is not None:
        raise TypeError(f"{fname}() received an invalid combination of arguments - got both "
                        "'unbiased' and 'correction'")
    return dim, correction


def _var_grad(g, x, axes, dof):
    """d var / dx for a keepdim-shaped gradient `g`, written in ops (differentiable again)."""
    scale = 2.0 / dof if dof else math.inf
    return g * scale * (x - x.mean(axes, keepdim=True))


class VarBackward0(Node):
    def backward(self, grad):
        (x,) = self.saved_tensors
        g = keep_dims(grad, x._array.shape, self.axes, self.keepdim)
        return _var_grad(g, x, self.axes, self.dof)


class StdBackward0(Node):
    def backward(self, grad):
        x, res = self.saved_tensors
        shape = x._array.shape
        r = keep_dims(res, shape, self.axes, self.keepdim)
        g = keep_dims(grad, shape, self.axes, self.keepdim)
        return _var_grad(_std_to_var(g, r), x, self.axes, self.dof)


def _std_to_var(g, r):
    """The gradient of var from std's: g / (2 std), and none for a constant slice (std 0).
    The denominator is made safe first: where's zero gradient would meet 0/0 otherwise."""
    zero = const(r._array == 0, r)
    return where(zero, 0, g / (2 * where(zero, 1, r)))


class VarMeanBackward0(Node):
    """var_mean/std_mean: one node, two outputs (the spread and the mean)."""

    def backward(self, grad_spread, grad_mean):
        saved = self.saved_tensors
        x = saved[0]
        shape = x._array.shape
        g = keep_dims(grad_spread, shape, self.axes, self.keepdim)
        if len(saved) == 2:  # std: through d std = d var / (2 std)
            g = _std_to_var(g, keep_dims(saved[1], shape, self.axes, self.keepdim))
        gm = keep_dims(grad_mean, shape, self.axes, self.keepdim) / _reduced_size(shape, self.axes)
        return _var_grad(g, x, self.axes, self.dof) + gm


class StdMeanBackward0(VarMeanBackward0):
    pass


def _spread_accumulating(input):
    """The array var/std sum in: PyTorch's CPU kernels (a Welford reduction, or two passes for
    a full reduction) accumulate every floating dtype in double, so a float32 variance is
    the exact one rounded once; its CUDA kernels accumulate float32 and narrower in float."""
    arr = input._array
    if input._device.type != "cpu":
        return accumulating(arr)
    if arr.dtype.kind == "c":  # (its real and imaginary parts, each in double)
        return arr.astype(np.complex128, copy=False)
    return arr.astype(np.float64, copy=False)


def _moments(input, dim, correction, keepdim, fname, take_sqrt=False):
    """(axes, degrees of freedom, variance (or with take_sqrt its root) array, mean array
    (dim kept)) of `input`. The root is taken before rounding to the input's precision, as
    PyTorch's kernel does; a complex input's spread is its real part's plus its imaginary
    part's, each rounded first (PyTorch reduces the two parts separately and adds them)."""
    d = input.dtype
    if not (d.is_floating_point or d.is_complex):
        what = fname if fname.endswith("_mean") else "std and var"
        raise RuntimeError(f"{what} only support floating point and complex dtypes")
    arr = _spread_accumulating(input)
    axes = dims_of(dim, arr.ndim)
    n = _reduced_size(arr.shape, axes)
    mean = arr.sum(axis=axes, keepdims=True) / n  # 0/0 is NaN for an empty extent, as in PyTorch
    if not arr.size:  # PyTorch's reduction factor: input numel / output numel (0 when empty)
        n = 0
    dev = arr - mean
    dof = n - correction
    if dof <= 0:
        warnings.warn(f"{fname}(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the reduction factor (input numel divided by output numel).",
                      UserWarning, stacklevel=3)
    rounded = input._array.real.dtype

    def spread_of(part):
        return as_array((part * part).sum(axis=axes, keepdims=keepdim) / builtins.max(dof, 0))

    if arr.dtype.kind == "c":
        var = (spread_of(dev.real).astype(rounded, copy=False)
               + spread_of(dev.imag).astype(rounded, copy=False))
        spread = xp_of(input).sqrt(var) if take_sqrt else var
    else:
        var = spread_of(dev)
        spread = (xp_of(input).sqrt(var) if take_sqrt else var).astype(rounded, copy=False)
    return axes, dof, spread, mean.astype(input._array.dtype, copy=False)


def _spread(input, dim, unbiased, keepdim, correction, out, fname):
    if input.dtype._kind in (_dt.FLOAT8, _dt.FLOAT4, _dt.COMPLEX32):
        if input.dtype is not _dt.complex32:
            raise RuntimeError(f"std_var_all: Unsupported dtype {input.dtype._scalar_name}")
        res = _spread(input.to(_dt.complex64), dim, unbiased, keepdim, correction, None, fname)
        res = tuple(r.to(_dt.float16 if not r.is_complex() else _dt.complex32) for r in res) \
            if isinstance(res, tuple) else res.to(_dt.float16)
        return res if out is None else write_out(out, res, fname)
    dim, correction = _var_args(dim, unbiased, correction, fname)
    is_std = fname.startswith("std")
    axes, dof, var_arr, mean_arr = _moments(input, dim, correction, keepdim, fname, is_std)
    res = const(var_arr, input)
    if fname in ("std", "var"):
        if out is not None:
            return write_out(out, res, fname)
        node = record(StdBackward0 if is_std else VarBackward0, (input,), res)
        if node is not None:
            node.axes, node.keepdim, node.dof = axes, keepdim, dof
            node.save_for_backward(input, res) if is_std else node.save_for_backward(input)
        return res
    if not keepdim:
        mean_arr = mean_arr.reshape(var_arr.shape)
    mean_t = const(mean_arr, input)
    node = record(StdMeanBackward0 if is_std else VarMeanBackward0, (input,), res, mean_t)
    if node is not None:
        node.axes, node.keepdim, node.dof = axes, keepdim, dof
        node._out_meta = tuple((t._array.shape, t.dtype, t._device) for t in (res, mean_t))
        node.save_for_backward(input, res) if is_std else node.save_for_backward(input)
    return res, mean_t


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    return _spread(input, dim, unbiased, keepdim, correction, out, "var")


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None, out=None):
    return _spread(input, dim, unbiased, keepdim, correction, out, "std")


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _spread(input, dim, unbiased, keepdim, correction, None, "var_mean")


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    return _spread(input, dim, unbiased, keepdim, correction, None, "std_mean")


# ---- norms ------------------------------------------------------------------------------------------
class LinalgVectorNormBackward0(Node):
    def backward(self, grad):
        x, res = self.saved_tensors
        return norm_grad(grad, x, res, self.axes, self.keepdim, self.ord)


def norm_grad(grad, x, res, axes, keepdim, p):
    """The gradient of the p-norm `res` of `x` over `axes`, in ops (differentiable again);
    dist and renorm use it too."""
    shape = x._array.shape
    g = keep_dims(grad, shape, axes, keepdim)
    n = keep_dims(res, shape, axes, keepdim)
    if p == 0:
        return (g * 0).expand(shape)
    if p == 1:
        return g * x.sgn()
    if math.isinf(p):
        w = tie_weights(xp_of(x), abs(x._array), n._array, axes, nan_ties=False)
        return g * x.sgn() * const(w, x)
    zero_norm = const(n._array == 0, n)
    safe_n = where(zero_norm, 1, n)  # where's zero gradient must not meet 0/0 below
    if p == 2:
        return x * where(zero_norm, 0, g / safe_n)
    if p < 1:
        scaled = x.sgn() * where(const(x._array == 0, x), 0, x.abs().pow(p - 1))
        return scaled * g * n.pow(1 - p)  # 1 - p > 0: no division
    scaled = x.sgn() * x.abs().pow(p - 1) if p < 2 else x * x.abs().pow(p - 2)
    return scaled * where(zero_norm, 0, g / safe_n.pow(p - 1))


def _ord_name(p):
    return ("inf" if p > 0 else "-inf") if math.isinf(p) else str(p)


class NormBackward1(LinalgVectorNormBackward0):
    """at::norm(input, p, dim, keepdim), the overload PyTorch's C++ composites call
    (pairwise_distance): the same p-norm, recorded under that overload's name."""


def vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """`linalg.vector_norm`: the p-norm of the elements over `dim` (all by default)."""
    return _vector_norm(input, ord, dim, keepdim, dtype, out, LinalgVectorNormBackward0)


def aten_norm(input, p, dim, keepdim=False):
    """The p-norm over `dim` as at::norm inside PyTorch's composites records it
    (NormBackward1); Python's torch.norm records LinalgVectorNormBackward0."""
    return _vector_norm(input, p, dim, keepdim, None, None, NormBackward1)


def _vector_norm(input, ord, dim, keepdim, dtype, out, node_cls):
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {input.dtype._scalar_name}")
    arr = input._array
    if dtype is not None:
        arr = arr.astype(_dt.to_dtype(dtype).np)
    p = builtins.float(ord)
    axes = dims_of(dim, arr.ndim)
    if math.isinf(p) and not _reduced_size(arr.shape, axes):
        if dim is None:
            raise RuntimeError(f"linalg.vector_norm cannot compute the {_ord_name(p)} norm on an "
                               "empty tensor because the operation does not have an identity")
        a = next(a for a in axes if arr.shape[a] == 0)
        raise RuntimeError(f"linalg.vector_norm cannot compute the {_ord_name(p)} norm on the "
                           f"dimension {a}because this dimension is empty and the operation "
                           "does not have an identity")
    if p == 2 and arr.dtype.kind == "f" and arr.ndim <= _fused.MAX_DIMS:
        # |x|^2 = x * x: no abs pass, and one einsum reads x twice with no product temporary
        # (5x faster than the two passes and the sum at 2.5M float32, equally accurate)
        xp = xp_of(input)
        norm = device_norm2(xp, axes, arr, keepdim)  # one kernel on a device
        if norm is not None:
            return _norm_result(input, norm, arr.dtype, out, node_cls, axes, keepdim, p)
        wide = accumulating(arr)
        squares = _fused.sum_over(xp, axes, wide, wide)
        if not keepdim:
            squares = squares.reshape(tuple(n for i, n in enumerate(arr.shape) if i not in axes))
        r = xp.sqrt(squares)
        return _norm_result(input, r, arr.dtype, out, node_cls, axes, keepdim, p)
    a = abs(arr)
    result_dtype = a.dtype
    # half precision sums its squares in float32: in bfloat16 the small terms are lost
    # (a 64x32 norm came out 36 for 45.2)
    a = accumulating(a)
    if p == math.inf:
        r = a.max(axis=axes, keepdims=keepdim)
    elif p == -math.inf:
        r = a.min(axis=axes, keepdims=keepdim)
    elif p == 0:
        r = (a != 0).sum(axis=axes, keepdims=keepdim).astype(a.dtype)
    elif p == 1:
        r = a.sum(axis=axes, keepdims=keepdim)
    elif p == 2:
        r = xp_of(input).sqrt((a * a).sum(axis=axes, keepdims=keepdim))
    else:
        r = (a ** p).sum(axis=axes, keepdims=keepdim) ** (1.0 / p)
    return _norm_result(input, r, result_dtype, out, node_cls, axes, keepdim, p)


def _norm_result(input, r, result_dtype, out, node_cls, axes, keepdim, p):
    res = const(as_array(r).astype(result_dtype, copy=False), input)
    if out is not None:
        return write_out(out, res, "linalg_vector_norm")
    node = record(node_cls, (input,), res)
    if node is not None:
        node.axes, node.keepdim, node.ord = axes, keepdim, p
        node.save_for_backward(input, res)
    return res


class LinalgSvdBackward0(Node):
    """The singular values' gradient U diag(g) Vh (U and Vh held constant: first order)."""

    def backward(self, grad):
        u, vh = const(self.u, grad), const(self.vh, grad)
        return (u * grad.unsqueeze(-2)) @ vh


def _nuclear_norm(input, dims, keepdim):
    n = input._array.ndim
    d0, d1 = (_wrap_dim(d, n) for d in dims)
    m = input.movedim((d0, d1), (-2, -1))
    u, s, vh = xp_of(input).linalg.svd(m._array, full_matrices=False)
    sv = const(s.astype(m._array.dtype, copy=False), input)
    node = record(LinalgSvdBackward0, (m,), sv)
    if node is not None:
        node.u, node.vh = u, vh
    res = sv.sum(-1)
    if keepdim:
        for d in sorted((d0, d1)):
            res = res.unsqueeze(d)
    return res


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """`torch.norm`: vector p-norms ('fro' is the 2-norm of the elements) and the nuclear norm."""
    if isinstance(p, str):
        if p == "fro" and (dim is None or isinstance(dim, (builtins.int, np.integer))
                           or len(dim) <= 2):
            return vector_norm(input, 2, dim, keepdim, dtype=dtype, out=out)
        if p not in ("fro", "nuc"):  # (PyTorch holds the order first, then rank and dim)
            raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
        if input._array.ndim < 2:
            raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                               "dimensions.")
        dims = list(range(input._array.ndim)) if dim is None else \
            [dim] if isinstance(dim, (builtins.int, np.integer)) else list(dim)
        if len(dims) != 2:
            raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                               f"{' '.join(str(d) for d in dims)}")
        if not (input.dtype.is_floating_point or input.dtype.is_complex):
            raise RuntimeError("linalg.matrix_norm: Expected a floating point or complex tensor "
                               f"as input. Got {input.dtype._scalar_name}")
        src = input if dtype is None else input.to(dtype)
        res = _nuclear_norm(src, dims, keepdim)
        return write_out(out, res, "linalg_matrix_norm") if out is not None else res
    return vector_norm(input, 2.0 if p is None else p, dim, keepdim, dtype=dtype, out=out)


# ---- logsumexp ----------------------------------------------------------------------------------------
class LogsumexpBackward0(Node):
    def backward(self, grad):
        x, res = self.saved_tensors
        shape = x._array.shape
        g = keep_dims(grad, shape, self.axes, self.keepdim)
        return g * (x - keep_dims(res, shape, self.axes, self.keepdim)).exp()


def logsumexp(input, dim, keepdim=False, *, out=None):
    """log(sum(exp(x))) over `dim`, computed stably around each slice's maximum."""
    arr = input._array
    xp = xp_of(input)
    if arr.dtype.kind in "biu":
        arr = arr.astype(_dt.get_default_dtype().np)
    axes = dims_of(dim, arr.ndim)
    kept = tuple(1 if a in axes else s for a, s in enumerate(arr.shape))
    if _reduced_size(arr.shape, axes):
        m = as_array(arr.max(axis=axes, keepdims=True))
        m = xp.where(xp.isfinite(m), m, 0)  # all -inf (or an inf) in a slice: no shift
    else:
        m = xp.zeros(kept, dtype=arr.dtype)
    r = xp.log(xp.exp(arr - m).sum(axis=axes, keepdims=True)) + m
    res = const(r if keepdim else r.reshape(tuple(s for a, s in enumerate(arr.shape)
                                                    if a not in axes)), input)
    if out is not None:
        return write_out(out, res, "logsumexp")
    node = record(LogsumexpBackward0, (input,), res)
    if node is not None:
        node.axes, node.keepdim = axes, keepdim
        node.save_for_backward(input, res)
    return res
