"""`svd_lowrank` and `pca_lowrank` (torch / torch.functional): Halko, Martinsson and Tropp's
randomized range finder, then an exact SVD of the small projected matrix.

The basis Q of A's range comes from A R (R a q-column Gaussian sketch from the global
generator) with `niter` subspace (power) iterations, each re-orthonormalized by QR; then
B = Q^H A is small and its SVD gives A ~ U diag(S) V^H with U = Q U_B. Tall-or-square inputs
are sketched directly, wide ones through A^H. Built from differentiable ops (matmul, QR, SVD),
so gradients flow as in PyTorch. Sparse inputs are densified first (the same numbers; PyTorch
keeps them sparse for memory).
"""
from .. import dtypes as _dt
from .decompositions.orthogonal import linalg_qr, linalg_svd
from .linalg import matmul
from .random_ops import randn

__all__ = ["svd_lowrank", "pca_lowrank"]
METHODS = ()


def _floating(A):
    return A.dtype if (A.dtype.is_floating_point or A.dtype.is_complex) else _dt.float32


def _dense(A):
    return A.to_dense() if getattr(A, "is_sparse", False) else A


def _approximate_basis(A, q, niter, M):
    niter = 2 if niter is None else niter
    R = randn(A.shape[-1], q, dtype=_floating(A), device=A.device)
    X = matmul(A, R)
    if M is not None:
        X = X - matmul(M, R)
    Q = linalg_qr(X).Q
    for _ in range(niter):
        X = matmul(A.mH, Q)
        if M is not None:
            X = X - matmul(M.mH, Q)
        Q = linalg_qr(X).Q
        X = matmul(A, Q)
        if M is not None:
            X = X - matmul(M, Q)
        Q = linalg_qr(X).Q
    return Q


def _svd_lowrank(A, q=6, niter=2, M=None):
    q = 6 if q is None else q
    A = _dense(A)
    m, n = A.shape[-2:]
    if M is not None:
        M = _dense(M).broadcast_to(A.shape)
    wide = m < n
    if wide:
        A = A.mH
        M = M.mH if M is not None else None
    Q = _approximate_basis(A, q, niter, M)
    B = matmul(Q.mH, A)
    if M is not None:
        B = B - matmul(Q.mH, M)
    U, S, Vh = linalg_svd(B, full_matrices=False)
    V = Vh.mH
    U = matmul(Q, U)
    return (V, S, U) if wide else (U, S, V)


def svd_lowrank(A, q=6, niter=2, M=None):
    """(U, S, V) with A - M ~ U diag(S) V^H, of rank q (`M` defaults to zero)."""
    return _svd_lowrank(A, q=q, niter=niter, M=M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """(U, S, V) of the rank-q SVD of A with its column means taken away (when `center`):
    the principal directions are the columns of V, the variances S**2 / (m - 1)."""
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not (q >= 0 and q <= min(m, n)):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if not center:
        return _svd_lowrank(A, q, niter=niter, M=None)
    if getattr(A, "is_sparse", False) and A.ndim != 2:
        raise ValueError("pca_lowrank input is expected to be 2-dimensional tensor")
    A = _dense(A)
    return _svd_lowrank(A - A.mean(dim=(-2,), keepdim=True), q, niter=niter, M=None)
