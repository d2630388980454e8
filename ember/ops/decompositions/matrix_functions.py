"""Functions of a square matrix: `linalg.matrix_power` (repeated squaring) and
`linalg.matrix_exp` (scaling and squaring), with their backward nodes.
"""
import numpy as np

from ..._tensor import make_tensor, xp_of
from .._graph import Node, record
from .._writes import write_out, with_out
from ._common import _check, _const, _eye
from .inverse import inv

# ---- powers and the exponential ---------------------------------------------------------------
def matrix_power(input, n, *, out=None):
    """A^n by repeated squaring; a negative n inverts first; A^0 is the identity."""
    _check(input, "linalg.matrix_power", floating=False)
    if n < 0:
        input, n = inv(input), -n
    if n == 0:
        res = _eye(input._array.shape[-1], input).expand(input._array.shape).clone()
        record(CopyBackwards, (input,), res)
    elif n == 1:
        res = input.clone()
    else:
        res, z = None, None
        while n:
            z = input if z is None else z @ z
            if n & 1:
                res = z if res is None else res @ z
            n >>= 1
    return write_out(out, res, "linalg_matrix_power") if out is not None else res


class CopyBackwards(Node):
    """A^0: the identity, whatever A is (a zero gradient)."""

    def backward(self, grad):
        return grad * 0


class LinalgMatrixExpBackward0(Node):
    """gA = exp([[A^H, G], [0, A^H]])'s upper right block (the Fréchet derivative's adjoint)."""

    def backward(self, grad):
        (A,) = self.saved_tensors
        from ..shape import cat
        n = A._array.shape[-1]
        Ah = A.mH
        zero = _const(xp_of(A).zeros(A._array.shape, A._array.dtype), A).expand(Ah.shape)
        big = cat([cat([Ah, grad], -1), cat([zero, Ah.expand(grad.shape)], -1)], -2)
        return matrix_exp(big)[..., :n, n:]


def _expm(arr, xp):
    """Scaling and squaring with a degree-18 Taylor polynomial, in float64 (complex128)."""
    work = arr.astype(np.complex128 if np.iscomplexobj(arr) else np.float64)
    n = work.shape[-1]
    norm = xp.abs(work).sum(axis=-2).max(axis=-1) if n else xp.zeros(work.shape[:-2])
    s = xp.maximum(0, xp.ceil(xp.log2(xp.maximum(norm, 1e-300) / 0.5))).astype(np.int64)
    s = xp.where(xp.isfinite(norm), s, 0)
    scaled = work / (2.0 ** s)[..., None, None]
    eye = xp.eye(n, dtype=work.dtype)
    res = eye + scaled / 18
    for k in range(17, 0, -1):
        res = eye + (scaled @ res) / k
    steps = int(s.max()) if s.size else 0
    for j in range(steps):
        sq = res @ res
        res = xp.where((s > j)[..., None, None], sq, res)
    return res.astype(arr.dtype)


@with_out("linalg_matrix_exp")
def matrix_exp(input):
    _check(input, "linalg.matrix_exp")
    res = make_tensor(_expm(input._array, xp_of(input)), input._device)
    node = record(LinalgMatrixExpBackward0, (input,), res)
    if node is not None:
        node.save_for_backward(input)
    return res
