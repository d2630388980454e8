"""What the op table cannot compare with PyTorch for the `*_copy` ops: memory of their own,
and the parts of a sparse COO tensor (PyTorch 2.13 has no sparse kernel for values_copy)."""
import ember


def test_copies_do_not_share_memory():
    x = ember.arange(12.0).reshape(3, 4)
    for copy in (ember.view_copy(x, (12,)), ember.t_copy(x), ember.select_copy(x, 0, 1),
                 ember.alias_copy(x), ember.slice_copy(x, 1, 0, 2), *ember.unbind_copy(x)):
        copy.fill_(-1.0)
    assert x.tolist() == ember.arange(12.0).reshape(3, 4).tolist()


def test_values_and_indices_copy_of_a_coo_tensor():
    dense = ember.tensor([[0.0, 2.0], [3.0, 0.0]])
    sparse = dense.to_sparse().coalesce()
    values, indices = ember.values_copy(sparse), ember.indices_copy(sparse)
    assert values.tolist() == [2.0, 3.0] and indices.tolist() == [[0, 1], [1, 0]]
    values.fill_(0.0)
    assert sparse.values().tolist() == [2.0, 3.0]
