"""Containers of tensors as export inputs, as PyTorch's export takes them: a tuple, list or
dict argument becomes one graph input per tensor (`hidden` = (h, c): `hidden_0`, `hidden_1`),
`module()` takes the argument as given (and refuses another structure), save/load keeps it;
and recurrent layers export as one node (they call the public `lstm`/`gru`/`rnn_*`)."""
import io

import pytest

import ember
import ember.nn as nn


def _container_model(nn):
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(4, 4)

        def forward(self, x, pair, d, scale=2.0):
            h, c = pair
            out = self.lin(x) + h * d["a"] + d["b"][1] * scale
            return out, (h * c, [d["b"][0] + d["n"]])
    return M


def _inputs(lib):
    g = lib.Generator().manual_seed(0)
    t = [lib.randn(2, 4, generator=g) for _ in range(6)]
    return (t[0], (t[1], t[2]), {"a": t[3], "b": [t[4], t[5]], "n": 3})


def test_container_inputs_are_graph_inputs_not_constants():
    model = _container_model(nn)()
    args = _inputs(ember)
    ep = ember.export.export(model, args)
    assert ep.graph_signature.user_inputs == ("x", "pair_0", "pair_1", "d_a", "d_b_0", "d_b_1",
                                              3)
    assert not ep.constants  # nothing baked in
    other = tuple(ember.utils._pytree.unflatten(
        [a * 3 + 1 if isinstance(a, ember.Tensor) else a
         for a in ember.utils._pytree.flatten(args)[0]], ember.utils._pytree.flatten(args)[1]))
    for call in (args, other):
        got, want = ep.module()(*call), model(*call)
        assert ember.equal(got[0], want[0]) and ember.equal(got[1][0], want[1][0])
        assert ember.equal(got[1][1][0], want[1][1][0])


def test_user_input_names_match_pytorchs(torch):
    theirs = torch.export.export(_container_model(torch.nn)(), _inputs(torch))
    ours = ember.export.export(_container_model(nn)(), _inputs(ember))
    assert ours.graph_signature.user_inputs == theirs.graph_signature.user_inputs


def test_module_refuses_another_structure():
    model = _container_model(nn)()
    x, pair, d = _inputs(ember)
    program = ember.export.export(model, (x, pair, d)).module()
    with pytest.raises(ValueError, match="Trying to flatten user inputs"):
        program(x, pair[:1], d)
    with pytest.raises(ValueError, match="Trying to flatten user inputs"):
        program(x, list(pair), d)
    with pytest.raises(ValueError, match="Trying to flatten user inputs"):
        program(x, pair, {"a": d["a"], "b": d["b"]})
    with pytest.raises(AssertionError, match=r"Guard failed: d\['n'\] == 3"):
        program(x, pair, dict(d, n=4))


def test_numbers_are_constant_inputs_the_module_checks(torch):
    class Scale(nn.Module):
        def forward(self, x, k, flag=None, mode="a"):
            return x * k if flag is None else x
    x = ember.ones(2)
    ep = ember.export.export(Scale(), (x, 3), {"flag": None})
    assert ep.graph_signature.user_inputs == ("x", 3, None)  # mode: a default, no input
    assert type(ep.graph_signature.input_specs[1].arg).__name__ == "ConstantArgument"
    program = ep.module()
    assert program(x, 3, flag=None).tolist() == [3.0, 3.0]
    with pytest.raises(AssertionError, match="Guard failed: k == 3"):
        program(x, 4, flag=None)
    theirs = torch.export.export(type("Scale", (torch.nn.Module,), {
        "forward": Scale.forward})(), (torch.ones(2), 3), {"flag": None})
    assert theirs.graph_signature.user_inputs == ep.graph_signature.user_inputs


def test_save_load_keeps_the_structure():
    model = _container_model(nn)()
    args = _inputs(ember)
    ep = ember.export.export(model, args)
    buf = io.BytesIO()
    ember.export.save(ep, buf)
    buf.seek(0)
    loaded = ember.export.load(buf)
    assert ember.equal(loaded.module()(*args)[0], model(*args)[0])
    assert loaded.graph_signature.user_inputs == ep.graph_signature.user_inputs


@pytest.mark.parametrize("kind", ["LSTM", "GRU", "RNN"])
def test_recurrent_layers_export_as_one_node(kind):
    ember.manual_seed(0)
    rnn = getattr(nn, kind)(4, 6, 2, batch_first=True, bidirectional=True)

    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.rnn = rnn

        def forward(self, x, hx):
            return self.rnn(x, hx)
    h = ember.randn(4, 3, 6)
    hx = (h, ember.randn(4, 3, 6)) if kind == "LSTM" else h
    x = ember.randn(3, 5, 4)
    ep = ember.export.export(M(), (x, hx))
    called = [n.target.__name__ for n in ep.graph.nodes if n.op == "call_function"
              and n.target.__name__ != "getitem"]
    assert called == [{"LSTM": "lstm", "GRU": "gru", "RNN": "rnn_tanh"}[kind]]
    got, want = ep.module()(x, hx), M()(x, hx)
    assert ember.equal(got[0], want[0])
    buf = io.BytesIO()
    ember.export.save(ep, buf)
    buf.seek(0)
    assert ember.equal(ember.export.load(buf).module()(x, hx)[0], want[0])


def test_packed_sequences_still_run_through_the_module():
    ember.manual_seed(0)
    lstm = nn.LSTM(3, 5)
    x = ember.randn(4, 2, 3)
    packed = nn.utils.rnn.pack_padded_sequence(x, [4, 2])
    out, (h, c) = lstm(packed)
    ref_out, (ref_h, _) = lstm(x[:2, 1:2])
    assert ember.allclose(h[0, 1], ref_h[0, 0]) and out.data.shape == (6, 5)


def _scaled(nn):
    class Scaled(nn.Module):
        def forward(self, x, *, scale=None, extra=None):
            y = x.view(4, -1) * 2  # 4 is baked in: another batch size must be refused
            return y * scale if extra is None else y + extra["b"]
    return Scaled()


def test_keyword_only_inputs_and_size_guards_as_pytorchs(torch):
    def calls(lib):
        x = lib.ones(4, 2)
        ep = lib.export.export(_scaled(lib.nn), (x,), {"scale": lib.full((4, 2), 3.0)})
        ep2 = lib.export.export(_scaled(lib.nn), (x,), {"extra": {"b": lib.ones(4, 2)}})
        program = ep.module()
        found = [ep.graph_signature.user_inputs, ep2.graph_signature.user_inputs,
                 program(x, scale=lib.ones(4, 2)).tolist()]
        for bad in (lambda: program(lib.ones(6, 2), scale=lib.ones(4, 2)),
                    lambda: ep.run_decompositions().module()(lib.ones(6, 2),
                                                             scale=lib.ones(4, 2))):
            with pytest.raises(AssertionError) as caught:
                bad()
            found.append(str(caught.value))
        return found
    assert calls(ember) == calls(torch)


def test_a_dynamic_dim_is_not_guarded_and_save_load_keeps_the_guards():
    dynamic = ember.export.export(_scaled(nn), (ember.ones(4, 2),), {"scale": ember.ones(4, 2)},
                                  dynamic_shapes={"x": {1: ember.export.Dim("w")},
                                                  "scale": {1: ember.export.Dim("w")}})
    assert dynamic.module()(ember.ones(4, 5), scale=ember.ones(4, 5)).shape == (4, 5)
    buf = io.BytesIO()
    ember.export.save(dynamic, buf)
    buf.seek(0)
    with pytest.raises(AssertionError, match=r"Guard failed: x.size\(\)\[0\] == 4"):
        ember.export.load(buf).module()(ember.ones(5, 2), scale=ember.ones(5, 2))
