"""The warnings of deprecated ops the op table runs quietly: `triangular_solve` warns once per
process (PyTorch's TORCH_WARN_ONCE), `Tensor.resize` / `resize_as` on every call."""
import warnings

import ember


def _messages(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [str(w.message).split(" (Triggered internally")[0] for w in caught]


def test_triangular_solve_warns_once_with_pytorchs_message(torch):
    torch.set_warn_always(True)  # PyTorch's warn-once then warns on every call
    try:
        theirs = _messages(lambda: torch.triangular_solve(torch.ones(2, 1), torch.eye(2)))
    finally:
        torch.set_warn_always(False)
    ember._state._warned_once.clear()
    first = _messages(lambda: ember.triangular_solve(ember.ones(2, 1), ember.eye(2)))
    second = _messages(lambda: ember.triangular_solve(ember.ones(2, 1), ember.eye(2)))
    assert first == theirs and len(theirs) == 1 and second == []


def test_resize_warns_on_every_call(torch):
    for lib in (torch, ember):
        x = lib.arange(6.0)
        assert _messages(lambda: x.resize(2, 3)) == ["non-inplace resize is deprecated"]
        assert _messages(lambda: x.resize_as(lib.ones(3, 2))) == \
            ["non-inplace resize_as is deprecated"]
