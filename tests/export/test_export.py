"""torch.export on ember: the captured program (functions only, parameters and buffers
lifted to inputs) runs as the model does, follows shape-based control flow on the example,
keeps declared dynamic sizes as size nodes so another batch size runs, decomposes, and saves
and loads in a format that names functions but holds no code."""
import io

import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F
from ember.export import Dim, InputKind, export, load, save


class Block(nn.Module):
    def __init__(self, width=16, heads=4):
        super().__init__()
        self.heads = heads
        self.ln = nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.register_buffer("scale", ember.ones(width))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.qkv(self.ln(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        if x.dim() == 3:  # shape-based control flow: resolved on the example
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c)) * self.scale


def test_a_program_of_functions_with_lifted_state():
    model = Block().eval()
    x = ember.randn(2, 6, 16)
    ep = export(model, (x,))
    ops = {n.op for n in ep.graph.nodes}
    assert "call_module" not in ops and "get_attr" not in ops
    kinds = [s.kind for s in ep.graph_signature.input_specs]
    assert kinds == [InputKind.PARAMETER] * 6 + [InputKind.BUFFER, InputKind.USER_INPUT]
    assert ep.graph_signature.parameters[0] == "ln.weight"
    assert ep.graph_signature.buffers == ["scale"]
    assert set(ep.state_dict) == set(model.state_dict())
    assert ember.allclose(ep.module()(x), model(x))
    with pytest.raises(RuntimeError, match="module\\(\\)"):
        ep(x)
    assert all("val" in n.meta for n in ep.graph.nodes if n.op != "output")


def test_static_export_bakes_sizes_and_dynamic_export_reads_them():
    model = Block().eval()
    x, other = ember.randn(2, 6, 16), ember.randn(3, 6, 16)
    static = export(model, (x,))
    assert "size" not in static.graph_module.code
    dynamic = export(model, (x,), dynamic_shapes={"x": {0: Dim("batch")}})
    assert "x.size(0)" in dynamic.graph_module.code
    assert ember.allclose(dynamic.module()(other), model(other), atol=1e-6)


def test_gradients_flow_through_the_program():
    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 2))
    x = ember.randn(3, 4)
    ep = export(model, (x,))
    run = ep.module()
    out = run(x.requires_grad_())
    out.sum().backward()
    want = x.grad.clone()
    x.grad = None
    model(x).sum().backward()
    assert ember.allclose(x.grad, want)


def test_data_dependent_control_flow_is_refused():
    class Branchy(nn.Module):
        def forward(self, x):
            return x if x.sum() > 0 else -x

    with pytest.raises(ember.fx.proxy.TraceError, match="data-dependent"):
        export(Branchy(), (ember.randn(3),))


def test_run_decompositions_and_save_load_round_trip():
    model = Block().eval()
    x, other = ember.randn(2, 6, 16), ember.randn(5, 6, 16)
    ep = export(model, (x,), dynamic_shapes={"x": {0: Dim("batch")}})
    decomposed = ep.run_decompositions()
    assert "linear" not in decomposed.graph_module.code
    assert ember.allclose(decomposed.module()(other), model(other), atol=1e-5)
    f = io.BytesIO()
    save(ep, f)
    f.seek(0)
    loaded = load(f)
    assert loaded.graph_module.code == ep.graph_module.code
    assert ember.allclose(loaded.module()(other), model(other), atol=1e-6)


def test_load_refuses_a_program_naming_other_functions():
    import json
    model = nn.Linear(2, 2)
    ep = export(model, (ember.randn(1, 2),))
    f = io.BytesIO()
    save(ep, f)
    f.seek(0)
    data = ember.load(f, weights_only=True)
    graph = json.loads(data["graph"])
    for node in graph["nodes"]:
        if node["op"] == "call_function":
            node["target"] = "torch.serialization.load"
    data["graph"] = json.dumps(graph)
    bad = io.BytesIO()
    ember.save(data, bad)
    bad.seek(0)
    with pytest.raises(ValueError, match="not one of ember's public functions"):
        load(bad)


def test_under_compat():
    import subprocess
    import sys
    code = ("import torch, torch.export, torch.fx\n"
            "m = torch.nn.Linear(3, 2)\n"
            "ep = torch.export.export(m, (torch.randn(1, 3),))\n"
            "print(type(ep).__name__, 'linear(input_1, weight, bias)' in "
            "torch.fx.symbolic_trace(m).code)\n")
    out = subprocess.run([sys.executable, "-m", "ember.compat", "-c", code],
                         capture_output=True, text=True, timeout=120)
    assert out.stdout.split() == ["ExportedProgram", "True"], out.stderr
