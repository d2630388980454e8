"""torch.fx on ember: the same model class bodies traced by torch.fx and ember.fx give the
same nodes (op, name, target, the nodes they read) and, where the model calls no Python-level
`torch.nn.functional` function, the same generated code (PyTorch records those through
`__torch_function__`, which moves all their arguments after the tensors into keywords; ember
records the call as written). The GraphModule gives
the original's outputs and gradients; the graph-editing API, Interpreter, Transformer,
replace_pattern, ShapeProp, wrap and pickling."""
import operator
import pickle

import numpy as np
import pytest

import ember
import ember.fx


def _models(lib):
    nn, F = lib.nn, lib.nn.functional

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(6, 8), nn.Linear(8, 3)
            self.scale = nn.Parameter(lib.ones(8))

        def forward(self, x, mask=None):
            h = lib.relu(self.fc1(x)) * self.scale
            h = F.dropout(h, 0.1, training=False)
            return F.log_softmax(self.fc2(h), dim=-1)

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.head = nn.Sequential(nn.Flatten(), nn.Linear(4 * 4 * 4, 5))

        def forward(self, x):
            y = F.max_pool2d(lib.relu(self.bn(self.conv(x))), 2)
            return self.head(y + y[:, :1])

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(8)
            self.qkv = nn.Linear(8, 24)

        def forward(self, x):
            b, t = x.size(0), x.size(1)
            q, k, v = self.qkv(self.ln(x)).chunk(3, dim=-1)
            att = (q @ k.transpose(-2, -1)) / 8 ** 0.5
            att = att.softmax(dim=-1)
            return x + (att @ v).view(b, t, -1) + lib.ones(8)

    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
            self.bn1 = nn.BatchNorm2d(4)
            self.conv2 = nn.Conv2d(4, 4, 3, padding=1, bias=False)
            self.bn2 = nn.BatchNorm2d(4)
            self.act = nn.ReLU(inplace=True)

        def forward(self, x):
            out = self.act(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            out += x
            return lib.flatten(self.act(out), 1).mean(dim=1, keepdim=True)

    class Transformer(nn.Module):
        """LayerNorm, GELU, a causal mask buffer, `x.size()` arithmetic and a real tensor
        meeting a Proxy on the left of an operator."""
        def __init__(self):
            super().__init__()
            self.ln1, self.ln2 = nn.LayerNorm(8), nn.LayerNorm(8)
            self.q, self.k, self.v = nn.Linear(8, 8), nn.Linear(8, 8), nn.Linear(8, 8)
            self.mlp = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.Linear(16, 8))
            self.register_buffer("bias", lib.tril(lib.ones(5, 5)))

        def forward(self, x):
            B, T, C = x.size()
            h = self.ln1(x)
            q, k, v = self.q(h), self.k(h), self.v(h)
            att = lib.matmul(q, k.transpose(1, 2)) * (1.0 / C ** 0.5)
            att = att.masked_fill(self.bias == 0, float("-inf"))
            x = x + (lib.softmax(att, dim=-1) @ v).reshape(B, T, C)
            x = x + self.mlp(self.ln2(x))
            return lib.ones(8) * x + x.shape[0]

    return {"mlp": (MLP, (4, 6)), "cnn": (CNN, (2, 3, 8, 8)), "block": (Block, (2, 5, 8)),
            "residual": (Residual, (2, 4, 6, 6)), "transformer": (Transformer, (2, 5, 8))}


def _describe(gm):
    def target(t):
        if isinstance(t, str):
            return t
        return getattr(t, "__name__", repr(t))
    return [(n.op, n.name, target(n.target), [a.name for a in n.all_input_nodes])
            for n in gm.graph.nodes]


@pytest.mark.parametrize("name", ["mlp", "cnn", "block", "residual", "transformer"])
def test_same_graph_code_and_values_as_pytorch(torch, name):
    ours_cls, shape = _models(ember)[name]
    theirs_cls, _ = _models(torch)[name]
    ours, theirs = ours_cls().eval(), theirs_cls().eval()
    theirs.load_state_dict({k: torch.tensor(v.detach().numpy())
                            for k, v in ours.state_dict().items()})
    gm, tgm = ember.fx.symbolic_trace(ours), torch.fx.symbolic_trace(theirs)
    assert _describe(gm) == _describe(tgm)
    assert gm.code == tgm.code
    x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
    np.testing.assert_allclose(gm(ember.tensor(x)).detach().numpy(),
                               tgm(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["mlp", "cnn", "block", "residual", "transformer"])
def test_outputs_and_gradients_equal_the_original(name):
    cls, shape = _models(ember)[name]
    model = cls()
    gm = ember.fx.symbolic_trace(model)
    x = ember.randn(*shape, requires_grad=True)
    want = model(x)
    want.sum().backward()
    grads = [p.grad.clone() for p in model.parameters()] + [x.grad.clone()]
    model.zero_grad()
    x.grad = None
    got = gm(x)
    got.sum().backward()
    assert ember.equal(got, want)
    # the GraphModule holds the same parameter objects as the model
    for a, b in zip([p.grad for p in model.parameters()] + [x.grad], grads):
        assert ember.allclose(a, b)


def test_control_flow_and_len_raise_as_in_pytorch():
    relu = ember.relu
    class Branchy(ember.nn.Module):
        def forward(self, x):
            return x if x.sum() > 0 else -x

    class Iterating(ember.nn.Module):
        def forward(self, x):
            return [y for y in x]

    class Sized(ember.nn.Module):
        def forward(self, x):
            return x * len(x)

    with pytest.raises(ember.fx.proxy.TraceError, match="control flow"):
        ember.fx.symbolic_trace(Branchy())
    with pytest.raises(ember.fx.proxy.TraceError, match="cannot be iterated"):
        ember.fx.symbolic_trace(Iterating())
    with pytest.raises(RuntimeError, match="'len' is not supported"):
        ember.fx.symbolic_trace(Sized())
    # the patched namespaces are restored after a failed trace
    assert ember.relu is relu
    assert not hasattr(ember.relu, "__fx_original__")


def _twice(x):
    return x * 2


ember.fx.wrap("_twice")


def test_wrap_and_concrete_args():
    class M(ember.nn.Module):
        def forward(self, x, flag):
            return _twice(x) if flag else x

    gm = ember.fx.symbolic_trace(M(), concrete_args={"flag": True})
    # as in torch.fx the flag stays an input (flag_1), checked to be True when the graph runs
    assert [n.target for n in gm.graph.nodes if n.op == "call_function"] == \
        [operator.eq, ember._assert, _twice]
    assert ember.equal(gm(ember.ones(2), True), ember.full((2,), 2.0))


def test_editing_the_graph():
    class M(ember.nn.Module):
        def forward(self, x):
            return ember.relu(x) + 1

    gm = ember.fx.symbolic_trace(M())
    graph = gm.graph
    relu = next(n for n in graph.nodes if n.target is ember.relu)
    with graph.inserting_after(relu):
        neg = graph.call_function(ember.neg, (relu,))
    relu.replace_all_uses_with(neg)
    neg.update_arg(0, relu)
    graph.lint()
    gm.recompile()
    x = ember.tensor([-1.0, 2.0])
    assert gm(x).tolist() == [1.0, -1.0]
    with pytest.raises(RuntimeError, match="still had 1 users"):
        graph.erase_node(relu)
    add = next(n for n in graph.nodes if n.target is operator.add)
    add.replace_all_uses_with(relu)
    graph.erase_node(add)
    graph.erase_node(neg)
    graph.eliminate_dead_code()
    graph.lint()
    gm.recompile()
    assert gm(x).tolist() == [0.0, 2.0]
    assert "neg" not in gm.code


def test_interpreter_transformer_and_replace_pattern():
    class M(ember.nn.Module):
        def forward(self, x):
            return ember.sigmoid(x) * 3 + ember.sigmoid(x + 1) * 3

    gm = ember.fx.symbolic_trace(M())
    x = ember.randn(4)

    class Swap(ember.fx.Interpreter):
        def call_function(self, target, args, kwargs):
            return super().call_function(ember.tanh if target is ember.sigmoid else target,
                                         args, kwargs)

    assert ember.allclose(Swap(gm).run(x), ember.tanh(x) * 3 + ember.tanh(x + 1) * 3)

    class ToTanh(ember.fx.Transformer):
        def call_function(self, target, args, kwargs):
            return super().call_function(ember.tanh if target is ember.sigmoid else target,
                                         args, kwargs)

    new = ToTanh(gm).transform()
    assert ember.allclose(new(x), ember.tanh(x) * 3 + ember.tanh(x + 1) * 3)

    def pattern(a):
        return ember.sigmoid(a) * 3

    def replacement(a):
        return ember.relu(a)

    matches = ember.fx.replace_pattern(gm, pattern, replacement)
    assert len(matches) == 2
    assert ember.allclose(gm(x), ember.relu(x) + ember.relu(x + 1))


def test_shape_prop_and_pickling():
    from ember.fx.passes.shape_prop import ShapeProp
    model = _models(ember)["cnn"][0]().eval()
    gm = ember.fx.symbolic_trace(model)
    x = ember.randn(2, 3, 8, 8)
    ShapeProp(gm).propagate(x)
    meta = {n.name: n.meta["tensor_meta"] for n in gm.graph.nodes if "tensor_meta" in n.meta}
    assert tuple(meta["conv"].shape) == (2, 4, 8, 8) and meta["conv"].dtype == ember.float32
    again = pickle.loads(pickle.dumps(gm))
    assert again.code == gm.code
    assert ember.equal(again(x), gm(x))
    assert set(again.state_dict()) == set(gm.state_dict())


def test_a_graph_module_called_on_proxies_inlines_into_that_graph():
    """pytorch/examples' fx/wrap_output_dynamically.py: wrap a traced graph's output in a
    traced activation by calling it on a Proxy of the output's node."""
    class Cat(ember.nn.Module):
        def forward(self, x, y):
            return ember.cat([x, y])

    traced = ember.fx.symbolic_trace(Cat())
    x, y = ember.randn(5, 3), ember.randn(5, 3)
    before = traced(x, y)
    output = next(n for n in traced.graph.nodes if n.op == "output")
    wrapped = output.all_input_nodes[0]
    activation = ember.fx.symbolic_trace(ember.nn.LeakyReLU())
    with traced.graph.inserting_after(wrapped):
        result = activation(ember.fx.Proxy(wrapped))
        output.args = (result.node,)
    traced.recompile()
    assert ember.allclose(traced(x, y), ember.nn.functional.leaky_relu(before))
    assert isinstance(ember.fx.Proxy(wrapped).tracer, ember.fx.proxy.GraphAppendingTracer)


def test_wrapped_functions_are_named_in_the_code():
    class M(ember.nn.Module):
        def forward(self, x):
            return _twice(x) + 1

    code = ember.fx.symbolic_trace(M()).code
    assert code.startswith('\ntorch.fx._symbolic_trace.wrap("tests_fx_test_symbolic_trace__twice")')


def test_a_tensor_meeting_a_proxy_records_the_tensor_method_as_pytorch_does(torch):
    def body(lib):
        def f(x):
            o = lib.ones(3)
            return [o + x, o - x, o * x, o / x, o @ x, o ** x, o == x, o < x, o % x, o // x]
        return f
    gm, tgm = ember.fx.symbolic_trace(body(ember)), torch.fx.symbolic_trace(body(torch))
    assert _describe(gm) == _describe(tgm)
    x = np.arange(1, 4, dtype=np.float32)
    for a, b in zip(gm(ember.tensor(x)), tgm(torch.tensor(x))):
        np.testing.assert_allclose(a.numpy(), b.numpy())


def test_torch_where_is_recorded_as_pytorch_records_it(torch):
    """torch.where is a callable object in ember (also the Tensor method's descriptor): it is
    recorded as the functions are, both forms, and as a method."""
    def body(lib):
        def f(x, y):
            return lib.where(x > 0, x, y) + lib.where(y > 1, 1.0, y) + x.where(x < 2, y)
        return f
    gm, tgm = ember.fx.symbolic_trace(body(ember)), torch.fx.symbolic_trace(body(torch))
    assert _describe(gm) == _describe(tgm)
    assert gm.code == tgm.code
    x, y = np.array([-1.0, 0.5, 3.0], np.float32), np.array([2.0, -1.0, 0.5], np.float32)
    np.testing.assert_array_equal(gm(ember.tensor(x), ember.tensor(y)).numpy(),
                                  tgm(torch.tensor(x), torch.tensor(y)).numpy())


def test_a_tracer_writing_record_function_as_operators(torch):
    """pytorch/examples' fx/profiling_tracer: record_function's enter and exit become
    torch.ops.profiler calls in the graph, and the traced module's region is profiled."""
    def trace(lib):
        class M(lib.nn.Module):
            def forward(self, x):
                with lib.profiler.record_function("foo"):
                    return lib.relu(x)

        class ProfilerTracer(lib.fx.Tracer):
            def trace(self, root, concrete_args=None):
                region = lib.autograd.profiler.record_function
                enter, exit_ = region.__enter__, region.__exit__
                tracer = self

                def fake_enter(this):
                    this.handle = tracer.create_proxy(
                        "call_function", lib.ops.profiler._record_function_enter, (this.name,), {})
                    return this.handle

                def fake_exit(this, *exc):
                    lib.ops.profiler._record_function_exit(this.handle)
                region.__enter__, region.__exit__ = fake_enter, fake_exit
                try:
                    return super().trace(root, concrete_args)
                finally:
                    region.__enter__, region.__exit__ = enter, exit_
        tracer = ProfilerTracer()
        graph = tracer.trace(M())
        return lib.fx.GraphModule(tracer.root, graph)
    gm, tgm = trace(ember), trace(torch)
    assert gm.code == tgm.code
    with ember.autograd.profiler.profile() as prof:
        out = gm(ember.tensor([-1.0, 2.0]))
    assert out.tolist() == [0.0, 2.0]
    assert {"foo", "aten::relu"} <= {e.key for e in prof.key_averages()}


def test_printed_graph_readable_code_and_indexing_as_pytorch_writes_them(torch):
    def body(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.l, self.w = lib.nn.Linear(3, 4), lib.nn.Parameter(lib.ones(4))

            def forward(self, x, y=2):
                z = self.l(x) * self.w
                return {"a": z.clamp(min=0), "b": lib.cat([z, z], dim=0)[1:, ...],
                        "c": z.sum() + y, "d": (z[:, :1], z[0], z[..., None], z[::2])}
        return M()
    gm, tgm = ember.fx.symbolic_trace(body(ember)), torch.fx.symbolic_trace(body(torch))
    assert str(gm.graph) == str(tgm.graph)
    assert gm.code == tgm.code
    assert gm.print_readable(print_output=False) == tgm.print_readable(print_output=False)
    assert gm(ember.ones(2, 3))["d"][2].shape == (2, 4, 1)


def test_a_tensor_indexed_by_a_proxy(torch):
    def body(lib):
        class M(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.register_buffer("bias", lib.tril(lib.ones(4, 4)))

            def forward(self, x):
                return lib.arange(4.0)[x] * 2

        class Sliced(M):
            def forward(self, x):
                return self.bias[:x.size(0)]
        return M(), Sliced()
    (ours, ours_sliced), (theirs, theirs_sliced) = body(ember), body(torch)
    gm, tgm = ember.fx.symbolic_trace(ours), torch.fx.symbolic_trace(theirs)
    assert gm.code == tgm.code
    assert gm(ember.tensor([3, 1])).tolist() == [6.0, 2.0]
    for lib, model in ((ember, ours_sliced), (torch, theirs_sliced)):
        with pytest.raises(TypeError, match="slice indices must be integers"):
            lib.fx.symbolic_trace(model)


def test_a_module_called_on_proxies_inlines_its_forward():
    """pytorch/examples' fx/inline_function.py: replace a call_module node by the module's
    forward, traced by calling the module on Proxies of the node's arguments."""
    class M(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.relu = ember.nn.ReLU()

        def forward(self, x):
            return self.relu(x) + 1.0

    m = ember.fx.symbolic_trace(M())
    tracer = ember.fx.proxy.GraphAppendingTracer(m.graph)
    node = next(n for n in m.graph.nodes if n.op == "call_module")
    with m.graph.inserting_before(node):
        out = m.relu(*[ember.fx.Proxy(a, tracer) for a in node.args])
    node.replace_all_uses_with(out.node)
    m.graph.erase_node(node)
    m.recompile()
    assert [n.op for n in m.graph.nodes] == ["placeholder", "call_function", "call_function",
                                             "output"]
    x = ember.randn(4)
    assert ember.equal(m(x), ember.relu(x) + 1.0)
