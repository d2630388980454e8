"""Contractions and chains of products: `tensordot`, `kron`, `linalg.cross` and `cross`,
`linalg.multi_dot` (in the cheapest order) and the deprecated `chain_matmul`, `linalg.vecdot`.

All but the cross product are compositions of other ops, whose gradients they inherit.
"""
import numpy as np

from ..._tensor import make_tensor, Tensor, xp_of
from ..._state import autocast as _autocast
from .._autocast import lower
from .._graph import Node, record
from ..._state import warn_once
from ._common import _needs, _out
from .matmul import mm


def tensordot(a, b, dims=2, out=None):
    """Contract `dims` of a with as many of b: the last `dims` of a with b's first, or the
    listed pairs. Written with permute, reshape and mm (gradients come from those)."""
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da, db = list(range(-int(dims), 0)), list(range(int(dims)))
    else:
        da, db = dims
        da = [da] if isinstance(da, (int, np.integer)) else list(da)
        db = [db] if isinstance(db, (int, np.integer)) else list(db)
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    na, nb = a._array.ndim, b._array.ndim
    ca = [d % na if na else d for d in da]
    cb = [d % nb if nb else d for d in db]
    for x, y, dx, dy in zip(ca, cb, da, db):
        sx, sy = a._array.shape[x], b._array.shape[y]
        if sx != sy:
            raise RuntimeError(f"contracted dimensions need to match, but first has size {sx} in "
                               f"dim {dx} and second has size {sy} in dim {dy}")
    fa = [d for d in range(na) if d not in ca]
    fb = [d for d in range(nb) if d not in cb]
    k = int(np.prod([a._array.shape[d] for d in ca]))
    # sizes, not -1: an empty contraction (k = 0) must reshape too
    left = a.permute(fa + ca).reshape(int(np.prod([a._array.shape[d] for d in fa])), k)
    right = b.permute(cb + fb).reshape(k, int(np.prod([b._array.shape[d] for d in fb])))
    res = left.mm(right).reshape([a._array.shape[d] for d in fa] + [b._array.shape[d] for d in fb])
    return _out(res, out, "tensordot")


def kron(input, other, *, out=None):
    """The Kronecker product: every element of input times a block of other."""
    n = max(input._array.ndim, other._array.ndim)
    sa = (1,) * (n - input._array.ndim) + input._array.shape
    sb = (1,) * (n - other._array.ndim) + other._array.shape
    a = input.reshape([x for s in sa for x in (s, 1)])
    b = other.reshape([x for s in sb for x in (1, s)])
    res = (a * b).reshape([x * y for x, y in zip(sa, sb)])
    return _out(res, out, "kron")


class LinalgCrossBackward0(Node):
    def backward(self, grad):
        a, b = self.saved_tensors
        ga = linalg_cross(b.conj(), grad, dim=self.dim) if _needs(self, 0) else None
        gb = linalg_cross(grad, a.conj(), dim=self.dim) if _needs(self, 1) else None
        return ga, gb


def linalg_cross(input, other, *, dim=-1, out=None):
    """`torch.linalg.cross`: the 3-vector cross product along `dim` (inputs broadcast)."""
    from ..pointwise import broadcast_error, operands as _operands
    if input._array.ndim != other._array.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    nd = input._array.ndim
    d = dim + nd if dim < 0 else dim
    if not 0 <= d < nd:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-nd}, "
                         f"{nd - 1}], but got {dim})")
    na, nb = input._array.shape[d], other._array.shape[d]
    if na != 3 or nb != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got {na} "
                           f"and {nb}")
    err = broadcast_error(input._array.shape, other._array.shape)
    if err is not None:
        raise err
    x, y, _, dev = _operands(input, other, "linalg_cross")
    res = make_tensor(xp_of(input).cross(x, y, axis=d), dev)
    node = record(LinalgCrossBackward0, (input, other), res)
    if node is not None:
        node.dim = dim
        node.save_for_backward(input, other)
    return _out(res, out, "linalg_cross")


def cross(input, other, dim=None, *, out=None):
    """`torch.cross`: without `dim`, the first dimension of size 3 (deprecated, warns once)."""
    if dim is None:
        warn_once("Using torch.cross without specifying the dim arg is deprecated.\n"
                   "Please either pass the dim explicitly or simply use torch.linalg.cross.\n"
                   "The default value of dim will change to agree with that of linalg.cross in "
                   "a future release.")
        shape = np.broadcast_shapes(input._array.shape, other._array.shape)
        dim = next((i for i, s in enumerate(shape) if s == 3), -1)
    return linalg_cross(input, other, dim=dim, out=out)


def multi_dot(tensors, *, out=None):
    """`linalg.multi_dot`: a chain of matrix products in the cheapest order (a 1-D first or
    last operand is a row or column vector)."""
    tensors = list(tensors)
    n = len(tensors)
    if n < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {n}")
    first, last = tensors[0]._array.ndim, tensors[-1]._array.ndim
    if first not in (1, 2):
        raise RuntimeError(f"multi_dot(): the first tensor must be 1D or 2D but got {first}D")
    if last not in (1, 2):
        raise RuntimeError(f"multi_dot(): the last tensor must be 1D or 2D but got {last}D")
    for i in range(1, n - 1):
        if tensors[i]._array.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got "
                               f"{tensors[i]._array.ndim}D")
    for i in range(1, n):
        if tensors[i]._array.dtype != tensors[0]._array.dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but tensor 0 "
                               f"is {tensors[0].dtype._cpp_name} and tensor {i} "
                               f"{tensors[i].dtype._cpp_name}")
    mats = list(tensors)
    if first == 1:
        mats[0] = mats[0].unsqueeze(0)
    if last == 1:
        mats[-1] = mats[-1].unsqueeze(-1)
    for i in range(n - 1):
        if mats[i]._array.shape[1] != mats[i + 1]._array.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(mats[i]._array.shape)} and {list(mats[i + 1]._array.shape)} "
                               "cannot be multiplied")
    dims = [m._array.shape[0] for m in mats] + [mats[-1]._array.shape[1]]
    # the classic chain-order table: cost[i][j] of the product of mats i..j, split[i][j]
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j] = None
            for k in range(i, j):
                c = cost[i][k] + cost[k + 1][j] + dims[i] * dims[k + 1] * dims[j + 1]
                if cost[i][j] is None or c < cost[i][j]:
                    cost[i][j], split[i][j] = c, k

    def chain(i, j):
        if i == j:
            return mats[i]
        k = split[i][j]
        return mm(chain(i, k), chain(k + 1, j))

    res = chain(0, n - 1)
    if first == 1 and last == 1:
        res = res.reshape(())
    elif first == 1:
        res = res.squeeze(0)
    elif last == 1:
        res = res.squeeze(-1)
    return _out(res, out, "multi_dot")


def chain_matmul(*matrices, out=None):
    warn_once("torch.chain_matmul is deprecated and will be removed in a future "
               "PyTorch release. Use torch.linalg.multi_dot instead, which accepts a list of two "
               "or more tensors rather than multiple parameters.")
    if len(matrices) == 1 and isinstance(matrices[0], (list, tuple)):
        matrices = tuple(matrices[0])
    if len(matrices) == 0:
        raise RuntimeError("chain_matmul(): Expected one or more matrices")
    for t in matrices:
        if t._array.ndim != 2:
            raise RuntimeError(f"Tensor dimension is {t._array.ndim}, expected 2 instead.")
    if len(matrices) == 1:
        return _out(matrices[0].clone(), out, "chain_matmul")
    return multi_dot(matrices, out=out)


def vecdot(x, y, *, dim=-1, out=None):
    """`linalg.vecdot`: sum(x.conj() * y) over `dim`."""
    if _autocast.active and out is None:
        x, y = lower(x, y)
    if x._array.dtype != y._array.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found x "
                           f"of type {x.dtype._scalar_name} and y of type "
                           f"{y.dtype._scalar_name} instead")
    if x._array.ndim == 1 and y._array.ndim == 1 and x._array.shape != y._array.shape:
        n, m = x._array.shape[0], y._array.shape[0]
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{n}] and src [{m}] to "
                           f"have the same number of elements, but got {n} and {m} elements "
                           "respectively")
    return _out((x.conj() * y).sum(dim), out, "linalg_vecdot")
