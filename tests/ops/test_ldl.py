"""linalg.ldl_factor / ldl_solve beyond the op table: randomized parity of the pivots (every
Bunch-Kaufman branch), solutions that solve, batches that broadcast, no derivative."""
import numpy as np
import pytest

import ember


def _random_symmetric(rng, n, complex_, hermitian):
    a = rng.standard_normal((n, n)) + (1j * rng.standard_normal((n, n)) if complex_ else 0)
    a = a + (a.conj().T if hermitian else a.T)
    # zero diagonals and zero rows reach the 2x2 pivots, the interchanges and info > 0
    if rng.random() < 0.4:
        np.fill_diagonal(a, 0)
    if rng.random() < 0.2:
        i = rng.integers(n)
        a[i, :] = a[:, i] = 0
    return a


@pytest.mark.parametrize("complex_,hermitian", [(False, False), (True, False), (True, True)])
def test_random_factors_match_torch(torch, complex_, hermitian):
    rng = np.random.default_rng(7)
    for _ in range(60):
        a = _random_symmetric(rng, int(rng.integers(1, 9)), complex_, hermitian)
        t = torch.linalg.ldl_factor_ex(torch.tensor(a), hermitian=hermitian)
        e = ember.linalg.ldl_factor_ex(ember.tensor(a), hermitian=hermitian)
        np.testing.assert_array_equal(e.pivots.numpy(), t.pivots.numpy())
        np.testing.assert_array_equal(e.info.numpy(), t.info.numpy())
        np.testing.assert_allclose(e.LD.numpy(), t.LD.numpy(), atol=1e-10, rtol=1e-10)
        if t.info.item() == 0:
            b = rng.standard_normal((a.shape[0], 2))
            x = ember.linalg.ldl_solve(e.LD, e.pivots, ember.tensor(b + 0j if complex_ else b),
                                       hermitian=hermitian).numpy()
            np.testing.assert_allclose(a @ x, b, atol=1e-8)


def test_larger_matrix_pivots_match_torch(torch):
    """Past LAPACK's block size (64) its blocked ?lasyf makes the same pivot choices."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((80, 80))
    a = a + a.T
    t = torch.linalg.ldl_factor(torch.tensor(a))
    e = ember.linalg.ldl_factor(ember.tensor(a))
    np.testing.assert_array_equal(e.pivots.numpy(), t.pivots.numpy())
    np.testing.assert_allclose(e.LD.numpy(), t.LD.numpy(), atol=1e-10)


def test_solve_broadcasts_batches():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 4, 4))
    a = a + np.swapaxes(a, -1, -2)
    LD, pivots = ember.linalg.ldl_factor(ember.tensor(a))
    b = rng.standard_normal((3, 1, 4, 2))
    x = ember.linalg.ldl_solve(LD, pivots, ember.tensor(b))
    assert x.shape == (3, 2, 4, 2)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a[None], b), atol=1e-10)


def test_singular_raises_and_ex_reports():
    res = ember.linalg.ldl_factor_ex(ember.zeros(2, 3, 3))
    assert res.info.tolist() == [1, 1] and res.pivots.dtype is ember.int32
    with pytest.raises(RuntimeError, match=r"\(Batch element 0\).*singular"):
        ember.linalg.ldl_factor(ember.zeros(2, 3, 3))
    with pytest.raises(RuntimeError, match="singular"):
        ember.linalg.ldl_factor_ex(ember.zeros(3, 3), check_errors=True)


def test_no_derivative():
    a = ember.tensor([[2.0, 1.0], [1.0, -3.0]], dtype=ember.float64, requires_grad=True)
    LD, pivots = ember.linalg.ldl_factor(a)
    assert LD.requires_grad and not pivots.requires_grad
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_factor_ex is not "
                                           "implemented"):
        LD.sum().backward()
    b = ember.ones(2, 1, dtype=ember.float64, requires_grad=True)
    x = ember.linalg.ldl_solve(LD.detach(), pivots, b)
    with pytest.raises(RuntimeError, match="derivative for aten::linalg_ldl_solve is not "
                                           "implemented"):
        x.sum().backward()


def test_common_notes(torch):
    assert set(ember.linalg.common_notes) == set(torch.linalg.common_notes)
    assert "{}" in ember.linalg.common_notes["sync_note_has_ex"]
    assert all(isinstance(v, str) and v for v in ember.linalg.common_notes.values())
