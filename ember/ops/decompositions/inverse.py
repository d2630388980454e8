"""The inverse (`linalg.inv_ex`, `linalg.inv`, `inverse`) and determinants (`linalg.det`,
`slogdet` / `linalg.slogdet`, `logdet`), with their backward nodes.
"""
import math

import numpy as np

from ..._tensor import make_tensor, xp_of
from .._graph import Node, record
from .._writes import write_out
from ..pointwise import where
from ..shape import ReshapeAliasBackward0, ViewBackward0
from ..reduction import return_type
from ._common import (_LinAlgError, _batch_prefix, _check, _const, _first_bad, _host, _lu_info,
                      _mat, _write_tuple, raise_if_singular)

# ---- inverse ----------------------------------------------------------------------------------
_inv_ex_type = return_type("linalg_inv_ex", ("inverse", "info"))


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
        raise_if_singular(xp, arr)
        inv = xp.linalg.inv(arr)
        info = np.zeros(arr.shape[:-2], np.int32)
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


# ---- determinants ---------------------------------------------------------------------------------
class LinalgDetBackward0(Node):
    """d det(A) / dA is the adjugate's transpose: det(A) A^-T where A is invertible, and
    through an SVD where any matrix of the batch is singular: its adjugate exists where its
    inverse does not. (PyTorch's first-order backward gives 0 for an exactly singular A, from
    det(A) = 0 times a nudged inverse, and its source calls the adjugate the proper form; a
    matrix of rank n - 1 has a nonzero one, [[4, -2], [-2, 1]] for [[1, 2], [2, 4]].)"""

    def backward(self, grad):
        A, d = self.saved_tensors
        inv_a, info = inv_ex(A)
        if _first_bad(_host(info._array)) is None:  # on a device, one read (as inv's check)
            return _mat(grad * d.conj()) * inv_a.mH
        return _mat(grad) * _adjugate(A).mH


def _adjugate(A):
    """adj(A) from A = U diag(s) V^H: det(U) det(V^H) V diag(prod of the other s) U^H."""
    from ..cumulative import cumprod
    from ..rearrange import flip
    from ..shape import cat
    from .orthogonal import linalg_svd
    u, s, vh = linalg_svd(A)
    one = s[..., :1] * 0 + 1
    before = cat([one, cumprod(s[..., :-1], -1)], -1)  # s_0 ... s_(i-1)
    after = flip(cat([one, cumprod(flip(s, (-1,))[..., :-1], -1)], -1), (-1,))
    others = (before * after).to(A.dtype)
    phase = (linalg_det(u) * linalg_det(vh)).unsqueeze(-1).unsqueeze(-1)
    return phase * ((vh.mH * others.unsqueeze(-2)) @ u.mH)


def det(input):
    """`torch.det` (`linalg.det` names its operand A)."""
    return linalg_det(input)


def linalg_det(A, *, out=None):
    _check(A, "linalg.det")
    res = make_tensor(xp_of(A).asarray(xp_of(A).linalg.det(A._array)), A._device)
    node = record(LinalgDetBackward0, (A,), res)
    if node is not None:
        node.save_for_backward(A, res)
    return write_out(out, res, "linalg_det") if out is not None else res


_slogdet_types = {"linalg.slogdet": return_type("linalg_slogdet", ("sign", "logabsdet")),
                  "slogdet": return_type("slogdet", ("sign", "logabsdet"))}


class LinalgSlogdetBackward0(Node):
    _materialize_grads = False

    def backward(self, g_sign, g_logabsdet):
        (A,) = self.saved_tensors
        if g_logabsdet is None:
            return None
        # a singular A (log|det| = -inf) gets a non-finite gradient, as in PyTorch, not an error
        return _mat(g_logabsdet) * inv_ex(A).inverse.mH


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


def slogdet(input, *, out=None):
    """`torch.slogdet` / `torch.linalg.slogdet`: (sign, log|det|)."""
    res = _slogdet(input, "slogdet")
    return _write_tuple(out, res, "slogdet") if out is not None else res


def linalg_slogdet(A, *, out=None):
    res = _slogdet(A, "linalg.slogdet")
    return _write_tuple(out, res, "linalg_slogdet") if out is not None else res


def logdet(input):
    """log det: nan for a negative determinant, -inf for a singular matrix."""
    _check(input, "linalg.slogdet")
    sign, lad = _slogdet(input, "slogdet")
    return where(sign < 0, math.nan, lad)


# ---- tensor inverse ---------------------------------------------------------------------------------
def tensorinv(input, ind=2, *, out=None):
    """The inverse of A read as a map from its last dims to its first `ind` dims: shape
    A.shape[ind:] + A.shape[:ind]."""
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    shape = tuple(input._array.shape)
    rows, cols = math.prod(shape[:ind]), math.prod(shape[ind:])
    if rows != cols:
        raise RuntimeError("Expected self to satisfy the requirement prod(self.shape[ind:]) == "
                           f"prod(self.shape[:ind]), but got {cols} != {rows}")
    try:
        res = inv(input.reshape(rows, rows))
    except _LinAlgError as e:
        raise _LinAlgError(str(e).replace("linalg.inv: ", "inv: ", 1)) from None
    res = res.reshape(shape[ind:] + shape[:ind])
    if res.grad_fn is not None and type(res.grad_fn) is ViewBackward0:
        res.grad_fn.__class__ = ReshapeAliasBackward0  # PyTorch's name for this reshape
    return write_out(out, res, "linalg_tensorinv") if out is not None else res
