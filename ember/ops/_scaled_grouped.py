"""`F.scaled_grouped_mm`'s product on a CUDA device: float8 operands with RowWise float32
scales, grouped as `F.grouped_mm` groups them (a leading dim, or `offs` cutting a 2-D
operand). PyTorch's CPU build has no such kernel (scaled_mm.py refuses the CPU before this).

Scales hold one number per row of A and per column of B, within each group:
  2-D @ 3-D   scale_a (M,),     scale_b (G, N)
  3-D @ 3-D   scale_a (G, M),   scale_b (G, N)
  3-D @ 2-D   scale_a (G, M),   scale_b (N,)
  2-D @ 2-D   scale_a (G * M,), scale_b (G * N,)   (the shared K split by offs)
Each operand is widened to float32 and scaled, and the groups multiplied by F.grouped_mm;
the result is bfloat16, the one dtype PyTorch's kernel writes. The checks and their messages
are those of PyTorch's CUDA kernel (A row-major, B column-major, dims multiples of 16); the
block-scaled MX/NV recipes of its newest GPUs are not implemented here.
"""
from .. import dtypes as _dt
from ._graph import grad_disabled
from .grouped_mm import grouped_mm
from .shape import stack

_ROWWISE = 1
_BLOCK_RECIPES = (2, 3)  # BlockWise1x16 (NVFP4) and BlockWise1x32 (MXFP8, MXFP4)
_FLOAT8 = (_dt.float8_e4m3fn, _dt.float8_e4m3fnuz, _dt.float8_e5m2, _dt.float8_e5m2fnuz,
           _dt.float8_e8m0fnu)


def _transposed(mat):
    """Whether the last two dims are column-major, after PyTorch's check that one of their
    strides is 1 and the other 16-byte aligned and wide enough."""
    strides, sizes = mat.stride(), mat.shape
    align = 16 // mat.dtype.itemsize
    if strides[-2] == 1 and strides[-1] >= max(1, sizes[-2]):
        if strides[-1] % align:
            raise RuntimeError("strides should be multiple of 16 bytes")
        return True
    if strides[-1] == 1 and strides[-2] >= max(1, sizes[-1]):
        if strides[-2] % align:
            raise RuntimeError("strides should be multiple of 16 bytes")
        return False
    raise RuntimeError(f"Invalid strides/sizes, got {list(strides)} for strides and "
                       f"{list(sizes)} for sizes")


def _check_layouts(mat_a, mat_b, offs, bias, contraction_dim, output_dtype):
    for name, mat in (("mat_a", mat_a), ("mat_b", mat_b)):
        if mat.dim() not in (2, 3):
            raise ValueError(f"{name} has to be 2 or 3d")
    if _transposed(mat_a):
        raise ValueError("Expected mat1 to not be transposed")
    if not _transposed(mat_b):
        raise ValueError("Expected mat2 to be transposed")
    if mat_a.dim() == 3 or mat_b.dim() == 3:
        if contraction_dim:
            dim_a, dim_b = contraction_dim[0], mat_b.size(contraction_dim[1])
            if mat_a.size(dim_a) != mat_b.size(dim_b):
                raise ValueError(f"Contraction dimensions ({dim_a},{dim_b}) of mat_a and mat_b "
                                 f"must match, got: {mat_a.size(dim_a)} and {mat_b.size(dim_b)}")
            if (dim_a, dim_b) != (-1, -2):
                raise ValueError("Currently contraction dims must be (-1, -2) only")
        elif mat_a.shape[-1] != mat_b.shape[-2]:
            raise ValueError("contraction dimension of mat_a and mat_b must match")
    if mat_a.shape[-1] % 16:
        raise ValueError("Expected trailing dimension of mat_a to be divisible by 16 but got "
                         f"mat1 shape: ({list(mat_a.shape)}).")
    if mat_b.shape[-2] % 16 or mat_b.shape[-1] % 16:
        raise ValueError("Expected mat_b shape to be divisible by 16 but got mat_b shape: "
                         f"({list(mat_b.shape)}).")
    if bias is not None:
        raise ValueError("Bias not supported yet")
    if (offs is not None) != (mat_a.dim() == 2 or mat_b.dim() == 2):
        raise ValueError("Have to provide offsets if there is a 2d matrix")
    if offs is not None and offs.dim() != 1:
        raise ValueError("offs has to be 1D")
    if offs is not None and offs.dtype is not _dt.int32:
        raise ValueError("Offsets have to be int32")
    if (output_dtype or _dt.bfloat16) is not _dt.bfloat16:
        raise ValueError("Only bf16 high precision output types are supported for grouped gemm")


def _check_rowwise_scale(mat, scale, dim, arg, groups):
    """One float32 scale per row of A / column of B, per group of a 3-D operand."""
    if mat.dim() == 2:
        if scale.dim() != 1:
            raise RuntimeError(f"scale must be a 1D tensor, but got {scale.dim()}D, arg {arg}")
        if not scale.is_contiguous():
            raise RuntimeError(f"scale must be contiguous for arg {arg}")
        if scale.shape[0] != mat.shape[dim] * groups:
            raise RuntimeError(f"scale must have the same length as mat for arg {arg}")
        return
    if scale.dim() != 2:
        raise RuntimeError(f"scale must be a 2D tensor, but got {scale.dim()}D for arg {arg}")
    if scale.stride(1) != 1:
        raise RuntimeError(f"scale must be contiguous in the last dimension for arg {arg}")
    if scale.shape[0] != mat.shape[0]:
        raise RuntimeError(f"scale must have the same batch dimension as mat for arg {arg}")
    if scale.shape[1] != mat.shape[1 + dim]:
        raise RuntimeError(f"scale must have the same first dimension as mat for arg {arg}")


def rowwise_grouped_product(mat_a, mat_b, scales_a, recipes_a, scales_b, recipes_b, bias, offs,
                            output_dtype, contraction_dim):
    _check_layouts(mat_a, mat_b, offs, bias, contraction_dim, output_dtype)
    one_each = len(scales_a) == len(recipes_a) == len(scales_b) == len(recipes_b) == 1
    if one_each and recipes_a[0] in _BLOCK_RECIPES and recipes_b[0] in _BLOCK_RECIPES:
        raise NotImplementedError("scaled_grouped_mm: ember computes the RowWise float8 recipe "
                                  "only; the block-scaled MX/NV recipes are not implemented")
    if not (one_each and mat_a.dtype in _FLOAT8 and mat_b.dtype in _FLOAT8 and
            recipes_a[0] == recipes_b[0] == _ROWWISE and
            scales_a[0].dtype is _dt.float32 and scales_b[0].dtype is _dt.float32):
        raise ValueError("No gemm implementation was found")
    groups = offs.shape[0] if mat_a.dim() == 2 and mat_b.dim() == 2 else 1
    scale_a, scale_b = scales_a[0], scales_b[0]
    _check_rowwise_scale(mat_a, scale_a, 0, 0, groups)
    _check_rowwise_scale(mat_b, scale_b, 1, 1, groups)
    with grad_disabled():
        a, b = mat_a.float(), mat_b.float()
        if mat_a.dim() == 2 and mat_b.dim() == 2:
            return _per_k_group(a, b, scale_a, scale_b, offs).to(_dt.bfloat16)
        a = a * scale_a.unsqueeze(-1)
        b = b * (scale_b if mat_b.dim() == 2 else scale_b.unsqueeze(-2))
        return grouped_mm(a, b, offs=offs).to(_dt.bfloat16)


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
