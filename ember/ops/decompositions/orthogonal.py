"""The factorisations with orthogonal (unitary) factors: QR (`linalg.qr`, the deprecated `qr`),
the SVD (`linalg.svd`, `linalg.svdvals`, `svd`) and the symmetric (Hermitian)
eigendecomposition (`linalg.eigh`, `linalg.eigvalsh`), with their backward nodes. The general
eigendecomposition is in `eig.py`.
"""
from ..._tensor import make_tensor, xp_of
from .._graph import Node, record
from .._writes import write_out
from ..._state import warn_once
from ..reduction import return_type
from ._common import _check, _const, _eye, _write_tuple
from .solves import solve_triangular

# ---- QR ---------------------------------------------------------------------------------------------
_qr_types = {"linalg": return_type("linalg_qr", ("Q", "R")), "qr": return_type("qr", ("Q", "R"))}


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
    from ..shape import cat
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
    warn_once("torch.qr is deprecated in favor of torch.linalg.qr and will be removed in "
               "a future PyTorch release.\nThe boolean parameter 'some' has been replaced with a "
               "string parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\n"
               "Q, R = torch.linalg.qr(A, 'reduced' if some else 'complete')")
    res = _qr(input, "reduced" if some else "complete", "qr")
    return _write_tuple(out, res, "qr") if out is not None else res


# ---- SVD ---------------------------------------------------------------------------------------------
_svd_types = {"linalg": return_type("linalg_svd", ("U", "S", "Vh")),
              "svd": return_type("svd", ("U", "S", "V"))}


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
    from .._graph import needs_grad
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


# ---- symmetric eigendecomposition (general: `eig.py`) -----------------------------------------------
_eigh_type = return_type("linalg_eigh", ("eigenvalues", "eigenvectors"))


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


def eigh(input, UPLO="L", *, out=None):
    _check(input, "linalg.eigh")
    _check_uplo(UPLO)
    xp = xp_of(input)
    w, v = xp.linalg.eigh(input._array, UPLO=UPLO)
    real = input.dtype.to_real().np if input.dtype.is_complex else input._array.dtype
    L, V = make_tensor(w.astype(real, copy=False), input._device), make_tensor(v, input._device)
    node = record(LinalgEighBackward0, (input,), L, V)
    if node is not None:
        node._out_meta = tuple((t._array.shape, t.dtype, t._device) for t in (L, V))
        node.save_for_backward(L, V)
    res = _eigh_type(L, V)
    return _write_tuple(out, res, "linalg_eigh") if out is not None else res


def eigvalsh(input, UPLO="L", *, out=None):
    _check(input, "linalg.eigh")
    _check_uplo(UPLO)
    if _grad_wanted(input):
        res = eigh(input, UPLO).eigenvalues
    else:
        w = xp_of(input).linalg.eigvalsh(input._array, UPLO=UPLO)
        real = input.dtype.to_real().np if input.dtype.is_complex else input._array.dtype
        res = make_tensor(w.astype(real, copy=False), input._device)
    return write_out(out, res, "linalg_eigvalsh") if out is not None else res
