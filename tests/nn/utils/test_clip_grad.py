"""nn.utils against PyTorch: gradient clipping and parameter vectors."""
import math

import numpy as np
import pytest

import ember


def _params(lib, seed=0):
    rng = np.random.default_rng(seed)
    ps = []
    for shape in [(3, 4), (4,), (2, 2)]:
        p = lib.nn.Parameter(lib.tensor(rng.standard_normal(shape)))
        p.grad = lib.tensor(rng.standard_normal(shape) * 3)
        ps.append(p)
    return ps


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf, 3.0])
@pytest.mark.parametrize("max_norm", [0.5, 100.0])
def test_clip_grad_norm_matches_torch(torch, norm_type, max_norm):
    ours, theirs = _params(ember), _params(torch)
    t1 = ember.nn.utils.clip_grad_norm_(ours, max_norm, norm_type)
    t2 = torch.nn.utils.clip_grad_norm_(theirs, max_norm, norm_type)
    np.testing.assert_allclose(t1.item(), t2.item(), rtol=1e-12)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-12)



@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "complex64"])
def test_two_norm_matches_torch_and_the_exact_value(torch, dtype):
    """The 2-norm of real gradients sums x * x (|x|^2 exactly, no abs pass) in one einsum:
    PyTorch's value within its rounding, and the float64 value of the same numbers within the
    dtype's rounding."""
    rng = np.random.default_rng(3)
    grads = [rng.standard_normal(shape) * 3 for shape in [(301, 7), (5,), (2, 3, 4)]]
    if dtype == "complex64":
        grads = [g + 1j * rng.standard_normal(g.shape) for g in grads]
    grads = [g.astype(dtype) for g in grads]
    total = ember.nn.utils.get_total_norm([ember.tensor(g) for g in grads], 2.0)
    want = torch.nn.utils.get_total_norm([torch.tensor(g) for g in grads], 2.0)
    assert str(total.dtype)[6:] == str(want.dtype)[6:]
    rtol = {"float16": 2e-3, "float64": 1e-14}.get(dtype, 1e-6)
    np.testing.assert_allclose(total.numpy(), want.numpy(), rtol=rtol)
    exact = np.sqrt(sum((np.abs(g.astype(np.complex128)) ** 2).sum() for g in grads))
    np.testing.assert_allclose(total.numpy().astype(np.float64), exact, rtol=rtol)


def test_clip_grad_value_and_nonfinite_error(torch):
    ours, theirs = _params(ember), _params(torch)
    ember.nn.utils.clip_grad_value_(ours, 1.0)
    torch.nn.utils.clip_grad_value_(theirs, 1.0)
    for a, b in zip(ours, theirs):
        np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())
    bad = _params(ember)
    bad[0].grad[0, 0] = float("nan")
    with pytest.raises(RuntimeError, match="non-finite"):
        ember.nn.utils.clip_grad_norm_(bad, 1.0, error_if_nonfinite=True)


def test_parameters_vector_roundtrip():
    ps = _params(ember)
    vec = ember.nn.utils.parameters_to_vector(ps)
    assert vec.shape == ember.Size([12 + 4 + 4])
    ember.nn.utils.vector_to_parameters(vec * 2, ps)
    np.testing.assert_allclose(ember.nn.utils.parameters_to_vector(ps).detach().numpy(),
                               (vec * 2).detach().numpy())
