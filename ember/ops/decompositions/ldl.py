"""`linalg.ldl_factor(_ex)` and `linalg.ldl_solve`: the LDL^T (or LDL^H) factorization of a
symmetric or Hermitian, possibly indefinite, matrix in LAPACK's compact form, and solves with it.

NumPy has no LDL, so `_sytf2` computes LAPACK's lower ?sytf2 / ?hetf2: Bunch and Kaufman's
diagonal pivoting, where each step takes a 1x1 pivot or, when no diagonal entry is large
enough, a 2x2 block (alpha = (1 + sqrt(17)) / 8 decides), and records the interchanges in
1-based int32 pivots (negative for the two columns of a 2x2 block). LD holds L below the
diagonal and D on it (and on the subdiagonal of its 2x2 blocks); its strict upper triangle is
zero, as PyTorch returns it. Like PyTorch, neither op has a derivative.
"""
import math

import numpy as np

from ..._tensor import Tensor, make_tensor, xp_of
from .._graph import Node, record
from .._writes import write_out
from ..reduction import return_type
from ._common import _batch_prefix, _check, _const, _first_bad, _host, _write_tuple

__all__ = ["ldl_factor", "ldl_factor_ex", "ldl_solve"]

_ldl_factor_type = return_type("linalg_ldl_factor", ("LD", "pivots"))
_ldl_factor_ex_type = return_type("linalg_ldl_factor_ex", ("LD", "pivots", "info"))
_ALPHA = (1.0 + math.sqrt(17.0)) / 8.0


def _magnitude(v):
    """LAPACK's i?amax measure: |re| + |im| (|x| for real numbers)."""
    return np.abs(v.real) + np.abs(v.imag) if np.iscomplexobj(v) else np.abs(v)


def _first_max(v):
    """(index, value) of the first largest magnitude of `v`, as i?amax picks it."""
    mag = _magnitude(v)
    i = int(np.argmax(mag))
    return i, float(mag[i])


def _sytf2(a, hermitian):
    """Factor one (n, n) matrix in place (its lower triangle is read); returns (pivots, info)."""
    n = a.shape[0]
    conj = np.conj if hermitian and np.iscomplexobj(a) else (lambda v: v)
    piv = np.zeros(n, np.int32)
    info = 0
    k = 0
    while k < n:
        kstep = 1
        absakk = abs(a[k, k].real) if hermitian else float(_magnitude(a[k, k]))
        imax, colmax = k, 0.0
        if k + 1 < n:
            imax, colmax = _first_max(a[k + 1:, k])
            imax += k + 1
        if max(absakk, colmax) == 0.0 or math.isnan(absakk):
            info = info or k + 1   # a zero (or NaN) column: no elimination, go on
            kp = k
            if hermitian:
                a[k, k] = a[k, k].real
        else:
            if absakk >= _ALPHA * colmax:
                kp = k
            else:
                # the largest off-diagonal entry in row (and column) imax
                rowmax = _first_max(a[imax, k:imax])[1]
                if imax + 1 < n:
                    rowmax = max(rowmax, _first_max(a[imax + 1:, imax])[1])
                diag_imax = abs(a[imax, imax].real) if hermitian else float(_magnitude(a[imax, imax]))
                if absakk >= _ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif diag_imax >= _ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            kk = k + kstep - 1
            if kp != kk:
                _interchange(a, k, kk, kp, kstep, conj, hermitian)
            elif hermitian:
                a[k, k] = a[k, k].real
                if kstep == 2:
                    a[k + 1, k + 1] = a[k + 1, k + 1].real
            if kstep == 1:
                _eliminate_1x1(a, k, conj, hermitian)
            else:
                _eliminate_2x2(a, k, conj, hermitian)
        if kstep == 1:
            piv[k] = kp + 1
        else:
            piv[k] = piv[k + 1] = -(kp + 1)
        k += kstep
    return piv, info


def _interchange(a, k, kk, kp, kstep, conj, hermitian):
    """Swap rows and columns kk and kp of the trailing lower triangle."""
    if kp + 1 < a.shape[0]:
        a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
    between = a[kk + 1:kp, kk].copy()
    a[kk + 1:kp, kk] = conj(a[kp, kk + 1:kp])
    a[kp, kk + 1:kp] = conj(between)
    if hermitian:
        a[kp, kk] = conj(a[kp, kk])
    a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
    if hermitian:
        a[kk, kk], a[kp, kp] = a[kk, kk].real, a[kp, kp].real
    if kstep == 2:
        if hermitian:
            a[k, k] = a[k, k].real
        a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]


def _eliminate_1x1(a, k, conj, hermitian):
    if k + 1 >= a.shape[0]:
        return
    d11 = 1.0 / (a[k, k].real if hermitian else a[k, k])
    x = a[k + 1:, k].copy()
    # the rank-one update of the trailing lower triangle (?syr / ?her)
    a[k + 1:, k + 1:] -= np.tril(d11 * np.outer(x, conj(x)))
    if hermitian:
        idx = np.arange(k + 1, a.shape[0])
        a[idx, idx] = a[idx, idx].real
    a[k + 1:, k] = x * d11


def _eliminate_2x2(a, k, conj, hermitian):
    n = a.shape[0]
    if k + 2 >= n:
        return
    if hermitian:
        d = abs(a[k + 1, k])
        d11 = a[k + 1, k + 1].real / d
        d22 = a[k, k].real / d
        tt = 1.0 / (d11 * d22 - 1.0)
        d21 = a[k + 1, k] / d
        d = tt / d
        col_k, col_k1 = a[k + 2:, k].copy(), a[k + 2:, k + 1].copy()
        wk = d * (d11 * col_k - d21 * col_k1)
        wkp1 = d * (d22 * col_k1 - np.conj(d21) * col_k)
    else:
        d21 = a[k + 1, k]
        d11 = a[k + 1, k + 1] / d21
        d22 = a[k, k] / d21
        t = 1.0 / (d11 * d22 - 1.0)
        d21 = t / d21
        col_k, col_k1 = a[k + 2:, k].copy(), a[k + 2:, k + 1].copy()
        wk = d21 * (d11 * col_k - col_k1)
        wkp1 = d21 * (d22 * col_k1 - col_k)
    a[k + 2:, k + 2:] -= np.tril(np.outer(col_k, conj(wk)) + np.outer(col_k1, conj(wkp1)))
    if hermitian:
        idx = np.arange(k + 2, n)
        a[idx, idx] = a[idx, idx].real
    a[k + 2:, k] = wk
    a[k + 2:, k + 1] = wkp1


def _sytrs(ld, piv, b, hermitian):
    """Solve A X = B in place on `b` (n, m) from one factor (LAPACK's lower ?sytrs / ?hetrs)."""
    n = ld.shape[0]
    herm = hermitian and np.iscomplexobj(ld)
    conj = np.conj if herm else (lambda v: v)
    k = 0
    while k < n:   # L D Y = P^T B
        if piv[k] > 0:
            kp = piv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            b[k + 1:] -= np.outer(ld[k + 1:, k], b[k])
            b[k] /= ld[k, k].real if herm else ld[k, k]
            k += 1
        else:
            kp = -piv[k] - 1
            if kp != k + 1:
                b[[k + 1, kp]] = b[[kp, k + 1]]
            b[k + 2:] -= np.outer(ld[k + 2:, k], b[k]) + np.outer(ld[k + 2:, k + 1], b[k + 1])
            akm1k = ld[k + 1, k]
            akm1 = ld[k, k] / conj(akm1k)
            ak = ld[k + 1, k + 1] / akm1k
            denom = akm1 * ak - 1.0
            bkm1, bk = b[k] / conj(akm1k), b[k + 1] / akm1k
            b[k], b[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
            k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y (L^H when Hermitian), undoing the interchanges
        if piv[k] > 0:
            b[k] -= conj(ld[k + 1:, k]) @ b[k + 1:]
            kp = piv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 1
        else:
            b[k] -= conj(ld[k + 1:, k]) @ b[k + 1:]
            b[k - 1] -= conj(ld[k + 1:, k - 1]) @ b[k + 1:]
            kp = -piv[k] - 1
            if kp != k:
                b[[k, kp]] = b[[kp, k]]
            k -= 2
    return b


def _not_implemented(op):
    def backward(self, *grads):
        raise RuntimeError(f"derivative for aten::{op} is not implemented")
    return type("NotImplemented", (Node,), {"backward": backward, "_materialize_grads": False})


_LdlFactorNotImplemented = _not_implemented("linalg_ldl_factor_ex")
_LdlSolveNotImplemented = _not_implemented("linalg_ldl_solve")


def _factor(A, hermitian, fname):
    _check(A, fname)
    if A.dtype.np in (np.dtype(np.float16),) or A.dtype._scalar_name == "BFloat16":
        raise NotImplementedError(
            f'"ldl_factor_kernel_cpu" not implemented for \'{A.dtype._scalar_name}\'')
    arr = _host(A._array)
    batch, n = arr.shape[:-2], arr.shape[-1]
    mats = arr.reshape((math.prod(batch), n, n)).copy()
    piv = np.zeros((mats.shape[0], n), np.int32)
    info = np.zeros(mats.shape[0], np.int32)
    for i, m in enumerate(mats):
        piv[i], info[i] = _sytf2(m, hermitian)
        mats[i] = np.tril(m)
    xp = xp_of(A)
    LD = make_tensor(xp.asarray(mats.reshape(arr.shape)), A._device)
    pivots = _const(xp.asarray(piv.reshape(batch + (n,))), A)
    info_t = _const(xp.asarray(info.reshape(batch)), A)
    record(_LdlFactorNotImplemented, (A,), LD, None, None)
    return LD, pivots, info_t, info


def ldl_factor_ex(input, *, hermitian=False, check_errors=False, out=None):
    """(LD, pivots, info): the compact LDL factorization of LAPACK's ?sytrf (lower); `info`
    is the 1-based index of the first zero block of D (0 when there is none)."""
    LD, pivots, info_t, info = _factor(input, hermitian, "torch.linalg.ldl_factor_ex")
    if check_errors:
        _raise_singular(info, input._array.ndim > 2, "torch.linalg.ldl_factor_ex")
    res = _ldl_factor_ex_type(LD, pivots, info_t)
    return _write_tuple(out, res, "linalg_ldl_factor_ex") if out is not None else res


def ldl_factor(input, *, hermitian=False, out=None):
    """(LD, pivots) of the LDL factorization; raises when D is singular."""
    LD, pivots, _, info = _factor(input, hermitian, "torch.linalg.ldl_factor_ex")
    _raise_singular(info, input._array.ndim > 2, "torch.linalg.ldl_factor")
    res = _ldl_factor_type(LD, pivots)
    return _write_tuple(out, res, "linalg_ldl_factor") if out is not None else res


def _raise_singular(info, batched, fname):
    bad = _first_bad(info)
    if bad is not None:
        b, k = bad
        # PyTorch reaches an internal assert here ("Unknown error code"); this says what it is
        raise RuntimeError(f"{fname}: {_batch_prefix(b, batched)}The factorization could not be "
                           f"completed because the input is singular: D[{k},{k}] is zero "
                           f"(info = {k}).")


def ldl_solve(LD, pivots, B, *, hermitian=False, out=None):
    """X with A X = B, from `LD` and `pivots` of `ldl_factor(_ex)` (batches broadcast)."""
    fname = "torch.linalg.ldl_solve"
    _check(LD, fname)
    n = LD._array.shape[-1]
    if B._array.ndim < 2:
        raise IndexError(f"Dimension out of range (expected to be in range of [-1, 0], but got "
                         f"-2)")
    if B._array.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {fname}: each A matrix is {n} by {n} "
                           f"but each b matrix is {B._array.shape[-2]} by {B._array.shape[-1]}")
    if tuple(pivots._array.shape) != tuple(LD._array.shape[:-1]):
        raise RuntimeError(f"{fname}: Expected LD.shape[:-1] and pivots.shape to be the same, "
                           f"but got pivots with shape {list(pivots._array.shape)} instead")
    if B.dtype is not LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{B.dtype._scalar_name} and A of type {LD.dtype._scalar_name} instead.")
    ld, piv, b = _host(LD._array), _host(pivots._array), _host(B._array)
    batch = np.broadcast_shapes(ld.shape[:-2], b.shape[:-2])
    count = math.prod(batch)
    ld = np.broadcast_to(ld, batch + ld.shape[-2:]).reshape((count, n, n))
    piv = np.broadcast_to(piv, batch + (n,)).reshape((count, n))
    x = np.array(np.broadcast_to(b, batch + b.shape[-2:]).reshape((count,) + b.shape[-2:]))
    for i in range(x.shape[0]):
        _sytrs(ld[i], piv[i], x[i], hermitian)
    res = make_tensor(xp_of(LD).asarray(x.reshape(batch + b.shape[-2:])), LD._device)
    inputs = tuple(t for t in (LD, B) if isinstance(t, Tensor))
    record(_LdlSolveNotImplemented, inputs, res)
    if out is not None:
        return write_out(out, res, "linalg_ldl_solve")
    return res
