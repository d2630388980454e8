"""Scans along a dim (cumsum, cumprod, cummax, cummin, logcumsumexp, with in-place cumsum_ and
cumprod_), diff, the trapezoid rule (trapezoid, trapz, cumulative_trapezoid) and gradient, with derivatives written in ops (so they differentiate again).

NumPy scans with its ufuncs' `accumulate`; other backends (CuPy has no `accumulate`) with a
log-step scan of whole-array shifts, so no path loops over elements in Python.
"""
import numpy as np

from .. import _dtype_casts as _casts, dtypes as _dt
from .._memory_format import c_ordered
from .._state import grad as _grad_state
from .._tensor import _wrap_dim, xp_of
from ._graph import Node, record
from ._writes import inplace, write_out, with_out
from .pointwise import logical_xor, scalar_op, where
from .reduction import _sum_dtype, accumulating, const, return_type
from .sorting import _no_kernel, scatter_add_along

__all__ = ["cumsum", "cumprod", "cummax", "cummin", "logcumsumexp", "diff", "trapezoid", "trapz",
           "cumulative_trapezoid", "gradient"]
METHODS = ["cumsum", "cumprod", "cumsum_", "cumprod_", "cummax", "cummin", "logcumsumexp", "diff"]

_cummax_type = return_type("cummax")
_cummin_type = return_type("cummin")


def _scan_axis(input, dim):
    """The array to scan (a 0-dim tensor scans as one element), C-ordered (PyTorch's scans
    give a contiguous result whatever the input's layout), and the wrapped dim."""
    arr = c_ordered(input._array)
    axis = _wrap_dim(dim, arr.ndim)
    return (arr if arr.ndim else arr.reshape(1)), axis


def _accumulate(xp, ufunc, arr, axis):
    """`ufunc.accumulate(arr, axis)` for an associative binary ufunc, on any backend."""
    if xp is np:
        return getattr(np, ufunc).accumulate(arr, axis=axis)
    fn, out, n, step = getattr(xp, ufunc), arr.copy(), arr.shape[axis], 1
    lead = (slice(None),) * axis
    while step < n:  # Hillis-Steele: log2(n) passes, each over whole arrays
        out[lead + (slice(step, None),)] = fn(out[lead + (slice(step, None),)],
                                              out[lead + (slice(0, n - step),)])
        step *= 2
    return out


def _shaped(arr, like):
    """A scan's result with the input's shape (undoes the 0-dim reshape)."""
    return arr.reshape(like._array.shape)


# ---- flip (a private helper: the reverse scans of the derivatives) -------------------------
class FlipBackward0(Node):
    def backward(self, grad):
        return _flip(grad, self.axis)


def _flip(t, axis):
    res = const(xp_of(t).flip(t._array, axis).copy(), t)
    node = record(FlipBackward0, (t,), res)
    if node is not None:
        node.axis = axis
    return res


def _reverse_cumsum(t, axis):
    """sum over j >= k of t_j, for each k along `axis`."""
    return _flip(cumsum(_flip(t, axis), axis), axis)


# ---- cumsum and cumprod ----------------------------------------------------------------------
class CumsumBackward0(Node):
    def backward(self, grad):
        if not self._meta[0][0]:
            return grad
        return _reverse_cumsum(grad, self.axis)


def cumsum(input, dim, *, dtype=None, out=None):
    if input.dtype._kind:
        _casts.refuse(input.dtype, "cumsum_out_cpu", (_dt.UINT,))
    arr, axis = _scan_axis(input, dim)
    d = _sum_dtype(input, dtype, "cumsum")
    if arr.dtype is not d.np:
        arr = arr.astype(d.np)
    # each running total is kept in float32 for half precision, rounded as it is written
    res = const(_shaped(accumulating(arr).cumsum(axis=axis).astype(arr.dtype, copy=False),
                        input), input)
    if out is not None:
        return write_out(out, res, "cumsum")
    node = record(CumsumBackward0, (input,), res)
    if node is not None:
        node.axis = axis
    return res


class CumprodBackward0(Node):
    """Exact with zeros. Without zeros: reverse-cumsum(g * out) / x. With zeros, first order
    (O(n)): before a slice's first zero the same formula; at the first zero the sum over later
    outputs of g times the product without it; after it nothing. When the derivative must
    differentiate again (create_graph), every term is kept as a product of inputs (O(n^2),
    as PyTorch does)."""

    def backward(self, grad):
        x, res = self.saved_tensors
        if not x._array.shape:
            return grad
        axis, xa = self.axis, x._array
        zero = xa == 0
        if not zero.any():
            return _reverse_cumsum(grad * res, axis) / x
        if _grad_state.enabled:
            return _cumprod_grad_quadratic(grad, x, axis)
        xp = xp_of(x)
        n = xa.shape[axis]
        first = xp.where(zero.any(axis=axis, keepdims=True),
                         zero.argmax(axis=axis, keepdims=True), n)
        pos = xp.arange(n).reshape((n,) + (1,) * (xa.ndim - axis - 1))
        before, at = const(pos < first, x), const(pos == first, x)
        early = where(before, _reverse_cumsum(grad * res, axis) / where(before, x, 1), 0)
        without_zero = cumprod(where(at, 1, x), axis)
        later = (grad * without_zero * const(pos >= first, x)).sum(axis, keepdim=True)
        return early + where(at, later, 0)


def _cumprod_grad_quadratic(grad, x, axis):
    """sum over j >= k of g_j * prod(x_i, i <= j, i != k), for every k, from an n x n table
    of running products that each leave one element out."""
    n = x._array.shape[axis]
    xp = xp_of(x)
    rows = x.movedim(axis, -1).unsqueeze(-2)                      # (..., 1, n)
    eye = const(xp.eye(n, dtype=bool), x)
    left_out = cumprod(where(eye, 1, rows), -1)                   # [k, j]: prod without x_k
    later = const(xp.arange(n)[None, :] >= xp.arange(n)[:, None], x)  # j >= k
    g = grad.movedim(axis, -1).unsqueeze(-2)
    return (left_out * g * later).sum(-1).movedim(-1, axis)


def cumprod(input, dim, *, dtype=None, out=None):
    arr, axis = _scan_axis(input, dim)
    d = _sum_dtype(input, dtype, "cumprod")
    if arr.dtype is not d.np:
        arr = arr.astype(d.np)
    res = const(_shaped(arr.cumprod(axis=axis), input), input)
    if out is not None:
        return write_out(out, res, "cumprod")
    node = record(CumprodBackward0, (input,), res)
    if node is not None:
        node.axis = axis
        node.save_for_backward(input, res)
    return res


def cumsum_(self, dim, *, dtype=None):
    return inplace(self, lambda s: cumsum(s, dim, dtype=dtype))


def cumprod_(self, dim, *, dtype=None):
    return inplace(self, lambda s: cumprod(s, dim, dtype=dtype))


# ---- cummax and cummin -------------------------------------------------------------------------
class CummaxBackward0(Node):
    """Each output's gradient goes to the element it came from (repeats add up)."""

    def backward(self, grad):
        shape = self._meta[0][0]
        if not shape:
            return grad
        return scatter_add_along(grad, self.axis, self.index, shape)


class CumminBackward0(CummaxBackward0):
    pass


def _cum_extreme(input, dim, is_max, out):
    fname = "cummax" if is_max else "cummin"
    if input.dtype._kind:
        _casts.refuse(input.dtype, f"{fname}_cpu")
    _no_kernel(input, f"{fname}_cpu", bool_too=False)
    arr, axis = _scan_axis(input, dim)
    xp = xp_of(input)
    values = _accumulate(xp, "maximum" if is_max else "minimum", arr, axis)
    # The index of the running extreme is the last position (up to here) holding it; a NaN
    # takes over from the first NaN on, as in PyTorch.
    hit = arr == values
    if arr.dtype.kind in "fc" or arr.dtype.name == "bfloat16":
        hit |= xp.isnan(arr)
    n = arr.shape[axis]
    pos = xp.arange(n, dtype=np.int64).reshape((n,) + (1,) * (arr.ndim - axis - 1))
    index = _accumulate(xp, "maximum", xp.where(hit, pos, -1), axis) if arr.size else \
        xp.zeros(arr.shape, dtype=np.int64)
    vals_t = const(_shaped(values, input), input)
    idx_t = const(_shaped(index, input), input)
    tuple_type = _cummax_type if is_max else _cummin_type
    if out is not None:
        write_out(out[0], vals_t, fname)
        write_out(out[1], idx_t, fname)
        return tuple_type(out[0], out[1])
    node = record(CummaxBackward0 if is_max else CumminBackward0, (input,), vals_t)
    if node is not None:
        node.axis, node.index = axis, index
    return tuple_type(vals_t, idx_t)


def cummax(input, dim, *, out=None):
    return _cum_extreme(input, dim, True, out)


def cummin(input, dim, *, out=None):
    return _cum_extreme(input, dim, False, out)


# ---- logcumsumexp ------------------------------------------------------------------------------
class LogcumsumexpBackward0(Node):
    """PyTorch's formula: the positive and negative parts of the gradient each go through a
    reverse logcumsumexp, so nothing overflows."""

    def backward(self, grad):
        x, res = self.saved_tensors
        if not x._array.shape:
            return grad
        axis = self.axis
        lowest = float(_dt.finfo(grad.dtype).min)
        log_abs = grad.abs().log()
        parts = []
        for sign in (grad > 0, grad < 0):
            log_part = where(sign, log_abs, lowest) - res
            parts.append((_flip(logcumsumexp(_flip(log_part, axis), axis), axis) + x).exp())
        return parts[0] - parts[1]


def logcumsumexp(input, dim, *, out=None):
    d = input.dtype
    if not (d.is_floating_point or d.is_complex):
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for '{d._scalar_name}'")
    arr, axis = _scan_axis(input, dim)
    res = const(_shaped(_accumulate(xp_of(input), "logaddexp", arr, axis), input), input)
    if out is not None:
        return write_out(out, res, "logcumsumexp")
    node = record(LogcumsumexpBackward0, (input,), res)
    if node is not None:
        node.axis = axis
        node.save_for_backward(input, res)
    return res


# ---- diff ----------------------------------------------------------------------------------------
def _check_diff_operand(input, t, axis):
    if t._array.ndim != input._array.ndim:
        raise RuntimeError("diff expects prepend or append to be the same dimension as input")
    for d, (a, b) in enumerate(zip(input._array.shape, t._array.shape)):
        if d != axis and a != b:
            raise RuntimeError("diff expects the shape of tensor to prepend or append to match "
                               "that of input except along the differencing dimension; "
                               f"input.size({d}) = {a}, but got tensor.size({d}) = {b}")


@with_out("diff")
def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along `dim` (for bool tensors: exclusive or)."""
    if input._array.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    axis = _wrap_dim(dim, input._array.ndim)
    x = input
    if prepend is not None or append is not None:
        from .shape import cat
        parts = [t for t in (prepend, input, append) if t is not None]
        for t in parts:
            _check_diff_operand(input, t, axis)
        x = cat(parts, axis)
    for _ in range(n):
        length = x._array.shape[axis]
        if length == 0:
            break
        later, earlier = x.narrow(axis, 1, length - 1), x.narrow(axis, 0, length - 1)
        x = logical_xor(later, earlier) if x._array.dtype == np.bool_ else later - earlier
    return x


# ---- the trapezoid rule ----------------------------------------------------------------------------
def _scaled(t, number, divide):
    """`t * number` or `t / number` recorded as PyTorch's Scalar overloads record them."""
    return scalar_op("div" if divide else "mul", t, number)


def _slices(t, axis):
    """`t` without its last and without its first entry along `axis`."""
    head = (slice(None),) * axis
    return t[head + (slice(1, None),)], t[head + (slice(None, -1),)]


def _trapezoid_args(fname, y, x, dx, dim):
    from .._tensor import Tensor
    if x is not None and (dx is not None or not isinstance(x, Tensor)):
        got = ", ".join(type(a).__name__ for a in (y, x))
        if dx is not None:
            got += f", dx={type(dx).__name__}"
        raise TypeError(f"{fname}() received an invalid combination of arguments - got ({got}), "
                        f"but expected one of:\n * (Tensor y, Tensor x, *, int dim = -1)\n"
                        f" * (Tensor y, *, Number dx = 1, int dim = -1)\n")
    return 1 if dx is None else dx


def _x_spacing(fname, y, x, axis):
    """The spacing x[i+1] - x[i] shaped to broadcast against y's differences."""
    ndim = y._array.ndim
    if x._array.ndim == 1:
        if x._array.shape[0] != y._array.shape[axis]:
            raise RuntimeError(f"{fname}: There must be one `x` value for each sample point")
        shape = [1] * ndim
        shape[axis] = x._array.shape[0]
        x = x.view(shape)
    elif x._array.ndim < ndim:
        x = x.view((1,) * (ndim - x._array.ndim) + tuple(x._array.shape))
    right, left = _slices(x, axis)
    return right - left


def _check_real_dx(fname, dx):
    if isinstance(dx, (bool, complex, np.bool_, np.complexfloating)):
        raise RuntimeError(f"{fname}: Currently, we only support dx as a real number.")


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """The integral of `y` along `dim` by the trapezoid rule, at points `x` or spacing `dx`."""
    from .creation import zeros
    dx = _trapezoid_args("trapezoid", y, x, dx, dim)
    arr = y._array
    if arr.ndim == 0:  # PyTorch asks y for its size along dim
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    axis = _wrap_dim(dim, arr.ndim)
    if arr.shape[axis] == 0:
        return zeros(arr.shape[:axis] + arr.shape[axis + 1:], dtype=y.dtype, device=y.device)
    if x is not None:
        if y.dtype is _dt.bool or x.dtype is _dt.bool:
            raise RuntimeError("trapezoid: received a bool input for `x` or `y`, but bool is not "
                               "supported")
        right, left = _slices(y, axis)
        return _scaled((_x_spacing("trapezoid", y, x, axis) * (right + left)).sum(axis), 2.0, True)
    if y.dtype is _dt.bool:
        raise RuntimeError("trapezoid: received a bool input for `y`, but bool is not supported")
    _check_real_dx("trapezoid", dx)
    ends = y.select(axis, 0) + y.select(axis, -1)
    return _scaled(y.sum(axis) - _scaled(ends, 0.5, False), float(dx), False)


trapz = trapezoid


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid-rule integral of `y` along `dim` (one entry fewer than y)."""
    dx = _trapezoid_args("cumulative_trapezoid", y, x, dx, dim)
    if x is not None:
        axis = _wrap_dim(dim, y._array.ndim)
        if y.dtype is _dt.bool or x.dtype is _dt.bool:
            raise RuntimeError("cumulative_trapezoid: received a bool input for `x` or `y`, but "
                               "bool is not supported")
        right, left = _slices(y, axis)
        spacing = _x_spacing("cumulative_trapezoid", y, x, axis)
        return _scaled(cumsum(spacing * (right + left), axis), 2.0, True)
    if y.dtype is _dt.bool:
        raise RuntimeError("cumulative_trapezoid: received a bool input for `y`, but bool is not "
                           "supported")
    _check_real_dx("cumulative_trapezoid", dx)
    if y._array.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    axis = _wrap_dim(dim, y._array.ndim)
    right, left = _slices(y, axis)
    return cumsum(float(dx) / 2.0 * (right + left), axis)


# ---- gradient ---------------------------------------------------------------------------------------
def _along(t, axis, start, stop=None):
    """`t[start:stop]` along `axis` (PyTorch's at::slice)."""
    return t[(slice(None),) * axis + (slice(start, stop),)]


def _gradient_dims(input, spacing, dim, edge_order):
    """The dims to differentiate along, after PyTorch's checks of the arguments."""
    from .._tensor import Tensor
    ndim = input._array.ndim
    if input.dtype is _dt.uint8:
        raise RuntimeError("torch.gradient does not support uint8 input.")
    listed = isinstance(spacing, (list, tuple))
    dims = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    if listed and dims is None and len(spacing) != ndim:
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar, or a "
                           f"list of length equal to 'self.dim() = {ndim}', since dim argument "
                           f"was not given, but got a list of length {len(spacing)}")
    if listed and dims is not None and len(spacing) != len(dims):
        raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar or it's "
                           f"spacing and dim arguments to have the same length, but got a spacing "
                           f"argument of length {len(spacing)} and a dim argument of length "
                           f"{len(dims)}.")
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    if dims is not None:
        from .reduction import dims_of
        dims_of(dims, ndim)  # PyTorch's check of repeated dims
    checked = dims if dims is not None else range(ndim)
    for d in checked:
        if input._array.shape[_wrap_dim(d, ndim)] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    dims = dims if dims is not None else list(range(ndim))
    if not listed:
        spacing = [spacing] * len(dims)
    if any(isinstance(s, Tensor) for s in spacing) and \
            not all(isinstance(s, Tensor) for s in spacing):
        raise TypeError("gradient(): spacing must be a number, a list of numbers or a list of "
                        "tensors")
    return [_wrap_dim(d, ndim) for d in dims], list(spacing)


def _gradient_uniform(t, axis, h, edge_order):
    center = (_along(t, axis, 2) - _along(t, axis, 0, -2)) / h
    if edge_order == 1:
        first = (_along(t, axis, 1, 2) - _along(t, axis, 0, 1)) / h
        last = (_along(t, axis, -1) - _along(t, axis, -2, -1)) / h
    else:
        first = (_along(t, axis, 0, 1) * -1.5 + _along(t, axis, 1, 2) * 2
                 - _along(t, axis, 2, 3) * 0.5) / h
        last = (_along(t, axis, -3, -2) * 0.5 + _along(t, axis, -2, -1) * -2
                + _along(t, axis, -1) * 1.5) / h
    return first, center / 2, last


def _gradient_coordinates(t, axis, x, edge_order):
    if x._array.ndim != 1:
        raise RuntimeError(f"torch.gradient expected each element of spacing to have one "
                           f"dimension, but got an element with {x._array.ndim} dimensions!")
    shape = [1] * t._array.ndim
    shape[axis] = -1
    h = diff(x, 1, 0)
    h1, h2 = h[:-1], h[1:]
    a = (-h2 / (h1 * (h1 + h2))).reshape(shape)
    b = ((h2 - h1) / (h1 * h2)).reshape(shape)
    c = (h1 / (h2 * (h1 + h2))).reshape(shape)
    center = a * _along(t, axis, 0, -2) + b * _along(t, axis, 1, -1) + c * _along(t, axis, 2)
    if edge_order == 1:
        first = (_along(t, axis, 1, 2) - _along(t, axis, 0, 1)) / h[0]
        last = (_along(t, axis, -1) - _along(t, axis, -2, -1)) / h[-1]
        return first, center, last
    a = -(2.0 * h[0] + h[1]) / (h[0] * (h[0] + h[1]))
    b = (h[0] + h[1]) / (h[0] * h[1])
    c = (-h[0]) / (h[1] * (h[0] + h[1]))
    first = a * _along(t, axis, 0, 1) + b * _along(t, axis, 1, 2) + c * _along(t, axis, 2, 3)
    a = h[-1] / (h[-2] * (h[-1] + h[-2]))
    b = -(h[-1] + h[-2]) / (h[-1] * h[-2])
    c = (2 * h[-1] + h[-2]) / (h[-1] * (h[-1] + h[-2]))
    last = a * _along(t, axis, -3, -2) + b * _along(t, axis, -2, -1) + c * _along(t, axis, -1)
    return first, center, last


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """Estimates of the derivative of `input` along each of `dim` by central differences
    (one-sided at the edges, of order `edge_order`), at unit or given spacing."""
    from .._tensor import Tensor
    from .shape import cat
    dims, spacing = _gradient_dims(input, spacing, dim, edge_order)
    out = []
    for axis, h in zip(dims, spacing):
        if isinstance(h, Tensor):
            parts = _gradient_coordinates(input, axis, h, edge_order)
        else:
            parts = _gradient_uniform(input, axis, h, edge_order)
        out.append(cat(parts, axis))
    return tuple(out)
