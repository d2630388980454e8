"""Linear solves: `linalg.solve` (a general square A, with PyTorch's singular-matrix and
shape errors) and `linalg.solve_triangular`, with their backward nodes.
"""
import math

import numpy as np

from ..._tensor import make_tensor, xp_of
from .._graph import Node, record
from .._writes import write_out
from ..._state import warn_once
from ..reduction import return_type
from ._common import (_LinAlgError, _batch_prefix, _check, _first_bad, _lu_info, _needs,
                      batched_solve)

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
                           f"of type {A.dtype._scalar_name} and B of type {B.dtype._scalar_name} instead")
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
        x = batched_solve(xp, A._array, b)
    except np.linalg.LinAlgError:
        info = _lu_info(A._array)
        bad = _first_bad(info)
        b_idx = bad[0] if bad is not None else 0
        raise _LinAlgError(f"torch.linalg.solve: {_batch_prefix(b_idx, A._array.ndim > 2)}The "
                           "solver failed because the input matrix is singular.") from None
    except ValueError:
        from ..pointwise import broadcast_error
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


def solve_triangular(input, B, *, upper, left=True, unitriangular=False, out=None):
    """X with A X = B (or X A = B) reading only A's upper or lower triangle."""
    _check(input, "linalg.solve_triangular")
    if not left:
        res = solve_triangular(input.mH, B.mH, upper=not upper, unitriangular=unitriangular).mH
        return write_out(out, res, "linalg_solve_triangular") if out is not None else res
    if input._array.dtype != B._array.dtype:
        raise RuntimeError(f"linalg.solve_triangular: Expected A and B to have the same dtype, "
                           f"but found A of type {input.dtype._scalar_name} and B of type {B.dtype._scalar_name} "
                           "instead")
    xp = xp_of(input)
    a = xp.triu(input._array) if upper else xp.tril(input._array)
    if unitriangular:
        n = a.shape[-1]
        a = a * (1 - xp.eye(n, dtype=a.dtype)) + xp.eye(n, dtype=a.dtype)
    with np.errstate(all="ignore"):
        try:
            x = batched_solve(xp, a, B._array)
        except np.linalg.LinAlgError:  # LAPACK's trtrs would give inf/nan: so do we
            x = xp.full(np.broadcast_shapes(a.shape[:-2], B._array.shape[:-2]) + B._array.shape[-2:],
                        xp.nan, dtype=a.dtype)
    res = make_tensor(x, input._device)
    node = record(LinalgSolveTriangularBackward0, (input, B), res)
    if node is not None:
        node.upper, node.unitriangular = upper, unitriangular
        node.save_for_backward(input, res)
    return write_out(out, res, "linalg_solve_triangular") if out is not None else res


_triangular_solve_type = return_type("triangular_solve", ("solution", "cloned_coefficient"))


# ---- the deprecated triangular_solve ---------------------------------------------------------
def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False, *, out=None):
    """(X, a copy of A) with op(A) X = b (b = `input`), op(A) being A or its transpose: the
    older form of `linalg.solve_triangular`, with its arguments the other way round."""
    b = input
    warn_once(  # PyTorch's TORCH_WARN_ONCE
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand will be "
        "removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its arguments "
        "reversed and does not return a copy of one of the inputs.\nX = torch.triangular_solve(B, "
        "A).solution\nshould be replaced with\nX = torch.linalg.solve_triangular(A, B).")
    if b.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected b to have at least 2 dimensions, but "
                           f"it has {b.dim()} dimensions instead")
    if A.dim() < 2:
        raise RuntimeError(f"torch.triangular_solve: Expected A to have at least 2 dimensions, but "
                           f"it has {A.dim()} dimensions instead")
    if b.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{b.dtype._scalar_name} and A of type {A.dtype._scalar_name} instead.")
    if A.shape[-1] != A.shape[-2] or A.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for triangular_solve: each A matrix is "
                           f"{A.shape[-2]} by {A.shape[-1]} but each b matrix is {b.shape[-2]} "
                           f"by {b.shape[-1]}")
    coefficient = A.mT if transpose else A
    solution = solve_triangular(coefficient, b, upper=upper != transpose,
                                unitriangular=unitriangular)
    batch = np.broadcast_shapes(tuple(A.shape[:-2]), tuple(b.shape[:-2]))
    result = (solution, A.expand(batch + tuple(A.shape[-2:])).clone())
    if out is not None:
        for o, r in zip(out, result):
            write_out(o, r, "triangular_solve")
        result = tuple(out)
    return _triangular_solve_type(*result)


# ---- tensor solve -----------------------------------------------------------------------------------
def tensorsolve(input, other, dims=None, *, out=None):
    """X with tensordot(A, X, X.ndim) = B: A's leading B.ndim dims (after `dims` are moved to
    the end) are B's shape, its remaining dims X's."""
    if dims is not None:
        dims = [d % input._array.ndim for d in dims]
        input = input.permute(*([d for d in range(input._array.ndim) if d not in dims] + dims))
    shape = tuple(input._array.shape)
    nb = other._array.ndim
    rows, cols = other._array.size, math.prod(shape[nb:])
    if rows != cols:  # (PyTorch's message names A's leading dims, its check B's size)
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[other.ndim:]) "
                           f"== prod(self.shape[:other.ndim]), but got {cols} != {rows}")
    res = solve(input.reshape(rows, cols), other.reshape(cols)).reshape(shape[nb:])
    return write_out(out, res, "linalg_tensorsolve") if out is not None else res
