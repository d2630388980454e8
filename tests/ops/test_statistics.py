"""var and std round like PyTorch's CPU kernels: accumulated in double, the root taken before
rounding to the input's precision (timm's EvoNorm takes a float32 variance of float64
activations, so a float32 rounding step showed in a float64 model's output)."""
import numpy as np
import pytest

import ember


def _data(shape, seed=0):
    return (np.random.default_rng(seed).standard_normal(shape) * 3 + 1).astype(np.float32)


@pytest.mark.parametrize("fname", ["var", "std", "var_mean", "std_mean"])
@pytest.mark.parametrize("dim", [(2, 3, 4), (4,), 1, None])
def test_float32_spread_is_bitwise_torch(torch, fname, dim):
    x = _data((2, 8, 3, 16, 16))
    kw = {} if dim is None else {"dim": dim, "keepdim": True}
    want = getattr(torch, fname)(torch.from_numpy(x), **kw)
    got = getattr(ember, fname)(ember.from_numpy(x), **kw)
    # the spread (first output) is the exactly rounded one in both
    want, got = (want[0], got[0]) if isinstance(want, tuple) else (want, got)
    np.testing.assert_array_equal(got.numpy(), want.numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_half_precision_std_takes_the_root_before_rounding(torch, dtype):
    x = _data((4, 8, 64))
    want = torch.from_numpy(x).to(getattr(torch, dtype)).std(dim=2)
    got = ember.from_numpy(x).to(getattr(ember, dtype)).std(dim=2)
    np.testing.assert_array_equal(got.float().numpy(), want.float().numpy())


def test_complex_var_adds_the_rounded_variances_of_its_parts(torch):
    x = _data((3, 4, 128)) * (1 + 0.5j)
    x = (x + 1j * _data((3, 4, 128), seed=1)).astype(np.complex64)
    for dim in (2, (1, 2)):
        want = torch.from_numpy(x).var(dim=dim)
        got = ember.from_numpy(x).var(dim=dim)
        assert got.dtype is ember.float32
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        parts = (ember.from_numpy(x.real.copy()).var(dim=dim)
                 + ember.from_numpy(x.imag.copy()).var(dim=dim))
        np.testing.assert_array_equal(got.numpy(), parts.numpy())


def test_float32_variance_is_the_exact_one_rounded_once():
    # one float32 pass would lose the small spread of large values to cancellation
    x = (np.float32(1e4) + np.arange(4096, dtype=np.float32) % 7).astype(np.float32)
    exact = np.float32(x.astype(np.float64).var())
    assert ember.from_numpy(x).var(unbiased=False).item() == exact
