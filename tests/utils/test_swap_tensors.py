"""torch.utils.swap_tensors and set_module: each object keeps its identity and takes the other's
whole contents (class, data, autograd state, attributes)."""
import weakref

import pytest

import ember


def test_swap_exchanges_data_grad_state_and_attributes():
    a = ember.tensor([1.0, 2.0])
    b = ember.tensor([3.0]).requires_grad_()
    a.note = "from a"
    ember.utils.swap_tensors(a, b)
    assert a.tolist() == [3.0] and a.requires_grad and not b.requires_grad
    assert b.tolist() == [1.0, 2.0]
    assert b.note == "from a" and not hasattr(a, "note")


def test_swap_exchanges_classes_with_parameters():
    p, t = ember.nn.Parameter(ember.ones(2)), ember.zeros(2)
    ember.utils.swap_tensors(p, t)
    assert type(p) is ember.Tensor and p.tolist() == [0.0, 0.0]
    assert type(t) is ember.nn.Parameter and t.requires_grad and t.tolist() == [1.0, 1.0]


def test_swapped_non_leaf_keeps_its_graph():
    w = ember.ones(2, requires_grad=True)
    v, z = w * 2, ember.zeros(2)
    ember.utils.swap_tensors(v, z)
    z.sum().backward()
    assert w.grad.tolist() == [2.0, 2.0] and v.grad_fn is None


def test_swap_refuses_weakly_referenced_tensors_and_non_tensors():
    t = ember.ones(1)
    ref = weakref.ref(t)
    with pytest.raises(RuntimeError, match="Cannot swap t1 because it has weakref"):
        ember.utils.swap_tensors(t, ember.zeros(1))
    assert ref() is t and t.tolist() == [1.0]
    with pytest.raises(AttributeError):
        ember.utils.swap_tensors(1, ember.zeros(1))


def test_set_module():
    def f():
        pass
    ember.utils.set_module(f, "torch.somewhere")
    assert f.__module__ == "torch.somewhere"
    with pytest.raises(TypeError, match="The mod argument should be a string"):
        ember.utils.set_module(f, 3)
