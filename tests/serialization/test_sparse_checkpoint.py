"""Sparse COO tensors in checkpoints: PyTorch writes them as
`torch._utils._rebuild_sparse_tensor(torch.serialization._get_layout('torch.sparse_coo'),
(indices, values, size, is_coalesced))`; ember writes and reads the same form (saving one
used to fail: the pickler asked the sparse tensor's dataless array for strides)."""
import io
import warnings

import numpy as np
import pytest

import ember

INDICES = [[0, 1, 2, 2], [2, 0, 1, 3]]
VALUES = [1.0, -2.0, 3.5, 4.0]


def _ember_sparse():
    return ember.sparse_coo_tensor(ember.tensor(INDICES), ember.tensor(VALUES), (3, 4),
                                   check_invariants=True)


def _roundtrip(obj, **kwargs):
    buffer = io.BytesIO()
    ember.save(obj, buffer)
    buffer.seek(0)
    return ember.load(buffer, **kwargs)


def test_sparse_tensor_roundtrips_weights_only():
    loaded = _roundtrip({"adj": _ember_sparse(), "layout": ember.sparse_coo,
                         "dense": ember.ones(2)})
    adj = loaded["adj"]
    assert adj.layout is ember.sparse_coo and loaded["layout"] is ember.sparse_coo
    assert adj.shape == (3, 4) and adj.dtype is ember.float32 and not adj.is_coalesced()
    np.testing.assert_array_equal(adj.to_dense().numpy(), _ember_sparse().to_dense().numpy())
    assert _roundtrip(_ember_sparse().coalesce()).is_coalesced()


def test_sparse_tensor_goes_to_pytorch_and_back(torch):
    buffer = io.BytesIO()
    ember.save({"adj": _ember_sparse()}, buffer)
    buffer.seek(0)
    theirs = torch.load(buffer, weights_only=True)["adj"]
    assert theirs.layout == torch.sparse_coo and theirs.shape == (3, 4)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PyTorch's once-per-process invariants warning
        expected = torch.sparse_coo_tensor(torch.tensor(INDICES), torch.tensor(VALUES), (3, 4))
    assert torch.equal(theirs.to_dense(), expected.to_dense())
    buffer = io.BytesIO()
    torch.save(expected.coalesce(), buffer)
    buffer.seek(0)
    ours = ember.load(buffer)
    assert ours.is_coalesced() and ours._nnz() == 4
    np.testing.assert_array_equal(ours.to_dense().numpy(), expected.to_dense().numpy())


def test_loaded_sparse_indices_are_checked_against_the_size(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        bad = torch.sparse_coo_tensor(torch.tensor([[1], [7]]), torch.tensor([1.0]), (6, 5),
                                      check_invariants=False)
    buffer = io.BytesIO()
    torch.save(bad, buffer)
    buffer.seek(0)
    with pytest.raises(RuntimeError, match="for dim 1, size is 5 but found index 7"):
        ember.load(buffer)
