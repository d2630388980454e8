"""nn.CrossMapLRN2d against PyTorch: outputs and its hand-written gradients for every window
size against channel counts, float32 and float64, repr, grad_fn name and errors."""
import numpy as np
import pytest

import ember


@pytest.mark.parametrize("size", [2, 3, 4, 5, 6])
@pytest.mark.parametrize("channels", [1, 2, 3, 5, 8])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cross_map_lrn2d_matches_torch(torch, size, channels, dtype):
    rng = np.random.default_rng(size * 10 + channels)
    x = rng.standard_normal((2, channels, 3, 2)).astype(dtype)
    g = rng.standard_normal((2, channels, 3, 2)).astype(dtype)
    res = []
    for lib in (ember, torch):
        xt = lib.tensor(x, requires_grad=True)
        y = lib.nn.CrossMapLRN2d(size, alpha=0.3, beta=0.6, k=2)(xt)
        y.backward(lib.tensor(g))
        res.append((y.detach().numpy(), xt.grad.numpy(), type(y.grad_fn).__name__))
    tol = dict(rtol=1e-5, atol=1e-6) if dtype == "float32" else dict(rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(res[0][0], res[1][0], **tol)
    np.testing.assert_allclose(res[0][1], res[1][1], **tol)
    assert res[0][0].dtype == res[1][0].dtype
    assert res[0][2] == res[1][2] == "CrossMapLRN2dBackward"


def test_cross_map_lrn2d_repr_and_errors_match_torch(torch):
    for lib in (ember, torch):
        m = lib.nn.CrossMapLRN2d(3)
        assert repr(m) == "CrossMapLRN2d(3, alpha=0.0001, beta=0.75, k=1)"
        with pytest.raises(ValueError, match="CrossMapLRN2d: Expected input to be 4D, got 3D "
                                             "instead."):
            m(lib.ones(4, 2, 2))
        x = lib.ones(1, 3, 2, 2, requires_grad=True)
        y = lib.nn.CrossMapLRN2d(1)(x)
        with pytest.raises(RuntimeError, match=r"start \(1\) \+ length \(3\) exceeds dimension "
                                               r"size \(3\)."):
            y.sum().backward()
