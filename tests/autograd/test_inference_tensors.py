"""Tensors made in inference_mode are guarded as PyTorch's: outside the mode they are read-only
(in-place ops, setitem, out=, also through views), cannot be saved for backward and cannot
start requiring grad; inside the mode everything goes."""
import pytest

import ember

INPLACE = "Inplace update to inference tensor outside InferenceMode is not allowed"


def _inference_tensor():
    with ember.inference_mode():
        return ember.ones(3)


@pytest.mark.parametrize("write", [
    lambda t: t.add_(1), lambda t: t.mul_(2), lambda t: t.zero_(), lambda t: t.exp_(),
    lambda t: t.__setitem__(0, 2.0), lambda t: t[0:2].fill_(0),
    lambda t: ember.add(ember.ones(3), 1, out=t)],
    ids=["add_", "mul_", "zero_", "exp_", "setitem", "view_fill_", "out"])
def test_writes_outside_inference_mode_raise(write):
    t = _inference_tensor()
    with pytest.raises(RuntimeError, match=INPLACE):
        write(t)
    assert t.tolist() == [1.0, 1.0, 1.0]
    with ember.inference_mode():
        write(t)  # allowed inside


def test_saved_for_backward_raises_but_unsaved_use_is_fine():
    t = _inference_tensor()
    x = ember.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        x * t
    (x + t).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]


def test_requires_grad_outside_inference_mode_raises():
    with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor"):
        _inference_tensor().requires_grad_()


def test_view_made_in_inference_mode_of_a_normal_tensor_is_normal():
    y = ember.ones(3)
    with ember.inference_mode():
        v = y[0:2]
    assert not v.is_inference()
    v.zero_()
    assert y.tolist() == [0.0, 0.0, 1.0]


def test_inference_tensors_have_no_version_counter(torch):
    for lib in (ember, torch):
        with lib.inference_mode():
            made = lib.ones(2)
        with pytest.raises(RuntimeError, match="Inference tensors do not track version counter"):
            made._version
        assert lib.ones(2)._version == 0
