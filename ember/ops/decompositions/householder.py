"""Products of Householder reflectors: `linalg.householder_product` and its alias `orgqr`
(LAPACK's orgqr/ungqr: the first n columns of H_1 ... H_k, H_i = I - tau_i v_i v_i^H, v_i
column i of A below the diagonal with a 1 on it), with the backward node.

`geqrf` makes such reflectors (LAPACK's geqrf: R on and above the diagonal, the v_i below it)
and `ormqr` multiplies a matrix by their product Q without forming it in PyTorch (here it
is formed by householder_product, so ormqr's gradient is that product's and matmul's).

The forward applies the reflectors from the last to the first onto the m x n identity; the
backward replays those steps with ember ops and runs the adjoint of each (reflector
application is linear in the running product, bilinear in v and tau), so it is
differentiable again.
"""
from ..._tensor import make_tensor, xp_of
from ...return_types import return_type
from .._graph import Node, record
from .._writes import write_out
from ..shape import cat
from ._common import _write_tuple

__all__ = []
_geqrf_type = return_type("geqrf", ("a", "tau"))


class LinalgHouseholderProductBackward0(Node):
    def backward(self, grad):
        A, tau = self.saved_tensors
        m, n = A.shape[-2:]
        k = tau.shape[-1]
        if k == 0:  # Q = I whatever A: PyTorch gives no gradient at all
            return None, None
        V = _reflectors(A, k)
        # replay: X_k = I, X_i = X_{i+1} - tau_i v_i (v_i^H X_{i+1}); the result is X_0
        X = _eye_like(A, m, n)
        steps = []
        for i in range(k - 1, -1, -1):
            v, t = V[..., :, i:i + 1], tau[..., i:i + 1].unsqueeze(-1)
            w = v.mH @ X
            steps.append((X, v, t, w))
            X = X - t * (v @ w)
        G = grad
        g_tau, g_v = [None] * k, [None] * k
        for i, (X, v, t, w) in zip(range(k), reversed(steps)):
            g_tau[i] = -(v.mH @ G @ w.mH)[..., 0, :]
            gw = -(t.conj() * (v.mH @ G))
            g_v[i] = -(t.conj() * (G @ w.mH)) + X @ gw.mH
            G = G + v @ gw
        from ..shape import cat
        gA = cat(g_v, -1).tril(-1)
        if k < n:
            from ..spatial import pad
            gA = pad(gA, (0, n - k))
        return gA, cat(g_tau, -1)


def _reflectors(A, k):
    from ..ranges import eye
    m = A.shape[-2]
    return A[..., :, :k].tril(-1) + eye(m, k, dtype=A.dtype, device=A.device)


def _eye_like(A, m, n):
    from ..ranges import eye
    return eye(m, n, dtype=A.dtype, device=A.device)


def _check(A, tau):
    fname = "torch.linalg.householder_product"
    if A._array.ndim < 2:
        raise RuntimeError(f"{fname}: input must have at least 2 dimensions.")
    m, n = A._array.shape[-2:]
    if m < n:
        raise RuntimeError(f"{fname}: input.shape[-2] must be greater than or equal to "
                           "input.shape[-1]")
    if tau._array.shape[-1:] and tau._array.shape[-1] > n:
        raise RuntimeError(f"{fname}: input.shape[-1] must be greater than or equal to "
                           "tau.shape[-1]")
    if tau._array.ndim != A._array.ndim - 1:
        raise RuntimeError(f"{fname}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau._array.ndim} and input.ndim is equal to "
                           f"{A._array.ndim}")
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        raise NotImplementedError(f'"orgqr_cpu" not implemented for \'{A.dtype._scalar_name}\'')
    if tau.dtype != A.dtype:
        raise RuntimeError(f"{fname}: tau dtype {tau.dtype._scalar_name} does not match input dtype "
                           f"{A.dtype._scalar_name}")


def householder_product(input, tau, *, out=None):
    """Q (m x n) from the reflectors stored in A's columns below the diagonal and their
    scalings tau, as LAPACK's orgqr (ungqr for complex)."""
    _check(input, tau)
    xp = xp_of(input)
    a, t = input._array, tau._array
    m, n = a.shape[-2:]
    k = t.shape[-1]
    V = xp.tril(a[..., :, :k], -1) + xp.eye(m, k, dtype=a.dtype)
    X = xp.broadcast_to(xp.eye(m, n, dtype=a.dtype), a.shape[:-2] + (m, n))
    for i in range(k - 1, -1, -1):
        v = V[..., :, i:i + 1]
        X = X - t[..., i, None, None] * (v @ (xp.conj(xp.swapaxes(v, -1, -2)) @ X))
    res = make_tensor(xp.ascontiguousarray(X), input._device)
    node = record(LinalgHouseholderProductBackward0, (input, tau), res)
    if node is not None:
        node.save_for_backward(input, tau)
    return write_out(out, res, "linalg_householder_product") if out is not None else res


def orgqr(input, input2, *, out=None):
    """`torch.orgqr`: `linalg.householder_product`."""
    return householder_product(input, input2, out=out)


def geqrf(input, *, out=None):
    """LAPACK's geqrf: (a, tau) with R in a's upper triangle and the Householder vectors below
    it. PyTorch defines no derivative for it."""
    if input._array.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise NotImplementedError(f'"geqrf_cpu" not implemented for \'{input.dtype._scalar_name}\'')
    xp = xp_of(input)
    a = input._array
    m, n = a.shape[-2:]
    k = min(m, n)
    batch = a.shape[:-2]
    count = 1
    for size in batch:
        count *= size
    flat = a.reshape((count, m, n))
    out_a = xp.empty(flat.shape, a.dtype)
    out_tau = xp.empty((flat.shape[0], k), a.dtype)
    for b in range(flat.shape[0]):
        if m and n:
            # the backend's raw QR is LAPACK's geqrf, transposed (Fortran order)
            h, tau = xp.linalg.qr(flat[b], mode="raw")
            out_a[b], out_tau[b] = h.T, tau[:k]
        else:
            out_tau[b] = 0
    res = _geqrf_type(make_tensor(out_a.reshape(a.shape), input._device),
                      make_tensor(out_tau.reshape(batch + (k,)), input._device))
    return _write_tuple(out, res, "geqrf") if out is not None else res


def _check_ormqr(input, tau, other, left):
    fname = "torch.ormqr"
    for what, t in (("input", input), ("other", other)):
        if t._array.ndim < 2:
            raise RuntimeError(f"{fname}: {what} must have at least 2 dimensions.")
    side = -2 if left else -1
    if other.shape[side] != input.shape[-2]:
        raise RuntimeError(f"{fname}: other.shape[{side}] must be equal to input.shape[-2]")
    if tau.shape[-1] > min(other.shape[side], input.shape[-1]):
        raise RuntimeError(f"{fname}: tau.shape[-1] must be equal to min(other.shape[{side}], "
                           "input.shape[-1])")
    for what, t in (("tau", tau), ("other", other)):
        if t.dtype is not input.dtype:
            raise RuntimeError(f"{fname}: Expected input and {what} to have the same dtype, but "
                               f"input has dtype{input.dtype._scalar_name} and {what} has dtype "
                               f"{t.dtype._scalar_name}")


def ormqr(input, input2, input3, left=True, transpose=False, *, out=None):
    """Q @ other (left) or other @ Q, Q^H in place of Q with `transpose`, Q the product of the
    Householder reflectors stored in `input` and scaled by `input2` (tau), as from geqrf."""
    _check_ormqr(input, input2, input3, left)
    m, k = input.shape[-2:]
    if k >= m:
        square = input[..., :m]
    else:
        square = cat([input, input.new_zeros(tuple(input.shape[:-2]) + (m, m - k))], -1)
    q = householder_product(square, input2)
    if transpose:
        q = q.mH
    res = q.matmul(input3) if left else input3.matmul(q)
    return write_out(out, res, "ormqr") if out is not None else res
