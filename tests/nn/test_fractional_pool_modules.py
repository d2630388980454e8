"""nn.FractionalMaxPool2d/3d against PyTorch: constructor checks, repr and state dict, the
windows picked for given random samples in every floating dtype (PyTorch computes their starts
in the input's precision), gradients, and random sampling when no samples are given."""
import numpy as np
import pytest

import ember


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float32", "float64"])
@pytest.mark.parametrize("nd,shape,kernel,kw", [
    (2, (2, 3, 17, 13), 3, dict(output_size=(6, 5))),
    (2, (3, 31, 29), (2, 3), dict(output_ratio=(0.7, 0.5))),
    (3, (2, 2, 9, 8, 7), 2, dict(output_size=(4, 5, 3))),
    (3, (2, 13, 12, 11), (2, 3, 2), dict(output_ratio=0.6)),
])
def test_module_with_samples_matches_torch(torch, dtype, nd, shape, kernel, kw):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape)
    n_batch = shape[0] if len(shape) == nd + 2 else 1
    u = rng.random((n_batch, shape[-nd - 1], nd))
    res, grad_out = [], None
    for lib in (ember, torch):
        dt = getattr(lib, dtype)
        cls = getattr(lib.nn, f"FractionalMaxPool{nd}d")
        m = cls(kernel, return_indices=True, _random_samples=lib.tensor(u, dtype=dt), **kw)
        xt = lib.tensor(x, dtype=dt, requires_grad=True)
        y, idx = m(xt)
        grad_out = rng.standard_normal(tuple(y.shape)) if grad_out is None else grad_out
        y.backward(lib.tensor(grad_out, dtype=dt))
        res.append((y.detach().float().numpy(), idx.numpy(), xt.grad.float().numpy(),
                    list(m.state_dict()), repr(m), type(y.grad_fn).__name__))
    ours, theirs = res
    np.testing.assert_array_equal(ours[0], theirs[0])
    np.testing.assert_array_equal(ours[1], theirs[1])
    tol = 1e-2 if dtype in ("float16", "bfloat16") else 1e-6
    np.testing.assert_allclose(ours[2], theirs[2], rtol=tol, atol=tol)
    assert ours[3:] == theirs[3:]


def test_random_samples_drawn_when_not_given(torch):
    for lib in (ember, torch):
        m = lib.nn.FractionalMaxPool2d(2, output_ratio=0.5)
        assert m._random_samples is None and list(m.state_dict()) == []
        x = lib.randn(2, 3, 10, 12)
        y = m(x)
        assert tuple(y.shape) == (2, 3, 5, 6)
        # every output is the max of some 2x2 window of its plane
        y2, idx = lib.nn.functional.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5),
                                                          return_indices=True)
        flat = x.reshape(2, 3, -1)
        np.testing.assert_array_equal(flat.gather(2, idx.reshape(2, 3, -1)).numpy(),
                                      y2.reshape(2, 3, -1).numpy())


def test_module_errors_match_torch(torch):
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="FractionalMaxPool2d requires specifying either an "
                                             "output size, or a pooling ratio"):
            lib.nn.FractionalMaxPool2d(3)
        with pytest.raises(ValueError, match="only one of output_size and output_ratio may be "
                                             "specified"):
            lib.nn.FractionalMaxPool3d(3, output_size=2, output_ratio=0.5)
        with pytest.raises(ValueError, match=r"output_ratio must be between 0 and 1 \(got 1.5\)"):
            lib.nn.FractionalMaxPool2d(3, output_ratio=1.5)
        with pytest.raises(ValueError, match=r"output_ratio must be between 0 and 1 \(got "
                                             r"\(0.5, 1\)\)"):
            lib.nn.FractionalMaxPool2d(3, output_ratio=(0.5, 1))
        with pytest.raises(NotImplementedError, match="\"fractional_max_pool2d_out_frame\" not "
                                                      "implemented for 'Long'"):
            lib.nn.functional.fractional_max_pool2d(
                lib.ones(1, 1, 5, 5, dtype=lib.long), 2, output_size=2,
                _random_samples=lib.ones(1, 1, 2, dtype=lib.long))
        with pytest.raises(TypeError, match="object of type 'float' has no len()"):
            lib.nn.functional.fractional_max_pool2d(lib.ones(1, 1, 5, 5), 2, output_ratio=0.5)
