"""What the SVD cut-off decides: the pseudo-inverse (`linalg.pinv`, `pinverse`), least squares
(`linalg.lstsq`, with the residuals, rank and singular values of each driver) and
`linalg.matrix_rank`, with their backward nodes.
"""
import builtins

import numpy as np

from ..._tensor import make_tensor, Tensor, xp_of
from .._graph import Node, record
from .._writes import write_out
from ..reduction import return_type
from ._common import _const, _needs

# ---- pseudo-inverse, least squares, rank ---------------------------------------------------------
def _pinv_grad(A, P, G):
    """The adjoint of P = pinv(A) (rank held constant): -P^H G P^H + (I - A P) G^H P P^H
    + P^H P G^H (I - P A), without forming the projectors."""
    Ph, Gh = P.mH, G.mH
    X = Gh @ (P @ Ph)
    Y = (Ph @ P) @ Gh
    return -(Ph @ G @ Ph) + X - A @ (P @ X) + Y - (Y @ P) @ A


class LinalgPinvBackward0(Node):
    def backward(self, grad):
        A, P = self.saved_tensors
        return _pinv_grad(A, P, grad)


def _tolerances(A, atol, rtol, s_max):
    """PyTorch's cut-off max(atol, rtol * s_max), rtol eps * max(m, n) unless given (0 when
    only a positive atol is)."""
    eps = np.finfo(A._array.dtype).eps
    if rtol is None:
        rtol = eps * max(A._array.shape[-2:]) if atol is None or _as_float(atol) <= 0 else 0.0
    atol = 0.0 if atol is None else atol
    a = atol._array if isinstance(atol, Tensor) else atol
    r = rtol._array if isinstance(rtol, Tensor) else rtol
    return xp_of(A).maximum(a, r * s_max)


def _as_float(x):
    return builtins.float(x.max().item()) if isinstance(x, Tensor) else builtins.float(x)


def pinv(input, *, atol=None, rtol=None, hermitian=False, out=None, rcond=None):
    """The Moore-Penrose pseudo-inverse, from the SVD (or eigh when hermitian). `rcond` is the
    older overload's name of `rtol`."""
    if rcond is not None:
        if rtol is not None:
            raise TypeError("linalg_pinv() received both rcond and rtol")
        rtol = rcond
    if input._array.ndim < 2 or not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"linalg.pinv({input.dtype._scalar_name}{{{list(input._array.shape)}}}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types")
    xp, arr = xp_of(input), input._array
    if hermitian:
        w, v = xp.linalg.eigh(arr)
        s = xp.abs(w)
        tol = _tolerances(input, atol, rtol, s.max(axis=-1, keepdims=True) if s.shape[-1] else 0)
        inv_w = xp.where(s > tol, 1 / xp.where(s > tol, w, 1), 0)
        p = (v * inv_w[..., None, :]) @ xp.conj(xp.swapaxes(v, -1, -2))
    else:
        u, s, vh = xp.linalg.svd(arr, full_matrices=False)
        tol = _tolerances(input, atol, rtol, s.max(axis=-1, keepdims=True) if s.shape[-1] else 0)
        inv_s = xp.where(s > tol, 1 / xp.where(s > tol, s, 1), 0)
        p = (xp.conj(xp.swapaxes(vh, -1, -2)) * inv_s[..., None, :]) @ \
            xp.conj(xp.swapaxes(u, -1, -2))
    res = make_tensor(p.astype(arr.dtype, copy=False), input._device)
    node = record(LinalgPinvBackward0, (input,), res)
    if node is not None:
        node.save_for_backward(input, res)
    return write_out(out, res, "linalg_pinv") if out is not None else res


def pinverse(input, rcond=1e-15):
    return pinv(input, rtol=rcond)


_lstsq_type = return_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


class LinalgLstsqBackward0(Node):
    """Through X = pinv(A) B, and the residuals' r = |A X - B|^2 (whose dX term vanishes)."""
    _materialize_grads = False

    def backward(self, gX, g_res=None, *_):
        A, B, X = self.saved_tensors
        vec = self.vector
        if vec:
            B, X = B.unsqueeze(-1), X.unsqueeze(-1)
            gX = None if gX is None else gX.unsqueeze(-1)
        gA = gB = None
        if gX is not None:
            P = pinv(A)
            if _needs(self, 0):
                gA = _pinv_grad(A, P, gX @ B.mH)
            if _needs(self, 1):
                gB = P.mH @ gX
        if g_res is not None and g_res._array.size:
            r = A @ X - B
            w = 2 * (r * g_res.unsqueeze(-2))
            ga = w @ X.mH
            gA = ga if gA is None else gA + ga
            gB = -w if gB is None else gB - w
        if vec and gB is not None:
            gB = gB.squeeze(-1)
        return gA, gB


def lstsq(input, b, rcond=None, *, driver=None):
    """min |A X - B|: solution, residuals (m > n, full rank, a driver other than gelsy),
    rank (drivers other than gels), singular values (gelsd and gelss)."""
    if input._array.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if input._array.dtype != b._array.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {input.dtype} and other's dtype {b.dtype}")
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of "
                           f"(gels, gelsy, gelsd, gelss)")
    vector = b._array.ndim == input._array.ndim - 1
    m, n = input._array.shape[-2:]
    rhs = b._array[..., None] if vector else b._array
    if rhs.shape[-2] != m:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    xp, arr = xp_of(input), input._array
    u, s, vh = xp.linalg.svd(arr, full_matrices=False)
    rc = np.finfo(arr.dtype).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    s_max = s.max(axis=-1, keepdims=True) if s.shape[-1] else xp.zeros(s.shape[:-1] + (1,), s.dtype)
    keep = s > rc * s_max
    inv_s = xp.where(keep, 1 / xp.where(keep, s, 1), 0)
    x = xp.conj(xp.swapaxes(vh, -1, -2)) @ ((xp.conj(xp.swapaxes(u, -1, -2)) @ rhs)
                                             * inv_s[..., :, None])
    rank = keep.sum(axis=-1).astype(np.int64)
    full_rank = bool((rank == n).all())
    if m > n and driver != "gelsy" and full_rank:
        r = arr @ x - rhs
        res_arr = (xp.abs(r) ** 2).sum(axis=-2)  # (*, k); k = 1 for a vector B
    else:
        res_arr = xp.zeros((0,), dtype=s.dtype)
    if vector:
        x = x[..., 0]
    X = make_tensor(xp.ascontiguousarray(x.astype(arr.dtype, copy=False)), input._device)
    residuals = make_tensor(res_arr.astype(s.dtype, copy=False), input._device)
    rank_t = _const(xp.asarray(rank) if driver != "gels" else xp.zeros((0,), np.int64), input)
    sv = _const(s if driver in ("gelsd", "gelss") else xp.zeros((0,), s.dtype), input)
    node = record(LinalgLstsqBackward0, (input, b), X, residuals)
    if node is not None:
        node.vector = vector
        node._out_meta = tuple((t._array.shape, t.dtype, t._device) for t in (X, residuals))
        node.save_for_backward(input, b, X)
    return _lstsq_type(X, residuals, rank_t, sv)


def matrix_rank(input, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values above max(atol, rtol * largest)."""
    if input._array.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least "
                           "2 dimensions.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    xp = xp_of(input)
    if hermitian:
        s = xp.abs(xp.linalg.eigvalsh(input._array))
    else:
        s = xp.linalg.svd(input._array, compute_uv=False)
    s_max = s.max(axis=-1, keepdims=True) if s.shape[-1] else xp.zeros(s.shape[:-1] + (1,), s.dtype)
    tol_arr = _tolerances(input, atol, rtol, s_max)
    res = _const(xp.asarray((s > tol_arr).sum(axis=-1)).astype(np.int64), input)
    return write_out(out, res, "linalg_matrix_rank") if out is not None else res
