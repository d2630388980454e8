"""return_types.pytree_register_structseq: a registered result type flattens to its fields
for the function transforms, and comes back as the same type."""
import pytest

import ember
from ember.utils import _pytree


class Pair(tuple):
    """A result type that is a tuple but no namedtuple (PyTorch's structseq kind)."""

    def __new__(cls, values):
        return super().__new__(cls, values)


def test_registered_structseq_flattens_and_rebuilds():
    ember.return_types.pytree_register_structseq(Pair)
    try:
        leaves, spec = _pytree.flatten([Pair((1, ember.ones(1))), 3])
        assert leaves[0] == 1 and leaves[2] == 3
        rebuilt = _pytree.unflatten(leaves, spec)
        assert type(rebuilt[0]) is Pair and rebuilt[0][0] == 1
        with pytest.raises(ValueError, match="already registered"):
            ember.return_types.pytree_register_structseq(Pair)
        out = ember.func.vmap(lambda x: Pair((x * 2, x + 1)))(ember.arange(3.0))
        assert type(out) is Pair and out[0].tolist() == [0.0, 2.0, 4.0]
    finally:
        _pytree._NODES.pop(Pair, None)
