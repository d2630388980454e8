"""lobpcg against PyTorch: eigenvectors (up to sign), gradients through both backward formulas,
the tracker, and dtype handling."""
import numpy as np
import pytest

import ember


def _spd(seed, m=12):
    rng = np.random.default_rng(seed)
    q, _ = np.linalg.qr(rng.standard_normal((m, m)))
    return (q * np.arange(1.0, m + 1)) @ q.T


@pytest.mark.parametrize("method", ["ortho", "basic"])
@pytest.mark.parametrize("largest", [True, False])
def test_eigenpairs_match_torch(torch, method, largest):
    a = _spd(0)
    e, u = ember.lobpcg(ember.tensor(a), k=3, largest=largest, method=method)
    te, tu = torch.lobpcg(torch.tensor(a), k=3, largest=largest, method=method)
    np.testing.assert_allclose(e.numpy(), te.numpy(), atol=1e-8)
    overlap = np.abs(u.numpy().T @ tu.numpy())
    np.testing.assert_allclose(overlap, np.eye(3), atol=1e-6)


@pytest.mark.parametrize("k", [2, 4])
def test_gradients_match_torch(torch, k):
    a = _spd(1)
    rng = np.random.default_rng(2)
    w_e, w_u = rng.standard_normal(k), rng.standard_normal((12, 12))
    grads = []
    for lib in (ember, torch):
        A = lib.tensor(a, requires_grad=True)
        e, u = lib.lobpcg(A, k=k)
        # u u^T does not depend on the eigenvectors' signs
        ((e * lib.tensor(w_e)).sum() + ((u @ u.mT) * lib.tensor(w_u)).sum()).backward()
        grads.append(A.grad.numpy())
    np.testing.assert_allclose(grads[0], grads[1], atol=1e-6)


def test_tracker_and_float32():
    steps = []
    e, _ = ember.lobpcg(ember.tensor(_spd(3), dtype=ember.float32), k=2,
                        tracker=lambda solver: steps.append(solver.ivars["istep"]))
    assert e.dtype is ember.float32 and steps == list(range(1, len(steps) + 1))
    np.testing.assert_allclose(e.numpy(), [12.0, 11.0], rtol=1e-4)


def test_backward_refuses_B():
    a = ember.tensor(_spd(4), requires_grad=True)
    e, _ = ember.lobpcg(a, k=1, B=ember.eye(12, dtype=ember.float64))
    with pytest.raises(ValueError, match="does not support backward with B != I"):
        e.sum().backward()
