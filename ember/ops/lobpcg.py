"""`torch.lobpcg`: the k extreme eigenpairs of a symmetric (generalized: A x = lambda B x)
eigenproblem by Knyazev's Locally Optimal Block Preconditioned Conjugate Gradient method.

Each step does a Rayleigh-Ritz projection onto the span S = [X, P, W] (the current
approximations, the previous search directions, the preconditioned residuals iK R) and keeps
the best n vectors; converged leading pairs are locked. Two variants, as PyTorch's:
"basic" (B-orthonormalizes S by a scaled Cholesky factor each step) and "ortho" (the default:
keeps S B-orthonormal by Stathopoulos and Wu's SVQB with repeated projections, after Duersch
et al.). A pair counts as converged when ||r|| / (||x|| (||A|| + |lambda| ||B||)) < tol.

When A requires grad the problem is symmetrized ((A + A^T) / 2) and the eigenpairs get
PyTorch's backward: the classical formula when all m pairs are returned, otherwise its
partial-eigenspace formula built on the characteristic polynomial of the found eigenvalues.
"""
from .. import dtypes as _dt
from .._tensor import Tensor
from ._graph import Node, grad_disabled, record
from .creation import ones, zeros
from .ranges import eye
from .decompositions.cholesky import cholesky_solve, linalg_cholesky
from .decompositions.orthogonal import eigh, linalg_qr
from .decompositions.solves import solve_triangular
from .pointwise import where
from .random_ops import randn
from .shape import stack

__all__ = ["lobpcg"]
METHODS = ()


def _mm(A, X):
    if A is None:
        return X
    if getattr(A, "is_sparse", False):
        A = A.to_dense()
    return A @ X


def _qform(A, S):
    """S^T A S (A = None: the identity)."""
    return S.mT @ _mm(A, S)


def _symeig(A, largest=False):
    E, Z = eigh(A, UPLO="U")
    return (E.flip(-1), Z.flip(-1)) if largest else (E, Z)


class _Solver:
    """One LOBPCG run on an (m, m) problem with an (m, n) start X."""

    def __init__(self, A, B, X, iK, iparams, fparams, bparams, method, tracker):
        self.A, self.B, self.iK = A, B, iK
        self.iparams, self.fparams, self.bparams = iparams, fparams, bparams
        self.method, self.tracker = method, tracker
        m, n = iparams["m"], iparams["n"]
        self.X = X
        self.E = zeros(n, dtype=X.dtype, device=X.device)
        self.R = zeros(m, n, dtype=X.dtype, device=X.device)
        self.S = zeros(m, 3 * n, dtype=X.dtype, device=X.device)
        self.tvars, self.ivars = {}, {"istep": 0}
        self.fvars, self.bvars = {"_": 0.0}, {"_": False}

    def __str__(self):
        fields = ("iparams", "fparams", "bparams", "ivars", "fvars", "bvars", "tvars", "A", "B",
                  "iK", "X", "E")
        return "LOBPCG:\n" + "".join(f"  {k}={getattr(self, k)}\n" for k in fields)

    def run(self):
        self.update()
        if self.tracker is not None:
            self.tracker(self)
        while not self.stop_iteration():
            self.update()
            if self.tracker is not None:
                self.tracker(self)

    def stop_iteration(self):
        return (self.bvars.get("force_stop", False) or self.ivars["iterations_left"] == 0
                or self.ivars["converged_count"] >= self.iparams["k"])

    def update(self):
        if self.ivars["istep"] == 0:
            x_norm = float(self.X.norm())
            self.fvars.update(X_norm=x_norm, A_norm=float(_mm(self.A, self.X).norm()) / x_norm,
                              B_norm=float(_mm(self.B, self.X).norm()) / x_norm)
            self.ivars.update(iterations_left=self.iparams["niter"], converged_count=0,
                              converged_end=0)
        (self._update_ortho if self.method == "ortho" else self._update_basic)()
        self.ivars["iterations_left"] -= 1
        self.ivars["istep"] += 1

    def update_residual(self):
        self.R = _mm(self.A, self.X) - _mm(self.B, self.X) * self.E

    def update_converged_count(self):
        previous = self.ivars["converged_count"]
        E, X, R = self.E, self.X, self.R
        rerr = R.norm(2, (0,)) / (X.norm(2, (0,)) * (self.fvars["A_norm"] + E[:X.shape[-1]].abs()
                                                     * self.fvars["B_norm"]))
        count = 0
        for ok in (rerr < self.fparams["tol"]).tolist():
            if not ok:
                break
            count += 1
        if count < previous:
            raise AssertionError(f"the number of converged eigenpairs (was {previous}, got "
                                 f"{count}) cannot decrease")
        self.ivars["converged_count"] = count
        self.tvars["rerr"] = rerr
        return count

    def _store(self, n, P, W):
        """S = [X, P, W]; converged_end marks its used columns."""
        np_ = 0 if P is None else P.shape[-1]
        self.S[:, :n] = self.X
        if P is not None:
            self.S[:, n:n + np_] = P
        end = self.ivars["converged_end"] = n + np_ + W.shape[-1]
        self.S[:, n + np_:end] = W

    def _update_basic(self):
        ns, nc = self.ivars["converged_end"], self.ivars["converged_count"]
        n, largest = self.iparams["n"], self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._rayleigh_ritz_transform(self.X)
            E, Z = _symeig(_qform(_qform(self.A, self.X), Ri), largest)
            self.X[:] = self.X @ (Ri @ Z)
            self.E[:] = E
            self.update_residual()
            self.update_converged_count()
            self._store(n, None, _mm(self.iK, self.R))
            return
        S_ = self.S[:, nc:ns]
        Ri = self._rayleigh_ritz_transform(S_)
        E_, Z = _symeig(_qform(_qform(self.A, S_), Ri), largest)
        self.X[:, nc:] = S_ @ (Ri @ Z[:, :n - nc])
        self.E[nc:] = E_[:n - nc]
        P = S_ @ (Ri @ Z[:, n:2 * n - nc])
        self.update_residual()
        nc = self.update_converged_count()
        self._store(n, P, _mm(self.iK, self.R[:, nc:]))

    def _update_ortho(self):
        ns, nc = self.ivars["converged_end"], self.ivars["converged_count"]
        n, largest = self.iparams["n"], self.bparams["largest"]
        if self.ivars["istep"] == 0:
            Ri = self._rayleigh_ritz_transform(self.X)
            _, Z = _symeig(_qform(_qform(self.A, self.X), Ri), largest)
            self.X = self.X @ (Ri @ Z)
            self.update_residual()
            self.update_converged_count()
            self.S[:, :n] = self.X
            self._store(n, None, self._ortho(self.R, self.X))
            return
        S_ = self.S[:, nc:ns]
        E_, Z = _symeig(_qform(self.A, S_), largest)
        self.X[:, nc:] = S_ @ Z[:, :n - nc]
        self.E[nc:] = E_[:n - nc]
        P = S_ @ (Z[:, n - nc:] @ linalg_qr(Z[:n - nc, n - nc:].mT).Q)
        self.update_residual()
        nc = self.update_converged_count()
        self.S[:, :n] = self.X
        self.S[:, n:n + P.shape[-1]] = P
        self._store(n, P, self._ortho(self.R[:, nc:], self.S[:, :n + P.shape[-1]]))

    def _rayleigh_ritz_transform(self, S):
        """Ri with Ri^T (S^T B S) Ri = I, from the Cholesky factor of the diagonally scaled
        S^T B S."""
        SBS = _qform(self.B, S)
        d_row = SBS.diagonal(0, -2, -1) ** -0.5
        d_col = d_row.reshape(d_row.shape[0], 1)
        R = linalg_cholesky(SBS * d_row * d_col, upper=True)
        return solve_triangular(R, d_row.diag_embed(), upper=True, left=False)

    def _svqb(self, U, drop, tau):
        """U B-orthonormalized by SVQB: the eigen-decomposition of the scaled U^T B U, its small
        eigenvalues dropped (`drop`) or raised to tau * max|E|."""
        if U.numel() == 0:
            return U
        UBU = _qform(self.B, U)
        d = UBU.diagonal(0, -2, -1)
        nonzero = (d.abs() != 0).nonzero()[:, 0]
        if nonzero.numel() < d.numel():
            U = U[:, nonzero]
            if U.numel() == 0:
                return U
            UBU = _qform(self.B, U)
            d = UBU.diagonal(0, -2, -1)
        d_col = (d ** -0.5).reshape(d.shape[0], 1)
        E, Z = _symeig(UBU * d_col * d_col.mT)
        t = tau * E.abs().max()
        if drop:
            keep = (E > t).nonzero()[:, 0]
            E, Z, d_col = E[keep], Z[:, keep], d_col[keep]
        else:
            E = E.clamp(min=float(t))
        return (U * d_col.mT) @ (Z * E ** -0.5)

    def _ortho(self, U, V):
        """U made B-orthonormal and B-orthogonal to V (V^T B V = I assumed)."""
        m = self.iparams["m"]
        tau_ortho, tau_drop = self.fparams["ortho_tol"], self.fparams["ortho_tol_drop"]
        tau_replace = self.fparams["ortho_tol_replace"]
        i_max, j_max = self.iparams["ortho_i_max"], self.iparams["ortho_j_max"]
        use_drop = self.bparams["ortho_use_drop"]
        for key in [k for k in self.fvars if k.startswith("ortho_") and k.endswith("_rerr")]:
            self.fvars.pop(key)
        self.ivars.pop("ortho_i", 0)
        self.ivars.pop("ortho_j", 0)
        BV_norm = _mm(self.B, V).norm()
        VBU = V.mT @ _mm(self.B, U)
        i = j = 0
        for i in range(i_max):
            U = U - V @ VBU
            drop, tau_svqb = False, tau_drop
            for j in range(j_max):
                if use_drop:
                    U = self._svqb(U, drop, tau_svqb)
                    drop, tau_svqb = True, tau_replace
                else:
                    U = self._svqb(U, False, tau_replace)
                if U.numel() == 0:
                    self.ivars.update(ortho_i=i, ortho_j=j)
                    return U
                BU = _mm(self.B, U)
                UBU = U.mT @ BU
                residual = UBU - eye(UBU.shape[-1], dtype=UBU.dtype, device=UBU.device)
                rerr = float(residual.norm()) / float(BU.norm() * U.norm())
                self.fvars[f"ortho_UBUmI_rerr[{i}, {j}]"] = rerr
                if rerr < tau_ortho:
                    break
            VBU = V.mT @ BU
            rerr = float(VBU.norm()) / float(BV_norm * U.norm())
            self.fvars[f"ortho_VBU_rerr[{i}]"] = rerr
            if rerr < tau_ortho:
                break
            if m < U.shape[-1] + V.shape[-1]:
                raise ValueError(f"Overdetermined shape of U: #B-cols(={self.B.shape[-1]}) >= "
                                 f"#U-cols(={U.shape[-1]}) + #V-cols(={V.shape[-1]}) must hold")
        self.ivars.update(ortho_i=i, ortho_j=j)
        return U


def _floating(A):
    return A.dtype if A.dtype in (_dt.float16, _dt.float32, _dt.float64) else _dt.float32


def _solve(A, k, B, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams,
           ortho_fparams, ortho_bparams):
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    dtype = _floating(A)
    if tol is None:
        tol = {_dt.float32: 1.2e-07, _dt.float64: 2.23e-16}[dtype] ** 0.5
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows (={m}) "
                         f"is smaller than 3 x the number of requested eigenpairs (={n})")
    method = "ortho" if method is None else method
    iparams = {"m": m, "n": n, "k": k, "niter": 1000 if niter is None else niter}
    fparams = {"tol": tol}
    bparams = {"largest": True if largest is None else largest}
    if method == "ortho":
        iparams.update(ortho_iparams or {})
        fparams.update(ortho_fparams or {})
        bparams.update(ortho_bparams or {})
        iparams.setdefault("ortho_i_max", 3)
        iparams.setdefault("ortho_j_max", 3)
        for key in ("ortho_tol", "ortho_tol_drop", "ortho_tol_replace"):
            fparams.setdefault(key, tol)
        bparams.setdefault("ortho_use_drop", False)

    def one(A_, B_, X_):
        X_ = randn(m, n, dtype=dtype, device=A.device) if X_ is None else X_
        if not (X_.ndim == 2 and tuple(X_.shape) == (m, n)):
            raise AssertionError(f"X shape mismatch: got {X_.shape}, expected {(m, n)}")
        solver = _Solver(A_, B_, X_.clone(), iK, iparams, fparams, bparams, method, tracker)
        solver.run()
        return solver.E[:k], solver.X[:, :k]

    if A.ndim == 2:
        return one(A, B, X)
    batch = tuple(A.shape[:-2])
    flat = A.reshape((-1,) + tuple(A.shape[-2:]))
    Es, Us = [], []
    for i in range(flat.shape[0]):
        iparams["batch_index"] = i
        E, U = one(flat[i], None if B is None else B.reshape(flat.shape)[i],
                   None if X is None else X.reshape((-1,) + tuple(X.shape[-2:]))[i])
        Es.append(E)
        Us.append(U)
    return stack(Es).reshape(batch + (k,)), stack(Us).reshape(batch + (m, k))


# ---- the backward: PyTorch's formulas for the eigenpairs of a symmetric matrix -------------------
def _complete_eigenspace_grad(D_grad, U_grad, D, U):
    F = D.unsqueeze(-2) - D.unsqueeze(-1)
    F = where(eye(F.shape[-1], dtype=_dt.bool, device=F.device), float("inf"), F)
    Ut = U.mT
    return U @ ((D_grad.diag_embed() + (Ut @ U_grad) * F.reciprocal()) @ Ut)


def _characteristic_coefficients(roots):
    """Coefficients (lowest power first) of prod_i (x - roots_i), over the last dimension."""
    order = roots.shape[-1]
    coeffs = [ones(roots.shape[:-1], dtype=roots.dtype, device=roots.device)]
    for i in range(order):
        r = roots[..., i]
        shifted = [zeros(roots.shape[:-1], dtype=roots.dtype, device=roots.device)] + coeffs
        coeffs = [shifted[j] - r * (coeffs[j] if j < len(coeffs) else 0)
                  for j in range(len(shifted))]
    return stack(coeffs, -1)


def _partial_eigenspace_grad(D_grad, U_grad, A, D, U, largest):
    m = A.shape[-1]
    Ut = U.mT
    projector = eye(m, dtype=A.dtype, device=A.device) - U @ Ut
    U_ortho = projector @ randn(*A.shape[:-1], m - D.shape[-1], dtype=A.dtype, device=A.device)
    coeffs = _characteristic_coefficients(D)        # c_0 + c_1 x + ... + c_k x^k
    k = coeffs.shape[-1] - 1
    # sum_j U_grad A^(j-1)-projected times the polynomial tails evaluated at D
    series = zeros(U_grad.shape, dtype=U_grad.dtype, device=U_grad.device)
    projected = U_grad
    for j in range(1, k + 1):
        # the tail c_j + c_(j+1) x + ... + c_k x^(k-j) of the polynomial, at each eigenvalue
        tail = coeffs[..., k].unsqueeze(-1)
        for c in range(k - 1, j - 1, -1):
            tail = tail * D + coeffs[..., c].unsqueeze(-1)
        series = series + projected * tail.unsqueeze(-2)
        projected = A @ projected
    poly_at_A = coeffs[..., k].unsqueeze(-1).unsqueeze(-1) * eye(m, dtype=A.dtype, device=A.device)
    for c in range(k - 1, -1, -1):
        poly_at_A = A @ poly_at_A + coeffs[..., c].unsqueeze(-1).unsqueeze(-1) * eye(
            m, dtype=A.dtype, device=A.device)
    reduced = U_ortho.mT @ (poly_at_A @ U_ortho)
    sign = -1 if largest and k % 2 == 1 else 1
    L = linalg_cholesky(sign * reduced)
    correction = U_ortho @ (sign * cholesky_solve(U_ortho.mT @ series, L)) @ Ut
    return _complete_eigenspace_grad(D_grad, U_grad, D, U) - correction


class LOBPCGAutogradFunctionBackward(Node):
    def backward(self, D_grad, U_grad):
        A, D, U = self.saved_tensors
        if A.dtype.is_complex:
            raise ValueError("lobpcg.backward does not support complex input yet. Note that "
                             "lobpcg.forward does though.")
        if self.has_B:
            raise ValueError("lobpcg.backward does not support backward with B != I yet.")
        largest = True if self.largest is None else self.largest
        if U.shape[-1] == U.shape[-2]:
            grad = _complete_eigenspace_grad(D_grad, U_grad, D, U)
        else:
            grad = _partial_eigenspace_grad(D_grad, U_grad, A, D, U, largest)
        return grad if len(self._next) == 1 else (grad, None)


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """(E, X): the k largest (or smallest, `largest=False`) eigenvalues of A x = lambda B x
    (B = I by default) and their eigenvectors as columns, by LOBPCG; `X` (m, n) starts the
    iteration (random by default), `iK` is a preconditioner, `tracker(solver)` is called after
    every step."""
    args = (k, X, n, iK, niter, tol, largest, method, tracker, ortho_iparams, ortho_fparams,
            ortho_bparams)
    needs_grad = A.requires_grad or (B is not None and B.requires_grad)
    if not needs_grad:
        return _solve(A, args[0], B, *args[1:])
    A_sym = (A + A.mT) / 2
    B_sym = (B + B.mT) / 2 if B is not None else None
    with grad_disabled():
        D, U = _solve(A_sym.detach(), args[0], None if B_sym is None else B_sym.detach(),
                      *args[1:])
    inputs = (A_sym,) if B_sym is None else (A_sym, B_sym)
    node = record(LOBPCGAutogradFunctionBackward, inputs, D, U)
    if node is not None:
        node._out_meta = tuple((t.shape, t.dtype, t.device) for t in (D, U))
        node.largest, node.has_B = largest, B is not None
        node.save_for_backward(A_sym.detach(), D.detach(), U.detach())
    return D, U
