"""Matrix functions and decompositions (`torch.linalg` and their top-level aliases): inverse,
determinants, solves, Cholesky, QR, SVD, symmetric eigendecomposition, pseudo-inverse,
least squares, rank, powers, the exponential and the matrix norms, with derivatives.

Forwards call the backend's `xp.linalg` (NumPy and CuPy broadcast over leading batch
dimensions); each backward is written with ember ops (inv, solve_triangular, matmul ...),
so second derivatives come from differentiating the backward itself.
"""
import builtins
import math

import numpy as np

from .._tensor import Tensor, make_tensor
from ._graph import Node, record, write_out
from .linalg import _warn_once
from .pointwise import where, xp_of
from .reduction import result_type

__all__ = ["det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_solve",
           "cholesky_inverse", "qr", "svd", "pinverse", "matrix_power", "matrix_exp"]
METHODS = ["det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_solve",
           "cholesky_inverse", "qr", "svd", "pinverse", "matrix_power", "matrix_exp"]


class _LinAlgError(RuntimeError):
    """Raised when a matrix is singular or not positive-definite (`torch.linalg.LinAlgError`)."""


LinAlgError = _LinAlgError


# ---- checks and small helpers ----------------------------------------------------------------
def _type_name(t):
    from ._graph import _type_name as name
    return name(t.dtype)


def _check(A, fname, square=True, floating=True):
    if A._array.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if square and A._array.shape[-1] != A._array.shape[-2]:
        m, n = A._array.shape[-2:]
        raise RuntimeError(f"{fname}: A must be batches of square matrices, but they are {m} by "
                           f"{n} matrices")
    if floating and not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. "
                           f"Got {_type_name(A)}")


def _const(arr, like):
    return make_tensor(arr, like._device)


def _eye(n, like):
    return _const(xp_of(like).eye(n, dtype=like._array.dtype), like)


def _needs(node, i):
    return node._next[i][0] is not None


def _mat(v):
    """A gradient scalar per matrix, broadcast over the matrix dims."""
    return v.unsqueeze(-1).unsqueeze(-1)


def _batch_prefix(index, batched):
    return f"(Batch element {index}): " if batched else ""


def _first_bad(info):
    """(batch index, info value) of the first failing matrix, or None."""
    flat = np.asarray(info).reshape(-1)
    bad = np.nonzero(flat)[0]
    return None if bad.size == 0 else (int(bad[0]), int(flat[bad[0]]))


def _host(arr):
    return arr.get() if hasattr(arr, "get") else np.asarray(arr)


def _lu_info(arr):
    """LAPACK getrf's info per matrix: the 1-based index of the first zero pivot of an LU
    factorisation with partial pivoting, 0 when there is none."""
    a = _host(arr).astype(np.complex128 if np.iscomplexobj(arr) else np.float64)
    a = a.reshape((-1,) + a.shape[-2:]).copy()
    n = a.shape[-1]
    info = np.zeros(a.shape[0], np.int32)
    for b in range(a.shape[0]):
        m = a[b]
        for k in range(n):
            p = k + int(np.argmax(np.abs(m[k:, k])))
            if m[p, k] == 0:
                if info[b] == 0:
                    info[b] = k + 1
                continue
            m[[k, p]] = m[[p, k]]
            m[k + 1:, k] /= m[k, k]
            m[k + 1:, k + 1:] -= np.outer(m[k + 1:, k], m[k, k + 1:])
    return info.reshape(arr.shape[:-2])


def _cholesky_info(arr):
    """LAPACK potrf's info per matrix: the order of the first leading minor that is not
    positive-definite, 0 when all are."""
    a = _host(arr)
    a = a.reshape((-1,) + a.shape[-2:])
    info = np.zeros(a.shape[0], np.int32)
    for b in range(a.shape[0]):
        for k in range(1, a.shape[-1] + 1):
            try:
                np.linalg.cholesky(a[b, :k, :k])
            except np.linalg.LinAlgError:
                info[b] = k
                break
    return info.reshape(arr.shape[:-2])


# ---- inverse ----------------------------------------------------------------------------------
_inv_ex_type = result_type("linalg_inv_ex", ("inverse", "info"))


class LinalgInvExBackward0(Node):
    _materialize_grads = False

    def backward(self, grad, _info=None):
        (inv_a,) = self.saved_tensors
        if grad is None:
            return None
        ih = inv_a.mH
        return -(ih @ grad @ ih)


def _inv_arrays(A):
    """(inverse, info) arrays; a singular matrix gives nan and its getrf info."""
    xp, arr = xp_of(A), A._array
    try:
        inv = xp.linalg.inv(arr)
        info = np.zeros(arr.shape[:-2], np.int32)
        if xp is not np and not bool(xp.isfinite(inv).all()):
            raise np.linalg.LinAlgError
    except np.linalg.LinAlgError:
        info = _lu_info(arr)
        inv = xp.full(arr.shape, xp.nan, dtype=arr.dtype)
        ok = xp.asarray(info == 0)
        if bool(ok.any()):
            inv[ok] = xp.linalg.inv(arr[ok])
    return inv, info


def inv_ex(A, *, check_errors=False, out=None):
    _check(A, "linalg.inv")
    inv, info = _inv_arrays(A)
    if check_errors:
        _raise_inv(info, A._array.ndim > 2)
    res = make_tensor(inv, A._device)
    info_t = _const(xp_of(A).asarray(info), A)
    node = record(LinalgInvExBackward0, (A,), res, None)
    if node is not None:
        node._out_meta = ((res._array.shape, res.dtype, res._device),
                          (info_t._array.shape, info_t.dtype, info_t._device))
        node.save_for_backward(res)
    result = _inv_ex_type(res, info_t)
    return _write_tuple(out, result, "linalg_inv_ex") if out is not None else result


def _raise_inv(info, batched):
    bad = _first_bad(info)
    if bad is not None:
        b, k = bad
        raise _LinAlgError(f"linalg.inv: {_batch_prefix(b, batched)}The diagonal element {k} is "
                           "zero, the inversion could not be completed because the input matrix "
                           "is singular.")


def inv(A, *, out=None):
    res = inv_ex(A, check_errors=True).inverse
    return write_out(out, res, "linalg_inv") if out is not None else res


def inverse(input, *, out=None):
    return inv(input, out=out)


def _write_tuple(out, result, fname):
    for o, r in zip(out, result):
        write_out(o, r, fname)
    return type(result)(*out)


# ---- determinants ---------------------------------------------------------------------------------
class LinalgDetBackward0(Node):
    def backward(self, grad):
        A, d = self.saved_tensors
        return _mat(grad * d.conj()) * inv(A).mH


def det(A, *, out=None):
    _check(A, "linalg.det")
    res = make_tensor(xp_of(A).asarray(xp_of(A).linalg.det(A._array)), A._device)
    node = record(LinalgDetBackward0, (A,), res)
    if node is not None:
        node.save_for_backward(A, res)
    return write_out(out, res, "linalg_det") if out is not None else res


_slogdet_types = {"linalg.slogdet": result_type("linalg_slogdet", ("sign", "logabsdet")),
                  "slogdet": result_type("slogdet", ("sign", "logabsdet"))}


class LinalgSlogdetBackward0(Node):
    _materialize_grads = False

    def backward(self, g_sign, g_logabsdet):
        (A,) = self.saved_tensors
        if g_logabsdet is None:
            return None
        return _mat(g_logabsdet) * inv(A).mH


def _slogdet(A, kind):
    _check(A, "linalg.slogdet")
    xp = xp_of(A)
    sign, logabs = xp.linalg.slogdet(A._array)
    sign_t = make_tensor(xp.asarray(sign), A._device)
    lad = make_tensor(xp.asarray(logabs).astype(A.dtype.to_real().np if A.dtype.is_complex
                                                   else A._array.dtype), A._device)
    node = record(LinalgSlogdetBackward0, (A,), sign_t, lad)
    if node is not None:
        node._out_meta = tuple((t._array.shape, t.dtype, t._device) for t in (sign_t, lad))
        node.save_for_backward(A)
    return _slogdet_types[kind](sign_t, lad)


def slogdet(A, *, out=None):
    """`torch.slogdet` / `torch.linalg.slogdet`: (sign, log|det|)."""
    res = _slogdet(A, "slogdet")
    return _write_tuple(out, res, "slogdet") if out is not None else res


def linalg_slogdet(A, *, out=None):
    res = _slogdet(A, "linalg.slogdet")
    return _write_tuple(out, res, "linalg_slogdet") if out is not None else res


def logdet(input):
    """log det: nan for a negative determinant, -inf for a singular matrix."""
    _check(input, "linalg.slogdet")
    sign, lad = _slogdet(input, "slogdet")
    return where(sign < 0, math.nan, lad)


# ---- solves -----------------------------------------------------------------------------------------
class LinalgSolveExBackward0(Node):
    _materialize_grads = False

    def backward(self, grad, _info=None):
        A, X = self.saved_tensors
        if grad is None:
            return None, None
        if self.vector:
            grad, X = grad.unsqueeze(-1), X.unsqueeze(-1)
        gB = solve(A.mH, grad)
        gA = -(gB @ X.mH) if _needs(self, 0) else None
        if self.vector:
            gB = gB.squeeze(-1)
        return gA, (gB if _needs(self, 1) else None)


def _is_vector_rhs(A, B):
    nb, na = B._array.ndim, A._array.ndim
    return nb == 1 or (nb == na - 1 and B._array.shape == A._array.shape[:-1])


def solve(A, B, *, left=True, out=None):
    """X with A X = B (left) or X A = B; B may be a (batch of) vector(s)."""
    _check(A, "linalg.solve")
    if A._array.dtype != B._array.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {_type_name(A)} and B of type {_type_name(B)} instead")
    vector = _is_vector_rhs(A, B)
    n = A._array.shape[-1]
    bshape = B._array.shape + (1,) if vector else B._array.shape
    rows = bshape[-2] if left else bshape[-1]
    if B._array.ndim < 1 or rows != n:
        eq = "AX = B" if left else "XA = B"
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation {eq} "
                           f"({n}x{n} and {bshape[-2]}x{bshape[-1]})")
    if not left:
        if vector:
            raise RuntimeError("linalg.solve: Vector broadcasting of the left hand side is not "
                               "supported for left=False. In this case linalg.solve is "
                               "equivalent to B / A.squeeze(-1)")
        res = solve(A.mH, B.mH).mH
        return write_out(out, res, "linalg_solve") if out is not None else res
    xp = xp_of(A)
    b = B._array[..., None] if vector else B._array
    try:
        x = xp.linalg.solve(A._array, b)
    except np.linalg.LinAlgError:
        info = _lu_info(A._array)
        bad = _first_bad(info)
        b_idx = bad[0] if bad is not None else 0
        raise _LinAlgError(f"torch.linalg.solve: {_batch_prefix(b_idx, A._array.ndim > 2)}The "
                           "solver failed because the input matrix is singular.") from None
    except ValueError:
        from .pointwise import broadcast_error
        err = broadcast_error(A._array.shape[:-2], b.shape[:-2])
        raise err if err is not None else RuntimeError("linalg.solve: incompatible shapes")
    if vector:
        x = x[..., 0]
    res = make_tensor(x, A._device)
    node = record(LinalgSolveExBackward0, (A, B), res)
    if node is not None:
        node.vector = vector
        node._out_meta = ((res._array.shape, res.dtype, res._device),)
        node.save_for_backward(A, res)
    return write_out(out, res, "linalg_solve") if out is not None else res


class LinalgSolveTriangularBackward0(Node):
    def backward(self, grad):
        A, X = self.saved_tensors
        gB = solve_triangular(A.mH, grad, upper=not self.upper,
                              unitriangular=self.unitriangular)
        gA = None
        if _needs(self, 0):
            gA = -(gB @ X.mH)
            gA = gA.triu(1 if self.unitriangular else 0) if self.upper else \
                gA.tril(-1 if self.unitriangular else 0)
        return gA, (gB if _needs(self, 1) else None)


def solve_triangular(A, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (or X A = B) reading only A's upper or lower triangle."""
    _check(A, "linalg.solve_triangular")
    if not left:
        res = solve_triangular(A.mH, B.mH, upper=not upper, unitriangular=unitriangular).mH
        return write_out(out, res, "linalg_solve_triangular") if out is not None else res
    if A._array.dtype != B._array.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, "
                           f"but found A of type {_type_name(A)} and B of type {_type_name(B)} "
                           "instead")
    xp = xp_of(A)
    a = xp.triu(A._array) if upper else xp.tril(A._array)
    if unitriangular:
        n = a.shape[-1]
        a = a * (1 - xp.eye(n, dtype=a.dtype)) + xp.eye(n, dtype=a.dtype)
    with np.errstate(all="ignore"):
        try:
            x = xp.linalg.solve(a, B._array)
        except np.linalg.LinAlgError:  # LAPACK's trtrs would give inf/nan: so do we
            x = xp.full(np.broadcast_shapes(a.shape[:-1], B._array.shape[:-2]) + B._array.shape[-1:],
                        xp.nan, dtype=a.dtype)
    res = make_tensor(x, A._device)
    node = record(LinalgSolveTriangularBackward0, (A, B), res)
    if node is not None:
        node.upper, node.unitriangular = upper, unitriangular
        node.save_for_backward(A, res)
    return write_out(out, res, "linalg_solve_triangular") if out is not None else res


# ---- Cholesky ---------------------------------------------------------------------------------------
_cholesky_ex_type = result_type("linalg_cholesky_ex", ("L", "info"))


class LinalgCholeskyExBackward0(Node):
    """Murray's formula: gA = L^-H Phi(L^H gL) L^-1, Phi taking the lower triangle with its
    diagonal halved (and mirrored, as A is read as Hermitian)."""
    _materialize_grads = False

    def backward(self, grad, _info=None):
        (L,) = self.saved_tensors
        if grad is None:
            return None
        if self.upper:
            L, grad = L.mH, grad.mH
        gA = (L.mH @ grad).tril()
        gA = 0.5 * (gA + gA.tril(-1).mH)
        gA = solve_triangular(L.mH, gA, upper=True)
        return solve_triangular(L, gA, upper=False, left=False)


class CholeskyBackward0(LinalgCholeskyExBackward0):
    pass


def _cholesky(A, upper, fname, check_errors, node_cls):
    _check(A, fname)
    xp = xp_of(A)
    try:
        low = xp.linalg.cholesky(A._array)
        info = np.zeros(A._array.shape[:-2], np.int32)
        if xp is not np and not bool(xp.isfinite(low).all()):
            raise np.linalg.LinAlgError
    except np.linalg.LinAlgError:
        info = _cholesky_info(A._array)
        low = xp.full(A._array.shape, xp.nan, dtype=A._array.dtype)
        ok = xp.asarray(info == 0)
        if bool(ok.any()):
            low[ok] = xp.linalg.cholesky(A._array[ok])
    if check_errors:
        bad = _first_bad(info)
        if bad is not None:
            b, k = bad
            raise _LinAlgError(f"{fname}: {_batch_prefix(b, A._array.ndim > 2)}The factorization "
                               "could not be completed because the input is not positive-definite "
                               f"(the leading minor of order {k} is not positive-definite).")
    arr = xp.conj(xp.swapaxes(low, -1, -2)) if upper else low
    res = make_tensor(xp.ascontiguousarray(arr), A._device)
    info_t = _const(xp.asarray(info), A)
    node = record(node_cls, (A,), res, None)
    if node is not None:
        node.upper = upper
        node._out_meta = ((res._array.shape, res.dtype, res._device),
                          (info_t._array.shape, info_t.dtype, info_t._device))
        node.save_for_backward(res)
    return res, info_t


def cholesky_ex(A, *, upper=False, check_errors=False, out=None):
    res = _cholesky_ex_type(*_cholesky(A, upper, "linalg.cholesky", check_errors,
                                       LinalgCholeskyExBackward0))
    return _write_tuple(out, res, "linalg_cholesky_ex") if out is not None else res


def linalg_cholesky(A, *, upper=False, out=None):
    res = _cholesky(A, upper, "linalg.cholesky", True, LinalgCholeskyExBackward0)[0]
    return write_out(out, res, "linalg_cholesky") if out is not None else res


def cholesky(input, upper=False, *, out=None):
    """`torch.cholesky` (deprecated in PyTorch for `torch.linalg.cholesky`)."""
    _warn_once("cholesky", _CHOLESKY_DEPRECATED)
    res = _cholesky(input, upper, "cholesky", True, CholeskyBackward0)[0]
    return write_out(out, res, "cholesky") if out is not None else res


_CHOLESKY_DEPRECATED = (
    "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed in a "
    "future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
    "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\n"
    "should be replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce "
    "equivalent results for all valid (symmetric positive definite) inputs.")


def _cholesky_solve_arrays(xp, b, l, upper):
    """(L L^H)^-1 b on arrays, reading only L's lower (upper: U's upper, A = U^H U) triangle."""
    lo = xp.conj(xp.triu(l)).swapaxes(-1, -2) if upper else xp.tril(l)
    with np.errstate(all="ignore"):
        try:
            return xp.linalg.solve(xp.conj(lo).swapaxes(-1, -2), xp.linalg.solve(lo, b))
        except np.linalg.LinAlgError:  # LAPACK's potrs gives inf/nan: so do we
            shape = np.broadcast_shapes(lo.shape[:-2], b.shape[:-2]) + b.shape[-2:]
            return xp.full(shape, xp.nan, dtype=lo.dtype)


class CholeskySolveBackward0(Node):
    """PyTorch's formulas: gB = cholesky_solve(g, L); gL = -(gB X^H + X gB^H) L (lower), the
    whole matrix rather than its triangle, as PyTorch differentiates it."""

    def backward(self, grad):
        L, X = self.saved_tensors
        gB = cholesky_solve(grad, L, self.upper)
        common = gB @ X.mH
        common = common + common.mH
        return gB, -(L @ common) if self.upper else -(common @ L)


def _check_cholesky_solve(B, L):
    for t, name in ((B, "b"), (L, "u")):
        if t._array.ndim < 2:
            raise RuntimeError(f"{name} should have at least 2 dimensions, but has "
                               f"{t._array.ndim} dimensions instead")
    if B._array.dtype != L._array.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{_type_name(B)} and A of type {_type_name(L)} instead.")
    _check_cholesky_dtype(L, "cholesky_solve_cpu")
    (n, n2), (m, k) = L._array.shape[-2:], B._array.shape[-2:]
    if n != n2:
        raise RuntimeError(f"A must be batches of square matrices, but they are {n} by {n2} "
                           "matrices")
    if m != n:
        raise RuntimeError(f"Incompatible matrix sizes for cholesky_solve: each A matrix is {n} by "
                           f"{n} but each b matrix is {m} by {k}")


def _check_cholesky_dtype(L, kernel):
    if not (L.dtype.is_floating_point or L.dtype.is_complex):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{_type_name(L)}\'')


def cholesky_solve(B, L, upper=False, *, out=None):
    """X with A X = B given A's Cholesky factor."""
    _check_cholesky_solve(B, L)
    xp = xp_of(L)
    res = make_tensor(_cholesky_solve_arrays(xp, B._array, L._array, upper), L._device)
    node = record(CholeskySolveBackward0, (B, L), res)
    if node is not None:
        node.upper = upper
        node.save_for_backward(L, res)
    return write_out(out, res, "cholesky_solve") if out is not None else res


class CholeskyInverseBackward0(Node):
    """PyTorch's formula: with C = A^-1 (g + g^H) A^-1, gL = -C L (lower) or -L C (upper)."""

    def backward(self, grad):
        L, inverse = self.saved_tensors
        common = inverse @ (grad + grad.mH) @ inverse
        return -(L @ common) if self.upper else -(common @ L)


def cholesky_inverse(L, upper=False, *, out=None):
    """A^-1 given A's Cholesky factor."""
    _check_cholesky_dtype(L, "cholesky_inverse_out_cpu")
    _check(L, "cholesky_inverse", floating=False)
    xp = xp_of(L)
    eye = xp.broadcast_to(xp.eye(L._array.shape[-1], dtype=L._array.dtype), L._array.shape)
    res = make_tensor(_cholesky_solve_arrays(xp, eye, L._array, upper), L._device)
    node = record(CholeskyInverseBackward0, (L,), res)
    if node is not None:
        node.upper = upper
        node.save_for_backward(L, res)
    return write_out(out, res, "cholesky_inverse") if out is not None else res


# ---- QR ---------------------------------------------------------------------------------------------
_qr_types = {"linalg": result_type("linalg_qr", ("Q", "R")), "qr": result_type("qr", ("Q", "R"))}


def _copyltu(M):
    return M.tril() + M.tril(-1).mH


class LinalgQrBackward0(Node):
    _materialize_grads = False

    def backward(self, gQ, gR):
        Q, R = self.saved_tensors
        if self.mode == "r":
            raise RuntimeError("The derivative of linalg.qr depends on Q, which is not computed "
                               "when mode='r'. Please use linalg.qr(A, mode='reduced') if you "
                               "are going to differentiate through linalg.qr.")
        m, n = Q._array.shape[-2], R._array.shape[-1]
        if self.mode == "complete" and m > n:
            raise RuntimeError("The QR decomposition is not differentiable when mode='complete' "
                               "and nrows > ncols.")
        if m >= n:
            return _qr_backward_tall(Q, R, gQ, gR)
        # A = [X | Y] with X square: X = Q U, Y = Q V
        (A,) = self.saved_input
        Y = A[..., m:]
        U, gU = R[..., :m], (None if gR is None else gR[..., :m])
        gV = None if gR is None else gR[..., m:]
        gQ2 = gQ if gV is None else (Y @ gV.mH if gQ is None else gQ + Y @ gV.mH)
        gX = _qr_backward_tall(Q, U, gQ2, gU)
        gY = Q @ gV if gV is not None else _const(xp_of(Y).zeros(Y._array.shape, Y._array.dtype), Y)
        return _cat_last(gX, gY)


def _cat_last(a, b):
    from .shape import cat
    return cat([a, b], -1)


def _qr_backward_tall(Q, R, gQ, gR):
    """gA = (gQ + Q copyltu(M)) R^-H with M = R gR^H - gQ^H Q (A = Q R, m >= n)."""
    M = None
    if gR is not None:
        M = R @ gR.mH
    if gQ is not None:
        M = -(gQ.mH @ Q) if M is None else M - gQ.mH @ Q
    b = Q @ _copyltu(M)
    if gQ is not None:
        b = b + gQ
    return solve_triangular(R.mH, b, upper=False, left=False)


def _qr(A, mode, kind):
    _check(A, "linalg.qr", square=False)
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           "'reduced' (default), 'r', or 'complete'")
    xp = xp_of(A)
    if mode == "r":
        r = xp.linalg.qr(A._array, mode="r")
        q = xp.zeros((0,), dtype=A._array.dtype)
    else:
        q, r = xp.linalg.qr(A._array, mode=mode)
    Q, R = make_tensor(xp.ascontiguousarray(q), A._device), make_tensor(xp.ascontiguousarray(r),
                                                                       A._device)
    node = record(LinalgQrBackward0, (A,), Q, R)
    if node is not None:
        node.mode = mode
        node._out_meta = tuple((t._array.shape, t.dtype, t._device) for t in (Q, R))
        node.save_for_backward(Q, R)
        node.saved_input = (A,) if A._array.shape[-2] < A._array.shape[-1] else None
    return _qr_types[kind](Q, R)


def linalg_qr(A, mode="reduced", *, out=None):
    res = _qr(A, mode, "linalg")
    return _write_tuple(out, res, "linalg_qr") if out is not None else res


def qr(input, some=True, *, out=None):
    """`torch.qr` (deprecated in PyTorch for `torch.linalg.qr`)."""
    _warn_once("qr", "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in "
               "a future PyTorch release.\nThe boolean parameter 'some' has been replaced with a "
               "string parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\n"
               "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
    res = _qr(input, "reduced" if some else "complete", "qr")
    return _write_tuple(out, res, "qr") if out is not None else res


# ---- SVD ---------------------------------------------------------------------------------------------
_svd_types = {"linalg": result_type("linalg_svd", ("U", "S", "Vh")),
              "svd": result_type("svd", ("U", "S", "V"))}


class LinalgSvdBackward0(Node):
    """With E_ij = s_j^2 - s_i^2: gA = U [(skew(U^H gU) S + S skew(V^H gV)) / E + diag(gS)] V^H,
    plus the terms for the columns of a tall (wide) A outside U's (V's) span."""
    _materialize_grads = False

    def backward(self, gU, gS, gVh):
        U, S, Vh = self.saved_tensors
        k = S._array.shape[-1]
        if self.full_matrices:
            U, Vh = U[..., :k], Vh[..., :k, :]
            gU = None if gU is None else gU[..., :k]
            gVh = None if gVh is None else gVh[..., :k, :]
        if gU is None and gVh is None:
            return (U * gS.unsqueeze(-2)) @ Vh if gS is not None else None
        m, n = U._array.shape[-2], Vh._array.shape[-1]
        V, gV = Vh.mH, (None if gVh is None else gVh.mH)
        S2 = S * S
        E = S2.unsqueeze(-2) - S2.unsqueeze(-1) + _eye(k, S)
        gA = None
        if gU is not None:
            UhgU = U.mH @ gU
            gA = (UhgU - UhgU.mH) * S.unsqueeze(-2)
        if gV is not None:
            VhgV = V.mH @ gV
            term = S.unsqueeze(-1) * (VhgV - VhgV.mH)
            gA = term if gA is None else gA + term
        gA = gA / E
        if gS is not None:
            gA = gA + gS.diag_embed()
        if m > k and gU is not None:
            gUSinv = gU / S.unsqueeze(-2)
            gA = (U @ gA + gUSinv - U @ (U.mH @ gUSinv)) @ Vh
        elif n > k and gV is not None:
            gVSinv = gV / S.unsqueeze(-2)
            gA = U @ (gA @ Vh + gVSinv.mH - (gVSinv.mH @ V) @ Vh)
        else:
            gA = U @ gA @ Vh
        return gA


def _svd(A, full_matrices, kind="linalg", compute_uv=True):
    _check(A, "linalg.svd", square=False)
    xp = xp_of(A)
    real = A.dtype.to_real().np if A.dtype.is_complex else A._array.dtype
    tracked = compute_uv or _grad_wanted(A)
    if not tracked:
        s = xp.linalg.svd(A._array, compute_uv=False)
        return None, make_tensor(s.astype(real, copy=False), A._device), None
    u, s, vh = xp.linalg.svd(A._array, full_matrices=full_matrices)
    U, S, Vh = (make_tensor(xp.ascontiguousarray(x), A._device)
                for x in (u, s.astype(real, copy=False), vh))
    node = record(LinalgSvdBackward0, (A,), U, S, Vh)
    if node is not None:
        node.full_matrices = full_matrices
        node._out_meta = tuple((t._array.shape, t.dtype, t._device) for t in (U, S, Vh))
        node.save_for_backward(U, S, Vh)
    return U, S, Vh


def _grad_wanted(A):
    from ._graph import needs_grad
    return needs_grad(A)


def linalg_svd(A, full_matrices=True, *, driver=None, out=None):
    res = _svd_types["linalg"](*_svd(A, full_matrices))
    return _write_tuple(out, res, "linalg_svd") if out is not None else res


def svdvals(A, *, driver=None, out=None):
    res = _svd(A, False, compute_uv=False)[1]
    return write_out(out, res, "linalg_svdvals") if out is not None else res


def svd(input, some=True, compute_uv=True, *, out=None):
    """`torch.svd`: (U, S, V) with V = Vh^H; zero U and V when compute_uv is False."""
    if not compute_uv:
        S = _svd(input, False, compute_uv=False)[1]
        if _grad_wanted(input):
            S = _svd(input, False)[1]
        m, n = input._array.shape[-2:]
        xp = xp_of(input)
        batch = input._array.shape[:-2]
        U = _const(xp.zeros(batch + (m, m), input._array.dtype), input)
        V = _const(xp.zeros(batch + (n, n), input._array.dtype), input)
        res = _svd_types["svd"](U, S, V)
    else:
        U, S, Vh = _svd(input, not some)
        res = _svd_types["svd"](U, S, Vh.mH)
    return _write_tuple(out, res, "svd") if out is not None else res


# ---- symmetric eigendecomposition (general: `_eig.py`) ----------------------------------------------
_eigh_type = result_type("linalg_eigh", ("eigenvalues", "eigenvectors"))


class LinalgEighBackward0(Node):
    """gA = V (diag(gL) + (V^H gV) / E) V^H with E_ij = l_j - l_i."""
    _materialize_grads = False

    def backward(self, gL, gV):
        L, V = self.saved_tensors
        if gV is None:
            return (V * gL.unsqueeze(-2)) @ V.mH if gL is not None else None
        k = L._array.shape[-1]
        E = L.unsqueeze(-2) - L.unsqueeze(-1) + _eye(k, L)
        inner = V.mH @ gV
        inner = 0.5 * (inner - inner.mH) / E  # the skew part: V stays orthonormal
        if gL is not None:
            inner = inner + gL.diag_embed()
        return V @ inner @ V.mH


def _check_uplo(UPLO):
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")


def eigh(A, UPLO="L", *, out=None):
    _check(A, "linalg.eigh")
    _check_uplo(UPLO)
    xp = xp_of(A)
    w, v = xp.linalg.eigh(A._array, UPLO=UPLO)
    real = A.dtype.to_real().np if A.dtype.is_complex else A._array.dtype
    L, V = make_tensor(w.astype(real, copy=False), A._device), make_tensor(v, A._device)
    node = record(LinalgEighBackward0, (A,), L, V)
    if node is not None:
        node._out_meta = tuple((t._array.shape, t.dtype, t._device) for t in (L, V))
        node.save_for_backward(L, V)
    res = _eigh_type(L, V)
    return _write_tuple(out, res, "linalg_eigh") if out is not None else res


def eigvalsh(A, UPLO="L", *, out=None):
    _check(A, "linalg.eigh")
    _check_uplo(UPLO)
    if _grad_wanted(A):
        res = eigh(A, UPLO).eigenvalues
    else:
        w = xp_of(A).linalg.eigvalsh(A._array, UPLO=UPLO)
        real = A.dtype.to_real().np if A.dtype.is_complex else A._array.dtype
        res = make_tensor(w.astype(real, copy=False), A._device)
    return write_out(out, res, "linalg_eigvalsh") if out is not None else res


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


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """The Moore-Penrose pseudo-inverse, from the SVD (or eigh when hermitian)."""
    if A._array.ndim < 2 or not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"linalg.pinv({_type_name(A)}{{{list(A._array.shape)}}}): expected a tensor with 2 or more "
                           "dimensions of float, double, cfloat or cdouble types")
    xp, arr = xp_of(A), A._array
    if hermitian:
        w, v = xp.linalg.eigh(arr)
        s = xp.abs(w)
        tol = _tolerances(A, atol, rtol, s.max(axis=-1, keepdims=True) if s.shape[-1] else 0)
        inv_w = xp.where(s > tol, 1 / xp.where(s > tol, w, 1), 0)
        p = (v * inv_w[..., None, :]) @ xp.conj(xp.swapaxes(v, -1, -2))
    else:
        u, s, vh = xp.linalg.svd(arr, full_matrices=False)
        tol = _tolerances(A, atol, rtol, s.max(axis=-1, keepdims=True) if s.shape[-1] else 0)
        inv_s = xp.where(s > tol, 1 / xp.where(s > tol, s, 1), 0)
        p = (xp.conj(xp.swapaxes(vh, -1, -2)) * inv_s[..., None, :]) @ \
            xp.conj(xp.swapaxes(u, -1, -2))
    res = make_tensor(p.astype(arr.dtype, copy=False), A._device)
    node = record(LinalgPinvBackward0, (A,), res)
    if node is not None:
        node.save_for_backward(A, res)
    return write_out(out, res, "linalg_pinv") if out is not None else res


def pinverse(input, rcond=1e-15):
    return pinv(input, rtol=rcond)


_lstsq_type = result_type("linalg_lstsq", ("solution", "residuals", "rank", "singular_values"))


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


def lstsq(A, B, rcond=None, *, driver=None):
    """min |A X - B|: solution, residuals (m > n, full rank, a driver other than gelsy),
    rank (drivers other than gels), singular values (gelsd and gelss)."""
    if A._array.ndim < 2:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    if A._array.dtype != B._array.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {A.dtype} and other's dtype {B.dtype}")
    driver = driver or "gelsy"
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError(f"torch.linalg.lstsq: parameter `driver` should be one of "
                           f"(gels, gelsy, gelsd, gelss)")
    vector = B._array.ndim == A._array.ndim - 1
    m, n = A._array.shape[-2:]
    b = B._array[..., None] if vector else B._array
    if b.shape[-2] != m:
        raise RuntimeError("torch.linalg.lstsq: input.size(-2) should match other.size(-2)")
    xp, arr = xp_of(A), A._array
    u, s, vh = xp.linalg.svd(arr, full_matrices=False)
    rc = np.finfo(arr.dtype).eps * max(m, n) if rcond is None or rcond < 0 else rcond
    s_max = s.max(axis=-1, keepdims=True) if s.shape[-1] else xp.zeros(s.shape[:-1] + (1,), s.dtype)
    keep = s > rc * s_max
    inv_s = xp.where(keep, 1 / xp.where(keep, s, 1), 0)
    x = xp.conj(xp.swapaxes(vh, -1, -2)) @ ((xp.conj(xp.swapaxes(u, -1, -2)) @ b)
                                             * inv_s[..., :, None])
    rank = keep.sum(axis=-1).astype(np.int64)
    full_rank = bool((rank == n).all())
    if m > n and driver != "gelsy" and full_rank:
        r = arr @ x - b
        res_arr = (xp.abs(r) ** 2).sum(axis=-2)  # (*, k); k = 1 for a vector B
    else:
        res_arr = xp.zeros((0,), dtype=s.dtype)
    if vector:
        x = x[..., 0]
    X = make_tensor(xp.ascontiguousarray(x.astype(arr.dtype, copy=False)), A._device)
    residuals = make_tensor(res_arr.astype(s.dtype, copy=False), A._device)
    rank_t = _const(xp.asarray(rank) if driver != "gels" else xp.zeros((0,), np.int64), A)
    sv = _const(s if driver in ("gelsd", "gelss") else xp.zeros((0,), s.dtype), A)
    node = record(LinalgLstsqBackward0, (A, B), X, residuals)
    if node is not None:
        node.vector = vector
        node._out_meta = tuple((t._array.shape, t.dtype, t._device) for t in (X, residuals))
        node.save_for_backward(A, B, X)
    return _lstsq_type(X, residuals, rank_t, sv)


def matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None, out=None):
    """The number of singular values above max(atol, rtol * largest)."""
    if A._array.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at least "
                           "2 dimensions.")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError("This function doesn't handle types other than float and double")
    if tol is not None:
        atol, rtol = tol, 0.0
    xp = xp_of(A)
    if hermitian:
        s = xp.abs(xp.linalg.eigvalsh(A._array))
    else:
        s = xp.linalg.svd(A._array, compute_uv=False)
    s_max = s.max(axis=-1, keepdims=True) if s.shape[-1] else xp.zeros(s.shape[:-1] + (1,), s.dtype)
    tol_arr = _tolerances(A, atol, rtol, s_max)
    res = _const(xp.asarray((s > tol_arr).sum(axis=-1)).astype(np.int64), A)
    return write_out(out, res, "linalg_matrix_rank") if out is not None else res


# ---- powers and the exponential ---------------------------------------------------------------
def matrix_power(A, n, *, out=None):
    """A^n by repeated squaring; a negative n inverts first; A^0 is the identity."""
    _check(A, "linalg.matrix_power", floating=False)
    if n < 0:
        A, n = inv(A), -n
    if n == 0:
        res = _eye(A._array.shape[-1], A).expand(A._array.shape).clone()
        record(CopyBackwards, (A,), res)
    elif n == 1:
        res = A.clone()
    else:
        res, z = None, None
        while n:
            z = A if z is None else z @ z
            if n & 1:
                res = z if res is None else res @ z
            n >>= 1
    return write_out(out, res, "linalg_matrix_power") if out is not None else res


class CopyBackwards(Node):
    """A^0: the identity, whatever A is (a zero gradient)."""

    def backward(self, grad):
        return grad * 0


class LinalgMatrixExpBackward0(Node):
    """gA = exp([[A^H, G], [0, A^H]])'s upper right block (the Fréchet derivative's adjoint)."""

    def backward(self, grad):
        (A,) = self.saved_tensors
        from .shape import cat
        n = A._array.shape[-1]
        Ah = A.mH
        zero = _const(xp_of(A).zeros(A._array.shape, A._array.dtype), A).expand(Ah.shape)
        big = cat([cat([Ah, grad], -1), cat([zero, Ah.expand(grad.shape)], -1)], -2)
        return matrix_exp(big)[..., :n, n:]


def _expm(arr, xp):
    """Scaling and squaring with a degree-18 Taylor polynomial, in float64 (complex128)."""
    work = arr.astype(np.complex128 if np.iscomplexobj(arr) else np.float64)
    n = work.shape[-1]
    norm = xp.abs(work).sum(axis=-2).max(axis=-1) if n else xp.zeros(work.shape[:-2])
    s = xp.maximum(0, xp.ceil(xp.log2(xp.maximum(norm, 1e-300) / 0.5))).astype(np.int64)
    s = xp.where(xp.isfinite(norm), s, 0)
    scaled = work / (2.0 ** s)[..., None, None]
    eye = xp.eye(n, dtype=work.dtype)
    res = eye + scaled / 18
    for k in range(17, 0, -1):
        res = eye + (scaled @ res) / k
    steps = int(s.max()) if s.size else 0
    for j in range(steps):
        sq = res @ res
        res = xp.where((s > j)[..., None, None], sq, res)
    return res.astype(arr.dtype)


def matrix_exp(A):
    _check(A, "linalg.matrix_exp")
    res = make_tensor(_expm(A._array, xp_of(A)), A._device)
    node = record(LinalgMatrixExpBackward0, (A,), res)
    if node is not None:
        node.save_for_backward(A)
    return res


# ---- norms ------------------------------------------------------------------------------------------
def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    from .statistics import vector_norm as _vector_norm
    if isinstance(ord, str) or not isinstance(ord, (builtins.int, builtins.float, np.number)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not "
                        f"{type(ord).__name__}")
    return _vector_norm(x, ord, dim, keepdim, dtype=dtype, out=out)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Frobenius, nuclear, 2 / -2 (extreme singular values), 1 / -1 (column sums), inf / -inf
    (row sums)."""
    if A._array.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError("linalg.matrix_norm: Expected a floating point or complex tensor as "
                           f"input. Got {_type_name(A)}")
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dim)}")
    nd = A._array.ndim
    d0, d1 = (d % nd for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        res = vector_norm(A, 2, (d0, d1), keepdim)
    elif ord in ("nuc", 2, -2):
        s = svdvals(A.movedim((d0, d1), (-2, -1)))
        res = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
        if keepdim:
            for d in sorted((d0, d1)):
                res = res.unsqueeze(d)
    elif ord in (1, -1, math.inf, -math.inf):
        first, second = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = A.abs().sum(first, keepdim=True)
        res = sums.amax(second, keepdim=True) if ord > 0 else sums.amin(second, keepdim=True)
        if not keepdim:
            res = res.squeeze(max(d0, d1)).squeeze(min(d0, d1))
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    return write_out(out, res, "linalg_matrix_norm") if out is not None else res


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """`linalg.norm`: a vector norm over one dim (or all), a matrix norm over two."""
    if dim is not None and not isinstance(dim, (builtins.int, np.integer)):
        dim = tuple(dim)
        if len(dim) == 1:
            dim = dim[0]
    if dim is None:
        if ord is not None:
            if A._array.ndim not in (1, 2):
                raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input "
                                   f"must be 1D or 2D. Got {A._array.ndim}D.")
            if A._array.ndim == 2:
                return matrix_norm(A, ord, (-2, -1), keepdim, dtype=dtype, out=out)
            return vector_norm(A, ord, None, keepdim, dtype=dtype, out=out)
        return vector_norm(A, 2, None, keepdim, dtype=dtype, out=out)
    if isinstance(dim, tuple):
        return matrix_norm(A, "fro" if ord is None else ord, dim, keepdim, dtype=dtype, out=out)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype, out=out)


def cond(A, p=None, *, out=None):
    """The condition number: ratio of extreme singular values (p None or 2 / -2), else
    norm(A, p) * norm(inv(A), p)."""
    if p in (None, 2, -2):
        s = svdvals(A)
        res = s.amax(-1) / s.amin(-1) if p != -2 else s.amin(-1) / s.amax(-1)
    else:
        res = matrix_norm(A, p) * matrix_norm(inv(A), p)
    return write_out(out, res, "linalg_cond") if out is not None else res


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    from .rearrange import diagonal as _diagonal
    return _diagonal(A, offset, dim1, dim2)


from ._eig import eig, eigvals  # noqa: E402,F401  (it imports this module's helpers)
