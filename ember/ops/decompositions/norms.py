"""Norms: `linalg.vector_norm`, `linalg.matrix_norm` (Frobenius, nuclear, spectral and the
induced 1 / inf norms), `linalg.norm`, the condition number `linalg.cond`; and
`linalg.diagonal`.
"""
import builtins
import math

import numpy as np

from .._writes import write_out
from .inverse import inv
from .orthogonal import svdvals

# ---- norms ------------------------------------------------------------------------------------------
def vector_norm(input, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    from ..statistics import vector_norm as _vector_norm
    if isinstance(ord, str) or not isinstance(ord, (builtins.int, builtins.float, np.number)):
        raise TypeError(f"linalg_vector_norm(): argument 'ord' must be Number, not "
                        f"{type(ord).__name__}")
    return _vector_norm(input, ord, dim, keepdim, dtype=dtype, out=out)


def matrix_norm(input, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Frobenius, nuclear, 2 / -2 (extreme singular values), 1 / -1 (column sums), inf / -inf
    (row sums)."""
    if input._array.ndim < 2:
        raise RuntimeError("linalg.matrix_norm: The input tensor A must have at least 2 "
                           "dimensions.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError("linalg.matrix_norm: Expected a floating point or complex tensor as "
                           f"input. Got {input.dtype._scalar_name}")
    dim = tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(str(d) for d in dim)}")
    nd = input._array.ndim
    d0, d1 = (d % nd for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({dim[0]}, {dim[1]})")
    if dtype is not None:
        input = input.to(dtype)
    if ord == "fro":
        res = vector_norm(input, 2, (d0, d1), keepdim)
    elif ord in ("nuc", 2, -2):
        s = svdvals(input.movedim((d0, d1), (-2, -1)))
        res = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
        if keepdim:
            for d in sorted((d0, d1)):
                res = res.unsqueeze(d)
    elif ord in (1, -1, math.inf, -math.inf):
        first, second = (d0, d1) if ord in (1, -1) else (d1, d0)
        sums = input.abs().sum(first, keepdim=True)
        res = sums.amax(second, keepdim=True) if ord > 0 else sums.amin(second, keepdim=True)
        if not keepdim:
            res = res.squeeze(max(d0, d1)).squeeze(min(d0, d1))
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    return write_out(out, res, "linalg_matrix_norm") if out is not None else res


def norm(input, ord=None, dim=None, keepdim=False, *, dtype=None, out=None):
    """`linalg.norm`: a vector norm over one dim (or all), a matrix norm over two."""
    if dim is not None and not isinstance(dim, (builtins.int, np.integer)):
        dim = tuple(dim)
        if len(dim) == 1:
            dim = dim[0]
    if isinstance(ord, str):  # "fro", "nuc": always a matrix norm, as PyTorch's
        return matrix_norm(input, ord, (-2, -1) if dim is None else dim, keepdim, dtype=dtype,
                           out=out)
    if dim is None:
        if ord is not None:
            if input._array.ndim not in (1, 2):
                raise RuntimeError("linalg.norm: If dim is not specified but ord is, the input "
                                   f"must be 1D or 2D. Got {input._array.ndim}D.")
            if input._array.ndim == 2:
                return matrix_norm(input, ord, (-2, -1), keepdim, dtype=dtype, out=out)
            return vector_norm(input, ord, None, keepdim, dtype=dtype, out=out)
        return vector_norm(input, 2, None, keepdim, dtype=dtype, out=out)
    if isinstance(dim, tuple):
        return matrix_norm(input, "fro" if ord is None else ord, dim, keepdim, dtype=dtype, out=out)
    return vector_norm(input, 2 if ord is None else ord, dim, keepdim, dtype=dtype, out=out)


def cond(input, p=None, *, out=None):
    """The condition number: ratio of extreme singular values (p None or 2 / -2), else
    norm(A, p) * norm(inv(A), p)."""
    if p in (None, 2, -2):
        s = svdvals(input)
        res = s.amax(-1) / s.amin(-1) if p != -2 else s.amin(-1) / s.amax(-1)
    else:
        res = matrix_norm(input, p) * matrix_norm(inv(input), p)
    return write_out(out, res, "linalg_cond") if out is not None else res


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    from ..rearrange import diagonal as _diagonal
    return _diagonal(A, offset, dim1, dim2)
