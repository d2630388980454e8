"""float16 and bfloat16 reductions accumulate in float32 and round once, as PyTorch's do: a
half-precision variance of large equal values is 0 (not inf), long sums and running sums keep
their small terms; float16 products go through float32 BLAS. Values checked against fixed
numbers, and against PyTorch when installed."""
import pytest

import ember

HALVES = ["float16", "bfloat16"]

# (id, function of the library and a dtype) -> a tensor whose values PyTorch computes in float32
CASES = [
    ("var_large", lambda lib, dt: lib.full((8,), 1e4, dtype=dt).var()),
    ("std_large", lambda lib, dt: lib.full((8,), 1e4, dtype=dt).std()),
    ("var_dim", lambda lib, dt: lib.full((8, 3), 1e4, dtype=dt).var(0)),
    ("var_mean", lambda lib, dt: lib.var_mean(lib.full((8,), 1e4, dtype=dt))[0]),
    ("std_mean_mean", lambda lib, dt: lib.std_mean(lib.full((8,), 1e4, dtype=dt))[1]),
    ("norm_large", lambda lib, dt: lib.full((8,), 1e4, dtype=dt).norm()),
    ("vector_norm_dim", lambda lib, dt: lib.linalg.vector_norm(lib.full((8, 3), 1e4, dtype=dt), dim=0)),
    ("mean_large", lambda lib, dt: lib.full((10,), 1e4, dtype=dt).mean()),
    ("mean_many_ones", lambda lib, dt: lib.ones(4096, dtype=dt).mean()),
    ("sum_many_ones", lambda lib, dt: lib.ones(4096, dtype=dt).sum()),
    ("sum_dim_many_ones", lambda lib, dt: lib.ones(3, 4096, dtype=dt).sum(1)),
    ("sum_overflows", lambda lib, dt: lib.full((8,), 1e4, dtype=dt).sum()),
    ("nansum_many_ones", lambda lib, dt: lib.ones(4096, dtype=dt).nansum()),
    ("nanmean_many_ones", lambda lib, dt: lib.ones(4096, dtype=dt).nanmean()),
    ("cumsum_many_ones", lambda lib, dt: lib.ones(3000, dtype=dt).cumsum(0)[-5:]),
    ("cumsum_large", lambda lib, dt: lib.full((8,), 1e4, dtype=dt).cumsum(0)),
]

EXPECTED = {  # float16 results (PyTorch 2.x); bfloat16 checked through the parity test
    "var_large": [0.0], "std_large": [0.0], "var_mean": [0.0], "norm_large": [28288.0],
    "mean_large": [10000.0], "mean_many_ones": [1.0], "sum_many_ones": [4096.0],
    "sum_overflows": [float("inf")], "nansum_many_ones": [4096.0], "nanmean_many_ones": [1.0],
    "cumsum_many_ones": [2996.0, 2996.0, 2998.0, 3000.0, 3000.0],
}


def _values(t):
    return t.float().reshape(-1).tolist()


@pytest.mark.parametrize("case", [c for c in CASES if c[0] in EXPECTED], ids=lambda c: c[0])
def test_float16_reductions_accumulate_in_float32(case):
    name, fn = case
    res = fn(ember, ember.float16)
    assert res.dtype is ember.float16
    assert _values(res) == EXPECTED[name]


BFLOAT16_EXPECTED = {"sum_many_ones": [4096.0], "mean_many_ones": [1.0], "var_large": [0.0]}


@pytest.mark.parametrize("name", sorted(BFLOAT16_EXPECTED))
def test_bfloat16_sums_keep_small_terms(name):
    res = dict(CASES)[name](ember, ember.bfloat16)
    assert res.dtype is ember.bfloat16
    assert _values(res) == BFLOAT16_EXPECTED[name]


def test_cuda_half_sum_accumulates_in_float32(fake_cuda):
    x = ember.ones(4096, dtype=ember.bfloat16, device=fake_cuda)
    assert x.sum().item() == 4096.0
    assert ember.full((8,), 1e4, dtype=ember.float16, device=fake_cuda).var().item() == 0.0


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c[0])
def test_half_reductions_match_pytorch(torch, case, dtype):
    name, fn = case
    ours, theirs = fn(ember, getattr(ember, dtype)), fn(torch, getattr(torch, dtype))
    assert str(ours.dtype) == str(theirs.dtype)
    assert _values(ours) == theirs.float().reshape(-1).tolist()


# float16 and bfloat16 products: NumPy's own float16 matmul loop and ml_dtypes' bfloat16 one
# (no BLAS) are hundreds of times slower than float32; the product helper multiplies through
# float32 and rounds once, as PyTorch's CPU half and bfloat16 products (accumulated in
# float32) do.
PRODUCTS = [
    ("mm", lambda lib, a, b: a @ b),
    ("bmm", lambda lib, a, b: lib.bmm(a.reshape(2, 6, 8), lib.stack([b, b.flip(0)]))),
    ("matmul_broadcast", lambda lib, a, b: lib.matmul(a.reshape(2, 6, 8), b)),
    ("linear", lambda lib, a, b: lib.nn.functional.linear(a, b.t())),
    ("einsum_pair", lambda lib, a, b: lib.einsum("ij,jk->ik", a, b)),
    ("mm_out", lambda lib, a, b: lib.mm(a, b, out=lib.empty(12, 4, dtype=a.dtype))),
]
HALVES = ["float16", "bfloat16"]


def _half_operands(lib, dtype="float16"):
    a = lib.linspace(-3, 3, 12 * 8).reshape(12, 8).sin().to(getattr(lib, dtype))
    b = lib.linspace(-2, 2, 8 * 4).reshape(8, 4).cos().to(getattr(lib, dtype))
    return a, b


def _half_dtypes():
    import ml_dtypes
    import numpy as np
    return {np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)}


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("case", PRODUCTS, ids=lambda c: c[0])
def test_half_products_go_through_float32_blas(case, dtype, monkeypatch):
    import numpy as np
    real, seen = np.matmul, []

    def spy(x, y, *args, **kwargs):
        seen.append((np.asarray(x).dtype, np.asarray(y).dtype))
        return real(x, y, *args, **kwargs)

    monkeypatch.setattr(np, "matmul", spy)
    res = case[1](ember, *_half_operands(ember, dtype))
    assert res.dtype is getattr(ember, dtype)
    assert seen and not _half_dtypes() & {d for pair in seen for d in pair}


@pytest.mark.parametrize("dtype", HALVES)
def test_half_linear_backward_goes_through_float32_blas(dtype, monkeypatch):
    import numpy as np
    real, seen = np.matmul, []
    monkeypatch.setattr(np, "matmul", lambda x, y, *a, **k: seen.append(x.dtype) or
                        real(x, y, *a, **k))
    a, b = (t.requires_grad_() for t in _half_operands(ember, dtype))
    (a @ b).float().sum().backward()
    assert a.grad.dtype is b.grad.dtype is getattr(ember, dtype)
    assert seen and not _half_dtypes() & set(seen)


@pytest.mark.parametrize("dtype", HALVES)
@pytest.mark.parametrize("case", PRODUCTS, ids=lambda c: c[0])
def test_half_products_match_pytorch(torch, case, dtype):
    ours = case[1](ember, *_half_operands(ember, dtype))
    theirs = case[1](torch, *_half_operands(torch, dtype))
    assert str(ours.dtype) == str(theirs.dtype) and tuple(ours.shape) == tuple(theirs.shape)
    # one rounding of a float32 sum: equal but for the sums' order (an ulp at most)
    tol = 1e-3 if dtype == "float16" else 1e-2
    assert ember.allclose(ours.float(), ember.tensor(theirs.float().tolist()), rtol=tol,
                          atol=tol)
