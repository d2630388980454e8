"""ember.jit's script and trace run the eager code: same outputs and gradients as the eager
module, training through the scripted/traced module moves the original's parameters; the
wrappers print, freeze and mark as PyTorch's do."""
import warnings
from typing import Dict, List, Optional, Tuple

import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.layers = nn.ModuleList([nn.Linear(8, 8), nn.Linear(8, 8)])
        self.head = nn.Linear(8, 3)
        self.scale = 2.0

    def forward(self, x):
        x = self.hidden(x)
        for layer in self.layers:
            x = F.relu(layer(x))
        return self.head(x) * self.scale

    def hidden(self, x):
        return F.relu(self.fc1(x))

    @ember.jit.unused
    def python_only(self):
        return 1


def _grads(model, x):
    for p in model.parameters():
        p.grad = None
    model(x).pow(2).sum().backward()
    return [p.grad.clone() for p in model.parameters()]


@pytest.mark.parametrize("how", ["script", "trace"])
def test_same_outputs_and_gradients_as_eager(how):
    ember.manual_seed(0)
    model, x = Net(), ember.randn(5, 4)
    wrapped = ember.jit.script(model) if how == "script" else ember.jit.trace(model, x)
    assert ember.equal(wrapped(x), model(x))
    want = _grads(model, x)
    got = _grads(wrapped, x)
    assert all(ember.equal(a, b) for a, b in zip(got, want))
    assert list(wrapped.state_dict()) == list(model.state_dict())
    assert all(a is b for a, b in zip(wrapped.parameters(), model.parameters()))


@pytest.mark.parametrize("how", ["script", "trace"])
def test_training_a_wrapped_model_trains_the_same_as_eager(how):
    ember.manual_seed(1)
    x, y = ember.randn(16, 4), ember.randint(0, 3, (16,))
    eager = Net()
    other = Net()
    other.load_state_dict(eager.state_dict())
    wrapped = ember.jit.script(other) if how == "script" else ember.jit.trace(other, x)
    losses = []
    for model in (eager, wrapped):
        opt = ember.optim.SGD(model.parameters(), lr=0.1)
        run = []
        for _ in range(5):
            opt.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            opt.step()
            run.append(loss.item())
        losses.append(run)
    assert losses[0] == losses[1]
    assert losses[1][-1] < losses[1][0]
    assert all(ember.equal(a, b) for a, b in zip(eager.parameters(), wrapped.parameters()))


def test_script_prints_and_reports_like_pytorch():
    sm = ember.jit.script(Net())
    assert type(sm).__name__ == "RecursiveScriptModule"
    assert isinstance(sm, ember.jit.ScriptModule) and not isinstance(sm, Net)
    assert sm.original_name == "Net" and sm.scale == 2.0
    assert repr(ember.jit.script(nn.Linear(2, 2))) == "RecursiveScriptModule(original_name=Linear)"
    assert repr(sm).startswith("RecursiveScriptModule(\n  original_name=Net\n  (fc1): "
                               "RecursiveScriptModule(original_name=Linear)")
    assert "def forward" in sm.code
    with pytest.raises(AttributeError, match="no TorchScript graph"):
        sm.graph
    with pytest.raises(ember.jit.Error, match="annotated to be ignored"):
        sm.python_only()
    assert Net().python_only() == 1  # the eager module keeps the method
    assert ember.jit.script(sm) is sm
    with pytest.raises(RuntimeError, match="inherits from nn.Module, pass an instance"):
        ember.jit.script(Net)


def test_trace_prints_like_pytorch():
    tr = ember.jit.trace(nn.Sequential(nn.Linear(2, 2)), ember.randn(1, 2))
    assert type(tr).__name__ == "TopLevelTracedModule"
    assert repr(tr) == "Sequential(\n  original_name=Sequential\n  (0): Linear(original_name=Linear)\n)"
    assert type(tr[0]).__name__ == "TracedModule" and len(tr) == 1


def test_script_function_and_trace_function():
    def double_plus(x, y: int = 1):
        return x * 2 + y
    sf = ember.jit.script(double_plus)
    assert type(sf).__name__ == "ScriptFunction"
    assert sf.name == "double_plus" and "return x * 2 + y" in sf.code
    assert ember.equal(sf(ember.ones(2)), ember.full((2,), 3.0))
    tf = ember.jit.trace(double_plus, ember.ones(2))
    assert ember.equal(tf(ember.ones(3), 2), ember.full((3,), 4.0))


def test_is_tracing_only_while_tracing():
    seen = []

    def f(x):
        seen.append(ember.jit.is_tracing())
        return x + 1
    tf = ember.jit.trace(f, ember.ones(1), check_trace=False)
    tf(ember.ones(1))
    assert seen == [True, False]
    assert not ember.jit.is_scripting()


def test_trace_checks_inputs_and_outputs():
    with pytest.raises(RuntimeError, match=r"Type 'Tuple\[int\]' cannot be traced"):
        ember.jit.trace(lambda x: x, [1])
    with pytest.raises(RuntimeError, match="Encountering a dict at the output of the tracer"):
        ember.jit.trace(lambda x: {"a": x}, ember.ones(2))
    assert ember.jit.trace(lambda x: {"a": x}, ember.ones(2), strict=False)(ember.ones(1))["a"] == 1
    with pytest.warns(ember.jit.TracerWarning, match="nondeterministic"):
        ember.jit.trace(nn.Dropout(0.5), ember.ones(100))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        ember.jit.trace(nn.Dropout(0.5).eval(), ember.ones(100))


def test_trace_module_and_example_kwargs():
    lin = nn.Linear(3, 2)
    tm = ember.jit.trace_module(lin, {"forward": ember.randn(1, 3)})
    x = ember.randn(4, 3)
    assert ember.equal(tm(x), lin(x))
    tk = ember.jit.trace(lin, example_kwarg_inputs={"input": x})
    assert ember.equal(tk(x), lin(x))


def test_freeze_and_optimize_for_inference():
    ember.manual_seed(2)
    model, x = Net(), ember.randn(3, 4)
    sm = ember.jit.script(model)
    with pytest.raises(RuntimeError, match="only implemented for modules in eval mode"):
        ember.jit.freeze(sm)
    with pytest.raises(RuntimeError, match="Freezing expects a ScriptModule"):
        ember.jit.freeze(model.eval())
    frozen = ember.jit.freeze(sm.eval())
    assert list(frozen.parameters()) == [] and list(frozen.state_dict()) == []
    assert ember.equal(frozen(x), model(x))
    opt = ember.jit.optimize_for_inference(ember.jit.script(model))
    assert ember.equal(opt(x), model(x)) and list(opt.parameters()) == []
    kept = ember.jit.freeze(sm, preserved_attrs=["weight"])
    assert [n for n, _ in kept.named_parameters()] == [
        "fc1.weight", "layers.0.weight", "layers.1.weight", "head.weight"]


def test_legacy_script_module_subclass_and_attribute():
    class Counter(ember.jit.ScriptModule):
        def __init__(self):
            super().__init__()
            self.count = ember.jit.Attribute(0, int)
            self.lin = nn.Linear(2, 2)

        @ember.jit.script_method
        def forward(self, x):
            self.count += 1
            return self.lin(x)
    c = Counter()
    assert c.count == 0
    c(ember.ones(1, 2))
    assert c.count == 1 and "self.count += 1" in c.code


def test_markers_fork_wait_and_fusion_settings():
    def f(x):
        return x + 1
    assert ember.jit.ignore(f) is f and ember.jit.export(f) is f and ember.jit.unused(f) is f
    assert ember.jit.ignore(drop=True)(f) is f
    with pytest.raises(RuntimeError, match="must be a bool or a function"):
        ember.jit.ignore(3)
    assert ember.jit.annotate(List[int], []) == []
    fut = ember.jit.fork(f, ember.ones(1))
    assert isinstance(fut, ember.jit.Future) and fut.done()
    assert ember.jit.wait(fut).item() == 2
    assert fut.then(lambda fu: fu.value() * 3).wait().item() == 6
    assert not ember.jit.onednn_fusion_enabled()
    ember.jit.enable_onednn_fusion(True)
    assert ember.jit.onednn_fusion_enabled()
    ember.jit.enable_onednn_fusion(False)
    previous = ember.jit.set_fusion_strategy([("DYNAMIC", 3)])
    assert previous == [("STATIC", 2), ("DYNAMIC", 10)]
    assert ember.jit.set_fusion_strategy(previous) == [("DYNAMIC", 3)]
    with pytest.raises(ValueError, match="only supported 'STATIC' or 'DYNAMIC', got: X"):
        ember.jit.set_fusion_strategy([("X", 1)])
    with ember.jit.strict_fusion():
        pass

    @ember.jit.interface
    class Shape:
        def area(self) -> float:
            ...
    assert Shape.__torch_script_interface__


def test_jit_isinstance():
    t = ember.ones(1)
    assert ember.jit.isinstance([1, 2], List[int])
    assert not ember.jit.isinstance([1, "a"], List[int])
    assert ember.jit.isinstance({"a": t}, Dict[str, ember.Tensor])
    assert ember.jit.isinstance((1, "a"), Tuple[int, str])
    assert ember.jit.isinstance(None, Optional[int]) and ember.jit.isinstance(3, Optional[int])
    with pytest.raises(RuntimeError, match="Attempted to use list without a contained type"):
        ember.jit.isinstance([1], list)


def test_matches_torch_jit_names(torch):
    missing = sorted(set(torch.jit.__all__) - set(dir(ember.jit)) - {"CompilationUnit", "export_opnames"})
    assert not missing
    from ember.jit.annotations import BroadcastingList2
    assert BroadcastingList2[int] is not None
