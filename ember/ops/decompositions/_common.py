"""Helpers shared by the decompositions family's modules: `LinAlgError`, the argument
checks, LAPACK's `info` values recomputed where the backend gives none (`_lu_info`,
`_cholesky_info`) and the wording of PyTorch's batch errors, small tensor constructors and
`_write_tuple` (out= for ops that return named tuples).
"""
import math

import numpy as np

from ..._meta.array import ndarray as MetaArray
from ..._meta.rules import host_stand_in
from ..._tensor import make_tensor, xp_of
from .._writes import write_out

# Notes the linalg docstrings share (`torch.linalg.common_notes`): the same keys as PyTorch's,
# in ember's words; sync_note_has_ex takes the name of the non-synchronizing variant.
common_notes = {
    "experimental_warning": 'This function is "experimental": it may change in a later release.',
    "sync_note": "On a CUDA device this function waits for the device (it synchronizes with "
                 "the CPU).",
    "sync_note_ex": "On a CUDA device this function synchronizes with the CPU only when "
                    ":attr:`check_errors`\\ `= True`.",
    "sync_note_has_ex": "On a CUDA device this function waits for the device (it synchronizes "
                        "with the CPU); :func:`{}` is the variant that does not.",
}


class _LinAlgError(RuntimeError):
    """Raised when a matrix is singular or not positive-definite (`torch.linalg.LinAlgError`)."""


LinAlgError = _LinAlgError


# ---- checks and small helpers ----------------------------------------------------------------
def _check(A, fname, square=True, floating=True):
    if A._array.ndim < 2:
        raise RuntimeError(f"{fname}: The input tensor A must have at least 2 dimensions.")
    if square and A._array.shape[-1] != A._array.shape[-2]:
        m, n = A._array.shape[-2:]
        raise RuntimeError(f"{fname}: A must be batches of square matrices, but they are {m} by "
                           f"{n} matrices")
    if floating and not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise RuntimeError(f"{fname}: Expected a floating point or complex tensor as input. "
                           f"Got {A.dtype._scalar_name}")


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
    if isinstance(info, MetaArray):  # no values, no failure: PyTorch's meta kernels check none
        return None
    flat = np.asarray(info).reshape(-1)
    bad = np.nonzero(flat)[0]
    return None if bad.size == 0 else (int(bad[0]), int(flat[bad[0]]))


def _host(arr):
    """A device array's values on the host, for LAPACK. A meta array has none: an identity
    of its shape answers for them (the results, back on meta, keep only their shapes)."""
    if isinstance(arr, MetaArray):
        return host_stand_in(arr)
    return arr.get() if hasattr(arr, "get") else np.asarray(arr)


def batched_solve(xp, a, b):
    """`xp.linalg.solve(a, b)` for b of shape (..., M, K), the batch dims broadcast first:
    NumPy broadcasts them, CuPy's solve wants them equal."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if a.shape[:-2] != batch:
        a = xp.broadcast_to(a, batch + a.shape[-2:])
    if b.shape[:-2] != batch:
        b = xp.broadcast_to(b, batch + b.shape[-2:])
    raise_if_singular(xp, a)
    return xp.linalg.solve(a, b)


def _lu_info(arr, xp=np):
    """LAPACK getrf's info per matrix: the 1-based index of the first zero pivot of an LU
    factorisation with partial pivoting, 0 when there is none. Computed with `xp` on the
    array's own device (one pass per column over the whole batch); a host array by default."""
    if xp is np:
        arr = _host(arr)
    a = arr.astype(np.complex128 if arr.dtype.kind == "c" else np.float64)
    a = a.reshape((math.prod(arr.shape[:-2]),) + arr.shape[-2:])  # sizes: 0 x 0 matrices too
    n = a.shape[-1]
    info = xp.zeros(a.shape[0], np.int32)
    batch = xp.arange(a.shape[0])
    for k in range(n):
        p = k + xp.abs(a[:, k:, k]).argmax(axis=1)
        pivot = a[batch, p, k]
        zero = pivot == 0  # then the whole column below is zero: nothing to eliminate
        info = xp.where((info == 0) & zero, k + 1, info)
        row_k = a[batch, k].copy()
        a[batch, k] = a[batch, p]
        a[batch, p] = row_k
        factors = a[:, k + 1:, k] / xp.where(zero, 1, pivot)[:, None]
        a[:, k + 1:, k + 1:] -= factors[:, :, None] * a[:, k, None, k + 1:]
    return info.reshape(arr.shape[:-2])


def raise_if_singular(xp, arr):
    """NumPy's LinAlgError for a singular (batch of) matrix: CuPy's inv and solve give
    numbers instead (its inv of [[1, 2, 3], [2, 4, 6], [1, 0, 1]] is finite). On a device this
    is one read, as PyTorch's CUDA inv and solve make one to check getrf's info."""
    if xp is not np and arr.size and bool((_lu_info(arr, xp) != 0).any()):
        raise np.linalg.LinAlgError("Singular matrix")


def _cholesky_info(arr):
    """LAPACK potrf's info per matrix: the order of the first leading minor that is not
    positive-definite, 0 when all are."""
    a = _host(arr)
    a = a.reshape((math.prod(a.shape[:-2]),) + a.shape[-2:])
    info = np.zeros(a.shape[0], np.int32)
    for b in range(a.shape[0]):
        for k in range(1, a.shape[-1] + 1):
            try:
                np.linalg.cholesky(a[b, :k, :k])
            except np.linalg.LinAlgError:
                info[b] = k
                break
    return info.reshape(arr.shape[:-2])


def _write_tuple(out, result, fname):
    for o, r in zip(out, result):
        write_out(o, r, fname)
    return type(result)(*out)
