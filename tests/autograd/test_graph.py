"""`autograd.graph`: gradient edges and increment_version, as PyTorch's."""
import pytest

import ember
from ember.autograd import graph


def test_gradient_edges_name_the_node_and_input(torch):
    for lib, g in ((ember, graph), (torch, torch.autograd.graph)):
        x = lib.ones(2, requires_grad=True)
        leaf_edge = g.get_gradient_edge(x)
        assert type(leaf_edge.node).__name__ == "AccumulateGrad" and leaf_edge.output_nr == 0
        y = (x * 2).unbind(0)[1]
        edge = g.get_gradient_edge(y)
        assert type(edge.node).__name__ == "UnbindBackward0" and edge.output_nr == 1
        assert edge.node is y.grad_fn and edge._fields == ("node", "output_nr",
                                                            "ownership_token")
        with pytest.raises(RuntimeError, match="not possible to get the gradient edge"):
            g.get_gradient_edge(lib.ones(2))


def test_increment_version_makes_a_saved_tensor_stale(torch):
    messages = []
    for lib, g in ((ember, graph), (torch, torch.autograd.graph)):
        x = lib.ones(3, requires_grad=True)
        y = x.exp()
        before = y._version
        g.increment_version([y])
        assert y._version == before + 1
        with pytest.raises(RuntimeError) as info:  # exp saved its result y for backward
            y.sum().backward()
        messages.append(str(info.value).split(":")[0])
    assert messages[0] == messages[1]


def test_graph_node_is_the_graphs_node_type():
    x = ember.ones(2, requires_grad=True)
    assert isinstance((x * 2).grad_fn, graph.Node)
