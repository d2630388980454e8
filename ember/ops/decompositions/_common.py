"""Helpers shared by the decompositions family's modules: `LinAlgError`, the argument
checks, LAPACK's `info` values recomputed where the backend gives none (`_lu_info`,
`_cholesky_info`) and the wording of PyTorch's batch errors, small tensor constructors and
`_write_tuple` (out= for ops that return named tuples).
"""
import numpy as np

from ..._tensor import make_tensor, xp_of
from .._graph import write_out

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
    flat = np.asarray(info).reshape(-1)
    bad = np.nonzero(flat)[0]
    return None if bad.size == 0 else (int(bad[0]), int(flat[bad[0]]))


def _host(arr):
    return arr.get() if hasattr(arr, "get") else np.asarray(arr)


def batched_solve(xp, a, b):
    """`xp.linalg.solve(a, b)` for b of shape (..., M, K), the batch dims broadcast first:
    NumPy broadcasts them, CuPy's solve wants them equal."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    if a.shape[:-2] != batch:
        a = xp.broadcast_to(a, batch + a.shape[-2:])
    if b.shape[:-2] != batch:
        b = xp.broadcast_to(b, batch + b.shape[-2:])
    return xp.linalg.solve(a, b)


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


def _write_tuple(out, result, fname):
    for o, r in zip(out, result):
        write_out(o, r, fname)
    return type(result)(*out)
