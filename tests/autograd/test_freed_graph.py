"""A second backward through a graph whose saved values were freed raises, as PyTorch's; a node
that saved nothing (x + 1, views) can be run again; retain_graph=True keeps one more pass."""
import pytest

import ember

FREED = "Trying to backward through the graph a second time"


@pytest.mark.parametrize("make", [lambda x: x * 2, lambda x: 2 * x, lambda x: x / 2,
                                  lambda x: x * x, lambda x: x.exp(),
                                  lambda x: x.div(2, rounding_mode="floor")],
                         ids=["mul_number", "rmul_number", "div_number", "mul_tensor", "exp",
                              "floor_div"])
def test_second_backward_through_saved_values_raises(make):
    x = ember.ones(3, requires_grad=True)
    y = make(x).sum()
    y.backward()
    first = x.grad.clone()
    with pytest.raises(RuntimeError, match=FREED):
        y.backward()
    assert ember.equal(x.grad, first)  # the failed pass added nothing


@pytest.mark.parametrize("make", [lambda x: x + 1, lambda x: x.view(3, 1), lambda x: -x],
                         ids=["add_number", "view", "neg"])
def test_nodes_without_saved_values_run_again(make):
    x = ember.ones(3, requires_grad=True)
    y = make(x).sum()
    y.backward()
    y.backward()
    assert ember.equal(x.grad, 2 * ember.autograd.grad(make(x).sum(), x)[0])


def test_retain_graph_keeps_one_more_pass():
    x = ember.ones(3, requires_grad=True)
    y = (x * 2).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert x.grad.tolist() == [4.0, 4.0, 4.0]
    with pytest.raises(RuntimeError, match=FREED):
        y.backward()


def test_backward_inputs_must_require_grad():
    x, z = ember.ones(3, requires_grad=True), ember.ones(3)
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has requires_grad=False"):
        (x * z).sum().backward(inputs=[z])
