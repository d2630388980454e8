"""`F.grouped_mm`: many matrix products in one call, for mixture-of-experts layers. Groups are
either a leading dim (3-D operands) or slices of a 2-D operand's jagged dim delimited by
`offs` (int32 ends of the groups):
  3-D @ 3-D   one product per batch entry
  2-D @ 3-D   rows of mat_a [offs[i-1], offs[i]) times mat_b[i]
  3-D @ 2-D   mat_a[i] times columns of mat_b [offs[i-1], offs[i])
  2-D @ 2-D   the shared (contraction) dim split by offs: one (M, N) product per group
Rows or columns past offs[-1] come out zero (PyTorch leaves them uninitialised). Written with
ember's matmul and cat, so it is differentiable again.
"""
from .. import dtypes as _dt
from .._tensor import make_tensor, xp_of
from .linalg import matmul
from .shape import cat, stack

__all__ = []
METHODS = []
FUNCTIONAL = ["grouped_mm"]

_FLOATS = (_dt.float32, _dt.bfloat16, _dt.float16)


def _check_layout(t):
    """A cuBLAS-style matrix: one of the last two strides 1, the other 16-byte aligned."""
    rows, cols = t.stride()[-2:]
    step = cols if rows == 1 else rows
    if 1 not in (rows, cols) or (step * t.dtype.itemsize) % 16:
        raise RuntimeError("strides should be multiple of 16 bytes")


def _zeros(like, shape):
    xp = xp_of(like)
    return make_tensor(xp.zeros(shape, like._array.dtype), like._device)


def _bounds(offs):
    ends = [int(e) for e in offs.tolist()]
    return list(zip([0] + ends[:-1], ends)), (ends[-1] if ends else 0)


def grouped_mm(mat_a, mat_b, *, offs=None, bias=None, out_dtype=None):
    for name, t in (("mat_a", mat_a), ("mat_b", mat_b)):
        if t.ndim not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    if mat_a.dtype not in _FLOATS:
        raise RuntimeError(f"Expected mat_a to be Float32, BFloat16 or Float16 matrix, got "
                           f"{mat_a.dtype._scalar_name}")
    if mat_b.dtype is not mat_a.dtype:
        raise RuntimeError(f"Expected out tensor to have dtype {_c10_name(mat_b.dtype)}, but "
                           f"got {_c10_name(mat_a.dtype)} instead")
    if out_dtype is not None and out_dtype is not mat_a.dtype:
        raise RuntimeError("Grouped gemm output dtype must match `mat_a` dtype")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    both_3d = mat_a.ndim == 3 and mat_b.ndim == 3
    if (offs is None) != both_3d:
        raise RuntimeError("Have to provide offsets if there is a 2d matrix, or no offset if both "
                           "matrices are 3d")
    if offs is not None and offs.dtype is not _dt.int32:
        raise RuntimeError("Offsets have to be int32")
    if mat_a.shape[-1] != mat_b.shape[-2]:
        raise RuntimeError("contraction dimension of mat_a and mat_b must match")
    if both_3d and mat_a.shape[0] != mat_b.shape[0]:
        raise RuntimeError("batched dimension has to match")
    _check_layout(mat_a)
    _check_layout(mat_b)
    if both_3d:
        return matmul(mat_a, mat_b)
    groups, end = _bounds(offs)
    three_d = mat_b if mat_b.ndim == 3 else (mat_a if mat_a.ndim == 3 else None)
    if three_d is not None and three_d.shape[0] != len(groups):
        raise RuntimeError("matrix batch sizes have to match")
    if mat_a.ndim == 2 and mat_b.ndim == 3:
        parts = [matmul(mat_a[s:e], mat_b[i]) for i, (s, e) in enumerate(groups)]
        rest = mat_a.shape[0] - end
        if rest > 0:
            parts.append(_zeros(mat_a, (rest, mat_b.shape[-1])))
        return cat(parts, 0)
    if mat_a.ndim == 3:
        parts = [matmul(mat_a[i], mat_b[:, s:e]) for i, (s, e) in enumerate(groups)]
        rest = mat_b.shape[-1] - end
        if rest > 0:
            parts.append(_zeros(mat_a, (mat_a.shape[1], rest)))
        return cat(parts, 1)
    return stack([matmul(mat_a[:, s:e], mat_b[s:e]) for s, e in groups], 0)


def _c10_name(dtype):
    return "c10::BFloat16" if dtype is _dt.bfloat16 else \
        {"Float": "float", "Half": "c10::Half"}.get(dtype._scalar_name, dtype._scalar_name)
