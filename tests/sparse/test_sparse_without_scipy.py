"""Sparse tensors without the optional SciPy: construction and conversion work, and a
product that needs SciPy says which extra to install instead of failing obscurely."""
import sys

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


def test_product_names_the_missing_extra(no_scipy):
    s = ember.sparse_coo_tensor([[0, 1], [1, 0]], [2.0, 3.0], (2, 2), check_invariants=True)
    with pytest.raises(ImportError, match=r"pip install 'ember\[sparse\]'"):
        ember.sparse.mm(s, ember.ones(2, 2))
