"""The Cholesky factorisation (`linalg.cholesky_ex`, `linalg.cholesky`, the deprecated
`cholesky`) and what is computed from a Cholesky factor (`cholesky_solve`,
`cholesky_inverse`), with their backward nodes.
"""
import numpy as np

from ..._tensor import make_tensor, xp_of
from .._graph import Node, record
from .._writes import write_out
from ..._state import warn_once
from ..reduction import return_type
from ._common import (_LinAlgError, _batch_prefix, _check, _cholesky_info, _const, _first_bad,
                      _write_tuple, batched_solve)
from .solves import solve_triangular

# ---- Cholesky ---------------------------------------------------------------------------------------
_cholesky_ex_type = return_type("linalg_cholesky_ex", ("L", "info"))


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


def cholesky_ex(input, *, upper=False, check_errors=False, out=None):
    res = _cholesky_ex_type(*_cholesky(input, upper, "linalg.cholesky", check_errors,
                                       LinalgCholeskyExBackward0))
    return _write_tuple(out, res, "linalg_cholesky_ex") if out is not None else res


def linalg_cholesky(input, *, upper=False, out=None):
    res = _cholesky(input, upper, "linalg.cholesky", True, LinalgCholeskyExBackward0)[0]
    return write_out(out, res, "linalg_cholesky") if out is not None else res


def cholesky(input, upper=False, *, out=None):
    """`torch.cholesky` (deprecated in PyTorch for `torch.linalg.cholesky`)."""
    warn_once(_CHOLESKY_DEPRECATED)
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
            return batched_solve(xp, xp.conj(lo).swapaxes(-1, -2), batched_solve(xp, lo, b))
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
                           f"{B.dtype._scalar_name} and A of type {L.dtype._scalar_name} instead.")
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
        raise NotImplementedError(f'"{kernel}" not implemented for \'{L.dtype._scalar_name}\'')


def cholesky_solve(input, input2, upper=False, *, out=None):
    """X with A X = B given A's Cholesky factor."""
    _check_cholesky_solve(input, input2)
    xp = xp_of(input2)
    res = make_tensor(_cholesky_solve_arrays(xp, input._array, input2._array, upper), input2._device)
    node = record(CholeskySolveBackward0, (input, input2), res)
    if node is not None:
        node.upper = upper
        node.save_for_backward(input2, res)
    return write_out(out, res, "cholesky_solve") if out is not None else res


class CholeskyInverseBackward0(Node):
    """PyTorch's formula: with C = A^-1 (g + g^H) A^-1, gL = -C L (lower) or -L C (upper)."""

    def backward(self, grad):
        L, inverse = self.saved_tensors
        common = inverse @ (grad + grad.mH) @ inverse
        return -(L @ common) if self.upper else -(common @ L)


def cholesky_inverse(input, upper=False, *, out=None):
    """A^-1 given A's Cholesky factor."""
    _check_cholesky_dtype(input, "cholesky_inverse_out_cpu")
    _check(input, "cholesky_inverse", floating=False)
    xp = xp_of(input)
    eye = xp.broadcast_to(xp.eye(input._array.shape[-1], dtype=input._array.dtype), input._array.shape)
    res = make_tensor(_cholesky_solve_arrays(xp, eye, input._array, upper), input._device)
    node = record(CholeskyInverseBackward0, (input,), res)
    if node is not None:
        node.upper = upper
        node.save_for_backward(input, res)
    return write_out(out, res, "cholesky_inverse") if out is not None else res
