"""Parametrizations built on `parametrize` (as torch.nn.utils.parametrizations): `orthogonal`,
`weight_norm` and `spectral_norm`."""
from enum import Enum, auto

from ... import ops as _ops
from ..._tensor import make_tensor, Tensor, xp_of
from ...autograd.grad_mode import no_grad
from ... import dtypes as _dt
from ...ops.decompositions import linalg_qr, solve as linalg_solve
from .. import functional as F
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize
from .weight_norm import _norm_except_dim, _weight_norm

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


# ---- orthogonal --------------------------------------------------------------------------------
def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    eye = _ops.eye(k, dtype=Q.dtype, device=Q.device)
    return _ops.allclose(Q.mH @ Q, eye, atol=10.0 * n * _dt.finfo(Q.dtype).eps)


def _make_orthogonal(A):
    """Q of A = QR (A tall) with diag(R) real and non-negative."""
    Q, R = linalg_qr(A)
    return Q * R.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


def _geqrf(A):
    """LAPACK's geqrf of a (batch of) matrix: R above the diagonal, the Householder vectors
    below it, and their scales tau (no autograd: used only under no_grad)."""
    xp = xp_of(A)
    h, tau = xp.linalg.qr(A._array, mode="raw")
    return (make_tensor(xp.ascontiguousarray(xp.swapaxes(h, -1, -2)), A._device),
            make_tensor(tau, A._device))


def _householder_product(A, tau):
    """The first k columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H, v_i being column i of A
    below the diagonal with a 1 on it; written with tensor ops, so it differentiates."""
    n, k = A.size(-2), A.size(-1)
    V = A.tril(-1) + _ops.eye(n, k, dtype=A.dtype, device=A.device)
    Q = _ops.eye(n, k, dtype=A.dtype, device=A.device).expand(*A.shape[:-2], n, k)
    for i in range(k - 1, -1, -1):
        v = V[..., :, i:i + 1]
        Q = Q - (tau[..., i:i + 1].unsqueeze(-1) * v) @ (v.mH @ Q)
    return Q


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:
                X = _ops.cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = _ops.matrix_exp(A)
            else:
                eye = _ops.eye(n, dtype=A.dtype, device=A.device)
                Q = linalg_solve(_ops.add(eye, A, alpha=-0.5), _ops.add(eye, A, alpha=0.5))
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = _householder_product(A, tau)
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    @no_grad()
    def right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError(f"Expected a matrix or batch of matrices of shape {self.shape}. "
                             f"Got a tensor of shape {Q.shape}.")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            # the Householder vectors of Q below the diagonal; the diagonal's signs say
            # which reflectors to keep (tau == 0 marks a reflector LAPACK skipped)
            A, tau = _geqrf(Q)
            diag = A.diagonal(dim1=-2, dim2=-1)
            diag.sign_()
            diag[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:
            N = _ops.randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(_ops.cat([Q, N], dim=-1))
        self.base = Q
        neg_eye = _ops.zeros_like(Q_init)
        neg_eye.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_eye


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Keep `module.<name>` (a matrix or a batch of them) orthogonal (unitary when complex):
    orthonormal columns when tall, rows when wide."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. "
                         f"Got a tensor of {weight.ndim} dimensions.")
    if orthogonal_map is None:
        square = weight.size(-2) == weight.size(-1)
        orthogonal_map = "matrix_exp" if square or weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", "householder". '
                         f"Got: {orthogonal_map}")
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


# ---- weight norm -------------------------------------------------------------------------------
class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return _norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """`module.<name>` = g * v / ||v|| (norm over every dim but `dim`; the whole tensor when
    None), with g in `parametrizations.<name>.original0` and v in `original1`."""
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs):
        # checkpoints of the hook-based weight_norm hold `<name>_g` / `<name>_v`
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)

    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


# ---- spectral norm -----------------------------------------------------------------------------
class _SpectralNorm(Module):
    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError("Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but "
                             f"got n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", F.normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", F.normalize(v, dim=0, eps=self.eps))
            # start from good estimates of the singular vectors rather than random ones
            self._power_method(weight_mat, 15)

    def _reshape_weight_to_matrix(self, weight):
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim()) if d != self.dim))
        return weight.flatten(1)

    @no_grad()
    def _power_method(self, weight_mat, n_power_iterations):
        for _ in range(n_power_iterations):
            self._u = F.normalize(_ops.mv(weight_mat, self._v), dim=0, eps=self.eps,
                                  out=self._u)
            self._v = F.normalize(_ops.mv(weight_mat.H, self._u), dim=0, eps=self.eps,
                                  out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return F.normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        u, v = self._u.clone(), self._v.clone()
        sigma = _ops.vdot(u, _ops.mv(weight_mat, v))
        return weight / sigma

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """`module.<name>` divided by its largest singular value, estimated by power iteration
    (one more step on every access in training mode); `dim` is the output dimension (1 for
    transposed convolutions by default, else 0)."""
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d, ConvTranspose3d)) else 0
    parametrize.register_parametrization(
        module, name, _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
