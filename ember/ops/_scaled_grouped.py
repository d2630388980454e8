"""`F.scaled_grouped_mm`'s product on a CUDA device: float8 operands with RowWise float32
scales, grouped as `F.grouped_mm` groups them (a leading dim, or `offs` cutting a 2-D
operand). PyTorch's CPU build has no such kernel (scaled_mm.py refuses the CPU before this).

Scales hold one number per row of A and per column of B, within each group:
  2-D @ 3-D   scale_a (M,),     scale_b (G, N)
  3-D @ 3-D   scale_a (G, M),   scale_b (G, N)
  3-D @ 2-D   scale_a (G, M),   scale_b (N,)
  2-D @ 2-D   scale_a (G * M,), scale_b (G * N,)   (the shared K split by offs)
Each operand is widened to float32 and scaled, and the groups multiplied by F.grouped_mm.
"""
from .. import dtypes as _dt
from ._graph import grad_disabled
from .grouped_mm import grouped_mm
from .shape import stack

_ROWWISE = 1
_FLOAT8 = (_dt.float8_e4m3fn, _dt.float8_e4m3fnuz, _dt.float8_e5m2, _dt.float8_e5m2fnuz)


def _scale_shapes(mat_a, mat_b, groups):
    (m, n) = mat_a.shape[-2 if mat_a.ndim == 3 else 0], mat_b.shape[-1]
    if mat_a.ndim == 2 and mat_b.ndim == 2:
        return (groups * m,), (groups * n,)
    shape_a = (m,) if mat_a.ndim == 2 else (mat_a.shape[0], m)
    shape_b = (n,) if mat_b.ndim == 2 else (mat_b.shape[0], n)
    return shape_a, shape_b


def rowwise_grouped_product(mat_a, mat_b, scales_a, recipes_a, scales_b, recipes_b, bias, offs,
                            output_dtype):
    if mat_a.dtype not in _FLOAT8 or mat_b.dtype not in _FLOAT8:
        raise ValueError(f"Expected mat_a and mat_b to be float8, got {mat_a.dtype} and "
                         f"{mat_b.dtype}")
    if not (len(scales_a) == len(recipes_a) == len(scales_b) == len(recipes_b) == 1) or \
            recipes_a[0] != _ROWWISE or recipes_b[0] != _ROWWISE:
        raise ValueError("scaled_grouped_mm takes one RowWise scale for each operand")
    if bias is not None:
        raise RuntimeError("Bias not supported yet")
    for name, t in (("mat_a", mat_a), ("mat_b", mat_b)):
        if t.ndim not in (2, 3):
            raise RuntimeError(f"{name} has to be 2 or 3d")
    groups = offs.numel() if offs is not None else mat_a.shape[0]
    scale_a, scale_b = scales_a[0], scales_b[0]
    want_a, want_b = _scale_shapes(mat_a, mat_b, groups)
    for name, scale, want in (("scale_a", scale_a, want_a), ("scale_b", scale_b, want_b)):
        if scale.dtype is not _dt.float32 or tuple(scale.shape) != want:
            raise ValueError(f"{name} must be a float32 tensor of shape {list(want)}, got "
                             f"{scale.dtype} of shape {list(scale.shape)}")
    out_dtype = mat_a.dtype if output_dtype is None else output_dtype
    with grad_disabled():
        a, b = mat_a.float(), mat_b.float()
        if mat_a.ndim == 2 and mat_b.ndim == 2:
            return _per_k_group(a, b, scale_a, scale_b, offs).to(out_dtype)
        a = a * scale_a.unsqueeze(-1)
        b = b * (scale_b if mat_b.ndim == 2 else scale_b.unsqueeze(-2))
        return grouped_mm(a, b, offs=offs).to(out_dtype)


def _per_k_group(a, b, scale_a, scale_b, offs):
    """2-D @ 2-D: offs splits the shared K, each group has its own row and column scales."""
    m, n = a.shape[0], b.shape[1]
    ends = [int(e) for e in offs.tolist()]
    parts = []
    for g, (start, end) in enumerate(zip([0] + ends[:-1], ends)):
        sa = scale_a[g * m:(g + 1) * m].unsqueeze(-1)
        sb = scale_b[g * n:(g + 1) * n]
        parts.append((a[:, start:end] * sa) @ (b[start:end] * sb))
    return stack(parts, 0)
