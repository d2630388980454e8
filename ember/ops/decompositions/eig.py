"""The eigendecomposition of a general square matrix (`linalg.eig`, `linalg.eigvals`) and its
derivative.

A V = V diag(L) with complex L and V, each eigenvector of unit norm. Differentiating gives
V^-1 dA V = C diag(L) - diag(L) C + diag(dL) with dV = V C: dL is the diagonal of
P = V^-1 dA V and C's off-diagonal part is P_ij / (L_j - L_i). C's diagonal keeps the norms
at one (its real part) and is otherwise a free phase: a loss that depends on the phase of an
eigenvector has no derivative, and the backward says so, as PyTorch's does. The adjoint is

    gA = V^-H (diag(gL) + H / conj(E)) V^H,
    H = V^H gV - V^H V diag(Re diag(V^H gV)),  E_ij = L_j - L_i (1 on the diagonal),

written with ember ops, so it is differentiable again.
"""
import numpy as np

from ..._tensor import make_tensor, xp_of
from ...device import _BACKENDS
from .._graph import Node, record
from .._writes import write_out
from ..reduction import return_type
from ._common import _check, _eye, _host, _write_tuple
from .solves import solve

_eig_type = return_type("linalg_eig", ("eigenvalues", "eigenvectors"))

_PHASE_ERROR = ("linalg_eig_backward: The eigenvectors in the complex case are specified up to "
                "multiplication by e^{i phi}. The specified loss function depends on this "
                "quantity, so it is ill-defined.")


class RealBackward0(Node):
    def backward(self, grad):
        return grad.to(self.complex_dtype)


def _real(z):
    """The real part of a complex tensor as a real tensor (a real matrix's gradient)."""
    out = make_tensor(xp_of(z).ascontiguousarray(z._array.real), z._device)
    node = record(RealBackward0, (z,), out)
    if node is not None:
        node.complex_dtype = z.dtype
    return out


def _re(z):
    """Re z, kept complex, differentiably."""
    return (z + z.conj()) * 0.5


class LinalgEigBackward0(Node):
    _materialize_grads = False

    def backward(self, gL, gV):
        L, V = self.saved_tensors
        if gL is None and gV is None:
            return None
        Vh = V.mH
        if gV is None:
            Q = gL.diag_embed()
        else:
            G = Vh @ gV
            phase = _host(G._array.diagonal(0, -2, -1).imag)
            if not (np.abs(phase) <= 1e-2).all():  # PyTorch's tolerance
                raise RuntimeError(_PHASE_ERROR)
            k = L.shape[-1]
            eye = _eye(k, L)
            # E's diagonal is 1: H's diagonal (i Im diag(G), zero for a loss that passed the
            # check above up to its tolerance) stays, as in PyTorch
            E = L.unsqueeze(-2) - L.unsqueeze(-1) + eye
            H = G - (Vh @ V) * _re(G.diagonal(0, -2, -1)).unsqueeze(-2)
            Q = H / E.conj()
            if gL is not None:
                Q = Q + gL.diag_embed()
        gA = solve(Vh, Q @ Vh)
        return _real(gA) if not self.complex_input else gA


def _complex_of(A):
    return np.complex128 if A._array.dtype in (np.float64, np.complex128) else np.complex64


def eig(input, *, out=None):
    """Eigenvalues and eigenvectors of a general matrix (complex, as PyTorch gives them)."""
    if not (input.dtype.is_floating_point or input.dtype.is_complex):  # checked before the shape
        raise RuntimeError(f"Unknown Complex ScalarType for {input.dtype._scalar_name}")
    _check(input, "linalg.eig")
    w, v = np.linalg.eig(_host(input._array))  # LAPACK's geev, on the host as PyTorch's CUDA path
    c = _complex_of(input)
    w, v = w.astype(c), v.astype(c)
    if input._device.type != "cpu":
        back = _BACKENDS[input._device.type]
        w, v = back.from_host(w, input._device.index), back.from_host(v, input._device.index)
    W, Vt = make_tensor(w, input._device), make_tensor(v, input._device)
    node = record(LinalgEigBackward0, (input,), W, Vt)
    if node is not None:
        node._out_meta = tuple((t._array.shape, t.dtype, t._device) for t in (W, Vt))
        node.save_for_backward(W, Vt)
        node.complex_input = input.dtype.is_complex
    res = _eig_type(W, Vt)
    return _write_tuple(out, res, "linalg_eig") if out is not None else res


def eigvals(input, *, out=None):
    res = eig(input).eigenvalues
    return write_out(out, res, "linalg_eigvals") if out is not None else res
