"""The softmax family: softmax, log_softmax, softmin and gumbel_softmax, with derivatives.

Each reduces along one dim in opmath (float16/bfloat16 in float32, as PyTorch's kernels do);
the forward keeps what its backward reads (the result, or exp(x - max) and its row sums for
log_softmax), and every backward is written with ember ops, so second derivatives work.
"""
import warnings

import numpy as np

from .. import _memory_format as _mf
from .. import dtypes as _dt
from .._dtype_casts import cast_if_needed
from .._parallel import by_first_dim, parts
from .._state import grad as _grad_state
from .._tensor import _wrap_dim, make_tensor, xp_of
from ._device_kernels import device_sum
from ._graph import Node, record
from ._writes import write_out
from .activation import _compute, _low_precision

__all__ = ["softmax", "log_softmax"]
METHODS = ["softmax", "log_softmax"]
FUNCTIONAL = ["softmax", "softmin", "log_softmax", "gumbel_softmax"]


def _implicit_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the call "
                  "to include dim=X as an argument.", UserWarning, stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def _softmax_args(input, dim, _stacklevel, dtype, name, required=False):
    if isinstance(_stacklevel, _dt.dtype):  # F.softmax(x, dim, dtype) positionally
        dtype, _stacklevel = _stacklevel, 3
    if dim is None and required:
        raise TypeError(f"{name}(): argument 'dim' (position 1) must be int, not NoneType")
    if dim is None:
        dim = _implicit_dim(name, input.ndim, _stacklevel + 1)
    elif isinstance(dim, bool) or not hasattr(dim, "__index__"):
        raise TypeError(f"{name}(): argument 'dim' (position 1) must be int, not "
                        f"{type(dim).__name__}")
    if dtype is not None:
        input = input.to(_dt.to_dtype(dtype))
    return input, _wrap_dim(dim, input.ndim)


def _dot_along(xp, a, b, d):
    """sum(a * b) along axis d, kept as 1: one einsum pass, no product temporary."""
    out = device_sum(xp, (d,), a, b)
    if out is not None:
        return out
    letters = "abcdefghijklmnopqrstuvwxyz"[:a.ndim]
    kept = letters[:d] + letters[d + 1:]
    out = xp.einsum(f"{letters},{letters}->{kept}", a, b)
    return xp.expand_dims(out, d)


def sums_along(xp, a, d):
    """sum(a) along axis d, kept as 1. Along the last axis of a contiguous float array it is a
    product with ones: BLAS sums rows 3-4x faster than NumPy's reduction (1024 rows of 1000:
    73 against 289 us), and softmax's rows are summed in every forward and backward. Down
    the columns (d the next to last axis: attention's transposed scores) likewise, ones times
    the matrices (causal (16, 4, 64, 64): 25 against 141 us), on the CPU: a device's
    reduction is one launch, the product with ones two."""
    last = d == a.ndim - 1
    if (last or (d == a.ndim - 2 and xp is np)) and d >= 0 and a.dtype.kind == "f" and \
            a.dtype.itemsize >= 4 and a.flags.c_contiguous:
        # (indexing with None, not expand_dims: a Python function of a few us, which a small
        # classifier's rows (32 x 10) would pay more than their sum)
        if last:
            return xp.matmul(a, xp.ones(a.shape[-1], a.dtype))[..., None]
        return xp.matmul(xp.ones(a.shape[-2], a.dtype), a)[..., None, :]
    return a.sum(axis=d, keepdims=True)


def max_along(xp, a, d):
    """max(a) along axis d, kept as 1. Along short last-axis rows of a contiguous NumPy array
    as a tree of elementwise maxima over halves of the rows: NumPy's reduction pays per row,
    2.3x (rows of 8-16) to 1.4x (64) slower than the halving passes (256K float32 elements);
    from 128 on the reduction wins. Exact either way (a NaN still wins). Below _TREE_MIN_SIZE
    elements the passes' calls cost more than the reduction (32 rows of 10: 11 against 3 us;
    1024 rows of 10 even, at NumPy 2.4)."""
    if xp is not np or d != a.ndim - 1 or not 2 <= a.shape[-1] <= _TREE_MAX_ROW \
            or a.size < _TREE_MIN_SIZE or not a.flags.c_contiguous or a.dtype.kind != "f":
        return a.max(axis=d, keepdims=True)
    rows = a.reshape(-1, a.shape[-1])
    while rows.shape[1] > 1:
        half = rows.shape[1] // 2
        top = np.maximum(rows[:, :half], rows[:, half:2 * half])
        if rows.shape[1] % 2:
            np.maximum(top[:, :1], rows[:, -1:], out=top[:, :1])
        rows = top
    return rows.reshape(a.shape[:-1] + (1,))


_TREE_MAX_ROW = 64
_TREE_MIN_SIZE = 1 << 14


# Rows are split across the intra-op threads from this size (of the result): a part of ~0.2
# ms or more (a GPT's cross-entropy over (1024, 1000) logits, 4 MB, forward and backward at 2
# threads: 0.63x their one-thread time, the GPT step 0.965x; `/work/notes/s32/ce_parts.py`,
# `ab_step.py`).
THREADED_MIN_BYTES = 1 << 20
# ... in parts of whole groups of this many rows: BLAS sums rows (`sums_along`) in groups, and
# a row's bits depend on its place in its group (OpenBLAS's float32 gemv: rows from a start of
# 2 or 3 mod 4 differ in the last bit), so a part starting mid-group would differ from the
# whole at one thread.
ROW_GROUP = 16


def _by_rows(body, a, d):
    """body(s) for slices s of a's first dim (the rows of a softmax along d > 0) on the
    intra-op threads where `a` is large enough, else body(None), the whole (`parts`)."""
    if d == 0:
        body(None)
    else:
        by_first_dim(body, a, THREADED_MIN_BYTES, ROW_GROUP)


def _backward_operands(y, grad):
    """The saved output and the incoming gradient as arrays in opmath (half and bfloat16
    computed in float32), for a first-order backward on arrays."""
    ya, g = y._array, grad._array
    if ya.dtype in _low_precision():
        return ya.astype(np.float32), g.astype(np.float32)
    return ya, g


class SoftmaxBackward0(Node):
    """dx = y * (g - sum(g * y)): on arrays for a first-order backward, in ember ops under
    create_graph so that it differentiates again."""

    def backward(self, grad):
        (y,) = self.saved_tensors
        if y.ndim == 0:  # a 0-dim softmax is the constant 1
            return grad * 0
        if not _grad_state.enabled:
            xp = xp_of(y)
            ya, g = _backward_operands(y, grad)
            dx = xp.empty(g.shape, xp.result_type(ya, g))

            def rows(c):
                gc, yc, dxc = parts(c, g, ya, dx)
                xp.subtract(gc, _dot_along(xp, gc, yc, self.dim), out=dxc)
                xp.multiply(dxc, yc, out=dxc)
            _by_rows(rows, dx, self.dim)
            return make_tensor(cast_if_needed(dx, y._array.dtype), y._device)
        gy = grad * y
        return gy - y * gy.sum(self.dim, keepdim=True)


class LogSoftmaxBackward0(Node):
    """dx = g - exp(y) * sum(g), on arrays for a first-order backward."""

    def backward(self, grad):
        (y,) = self.saved_tensors
        if y.ndim == 0:
            return grad * 0
        if not _grad_state.enabled:
            xp = xp_of(y)
            ya, g = _backward_operands(y, grad)
            # exp(y), the softmax: the forward kept exp(x - max) and its row sums on the way
            # (softmax = e / sum), so the division folds into the rows' factor here
            kept = self.__dict__.get("exp_and_sum")
            dx = xp.empty(g.shape, xp.result_type(ya, g))

            def rows(c):
                gc, yc, dxc = parts(c, g, ya, dx)
                total = sums_along(xp, gc, self.dim)
                if kept is None:
                    xp.exp(yc, out=dxc)
                    xp.multiply(dxc, total, out=dxc)
                else:
                    e, e_sum = parts(c, *kept)
                    xp.multiply(e, total / e_sum, out=dxc)
                xp.subtract(gc, dxc, out=dxc)
            _by_rows(rows, dx, self.dim)
            return make_tensor(cast_if_needed(dx, y._array.dtype), y._device)
        return grad - y.exp() * grad.sum(self.dim, keepdim=True)

    def _release(self):
        self.__dict__.pop("exp_and_sum", None)
        super()._release()


def _softmax_forward(input, d, log, node_cls):
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{"log_" if log else ""}softmax_lastdim_kernel_impl" not '
                                  f"implemented for '{input.dtype._scalar_name}'")
    arr = _mf.c_ordered(input._array)  # PyTorch's result is contiguous whatever x's layout
    zero_d = arr.ndim == 0
    if zero_d:
        arr = arr.reshape(1)

    xp = xp_of(input)
    # log_softmax's exp(x - max) and its sum: the softmax its backward needs, spared an exp
    kept = []

    def fn(a):
        if a.size == 0:
            return a.copy()
        z = xp.empty_like(a)
        if log:
            kept.extend((xp.empty_like(a), xp.empty(a.shape[:d] + (1,) + a.shape[d + 1:],
                                                     a.dtype)))

        def rows(c):
            # a row of -inf (or inf) gives nan from inf - inf; PyTorch gives nan there too
            ac, zc = parts(c, a, z)
            xp.subtract(ac, max_along(xp, ac, d), out=zc)
            if log:
                e, total = parts(c, *kept)
                xp.exp(zc, out=e)
                total[...] = sums_along(xp, e, d)
                xp.subtract(zc, xp.log(total), out=zc)
            else:
                xp.exp(zc, out=zc)
                xp.divide(zc, sums_along(xp, zc, d), out=zc)
        _by_rows(rows, a, d)
        return z
    out = _compute(arr, fn)
    if zero_d:
        out = out.reshape(())
    res = make_tensor(out, input._device)
    node = record(node_cls, (input,), res)
    if node is not None:
        node.dim = d
        node.save_for_backward(res)
        if kept and isinstance(node._saved[0], tuple):  # not under saved_tensors_hooks
            node.exp_and_sum = tuple(kept)
    return res


def softmax(input, dim, dtype=None, *, out=None):
    """torch.softmax and Tensor.softmax, which require dim (F.softmax infers a missing one)."""
    input, d = _softmax_args(input, dim, 3, dtype, "softmax", required=True)
    res = _softmax_forward(input, d, False, SoftmaxBackward0)
    return res if out is None else write_out(out, res, "softmax")


def log_softmax(input, dim, dtype=None, *, out=None):
    input, d = _softmax_args(input, dim, 3, dtype, "log_softmax", required=True)
    res = _softmax_forward(input, d, True, LogSoftmaxBackward0)
    return res if out is None else write_out(out, res, "log_softmax")


def _functional_softmax(input, dim=None, _stacklevel=3, dtype=None):
    input, d = _softmax_args(input, dim, _stacklevel, dtype, "softmax")
    return _softmax_forward(input, d, False, SoftmaxBackward0)


def _functional_log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    input, d = _softmax_args(input, dim, _stacklevel, dtype, "log_softmax")
    return _softmax_forward(input, d, True, LogSoftmaxBackward0)


# F.softmax and F.log_softmax are functions of their own (ember/ops/__init__.py binds them in
# ember.nn.functional), named and pickled as PyTorch's
FUNCTIONAL_FORMS = {"softmax": _functional_softmax, "log_softmax": _functional_log_softmax}
for _name, _form in FUNCTIONAL_FORMS.items():
    _form.__module__, _form.__name__, _form.__qualname__ = "ember.nn.functional", _name, _name


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    if isinstance(_stacklevel, _dt.dtype):
        dtype, _stacklevel = _stacklevel, 3
    if dim is None:
        dim = _implicit_dim("softmin", input.ndim, _stacklevel + 1)
    if dtype is not None:
        input = input.to(_dt.to_dtype(dtype))
    return softmax(-input, dim)


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", UserWarning,
                      stacklevel=2)
    from ..random import generator_for
    from ._draws import _uniform01
    rng = generator_for(logits._device, None).rng
    arr = logits._array
    xp = xp_of(logits)
    # PyTorch's -log(Exponential(1)): exponential_ in the logits' dtype (-log1p(-u), u of 53
    # bits, rounded), then its log there, so a seeded CPU run draws PyTorch's noise
    e = (-xp.log1p(-_uniform01(rng, arr.shape, _dt.float64))).astype(arr.dtype)
    gumbels = make_tensor(xp.negative(xp.log(e)), logits._device)
    y_soft = softmax((logits + gumbels) / tau, dim)
    if not hard:
        return y_soft
    d = _wrap_dim(dim, logits.ndim)
    ys = y_soft._array
    idx = ys.argmax(axis=d)
    idx = xp.expand_dims(idx, d)
    shape = [1] * ys.ndim
    shape[d] = ys.shape[d]
    hot = (xp.arange(ys.shape[d]).reshape(shape) == idx).astype(ys.dtype)
    return make_tensor(hot, logits._device) - y_soft.detach() + y_soft
