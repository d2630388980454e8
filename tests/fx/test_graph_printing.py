"""A graph prints as torch.fx prints it: builtins named `builtins.getattr`, leaf arguments
with str() (a string bare, a dtype as `torch.float32`)."""
import ember
import ember.fx as fx


def _graph_text(torch_module):
    g = torch_module.fx.Graph()
    x = g.placeholder("x")
    shape = g.call_function(getattr, (x, "shape"))
    first = g.call_function(__import__("operator").getitem, (shape, 0))
    cast = g.call_method("to", (x,), {"dtype": torch_module.float32, "mode": "abc"})
    g.output((cast, first))
    return str(g)


def test_graph_text_matches_torch_fx(torch):
    assert _graph_text(ember) == _graph_text(torch)
    assert "call_function[target=builtins.getattr](args = (%x, shape)" in _graph_text(ember)
