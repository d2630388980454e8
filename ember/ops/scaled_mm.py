"""`F.scaled_mm` and `F.scaled_grouped_mm`: matrix products of float8 operands that carry
decoding scales, and the two enums that describe them (`ScalingType`, `SwizzleType`).

The product is PyTorch CPU's emulation: each operand is widened to float32 and multiplied by
its scales (TensorWise: one float32 number; RowWise: a float32 column of A's rows (M, 1) and
a row of B's columns (1, N)), the float32 matrices are multiplied, the bias added, and the
result cast to `output_dtype`. PyTorch's CPU build knows only those two recipes: the block
recipes and scale swizzles are CUDA kernels there, and a CPU call with them is refused with
the same ValueError here. PyTorch's CPU build has no grouped scaled kernel at all, so
`scaled_grouped_mm` is refused on the CPU with its NotImplementedError; on a CUDA device
ember runs it for RowWise scales (_scaled_grouped.py).

`torch._scaled_mm`, the first form, takes one scale tensor per operand and tells the recipe
from the scales' shapes; it has `scale_result` (divides a float8 result) and `out=`.

Neither product is differentiable: as in PyTorch, a result over inputs that require grad gets
a "NotImplemented" node whose backward raises.
"""
import numpy as np

from .. import dtypes as _dt
from ._graph import grad_disabled
from ._writes import write_out
from .histograms import _need_tensor, _record_not_implemented
from .sparse import _no_kernel

__all__ = ["_scaled_mm"]
METHODS = []
FUNCTIONAL = ["scaled_mm", "scaled_grouped_mm"]

_FLOAT8 = (_dt.float8_e4m3fn, _dt.float8_e4m3fnuz, _dt.float8_e5m2, _dt.float8_e5m2fnuz,
           _dt.float8_e8m0fnu)
_BIAS_DTYPES = (_dt.float32, _dt.bfloat16, _dt.float16)


# ---- the enums --------------------------------------------------------------------------------
class _BoundEnum:
    """An enum as PyTorch's C++ bindings make one: members compare equal only to members of
    their own enum (not to ints), convert with int(), and an unlisted value makes a member
    named "???"."""
    __slots__ = ("_value",)
    _names = {}

    def __new__(cls, value):
        if isinstance(value, cls):
            value = value._value
        elif not hasattr(value, "__index__"):
            raise TypeError(f"__init__(): incompatible constructor arguments. The following "
                            f"argument types are supported:\n    1. torch._C.{cls.__name__}"
                            f"(value: typing.SupportsInt | typing.SupportsIndex)\n\nInvoked "
                            f"with: {value!r}")
        self = object.__new__(cls)
        self._value = value.__index__()
        return self

    @property
    def name(self):
        return self._names.get(self._value, "???")

    @property
    def value(self):
        return self._value

    def __int__(self):
        return self._value

    __index__ = __int__

    def __hash__(self):
        return self._value

    def __eq__(self, other):
        return type(other) is type(self) and other._value == self._value

    def __ne__(self, other):
        return not self == other

    def __repr__(self):
        return f"<{type(self).__name__}.{self.name}: {self._value}>"

    def __str__(self):
        return f"{type(self).__name__}.{self.name}"

    def __getstate__(self):
        return self._value

    def __setstate__(self, value):
        self._value = value


def _bound_enum(name, title, members):
    doc = title + "\n\nMembers:\n\n" + "\n\n".join(f"  {m} : {d}" for m, _, d in members)
    cls = type(name, (_BoundEnum,), {"__slots__": (), "__doc__": doc, "__module__":
                                     "torch.nn.functional"})
    cls._names = {v: m for m, v, _ in members}
    for m, v, _ in members:
        setattr(cls, m, cls(v))
    cls.__members__ = {m: getattr(cls, m) for m, _, _ in members}
    return cls


ScalingType = _bound_enum("_ScalingType", "Supported Tensor scaling types", [
    ("TensorWise", 0, "Single scale per-tensor"),
    ("RowWise", 1, "Scale per-row of tensor"),
    ("BlockWise1x16", 2, "Scale per 16 contiguous values"),
    ("BlockWise1x32", 3, "Scale per 32 contiguous values"),
    ("BlockWise1x128", 4, "Scale per 128 contiguous values"),
    ("BlockWise128x128", 5, "Scale per 128x128 tile")])
SwizzleType = _bound_enum("_SwizzleType", "Supported scale swizzle types", [
    ("NO_SWIZZLE", 0, "No swizzling"),
    ("SWIZZLE_32_4_4", 1, "Blackwell-style 32x4x4 swizzle")])
_TENSORWISE, _ROWWISE = 0, 1


# ---- argument forms ---------------------------------------------------------------------------
def _as_list(value):
    """One value or a list of them, as a list (None: empty)."""
    if value is None:
        return []
    return value if isinstance(value, list) else [value]


def _recipe_values(recipes):
    # the recipes go to the kernel as their integer values; an int has no `.value`
    return [r.value for r in _as_list(recipes)]


def _dim_size(t, dim, strides=False):
    """t.size(dim) or t.stride(dim) with the C++ accessor's IndexError."""
    if t.dim() == 0:
        raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
    return t.stride(dim) if strides else t.size(dim)


def _shape_text(values):
    return str(list(values))  # C++ prints sizes and strides as [4, 1]


def _invalid_scaling(mat_a, mat_b, scale_a, scale_b):
    """PyTorch's ValueError for scales that fit no recipe; a missing scale reads "None"."""
    def described(mat, scale, last):
        head = f"mat_{last}.dtype()={mat.dtype._scalar_name}, "
        if scale is None:
            return head + f"scale_{last}=None"
        return head + (f"scale_{last}.dtype()={scale.dtype._scalar_name}, scale_{last}.size()="
                       f"{_shape_text(scale.shape)}, scale_{last}.stride()="
                       f"{_shape_text(scale.stride())}")
    got_b = described(mat_b, scale_b, "b")
    if scale_b is not None:  # " and " goes before the last item
        got_b = got_b.replace(", scale_b.stride()", " and scale_b.stride()")
    else:
        got_b = got_b.replace(", scale_b=None", " and scale_b=None")
    raise ValueError(
        "Invalid scaling configuration.\n"
        "- For TensorWise scaling, a and b should be float8, scales should be float and "
        "singletons.\n"
        f"- For RowWise scaling, a and b should be float8, scales should be float, scale_a "
        f"should be ({mat_a.shape[0]}, 1) and scale_b should be (1, {mat_b.shape[1]}), and both "
        "should be contiguous.\n"
        f"Got {described(mat_a, scale_a, 'a')}, {got_b}")


def _recipe(mat_a, mat_b, scales_a, recipes_a, scales_b, recipes_b):
    """The one recipe both operands share (TensorWise or RowWise, float8 operands, one float32
    scale each), or PyTorch's ValueError."""
    if mat_a.dtype in _FLOAT8 and mat_b.dtype in _FLOAT8 and \
            len(scales_a) == len(recipes_a) == len(scales_b) == len(recipes_b) == 1 and \
            recipes_a[0] == recipes_b[0] and recipes_a[0] in (_TENSORWISE, _ROWWISE) and \
            scales_a[0].dtype is _dt.float32 and scales_b[0].dtype is _dt.float32:
        return recipes_a[0]
    _invalid_scaling(mat_a, mat_b, scales_a[0] if scales_a else None,
                     scales_b[0] if scales_b else None)


def _check_rowwise_scales(mat_a, mat_b, scale_a, scale_b):
    m, n = mat_a.shape[0], mat_b.shape[1]
    if _dim_size(scale_a, 0) != m or _dim_size(scale_a, 1) != 1:
        raise ValueError(f"scale_a must have shape [{m}, 1], got [{_shape_text(scale_a.shape)}]")
    if scale_a.numel() != m:
        raise ValueError(f"scale_a must have {m} Float elements, got {scale_a.numel()}")
    if scale_b.numel() != n:
        raise ValueError(f"scale_b must have {n} Float elements, got {scale_b.numel()}")
    for name, scale in (("scale_a", scale_a), ("scale_b", scale_b)):
        step = _dim_size(scale, 1, strides=True)
        if step != 1:
            raise ValueError(f"expected {name}.stride(1) to be 1, but got {step}")


# ---- scaled_mm --------------------------------------------------------------------------------
def scaled_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b, swizzle_a=None,
              swizzle_b=None, bias=None, output_dtype=_dt.bfloat16, contraction_dim=(),
              use_fast_accum=False):
    """mat_a @ mat_b of float8 operands, each decoded by its scales as its recipe says
    (`ScalingType`); `use_fast_accum` is a GPU kernel setting with no effect here."""
    scales_a, scales_b = _as_list(scale_a), _as_list(scale_b)
    recipes_a, recipes_b = _recipe_values(scale_recipe_a), _recipe_values(scale_recipe_b)
    # PyTorch's CPU kernel takes the swizzles and reads none of them
    _recipe_values(swizzle_a), _recipe_values(swizzle_b)
    out_dtype = mat_a.dtype if output_dtype is None else output_dtype
    for name, mat in (("mat_a", mat_a), ("mat_b", mat_b)):
        if mat.dim() != 2:
            raise ValueError(f"{name} must be a matrix")
    (m, k), n = mat_a.shape, mat_b.shape[1]
    if m == 0 or k == 0 or n == 0:  # an empty product: zeros, whatever the dtypes and scales
        from .creation import zeros
        return zeros((m, n), dtype=out_dtype, device=mat_a.device)
    _check_contraction(mat_a, mat_b, contraction_dim)
    if bias is not None and bias.numel() != n:
        raise ValueError(f"Bias must be size {n} but got {bias.numel()}")
    if bias is not None and bias.dtype not in _BIAS_DTYPES:
        raise ValueError("Bias must be Float32 or BFloat16 or Half, but got "
                         f"{bias.dtype._scalar_name}")
    recipe = _recipe(mat_a, mat_b, scales_a, recipes_a, scales_b, recipes_b)
    if mat_a.shape[1] != mat_b.shape[0]:  # contraction_dim named other dims than the product's
        raise RuntimeError(f"mat_a and mat_b shapes cannot be multiplied ({m}x{k} and "
                           f"{mat_b.shape[0]}x{n})")
    scale_a, scale_b = scales_a[0], scales_b[0]
    if recipe == _TENSORWISE:
        for name, scale in (("scale_a", scale_a), ("scale_b", scale_b)):
            if scale.numel() != 1:
                raise ValueError(f"{name} must have 1 Float element")
    else:
        _check_rowwise_scales(mat_a, mat_b, scale_a, scale_b)
    with grad_disabled():
        out = _dequantised_product(mat_a, mat_b, scale_a, scale_b, recipe, bias, out_dtype)
    if out.dtype.is_floating_point:
        tracked = [t for t in (mat_a, mat_b, scale_a, scale_b, bias)
                   if t is not None and t.requires_grad]
        _record_not_implemented("_scaled_mm_v2", tracked, out)
    return out


def _check_contraction(mat_a, mat_b, contraction_dim):
    (m, k), (k2, n) = mat_a.shape, mat_b.shape
    if len(contraction_dim) == 0:
        if k != k2:
            raise ValueError(f"mat_a and mat_b shapes cannot be multiplied ({m}x{k} and {k2}x{n})")
        return
    if len(contraction_dim) != 2:
        raise ValueError("contraction_dim must have exactly 2 elements")
    dim_a, dim_b = contraction_dim
    if mat_a.size(dim_a) != mat_b.size(dim_b):
        raise ValueError(f"mat_a and mat_b shapes cannot be multiplied ({m}x{k} and {k2}x{n}) "
                         f"with contraction dims mat_a: {dim_a}, mat_b: {dim_b}")


def _dequantised_product(mat_a, mat_b, scale_a, scale_b, recipe, bias, out_dtype,
                         result_scale=None):
    """The float32 emulation: scale each widened operand, multiply, add the bias, cast."""
    if recipe == _TENSORWISE:
        a = mat_a.float() * float(scale_a.item())
        b = mat_b.float() * float(scale_b.item())
    else:
        a, b = mat_a.float() * scale_a, mat_b.float() * scale_b
    out = a @ b
    if bias is not None:
        out.add_(bias)
    if result_scale is not None:
        # the reciprocal is taken in float32, as the C++ emulation takes it
        out = out * float(np.float32(1) / np.float32(result_scale.item()))
    return out.to(out_dtype)


# ---- torch._scaled_mm: the first form, which finds the recipe from the scales' shapes -------
def _tensorwise_scaled(mat, scale):
    return mat.dtype in _FLOAT8 and scale.dtype is _dt.float32 and scale.numel() == 1


def _rowwise_scaled(mat, scale):
    return mat.dtype in _FLOAT8 and scale.dtype is _dt.float32 and scale.dim() == 2 and \
        scale.shape[0] == mat.size(0) and scale.shape[1] == 1 and scale.is_contiguous()


def _found_recipe(mat_a, mat_b, scale_a, scale_b):
    # B is judged by its transpose and its scale's, as A is: one scale per row of B.t()
    for recipe, fits in ((_TENSORWISE, _tensorwise_scaled), (_ROWWISE, _rowwise_scaled)):
        if fits(mat_a, scale_a) and fits(mat_b.t(), scale_b.t()):
            return recipe
    _invalid_scaling(mat_a, mat_b, scale_a, scale_b)


def _scaled_mm(input, mat2, scale_a, scale_b, bias=None, scale_result=None, out_dtype=None,
               use_fast_accum=False, *, out=None):
    """The first form of scaled_mm: one scale tensor per operand, its shape naming the recipe
    (a single number: TensorWise; (M, 1) and (1, N): RowWise)."""
    for position, (name, value) in enumerate((("input", input), ("mat2", mat2),
                                              ("scale_a", scale_a), ("scale_b", scale_b)), 1):
        _need_tensor("_scaled_mm", value, name, position)
    if out is not None and out_dtype is not None and out_dtype is not out.dtype:
        raise ValueError("out_dtype must match output matrix type")
    result_dtype = out.dtype if out is not None else (out_dtype or input.dtype)
    recipe = _found_recipe(input, mat2, scale_a, scale_b)
    for name, mat in (("mat1", input), ("mat2", mat2)):
        if mat.dim() != 2:
            raise RuntimeError(f"{name} must be a matrix")
    (m, k), (k2, n) = input.shape, mat2.shape
    if k != k2:
        raise RuntimeError(f"mat_a and mat_b shapes cannot be multiplied ({m}x{k} and {k2}x{n})")
    if scale_result is not None and (scale_result.numel() != 1 or
                                     scale_result.dtype is not _dt.float32):
        raise RuntimeError("scale_result must be a float scalar")
    if bias is not None and bias.numel() != n:
        raise RuntimeError(f"Bias must be size {n} but got {bias.numel()}")
    # the result scale divides only a float8 result whose dtype was asked for by out_dtype
    divisor = scale_result if out_dtype in (_dt.float8_e4m3fn, _dt.float8_e5m2) else None
    with grad_disabled():
        res = _dequantised_product(input, mat2, scale_a, scale_b, recipe, bias, result_dtype,
                                   divisor)
    if res.dtype.is_floating_point:
        tracked = [t for t in (input, mat2, scale_a, scale_b, bias, scale_result)
                   if t is not None and t.requires_grad]
        _record_not_implemented("_scaled_mm", tracked, res)
    if out is None:
        return res
    write_out(out, res, "_scaled_mm")
    return out


# ---- scaled_grouped_mm ------------------------------------------------------------------------
def scaled_grouped_mm(mat_a, mat_b, scale_a, scale_recipe_a, scale_b, scale_recipe_b,
                      swizzle_a=None, swizzle_b=None, bias=None, offs=None,
                      output_dtype=_dt.bfloat16, contraction_dim=(), use_fast_accum=False):
    """scaled_mm over groups, grouped as F.grouped_mm groups them (`offs`: int32 group ends)."""
    scales_a, scales_b = _as_list(scale_a), _as_list(scale_b)
    recipes_a, recipes_b = _recipe_values(scale_recipe_a), _recipe_values(scale_recipe_b)
    _recipe_values(swizzle_a), _recipe_values(swizzle_b)
    if mat_a.device.type != "cuda":
        _no_kernel(mat_a, "_scaled_grouped_mm_v2")
    from ._scaled_grouped import rowwise_grouped_product
    out = rowwise_grouped_product(mat_a, mat_b, scales_a, recipes_a, scales_b, recipes_b, bias,
                                  offs, output_dtype, contraction_dim)
    tracked = [t for t in (mat_a, mat_b, *scales_a, *scales_b, offs, bias)
               if t is not None and t.requires_grad]
    _record_not_implemented("_scaled_grouped_mm_v2", tracked, out)
    return out
