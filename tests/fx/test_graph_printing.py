"""A graph prints as torch.fx prints it: builtins named `builtins.getattr`, leaf arguments
with str() (a string bare, a dtype as `torch.float32`)."""
import pytest

import ember


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


def _specialized(torch_module):
    def f(x, flag, n=None, k=3):
        return x * k if flag else -x

    def g(x, y):
        return x + y

    fx_module = torch_module.fx
    gm = fx_module.symbolic_trace(f, concrete_args={"flag": True, "n": None, "k": 2})
    ph = fx_module.symbolic_trace(g, concrete_args={"y": fx_module.PH})
    ok = gm(torch_module.ones(2), True, None, 2).tolist()
    errors = []
    for bad in [(False, None, 2), (True, 1, 2), (True, None, 3)]:
        try:
            gm(torch_module.ones(2), *bad)
        except AssertionError as e:
            errors.append(str(e))
    return gm.code, ph.code, ok, errors


def test_concrete_args_stay_inputs_checked_at_run_time_as_in_torch_fx(torch):
    ours, theirs = _specialized(ember), _specialized(torch)
    assert ours == theirs
    assert "torch.fx._symbolic_trace._assert_is_none(n_1" in ours[0]
    assert len(ours[3]) == 3


def _tabular_f(x):
    return (x.sum(dim=1) + 1.5).view(-1, 1) * x


_TABLE = """\
opcode         name    target                   args          kwargs
-------------  ------  -----------------------  ------------  ----------
placeholder    x       x                        ()            {}
call_method    sum_1   sum                      (x,)          {'dim': 1}
call_function  add     <built-in function add>  (sum_1, 1.5)  {}
call_method    view    view                     (add, -1, 1)  {}
call_function  mul     <built-in function mul>  (view, x)     {}
output         output  output                   (mul,)        {}
"""


def test_print_tabular_lays_out_the_table_without_tabulate(capsys):
    ember.fx.symbolic_trace(_tabular_f).graph.print_tabular()
    assert capsys.readouterr().out == _TABLE


def test_print_tabular_matches_torch_fx(torch, capsys):
    # torch.fx's print_tabular needs the `tabulate` package; ember's does not.
    pytest.importorskip("tabulate")
    torch.fx.symbolic_trace(_tabular_f).graph.print_tabular()
    assert capsys.readouterr().out == _TABLE


def _annotated(lib):
    from typing import List, Optional, Tuple

    class M(lib.nn.Module):
        def forward(self, x: lib.Tensor, n: int = 2, y: Optional[lib.Tensor] = None,
                    z: List[int] = None, t: Tuple[int, float] = (1, 2.0), w=None) -> lib.Tensor:
            return x * n

    class Unannotated(lib.nn.Module):
        def forward(self, x):
            return x + 1
    gm = lib.fx.symbolic_trace(M())
    again = lib.fx.symbolic_trace(gm)  # the generated code's annotations resolve
    return (gm.code, str(gm.graph), again.code, gm(lib.ones(2)).tolist(),
            lib.fx.symbolic_trace(Unannotated()).code)


def test_annotations_in_code_and_graph_match_torch_fx(torch):
    """The forward's annotations become the placeholders' and output's types, written into
    the code (`x : torch.Tensor`, `-> torch.Tensor`) and the graph text, as fx does (the FX
    conv-bn fuser tutorial prints ResNet's traced code)."""
    import torch.fx  # noqa: F401
    assert _annotated(ember) == _annotated(torch)


def _builtin_named_params(torch_module):
    class M(torch_module.nn.Module):
        def forward(self, input, sum, x, device):
            return input + sum + x

    gm = torch_module.fx.symbolic_trace(M())
    ones = torch_module.ones(1)
    return gm.code, str(gm.graph), gm(ones, ones, ones, None).tolist()


def test_parameters_named_like_builtins_as_in_torch_fx(torch):
    """A parameter named like a builtin (`input`, `sum`) or `device` is the node `input_1`,
    which the code assigns first (`input_1 = input`), as fx does."""
    assert _builtin_named_params(ember) == _builtin_named_params(torch)


def test_graph_module_str_as_torch_fx(torch):
    """print(gm): the module, its code, then fx's reminder of print_readable()."""
    def text(lib):
        return str(lib.fx.symbolic_trace(lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.ReLU())))
    assert text(ember) == text(torch)


@pytest.mark.parametrize("params", ["x, input", "x", "input"])
def test_print_readable_as_torch_fx(torch, params):
    """The stack-trace note sits below the parameters' own lines, a blank line between."""
    def text(lib):
        ns = {"lib": lib}
        exec(f"class M(lib.nn.Module):\n    def forward(self, {params}):\n"
             f"        return {params.replace(',', ' +')}{' + 1' if params == 'x' else ''}\n", ns)
        return lib.fx.symbolic_trace(ns["M"]()).print_readable(print_output=False)
    assert text(ember) == text(torch)
