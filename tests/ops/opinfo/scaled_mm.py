"""Op-table entries for `ember/ops/scaled_mm.py`. The operands are made float8 and the scales
float32 inside the call (the runner's arrays are float64 or float32), so every run is the
same float8 product; the errors are PyTorch CPU's (blockwise recipes refused, scale shapes,
bias, contraction dims). Nothing is differentiable: gradcheck does not run. scaled_grouped_mm
has no CPU kernel in PyTorch; tests/ops/test_scaled_mm.py checks its refusal and its CUDA
product."""
import numpy as np

from . import OpInfo, Sample, randn, register


def scalar(rng):
    """A positive 0-dim scale."""
    return np.array(abs(rng.standard_normal()) + 0.1)


def call(lib, a, b, scale_a, scale_b, recipe="TensorWise", recipe_b=None, b_dtype=None,
         **kwargs):
    F = lib.nn.functional
    a = a.to(lib.float8_e4m3fn)
    b = b.to(getattr(lib, b_dtype or "float8_e4m3fn"))
    if isinstance(scale_a, lib.Tensor):
        scale_a = scale_a.float()
    if isinstance(scale_b, lib.Tensor):
        scale_b = scale_b.float()
    if "output_dtype" in kwargs and kwargs["output_dtype"] is not None:
        kwargs["output_dtype"] = getattr(lib, kwargs["output_dtype"])
    if kwargs.get("swizzle_a") is not None:
        kwargs["swizzle_a"] = getattr(F.SwizzleType, kwargs["swizzle_a"])
    if isinstance(kwargs.get("bias"), lib.Tensor):
        kwargs["bias"] = kwargs["bias"].float()
    out = F.scaled_mm(a, b, scale_a, getattr(F.ScalingType, recipe), scale_b,
                      getattr(F.ScalingType, recipe_b or recipe), **kwargs)
    # the runner reads results through NumPy, which holds no float8 tensor of PyTorch's
    return out.float(), out.dtype


def S(*args, **kwargs):
    return Sample(*args, grad=(), **kwargs)  # no operand requires grad: nothing to check


def samples(rng):
    def ab(m=4, k=32, n=8):
        return randn(rng, m, k), randn(rng, k, n)

    f32 = {"output_dtype": "float32"}
    row = {"recipe": "RowWise"}
    return [
        S((*ab(), scalar(rng), scalar(rng)), f32),
        S((*ab(), scalar(rng), scalar(rng))),  # bfloat16 out
        S((*ab(), scalar(rng), scalar(rng)),
               {"output_dtype": "float16", "bias": randn(rng, 8)}),
        S((*ab(), scalar(rng), scalar(rng)), {"output_dtype": None}),
        S((*ab(), scalar(rng), scalar(rng)),
               {**f32, "b_dtype": "float8_e5m2", "contraction_dim": [1, 0]}),
        S((*ab(4, 7, 3), randn(rng, 1, 1), randn(rng, 1)), f32),  # K need not be 16k
        S((*ab(), scalar(rng), scalar(rng)), f32, noncontig=(0, 1)),
        S((*ab(), randn(rng, 4, 1), randn(rng, 1, 8)), {**f32, **row}),
        S((*ab(), randn(rng, 4, 1), randn(rng, 1, 8)), {**row, "bias": randn(rng, 1, 8)}),
        S((*ab(0, 32, 8), scalar(rng), scalar(rng))),
        S((*ab(4, 0, 8), scalar(rng), scalar(rng)), f32),
        # errors, with PyTorch's messages
        S((randn(rng, 2, 4, 32), randn(rng, 32, 8), scalar(rng), scalar(rng)),
               raises=ValueError),
        S((*ab(4, 32, 8)[:1], randn(rng, 16, 8), scalar(rng), scalar(rng)), raises=ValueError),
        S((*ab(), scalar(rng), scalar(rng)), {"contraction_dim": [1]}, raises=ValueError),
        S((*ab(), scalar(rng), scalar(rng)), {"contraction_dim": [0, 0]}, raises=ValueError),
        S((*ab(), scalar(rng), scalar(rng)), {"contraction_dim": [2, 0]}, raises=IndexError),
        S((*ab(), scalar(rng), scalar(rng)), {"bias": randn(rng, 3)}, raises=ValueError),
        S((*ab(), scalar(rng), scalar(rng)), {"recipe_b": "RowWise"}, raises=ValueError),
        S((*ab(), randn(rng, 4, 1), randn(rng, 1, 8)), {"recipe": "BlockWise1x128"},
               raises=ValueError),
        S((*ab(), randn(rng, 2), scalar(rng)), raises=ValueError),
        S((*ab(), [scalar(rng), scalar(rng)], scalar(rng)), raises=ValueError),
        S((*ab(), None, scalar(rng)), raises=ValueError),  # a missing scale reads "None"
        S((*ab(), scalar(rng), []), raises=ValueError),
        S((*ab(), randn(rng, 5, 1), randn(rng, 1, 8)), row, raises=ValueError),
        S((*ab(), randn(rng, 4, 1), randn(rng, 1, 9)), row, raises=ValueError),
        S((*ab(), randn(rng, 4), randn(rng, 1, 8)), row, raises=IndexError),
        S((*ab(), scalar(rng), scalar(rng)), row, raises=IndexError),
        S((*ab(), randn(rng, 4, 1), randn(rng, 2, 8)[:1, :]), row),
        S((*ab(), randn(rng, 4, 1), randn(rng, 8)), row, raises=IndexError),
    ]


register(OpInfo("scaled_mm", call, samples, grad=False, atol=1e-2, rtol=1e-2,
                covers=("nn.functional.scaled_mm",)))


def grouped_call(lib, a, b, scale_a, scale_b, offs=None):
    F = lib.nn.functional
    if offs is not None:
        offs = lib.tensor(offs, dtype=lib.int32)
    return F.scaled_grouped_mm(a.to(lib.float8_e4m3fn), b.to(lib.float8_e4m3fn), scale_a.float(),
                               F.ScalingType.RowWise, scale_b.float(), F.ScalingType.RowWise,
                               offs=offs)


def grouped_samples(rng):
    # PyTorch's CPU build has no kernel for it: every CPU call is refused (the messages differ
    # in the list of backends the build has, so parity does not compare them)
    return [S((randn(rng, 32, 16), randn(rng, 2, 16, 16), randn(rng, 32), randn(rng, 2, 16),
               [16, 32]), raises=NotImplementedError),
            S((randn(rng, 2, 8, 16), randn(rng, 2, 16, 16), randn(rng, 2, 8), randn(rng, 2, 16)),
              raises=NotImplementedError)]


register(OpInfo("scaled_grouped_mm", grouped_call, grouped_samples, grad=False, parity="none",
                covers=("nn.functional.scaled_grouped_mm",)))


def first_form_call(lib, a, b, scale_a, scale_b, b_dtype=None, **kwargs):
    """torch._scaled_mm, which tells the recipe from the scales' shapes."""
    for key in ("out_dtype", "scale_result", "bias"):
        if isinstance(kwargs.get(key), str):
            kwargs[key] = getattr(lib, kwargs[key])
        elif isinstance(kwargs.get(key), lib.Tensor):
            kwargs[key] = kwargs[key].float()
    out = lib._scaled_mm(a.to(lib.float8_e4m3fn), b.to(getattr(lib, b_dtype or "float8_e4m3fn")),
                         scale_a.float(), scale_b.float(), **kwargs)
    return out.float(), out.dtype


def first_form_samples(rng):
    def ab(m=4, k=32, n=8):
        return randn(rng, m, k), randn(rng, k, n)

    return [
        S((*ab(), scalar(rng), scalar(rng))),  # the result is float8, as mat_a
        S((*ab(), scalar(rng), scalar(rng)), {"out_dtype": "float32", "bias": randn(rng, 8)}),
        S((*ab(), scalar(rng), scalar(rng)), {"out_dtype": "bfloat16", "b_dtype": "float8_e5m2"}),
        S((*ab(), scalar(rng), scalar(rng)),
          {"out_dtype": "float8_e4m3fn", "scale_result": scalar(rng)}),
        S((*ab(), scalar(rng), scalar(rng)), {"scale_result": scalar(rng)}),  # not applied
        S((*ab(), randn(rng, 4, 1), randn(rng, 1, 8)), {"out_dtype": "float32"}),
        S((*ab(0, 32, 8), scalar(rng), scalar(rng))),
        S((randn(rng, 2, 4, 32), randn(rng, 32, 8), scalar(rng), scalar(rng)),
          raises=RuntimeError),
        # (contraction dims that differ: test_scaled_mm.py, where PyTorch's two CPU kernels'
        # messages are both accepted)
        S((*ab(), scalar(rng), scalar(rng)), {"bias": randn(rng, 3)}, raises=RuntimeError),
        S((*ab(), scalar(rng), scalar(rng)), {"scale_result": randn(rng, 2)},
          raises=RuntimeError),
        S((*ab(), scalar(rng), randn(rng, 1, 8)), raises=ValueError),
        S((*ab(), randn(rng, 4, 1), randn(rng, 8, 1)), raises=ValueError),
        S((*ab(), randn(rng, 4), randn(rng, 1, 8)), raises=ValueError),
    ]


register(OpInfo("_scaled_mm", first_form_call, first_form_samples, grad=False, atol=1e-2,
                rtol=1e-2))
