"""F.scaled_mm beyond the op table (tests/ops/opinfo/scaled_mm.py): the enums, values on
larger inputs, the autograd node PyTorch records, and F.scaled_grouped_mm (refused on the CPU
as PyTorch's CPU build refuses it; its CUDA product checked on the stand-in device against
PyTorch's grouped_mm of the dequantised operands)."""
import numpy as np
import pytest

import ember

RECIPES = ["TensorWise", "RowWise", "BlockWise1x16", "BlockWise1x32", "BlockWise1x128",
           "BlockWise128x128"]


@pytest.mark.parametrize("enum, names", [("ScalingType", RECIPES),
                                         ("SwizzleType", ["NO_SWIZZLE", "SWIZZLE_32_4_4"])])
def test_enums_match_torch(torch, enum, names):
    e, t = getattr(ember.nn.functional, enum), getattr(torch.nn.functional, enum)
    assert list(e.__members__) == list(t.__members__) == names
    assert (e.__name__, e.__module__, e.__doc__) == (t.__name__, t.__module__, t.__doc__)
    for name in names:
        em, tm = getattr(e, name), getattr(t, name)
        assert (repr(em), str(em), em.name, em.value, int(em), hash(em)) == \
            (repr(tm), str(tm), tm.name, tm.value, int(tm), hash(tm))
        assert e(em.value) == em and em != em.value and (em == 0) == (tm == 0)
    assert (repr(e(7)), e(7).name) == (repr(t(7)), t(7).name)
    with pytest.raises(TypeError):
        e("a")
    with pytest.raises(TypeError):
        e(0) < e(1)


def _pair(lib, a, b, sa, sb, recipe, **kwargs):
    F = lib.nn.functional
    r = getattr(F.ScalingType, recipe)
    return F.scaled_mm(lib.tensor(a).to(lib.float8_e4m3fn), lib.tensor(b).to(lib.float8_e5m2),
                       lib.tensor(sa), r, lib.tensor(sb), r, **kwargs)


@pytest.mark.parametrize("recipe", ["TensorWise", "RowWise"])
def test_values_match_torch(torch, recipe):
    rng = np.random.default_rng(0)
    m, k, n = 48, 80, 24
    a, b = rng.standard_normal((m, k), np.float32) * 20, rng.standard_normal((k, n), np.float32)
    shapes = ((), ()) if recipe == "TensorWise" else ((m, 1), (1, n))
    sa, sb = (rng.random(s, np.float32) + 0.5 for s in shapes)
    bias = rng.standard_normal(n).astype(np.float32)
    for kwargs in ({"output_dtype": torch.float32}, {"output_dtype": torch.float32, "bias": bias},
                   {}, {"output_dtype": torch.float8_e4m3fn}):
        t = _pair(torch, a, b, sa, sb, recipe,
                  **{k: (torch.tensor(v) if k == "bias" else v) for k, v in kwargs.items()})
        e = _pair(ember, a, b, sa, sb, recipe,
                  **{k: (ember.tensor(v) if k == "bias" else getattr(ember, str(v).split(".")[1]))
                     for k, v in kwargs.items()})
        assert str(e.dtype) == str(t.dtype)
        np.testing.assert_allclose(e.float().numpy(), t.float().numpy(), rtol=1e-5, atol=1e-4
                                   if t.dtype == torch.float32 else 0.5)


def test_not_differentiable_like_torch(torch):
    results = []
    for lib in (torch, ember):
        F = lib.nn.functional
        a = lib.ones(4, 16).to(lib.float8_e4m3fn)
        b = lib.ones(16, 8).to(lib.float8_e4m3fn)
        s = lib.tensor(2.0, requires_grad=True)
        bias = lib.zeros(8, requires_grad=True)
        out = F.scaled_mm(a, b, lib.tensor(1.0), F.ScalingType.TensorWise, s,
                          F.ScalingType.TensorWise, bias=bias)
        with pytest.raises(RuntimeError) as err:
            out.float().sum().backward()
        ints = F.scaled_mm(a, b, s, F.ScalingType.TensorWise, s, F.ScalingType.TensorWise,
                           output_dtype=lib.int32)
        with lib.no_grad():
            quiet = F.scaled_mm(a, b, s, F.ScalingType.TensorWise, s, F.ScalingType.TensorWise)
        results.append((type(out.grad_fn).__name__, len(out.grad_fn.next_functions),
                        str(err.value), ints.requires_grad, quiet.requires_grad))
    assert results[0] == results[1]
    assert results[1][2] == "derivative for aten::_scaled_mm_v2 is not implemented"


def _grouped_args(lib, rng, device=None):
    a = rng.standard_normal((32, 16)).astype(np.float32)
    b = rng.standard_normal((2, 16, 16)).astype(np.float32)  # mat_b is its column-major transpose
    sa, sb = rng.random(32, np.float32) + 0.5, rng.random((2, 16), np.float32) + 0.5
    t = [lib.tensor(x, device=device) for x in (a, b, sa, sb)]
    return (t[0].to(lib.float8_e4m3fn), t[1].to(lib.float8_e4m3fn).transpose(-2, -1), t[2],
            t[3], lib.tensor([16, 32], dtype=lib.int32, device=device))


def test_grouped_refused_on_cpu_like_torch(torch):
    messages = []
    for lib in (torch, ember):
        F = lib.nn.functional
        a, b, sa, sb, offs = _grouped_args(lib, np.random.default_rng(0))
        with pytest.raises(NotImplementedError) as err:
            F.scaled_grouped_mm(a, b, sa, F.ScalingType.RowWise, sb, F.ScalingType.RowWise,
                                offs=offs)
        messages.append(str(err.value))
    assert messages[0].startswith(messages[1])  # torch goes on to list its build's backends


def _to_torch(torch, x):
    if x.dtype is ember.int32:
        return torch.tensor(x.cpu().tolist(), dtype=torch.int32)
    return torch.from_numpy(x.cpu().float().numpy())


@pytest.mark.parametrize("case", ["2d-3d", "3d-3d", "3d-2d", "2d-2d"])
def test_grouped_rowwise_on_cuda_matches_dequantised_grouped_mm(torch, fake_cuda, case):
    """PyTorch's CUDA kernel, checked against its CPU grouped_mm of the scaled operands."""
    rng = np.random.default_rng(0)
    g, m, k, n = 2, 32, 16, 16
    shape_a, shape_b, sa_shape, sb_shape, offs = {
        "2d-3d": ((m, k), (g, n, k), (m,), (g, n), [16, 32]),
        "3d-3d": ((g, m, k), (g, n, k), (g, m), (g, n), None),
        "3d-2d": ((g, m, k), (n, k), (g, m), (n,), [0, 16]),
        "2d-2d": ((m, 2 * k), (n, 2 * k), (g * m,), (g * n,), [16, 32]),
    }[case]
    F = ember.nn.functional
    a = ember.tensor(rng.standard_normal(shape_a, np.float32), device=fake_cuda)
    b = ember.tensor(rng.standard_normal(shape_b, np.float32), device=fake_cuda)
    a, b = a.to(ember.float8_e4m3fn), b.to(ember.float8_e4m3fn).transpose(-2, -1)
    sa = ember.tensor(rng.random(sa_shape, np.float32) + 0.5, device=fake_cuda)
    sb = ember.tensor(rng.random(sb_shape, np.float32) + 0.5, device=fake_cuda)
    kw = {} if offs is None else {"offs": ember.tensor(offs, dtype=ember.int32, device=fake_cuda)}
    out = F.scaled_grouped_mm(a, b, sa, F.ScalingType.RowWise, sb, F.ScalingType.RowWise, **kw)
    assert out.device == fake_cuda and out.dtype is ember.bfloat16
    ta, tb, tsa, tsb = (_to_torch(torch, x) for x in (a, b, sa, sb))
    tkw = {k: _to_torch(torch, v) for k, v in kw.items()}
    if case == "2d-2d":  # each K group has its own scales
        tsa, tsb = tsa.view(g, m), tsb.view(g, n)
        want = torch.stack([torch.nn.functional.grouped_mm(
            ta * tsa[i][:, None], tb * tsb[i], **tkw)[i] for i in range(g)])
    else:
        want = torch.nn.functional.grouped_mm(ta * tsa[..., None],
                                              tb * (tsb if tsb.dim() == 1 else tsb[:, None]), **tkw)
    np.testing.assert_allclose(out.float().cpu().numpy(), want.bfloat16().float().numpy(),
                               rtol=1e-2, atol=1e-2)


def test_grouped_checks_on_cuda(fake_cuda):
    F = ember.nn.functional
    R = F.ScalingType.RowWise
    a, b, sa, sb, offs = _grouped_args(ember, np.random.default_rng(0), device=fake_cuda)
    cases = [
        ((a, b, sa[:4], R, sb, R), {"offs": offs}, RuntimeError,
         "scale must have the same length as mat for arg 0"),
        ((a, b, sa, R, sb[0], R), {"offs": offs}, RuntimeError,
         "scale must be a 2D tensor, but got 1D for arg 1"),
        ((a, b.transpose(-2, -1).contiguous(), sa, R, sb, R), {"offs": offs}, ValueError,
         "Expected mat2 to be transposed"),
        ((a, b, sa, R, sb, R), {}, ValueError, "Have to provide offsets if there is a 2d matrix"),
        ((a, b, sa, R, sb, R), {"offs": offs, "output_dtype": ember.float32}, ValueError,
         "Only bf16 high precision output types are supported for grouped gemm"),
        ((a, b, sa, F.ScalingType.TensorWise, sb, R), {"offs": offs}, ValueError,
         "No gemm implementation was found"),
        ((a, b, sa, F.ScalingType.BlockWise1x32, sb, F.ScalingType.BlockWise1x32),
         {"offs": offs}, NotImplementedError, "scaled_grouped_mm: ember computes"),
    ]
    for args, kwargs, error, message in cases:
        with pytest.raises(error, match=message):
            F.scaled_grouped_mm(*args, **kwargs)


def test_first_form_refuses_differing_contraction_dims(torch):
    a, b, s = np.ones((4, 32), np.float32), np.ones((16, 8), np.float32), np.float32(1.0)
    messages = []
    for lib in (torch, ember):
        with pytest.raises(RuntimeError) as err:
            lib._scaled_mm(lib.tensor(a).to(lib.float8_e4m3fn), lib.tensor(b).to(
                lib.float8_e4m3fn), lib.tensor(s), lib.tensor(s))
        messages.append(str(err.value))
    # PyTorch's oneDNN kernel (CPUs with AVX-512) names the operands mat1 and mat2, its
    # reference kernel (elsewhere, and ember) mat_a and mat_b
    assert messages[0] in (messages[1], messages[1].replace("mat_a and mat_b", "mat1 and mat2"))
    assert messages[1] == "mat_a and mat_b shapes cannot be multiplied (4x32 and 16x8)"


def test_first_form_out_and_autograd_like_torch(torch):
    results = []
    for lib in (torch, ember):
        a = lib.ones(4, 16).to(lib.float8_e4m3fn)
        b = lib.ones(16, 8).to(lib.float8_e4m3fn)
        s = lib.tensor(2.0, requires_grad=True)
        out = lib.empty(0, dtype=lib.bfloat16)
        with lib.no_grad():
            written = lib._scaled_mm(a, b, s, lib.tensor(0.5), out=out)
        res = lib._scaled_mm(a, b, s, lib.tensor(0.5), out_dtype=lib.float32)
        with pytest.raises(RuntimeError) as err:
            res.sum().backward()
        # PyTorch's oneDNN kernel (CPUs with AVX-512) raises RuntimeError, its reference
        # kernel (elsewhere, and ember) ValueError, with the same message
        with pytest.raises((ValueError, RuntimeError)) as mismatch:
            lib._scaled_mm(a, b, s, s, out_dtype=lib.float32, out=out)
        results.append((written is out, out.float().tolist(), type(res.grad_fn).__name__,
                        str(err.value), str(mismatch.value)))
    assert results[0] == results[1]


@pytest.mark.parametrize("recipe", ["TensorWise", "RowWise"])
def test_scaled_mm_on_cuda_equals_cpu(fake_cuda, recipe):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((8, 32), np.float32), rng.standard_normal((32, 16), np.float32)
    shapes = ((), ()) if recipe == "TensorWise" else ((8, 1), (1, 16))
    sa, sb = (rng.random(s, np.float32) + 0.5 for s in shapes)
    cpu = _pair(ember, a, b, sa, sb, recipe)
    F = ember.nn.functional
    r = getattr(F.ScalingType, recipe)
    on = [ember.tensor(x, device=fake_cuda) for x in (a, b, sa, sb)]
    cuda = F.scaled_mm(on[0].to(ember.float8_e4m3fn), on[1].to(ember.float8_e5m2), on[2], r,
                       on[3], r)
    assert cuda.device == fake_cuda and cuda.dtype is cpu.dtype
    np.testing.assert_array_equal(cuda.cpu().float().numpy(), cpu.float().numpy())
