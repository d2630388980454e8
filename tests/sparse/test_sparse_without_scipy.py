"""Sparse COO tensors on NumPy alone (SciPy hidden): construction, conversion, sums and every
product form, with values and gradients compared against PyTorch."""
import sys

import numpy as np
import pytest

import ember


@pytest.fixture
def no_scipy(monkeypatch):
    for name in [m for m in sys.modules if m == "scipy" or m.startswith("scipy.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "scipy", None)   # `import scipy...` now raises ImportError
    monkeypatch.setitem(sys.modules, "scipy.sparse", None)


def test_construction_and_to_dense_need_no_scipy(no_scipy):
    s = ember.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2), check_invariants=True)
    assert s.to_dense().tolist() == [[0.0, 2.0], [3.0, 0.0]]


PRODUCTS = {
    "sparse.mm": lambda m, s, d: m.sparse.mm(s, d),
    "spmm": lambda m, s, d: m.spmm(s, d),
    "mm": lambda m, s, d: m.mm(s, d),
    "sparse @ dense": lambda m, s, d: s @ d,
    "dense @ sparse": lambda m, s, d: d.t() @ s,
    "sparse @ sparse": lambda m, s, d: (s @ s.t()).to_dense() * d.sum(),
    "mv": lambda m, s, d: m.mv(s, d[:, 0]),
    "matmul vector": lambda m, s, d: m.matmul(s, d[:, 1]),
    "addmm": lambda m, s, d: m.addmm(m.ones(3, 2), s, d, beta=0.5, alpha=2.0),
    "sparse.addmm": lambda m, s, d: m.sparse.addmm(m.ones(3, 2), s, d),
    "sparse.sum": lambda m, s, d: m.sparse.sum(s) * d.sum(),
    "sparse.sum dim": lambda m, s, d: m.sparse.sum(s, 1).to_dense() * d[:, 0],
    "to_sparse": lambda m, s, d: d.to_sparse() @ d.t(),
}


@pytest.mark.parametrize("name", list(PRODUCTS))
def test_products_and_sums_match_pytorch_without_scipy(no_scipy, torch, name):
    ind = [[0, 1, 1, 2, 0], [2, 0, 2, 1, 2]]  # uncoalesced: (0, 2) twice
    vals = [1.0, 2.0, 3.0, 4.0, 5.0]
    dense = np.arange(6, dtype=np.float32).reshape(3, 2) - 2
    results = []
    for m in (ember, torch):
        s = m.sparse_coo_tensor(m.tensor(ind), m.tensor(vals), (3, 3)).coalesce()
        s.requires_grad_(name not in ("to_sparse", "sparse @ sparse"))
        d = m.tensor(dense, requires_grad=True)
        out = PRODUCTS[name](m, s, d)
        out.sum().backward()
        grads = [d.grad.numpy()]
        # (torch.mm and @ give the sparse operand an unmasked gradient, a difference of
        # their own; sparse.mm and sparse.addmm mask it to the stored positions)
        if name.startswith("sparse.") and s.grad is not None:
            grads.append(s.grad.to_dense().numpy())
        results.append((out.detach().numpy(), grads))
    (ours, our_grads), (theirs, their_grads) = results
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert len(our_grads) == len(their_grads)
    for g, h in zip(our_grads, their_grads):
        np.testing.assert_allclose(g, h, rtol=1e-6)
