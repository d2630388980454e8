"""GraphModule's submodule editing, Interpreter.boxed_run, dead code elimination of an unused
module call, and the order names are dropped in the code, each as torch.fx does them."""


def _session(torch):
    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = torch.nn.Linear(3, 3), torch.nn.ReLU()

        def forward(self, x):
            self.b(x)  # unused: dead code
            return self.b(self.a(x)) + x

    gm = torch.fx.symbolic_trace(M())
    record = [gm.code]
    record.append(gm.graph.eliminate_dead_code())
    record.append(gm.recompile().src if hasattr(gm.recompile(), "src") else gm.code)
    record.append(gm.add_submodule("c.d", torch.nn.Tanh()))
    record.append(type(gm.get_submodule("c.d")).__name__)
    record.append(gm.add_submodule("a.weight.e", torch.nn.Tanh()))
    gm.delete_all_unused_submodules()
    record.append(sorted(name for name, _ in gm.named_modules()))
    record.append((gm.delete_submodule("a"), gm.delete_submodule("nope")))
    inputs = [torch.ones(1, 3)]
    interp = torch.fx.Interpreter(torch.fx.symbolic_trace(M()))
    record.append((tuple(interp.boxed_run(inputs).shape), inputs))
    record.append([n.stack_trace for n in gm.graph.nodes][:1])
    return record


def test_graph_module_editing_matches_torch_fx(torch):
    import ember
    assert _session(ember) == _session(torch)
