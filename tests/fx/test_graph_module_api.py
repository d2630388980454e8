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


def _dead_code_session(torch):
    def noisy(x):
        return x

    def f(x, flag):
        torch.fx.wrap  # noqa: B018 (the module is reachable)
        return x + 1 if flag else x

    gm = torch.fx.symbolic_trace(f, concrete_args={"flag": True})
    g = gm.graph
    x = next(iter(g.nodes))
    with g.inserting_after(x):
        g.call_function(noisy, (x,))
        g.call_function(torch.fx.has_side_effect(lambda v: v), (x,))
    changed = g.eliminate_dead_code()
    return changed, [n.op for n in g.nodes]


def test_dead_code_keeps_checks_and_marked_side_effects(torch):
    import ember
    ours, theirs = _dead_code_session(ember), _dead_code_session(torch)
    assert ours == theirs
    assert ours[1].count("call_function") == 4  # the marked lambda, eq, _assert, add
