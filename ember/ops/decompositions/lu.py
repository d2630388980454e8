"""The LU family: `linalg.lu_factor(_ex)`, `linalg.lu`, `linalg.lu_solve`, `linalg.solve_ex`,
the deprecated `lu` / `lu_solve` and `lu_unpack`, with their backward nodes.

NumPy and CuPy have no LU: `_getrf` computes it as LAPACK's getrf defines it (partial
pivoting, the pivot the first entry of largest |re| + |im| in its column, as i?amax picks,
1-based int32 pivots, info the first zero pivot), batched over leading dimensions with one
vectorised elimination step per column on the device's array module. Solves then run the
two triangular systems on the factor. Backwards follow PyTorch's formulas, written with
ember ops (lu_unpack, solve_triangular, matmul) so that second derivatives work.
"""
import math

import numpy as np

from ..._tensor import make_tensor, xp_of
from .._graph import Node, record
from .._writes import write_out
from ..._state import warn_once
from ..reduction import return_type
from ._common import (_LinAlgError, _batch_prefix, _check, _const, _first_bad, _host, _needs,
                      _write_tuple, batched_solve)
from .solves import solve, solve_triangular

_lu_factor_type = return_type("linalg_lu_factor", ("LU", "pivots"))
_lu_factor_ex_type = return_type("linalg_lu_factor_ex", ("LU", "pivots", "info"))
_lu_with_info_type = return_type("_lu_with_info", ("LU", "pivots", "info"))
_lu_type = return_type("linalg_lu", ("P", "L", "U"))
_lu_unpack_type = return_type("lu_unpack", ("P", "L", "U"))
_solve_ex_type = return_type("linalg_solve_ex", ("result", "info"))


# ---- the factorisation on arrays ----------------------------------------------------------------
def _getrf(xp, a):
    """(LU, pivots, info) arrays of a (..., m, n) array, as LAPACK's getrf."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k = min(m, n)
    lu = xp.array(a.reshape((math.prod(batch), m, n)), copy=True)  # sizes: 0 x 0 too
    nb = lu.shape[0]
    piv = xp.zeros((nb, k), np.int32)
    info = xp.zeros(nb, np.int32)
    rows = xp.arange(nb)
    cplx = xp.iscomplexobj(lu)
    for j in range(k):
        col = lu[:, j:, j]
        mag = xp.abs(col.real) + xp.abs(col.imag) if cplx else xp.abs(col)
        p = j + xp.argmax(mag, axis=1) if nb else xp.zeros(0, np.int64)
        piv[:, j] = p + 1
        top = lu[rows, j].copy()
        lu[rows, j] = lu[rows, p]
        lu[rows, p] = top
        d = lu[:, j, j]
        zero = d == 0
        info = xp.where((info == 0) & zero, np.int32(j + 1), info)
        if j + 1 < m:
            # a zero pivot leaves its (all zero) column as it is, as getrf does
            mult = lu[:, j + 1:, j] * (1 / xp.where(zero, 1, d))[:, None]
            lu[:, j + 1:, j] = mult
            lu[:, j + 1:, j + 1:] -= mult[:, :, None] * lu[:, j, None, j + 1:]
    return (lu.reshape(batch + (m, n)), piv.reshape(batch + (k,)), info.reshape(batch))


def _perm(xp, piv, m):
    """The row order perm with (P^T A)[i] = A[perm[i]], from getrf's sequential swaps."""
    batch, k = piv.shape[:-1], piv.shape[-1]
    p = piv.reshape((math.prod(batch), k)).astype(np.int64) - 1
    perm = xp.broadcast_to(xp.arange(m), (p.shape[0], m)).copy()
    rows = xp.arange(p.shape[0])
    for j in range(k):
        tgt = p[:, j]
        cur = perm[:, j].copy()
        perm[:, j] = perm[rows, tgt]
        perm[rows, tgt] = cur
    return perm.reshape(batch + (m,))


def _p_matrix(xp, piv, m, dtype):
    perm = _perm(xp, piv, m)
    eye = xp.eye(m, dtype=dtype)
    # P[perm[i], i] = 1: column i of P is the unit vector e_perm[i]
    return xp.ascontiguousarray(xp.swapaxes(eye[perm], -1, -2))


def _check_lu_input(A, fname, dims_name):
    if A._array.ndim < 2:
        raise RuntimeError(f"{dims_name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A._array.shape)} instead")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise NotImplementedError(f'"lu_cpu" not implemented for \'{A.dtype._scalar_name}\'')


def _check_pivot(pivot, fname):
    if not pivot:
        raise RuntimeError(f"{fname}: LU without pivoting is not implemented on the CPU")


# ---- lu_factor -------------------------------------------------------------------------------------
class LinalgLuFactorExBackward0(Node):
    """PyTorch's: unpack the factor and run linalg.lu's backward with gL = tril(g, -1) of
    its first k columns and gU = triu(g) of its first k rows."""
    _materialize_grads = False

    def backward(self, grad, _pivots=None, _info=None):
        LU, piv = self.saved_tensors
        if grad is None:
            return None
        k = min(LU.shape[-2:])
        P, L, U = lu_unpack(LU, piv)
        return _lu_backward(grad[..., :k].tril(-1), grad[..., :k, :].triu(), P, L, U)


def _lu_factor(A, pivot, fname, dims_name, node_cls=LinalgLuFactorExBackward0):
    _check_lu_input(A, fname, dims_name)
    _check_pivot(pivot, fname)
    xp = xp_of(A)
    lu, piv, info = _getrf(xp, A._array)
    res, piv_t, info_t = (make_tensor(lu, A._device), _const(piv, A), _const(info, A))
    node = record(node_cls, (A,), res, None, None)
    if node is not None:
        node._out_meta = tuple((t._array.shape, t.dtype, t._device) for t in (res, piv_t, info_t))
        node.save_for_backward(res, piv_t)
    return res, piv_t, info_t


def _raise_lu(info, batched, fname):
    bad = _first_bad(_host_info(info))
    if bad is not None:
        b, k = bad
        raise _LinAlgError(f"{fname}: {_batch_prefix(b, batched)}U[{k},{k}] is zero and using it "
                           "on lu_solve would result in a division by zero. If you still want to "
                           "perform the factorization, consider calling linalg.lu(A, pivot) or "
                           "linalg.lu_factor_ex(A, pivot)")


def _host_info(info_t):
    return _host(info_t._array)


def lu_factor_ex(A, *, pivot=True, check_errors=False, out=None):
    """(LU, pivots, info): A = P L U packed as LAPACK's getrf, without raising on a zero
    pivot unless `check_errors`."""
    res = _lu_factor(A, pivot, "linalg.lu_factor_ex", "torch.lu_factor")
    if check_errors:
        _raise_lu(res[2], A._array.ndim > 2, "torch.linalg.lu_factor_ex")
    res = _lu_factor_ex_type(*res)
    return _write_tuple(out, res, "linalg_lu_factor_ex") if out is not None else res


def lu_factor(A, *, pivot=True, out=None):
    """(LU, pivots) of A = P L U; raises when U has a zero on its diagonal."""
    LU, piv, info = _lu_factor(A, pivot, "linalg.lu_factor", "torch.lu_factor")
    _raise_lu(info, A._array.ndim > 2, "torch.linalg.lu_factor")
    res = _lu_factor_type(LU, piv)
    return _write_tuple(out, res, "linalg_lu_factor") if out is not None else res


_LU_DEPRECATED = (
    "torch.lu is deprecated in favor of torch.linalg.lu_factor / torch.linalg.lu_factor_ex and "
    "will be removed in a future PyTorch release.\nLU, pivots = torch.lu(A, compute_pivots)\n"
    "should be replaced with\nLU, pivots = torch.linalg.lu_factor(A, compute_pivots)\nand\n"
    "LU, pivots, info = torch.lu(A, compute_pivots, get_infos=True)\nshould be replaced with\n"
    "LU, pivots, info = torch.linalg.lu_factor_ex(A, compute_pivots)")


def lu(A, pivot=True, get_infos=False, out=None):
    """`torch.lu` (deprecated): (LU, pivots), or the named (LU, pivots, info) with
    `get_infos`; never raises on a singular matrix."""
    warn_once(_LU_DEPRECATED)
    LU, piv, info = _lu_factor(A, pivot, "linalg.lu_factor", "torch.lu_factor")
    if get_infos:
        res = _lu_with_info_type(LU, piv, info)
        return _write_tuple(out, res, "_lu_with_info") if out is not None else res
    if out is not None:
        return tuple(_write_tuple(out, (LU, piv), "lu"))
    return LU, piv


# ---- lu_unpack and linalg.lu -----------------------------------------------------------------------
class LuUnpackBackward0(Node):
    """gLU = tril(gL, -1) + triu(gU), each placed in the factor's shape."""
    _materialize_grads = False

    def backward(self, _gP, gL, gU):
        m, n = self.mn
        k = min(m, n)
        parts = []
        if gL is not None and gL.shape[-1] == k and gL.shape[-2] == m:
            parts.append(_pad(gL.tril(-1), 0, n - k))
        if gU is not None and gU.shape[-2] == k and gU.shape[-1] == n:
            parts.append(_pad(gU.triu(), m - k, 0))
        if not parts:
            return None, None
        return (parts[0] if len(parts) == 1 else parts[0] + parts[1]), None


def _pad(t, rows, cols):
    if rows == 0 and cols == 0:
        return t
    from ..spatial import pad
    return pad(t, (0, cols, 0, rows))


def _unpack_arrays(xp, lu, piv, unpack_data, unpack_pivots):
    m, n = lu.shape[-2:]
    k = min(m, n)
    empty = xp.zeros(0, dtype=lu.dtype)
    if unpack_data:
        L = xp.tril(lu[..., :, :k], -1) + xp.eye(m, k, dtype=lu.dtype)
        U = xp.ascontiguousarray(xp.triu(lu[..., :k, :]))
    else:
        L = U = None
    P = _p_matrix(xp, piv, m, lu.dtype) if unpack_pivots else empty
    return P, L, U, empty


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True, *, out=None):
    """(P, L, U) from `lu_factor`'s packed factor and pivots; P, or L and U, are empty
    tensors when their unpacking is switched off."""
    if LU_pivots.dtype.name != "int32" or not LU_pivots.is_contiguous():
        raise RuntimeError("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                           "torch.int32 dtype.\nNote: this function is intended to be used with "
                           "the output produced by torch.linalg.lu_factor")
    if LU_data._array.ndim < 2:
        raise IndexError("Dimension out of range (expected to be in range of "
                         f"[-{max(LU_data._array.ndim, 1)}, {max(LU_data._array.ndim, 1) - 1}], "
                         "but got -2)")
    xp = xp_of(LU_data)
    P, L, U, empty = _unpack_arrays(xp, LU_data._array, LU_pivots._array, unpack_data,
                                    unpack_pivots)
    dev = LU_data._device
    P_t = make_tensor(P, dev)
    L_t = make_tensor(L if L is not None else empty, dev)
    U_t = make_tensor(U if U is not None else empty.copy(), dev)
    node = record(LuUnpackBackward0, (LU_data, LU_pivots), None, L_t, U_t)
    if node is not None:
        node.mn = LU_data._array.shape[-2:]
        node._out_meta = tuple((t._array.shape, t.dtype, t._device) for t in (P_t, L_t, U_t))
    res = _lu_unpack_type(P_t, L_t, U_t)
    return _write_tuple(out, res, "lu_unpack") if out is not None else res


class LinalgLuBackward0(Node):
    _materialize_grads = False

    def backward(self, _gP, gL, gU):
        P, L, U = self.saved_tensors
        if gL is None and gU is None:
            return None
        return _lu_backward(gL, gU, P, L, U)


def _lu_backward(gL, gU, P, L, U):
    """PyTorch's linalg_lu_backward: for square A, gA = P L^-H (tril(L^H gL, -1) + triu(gU U^H))
    U^-H; the wide and tall cases split U (resp. L) into its square block and the rest."""
    m, n = L.shape[-2], U.shape[-1]
    k = min(m, n)
    if m == n:
        gA = None if gL is None else (L.mH @ gL).tril(-1)
        if gU is not None:
            t = (gU @ U.mH).triu()
            gA = t if gA is None else gA + t
        gA = solve_triangular(U.mH, gA, upper=False, left=False)
        gA = solve_triangular(L.mH, gA, upper=True, unitriangular=True)
    elif m < n:
        U1 = U[..., :k]
        gA = None if gL is None else L.mH @ gL
        if gU is not None:
            t = gU.triu() @ U.mH
            gA = -t if gA is None else gA - t
        gA = solve_triangular(U1.mH, gA.tril(-1), upper=False, left=False)
        if gU is not None:
            from ..shape import cat
            gA = cat([gA + gU[..., :k].triu(), gU[..., k:]], -1)
        gA = solve_triangular(L.mH, gA, upper=True, unitriangular=True)
        if gU is None:
            gA = _pad(gA, 0, n - k)
    else:
        L1 = L[..., :k, :]
        gA = None if gU is None else gU @ U.mH
        if gL is not None:
            t = L.mH @ gL.tril(-1)
            gA = -t if gA is None else gA - t
        gA = solve_triangular(L1.mH, gA.triu(), upper=True, unitriangular=True)
        if gL is not None:
            from ..shape import cat
            gA = cat([gA + gL[..., :k, :].tril(-1), gL[..., k:, :]], -2)
        gA = solve_triangular(U.mH, gA, upper=False, left=False)
        if gL is None:
            gA = _pad(gA, m - k, 0)
    return P @ gA


def linalg_lu(A, *, pivot=True, out=None):
    """`torch.linalg.lu`: (P, L, U) with A = P L U, L unit lower (m x k), U upper (k x n)."""
    _check_lu_input(A, "linalg.lu", "linalg.lu")
    _check_pivot(pivot, "linalg.lu_factor")
    xp = xp_of(A)
    lu_arr, piv, _info = _getrf(xp, A._array)
    P, L, U, _ = _unpack_arrays(xp, lu_arr, piv, True, True)
    P_t, L_t, U_t = (make_tensor(P, A._device), make_tensor(xp.ascontiguousarray(L), A._device),
                     make_tensor(U, A._device))
    node = record(LinalgLuBackward0, (A,), None, L_t, U_t)
    if node is not None:
        node._out_meta = tuple((t._array.shape, t.dtype, t._device) for t in (P_t, L_t, U_t))
        node.save_for_backward(P_t, L_t, U_t)
    res = _lu_type(P_t, L_t, U_t)
    return _write_tuple(out, res, "linalg_lu") if out is not None else res


# ---- lu_solve -------------------------------------------------------------------------------------
def _tri_solve(xp, a, b):
    with np.errstate(all="ignore"):
        try:
            return batched_solve(xp, a, b)
        except np.linalg.LinAlgError:  # a zero on U's diagonal: getrs divides by it
            return _back_substitute(xp, a, b)


def _back_substitute(xp, a, b):
    """Triangular solve by substitution (inf/nan where a diagonal entry is zero, as LAPACK's
    trsm gives); `a` is upper or lower triangular."""
    shape = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a = xp.broadcast_to(a, shape + a.shape[-2:])
    x = xp.array(xp.broadcast_to(b, shape + b.shape[-2:]), dtype=np.result_type(a, b), copy=True)
    n = a.shape[-1]
    upper = not bool(xp.any(xp.tril(a, -1)))
    order = range(n - 1, -1, -1) if upper else range(n)
    for i in order:
        others = slice(i + 1, n) if upper else slice(0, i)
        acc = x[..., i, :] - (a[..., i, None, others] @ x[..., others, :])[..., 0, :]
        x[..., i, :] = acc / a[..., i, i, None]
    return x


def _lu_solve_arrays(xp, lu, piv, b, adjoint):
    """A^-1 b (adjoint: A^-H b) with A = P L U given by getrf's output."""
    m = lu.shape[-1]
    L = xp.tril(lu, -1) + xp.eye(m, dtype=lu.dtype)
    U = xp.triu(lu)
    perm = _perm(xp, piv, m)
    shape = np.broadcast_shapes(lu.shape[:-2], b.shape[:-2])
    perm = xp.broadcast_to(perm, shape + (m,))
    b = xp.broadcast_to(b, shape + b.shape[-2:])
    if not adjoint:
        pb = xp.take_along_axis(b, perm[..., None], axis=-2)
        return _tri_solve(xp, U, _tri_solve(xp, L, pb))
    y = _tri_solve(xp, xp.conj(xp.swapaxes(L, -1, -2)),
                   _tri_solve(xp, xp.conj(xp.swapaxes(U, -1, -2)), b))
    x = xp.empty_like(y)
    xp.put_along_axis(x, perm[..., None], y, axis=-2)
    return x


class LinalgLuSolveBackward0(Node):
    """PyTorch's formulas: gB = lu_solve(LU, pivots, gX, left, not adjoint); gLU from the
    adjoint of dX = -A^-1 dA X (written in L and U, gL kept strictly lower, gU upper)."""

    def backward(self, gX):
        LU, piv, X = self.saved_tensors
        left, adjoint = self.left, self.adjoint
        gB = linalg_lu_solve(LU, piv, gX, left=left, adjoint=not adjoint) if _needs(self, 2) \
            else None
        gLU = None
        if _needs(self, 0):
            P, L, U = lu_unpack(LU, piv)
            if left != adjoint:
                gR = solve_triangular(U.mH, -((gX if left else gX.mH) @ (X.mH if left else X)),
                                      upper=False)
                gL = solve_triangular(L.mH, gR @ U.mH, upper=True, unitriangular=True).tril(-1)
                gLU = gL + gR.triu()
            else:
                gR = -(P.mT @ (X if left else X.mH) @ (gX.mH if left else gX) @ P)
                gR = solve_triangular(L.mH, gR, upper=True, left=False, unitriangular=True)
                gU = solve_triangular(U.mH, L.mH @ gR, upper=False, left=False).triu()
                gLU = gR.tril(-1) + gU
        return gLU, None, gB


def _check_lu_solve(LU, pivots, B, left):
    _check(LU, "torch.linalg.lu_solve")
    if LU._array.dtype != B._array.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but found "
                           f"LU of type {LU.dtype._scalar_name} and B of type {B.dtype._scalar_name} instead")
    if pivots.dtype.name != "int32":
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type torch.int32")
    n = LU._array.shape[-1]
    if B._array.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 dimensions.")
    if (B._array.shape[-2] if left else B._array.shape[-1]) != n:
        eq = "AX = B" if left else "XA = B"
        shape = B._array.shape
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{eq} ({n}x{n} and {shape[-2]}x{shape[-1]})")
    if pivots._array.shape[-1:] != (n,):
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the "
                           "dimension of the matrix")


def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False, out=None):
    """X with A X = B (left), X A = B, or with A^H in place of A (adjoint), A = P L U given by
    `lu_factor`."""
    _check_lu_solve(LU, pivots, B, left)
    xp = xp_of(LU)
    if left:
        x = _lu_solve_arrays(xp, LU._array, pivots._array, B._array, adjoint)
    else:
        bh = xp.conj(xp.swapaxes(B._array, -1, -2))
        x = xp.conj(xp.swapaxes(_lu_solve_arrays(xp, LU._array, pivots._array, bh, not adjoint),
                                -1, -2))
    res = make_tensor(xp.ascontiguousarray(x), LU._device)
    node = record(LinalgLuSolveBackward0, (LU, pivots, B), res)
    if node is not None:
        node.left, node.adjoint = left, adjoint
        node.save_for_backward(LU, pivots, res)
    return write_out(out, res, "linalg_lu_solve") if out is not None else res


_LU_SOLVE_DEPRECATED = (
    "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in a "
    "future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments reversed.\n"
    "X = torch.lu_solve(B, LU, pivots)\nshould be replaced with\n"
    "X = torch.linalg.lu_solve(LU, pivots, B)")


def lu_solve(input, LU_data, LU_pivots, *, out=None):
    """`torch.lu_solve` (deprecated): `linalg.lu_solve` with its arguments reversed."""
    warn_once(_LU_SOLVE_DEPRECATED)
    res = linalg_lu_solve(LU_data, LU_pivots, input)
    return write_out(out, res, "lu_solve") if out is not None else res


# ---- solve_ex -------------------------------------------------------------------------------------
def solve_ex(A, B, *, left=True, check_errors=False, out=None):
    """(result, info) of `linalg.solve`: a singular A gives getrs's inf/nan and getrf's info
    rather than an error, unless `check_errors`."""
    try:
        res = solve(A, B, left=left)
        info = _const(xp_of(A).zeros(A._array.shape[:-2], np.int32), A)
    except _LinAlgError:
        LU, piv, info = _lu_factor(A, True, "linalg.solve_ex", "torch.lu_factor")
        if check_errors:
            b = _first_bad(_host_info(info))[0]
            raise _LinAlgError(f"torch.linalg.solve_ex: {_batch_prefix(b, A._array.ndim > 2)}The "
                               "solver failed because the input matrix is singular.") from None
        vector = B._array.ndim == 1 or (B._array.ndim == A._array.ndim - 1
                                        and B._array.shape == A._array.shape[:-1])
        res = linalg_lu_solve(LU, piv, B.unsqueeze(-1) if vector else B, left=left)
        res = res.squeeze(-1) if vector else res
    result = _solve_ex_type(res, info)
    return _write_tuple(out, result, "linalg_solve_ex") if out is not None else result
