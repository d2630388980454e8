"""`utils.hooks`: unserializable_hook and warn_if_has_hooks, over a tensor's `_backward_hooks`
(on a leaf and on a non-leaf), as PyTorch's."""
import warnings

import pytest

import ember


def _warnings(lib, mark):
    def hook(grad):
        return grad
    if mark:
        hook = lib.utils.hooks.unserializable_hook(hook)
    leaf = lib.ones(2, requires_grad=True)
    inner = leaf * 2
    out = []
    for t in (leaf, inner):
        assert t._backward_hooks is None
        t.register_hook(hook)
        assert list(t._backward_hooks.values()) == [hook]
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            lib.utils.hooks.warn_if_has_hooks(t)
        out.append([str(w.message).split(" on tensor")[1] for w in caught])
    return out


@pytest.mark.parametrize("mark", [False, True])
def test_hooks_warn_unless_marked_as_torch(torch, mark):
    assert _warnings(ember, mark) == _warnings(torch, mark)
