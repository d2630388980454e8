"""`TransformGetItemToIndex`: inside the block, indexing by ints and integer tensors is
PyTorch's aten.index (a copy with the same values and gradient), outside it a view again."""
import numpy as np

import ember
from ember._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex


def _index_in_block(lib, block):
    a = lib.arange(24.0).reshape(2, 3, 4).requires_grad_()
    with block():
        picks = [a[lib.tensor(1), 2], a[1], a[0, lib.tensor(2), 3], a[0:1],
                 a[lib.tensor([1, 0])], a[lib.tensor([True, False])]]
    sum(p.sum() * (i + 1) for i, p in enumerate(picks)).backward()
    return picks, a


def test_indexing_in_the_block_matches_pytorchs(torch):
    from torch._dynamo._trace_wrapped_higher_order_op import TransformGetItemToIndex as Theirs
    ours, a = _index_in_block(ember, TransformGetItemToIndex)
    theirs, b = _index_in_block(torch, Theirs)
    for x, y in zip(ours, theirs):
        assert x.shape == y.shape and np.array_equal(x.detach().numpy(), y.detach().numpy())
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


def test_block_results_are_copies_and_indexing_is_restored_after():
    a = ember.zeros(3, 4)
    with TransformGetItemToIndex():
        with TransformGetItemToIndex():  # nested blocks
            row = a[1]
        col = a[0, ember.tensor(2)]
    row += 1
    col += 1
    assert a.sum().item() == 0  # copies: writing them leaves `a` alone
    view = a[1]
    view += 1
    assert a.sum().item() == 4  # outside the block a[1] is a view again
