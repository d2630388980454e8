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
    b = rng.standard_normal((2, 8, 16)).astype(np.float32)  # (G, N, K): mat_b is its transpose, column-major
    sa, sb = rng.random(32, np.float32) + 0.5, rng.random((2, 8), np.float32) + 0.5
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


def test_grouped_rowwise_on_cuda_matches_dequantised_grouped_mm(torch, fake_cuda):
    F = ember.nn.functional
    a, b, sa, sb, offs = _grouped_args(ember, np.random.default_rng(0), device=fake_cuda)
    out = F.scaled_grouped_mm(a, b, sa, F.ScalingType.RowWise, sb, F.ScalingType.RowWise,
                              offs=offs, output_dtype=ember.float32)
    assert out.device == fake_cuda and out.dtype is ember.float32
    ta, tb, tsa, tsb, toffs = (torch.from_numpy(x.cpu().float().numpy()) if x.dtype is not
                               ember.int32 else torch.tensor(x.cpu().tolist(), dtype=torch.int32)
                               for x in (a, b, sa, sb, offs))
    want = torch.nn.functional.grouped_mm(ta * tsa[:, None], tb * tsb[:, None, :], offs=toffs)
    np.testing.assert_allclose(out.cpu().numpy(), want.numpy(), rtol=1e-5, atol=1e-4)
    with pytest.raises(ValueError):
        F.scaled_grouped_mm(a, b, sa[:4], F.ScalingType.RowWise, sb, F.ScalingType.RowWise,
                            offs=offs)


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
        with pytest.raises(ValueError) as mismatch:
            lib._scaled_mm(a, b, s, s, out_dtype=lib.float32, out=out)
        results.append((written is out, out.float().tolist(), type(res.grad_fn).__name__,
                        str(err.value), str(mismatch.value)))
    assert results[0] == results[1]
