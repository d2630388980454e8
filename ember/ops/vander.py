"""Vandermonde matrices: `torch.vander` (decreasing powers by default, NumPy's convention)
and `torch.linalg.vander` (increasing powers over a batch), built from cumulative products
so their gradients come from cumprod's."""
from .. import dtypes as _dt
from .creation import ones
from .cumulative import cumprod
from .rearrange import flip
from .shape import cat

__all__ = ["vander"]
METHODS = []


def _powers(x, n):
    """[1, x, x^2, ... x^(n-1)] along a new last dim (n >= 1)."""
    first = ones(tuple(x.shape) + (1,), dtype=x.dtype if x.is_floating_point() or x.is_complex()
                 else _dt.int64, device=x.device)
    if n == 1:
        return first
    rest = cumprod(x.unsqueeze(-1).expand(*x.shape, n - 1), -1)
    return cat([first.to(rest.dtype), rest], -1)


def vander(x, N=None, increasing=False):
    if x.dim() != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else N
    if n < 0:
        raise RuntimeError("N must be non-negative.")
    if not (x.is_floating_point() or x.is_complex()):
        x = x.to(_dt.int64)
    if n == 0:
        from .creation import empty
        return empty((x.shape[0], 0), dtype=x.dtype, device=x.device)
    res = _powers(x, n)
    return res if increasing else flip(res, (1,))


def linalg_vander(x, *, N=None):
    if x.dtype is _dt.bool:
        raise RuntimeError("linalg.vander supports floating point, complex, and integer tensors, "
                           "but got Bool")
    n = (x.shape[-1] if x.dim() else 1) if N is None else N
    if n < 2:
        raise RuntimeError("N must be greater than 1.")
    return _powers(x, n)
