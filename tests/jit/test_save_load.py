"""ember.jit.save / load: round trips of scripted, traced, frozen modules and functions, extra
files, and the weights-only guarantee (a hostile file runs no code)."""
import io
import sys

import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F


class Small(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 2, 3)
        self.bn = nn.BatchNorm2d(2)
        self.fc = nn.Linear(2, 3)
        self.tag = "small"
        self.sizes = [1, 2]

    def forward(self, x):
        x = F.relu(self.bn(self.conv(x)))
        return self.fc(x.mean((2, 3)))


def _round_trip(obj, **load_kwargs):
    buf = io.BytesIO()
    ember.jit.save(obj, buf)
    buf.seek(0)
    return ember.jit.load(buf, **load_kwargs)


@pytest.mark.parametrize("how", ["script", "trace", "frozen"])
def test_module_round_trip(how):
    ember.manual_seed(0)
    model, x = Small(), ember.randn(2, 1, 5, 5)
    model(x)  # moves the BatchNorm running stats off their defaults
    model.eval()
    if how == "script":
        wrapped = ember.jit.script(model)
    elif how == "trace":
        wrapped = ember.jit.trace(model, x)
    else:
        wrapped = ember.jit.freeze(ember.jit.script(model))
    with ember.serialization.safe_globals([Small]):
        loaded = _round_trip(wrapped)
    assert type(loaded) is type(wrapped) and repr(loaded) == repr(wrapped)
    assert ember.equal(loaded(x), model(x))
    assert loaded.tag == "small" and loaded.sizes == [1, 2] and not loaded.training
    assert list(loaded.state_dict()) == list(wrapped.state_dict())
    for (k, a), b in zip(loaded.state_dict().items(), wrapped.state_dict().values()):
        assert ember.equal(a, b), k
    if how != "frozen":
        assert all(p.requires_grad for p in loaded.parameters())
        loaded.train()
        loaded(x).sum().backward()  # the loaded module trains
        assert loaded.fc.weight.grad is not None


def test_ember_modules_need_no_allowlist_and_save_method():
    lin = ember.jit.script(nn.Linear(3, 2))
    buf = io.BytesIO()
    lin.save(buf)
    buf.seek(0)
    loaded = ember.jit.load(buf)
    x = ember.randn(4, 3)
    assert ember.equal(loaded(x), lin(x))


def test_extra_files_and_map_location(tmp_path):
    path = tmp_path / "m.pt"
    ember.jit.save(ember.jit.script(nn.Linear(2, 2)), path, _extra_files={"meta.txt": "hello"})
    extra = {"meta.txt": "", "absent": ""}
    loaded = ember.jit.load(str(path), map_location="cpu", _extra_files=extra)
    assert extra == {"meta.txt": b"hello", "absent": ""}
    assert loaded.weight.device.type == "cpu"


def scaled(x):
    return x * 3


def test_function_round_trip():
    sf = ember.jit.script(scaled)
    with pytest.raises(RuntimeError, match="not an allowed class or function"):
        _round_trip(sf)
    with ember.serialization.safe_globals([scaled]):
        loaded = _round_trip(sf)
    assert ember.equal(loaded(ember.ones(2)), ember.full((2,), 3.0))


def test_unsaveable_attribute_and_plain_module():
    m = nn.Linear(2, 2)
    m.act = F.relu
    with pytest.raises(RuntimeError, match="attribute 'act'.*cannot save an attribute of type"):
        ember.jit.save(ember.jit.script(m), io.BytesIO())
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'save'"):
        ember.jit.save(nn.Linear(2, 2), io.BytesIO())


class _Hostile:
    def __reduce__(self):
        return (exec, ("import sys; sys._ember_hostile_ran = True",))


def test_hostile_pickle_runs_no_code():
    buf = io.BytesIO()
    ember.save({"format": "ember.jit/1", "kind": "module", "root": _Hostile()}, buf)
    buf.seek(0)
    with pytest.raises(Exception, match="Weights only load failed"):
        ember.jit.load(buf)
    assert not hasattr(sys, "_ember_hostile_ran")


@pytest.mark.parametrize("name", ["ember.nn.modules.module.os.system",
                                  "ember.nn.functional.np.load", "ember.nn.pickle.loads"])
def test_a_name_through_an_imported_module_is_refused(name):
    """A function's name leading out of ember.nn through a module it imports (os, numpy)
    is not an allowed function: loading it would hand the caller os.system."""
    buf = io.BytesIO()
    ember.save({"format": "ember.jit/1", "kind": "function", "function": name,
                "extra_files": {}}, buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="is not an allowed class or function"):
        ember.jit.load(buf)


def test_class_of_an_unimported_module_is_not_imported(tmp_path, monkeypatch):
    (tmp_path / "ember_jit_hostile_mod.py").write_text(
        "import sys\nsys._ember_hostile_imported = True\n"
        "import ember.nn as nn\nclass Evil(nn.Linear):\n    pass\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    evil_node = {"class": "ember_jit_hostile_mod.Evil", "wrapper": "script", "frozen": False,
                 "training": False, "parameters": {}, "buffers": {}, "non_persistent": [],
                 "attributes": {}, "modules": {}}
    buf = io.BytesIO()
    ember.save({"format": "ember.jit/1", "kind": "module", "root": evil_node, "extra_files": {}}, buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="'ember_jit_hostile_mod.Evil' is not an allowed class"):
        ember.jit.load(buf)
    assert "ember_jit_hostile_mod" not in sys.modules
    assert not hasattr(sys, "_ember_hostile_imported")
    buf.seek(0)
    loaded = ember.jit.load(buf, weights_only=False)  # the caller trusts the file: imported
    assert sys.modules.pop("ember_jit_hostile_mod") and sys._ember_hostile_imported
    del sys._ember_hostile_imported
    assert loaded.original_name == "Evil"


def test_torchscript_archive_is_refused(tmp_path, torch):
    path = tmp_path / "ts.pt"
    torch.jit.save(torch.jit.script(torch.nn.Linear(2, 2)), str(path))
    with pytest.raises(RuntimeError, match="TorchScript archive"):
        ember.jit.load(str(path))


class Shared(nn.Module):
    """Private attributes, and an attribute that is one of the module's own parameters."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(ember.ones(2))
        self._names = ["w"]
        self._alias = [self.w]

    def forward(self, x):
        return x * self._alias[0] * len(self._names)


def test_private_attributes_and_shared_tensors_survive():
    with ember.serialization.safe_globals([Shared]):
        loaded = _round_trip(ember.jit.script(Shared()))
    assert loaded._names == ["w"] and loaded._alias[0] is loaded.w
    assert ember.equal(loaded(ember.full((2,), 2.0)), ember.full((2,), 2.0))


def test_recurrent_and_attention_modules_round_trip():
    ember.manual_seed(3)
    for model, x in ((nn.LSTM(3, 4, batch_first=True), ember.randn(2, 5, 3)),
                     (nn.MultiheadAttention(4, 2), ember.randn(3, 1, 4))):
        model.eval()
        sm = ember.jit.script(model)
        loaded = _round_trip(sm)
        args = (x,) if isinstance(model, nn.LSTM) else (x, x, x)
        assert all(ember.equal(a, b) for a, b in zip(_flat_out(loaded(*args)), _flat_out(model(*args))))


def _flat_out(out):
    if isinstance(out, ember.Tensor):
        return [out]
    return [t for o in out if o is not None for t in _flat_out(o)]


def test_a_traced_model_loads_without_its_class(tmp_path):
    # TorchScript's use: one program traces and saves, another loads and runs it without the
    # model's Python class. The file carries the trace as an exported program (public
    # functions only), which the load runs where the class is not allowed or not there.
    import subprocess
    import textwrap
    script = tmp_path / "train.py"
    script.write_text(textwrap.dedent("""
        import sys
        import ember as torch
        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.fc, self.bn = torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4)
            def forward(self, x):
                y = torch.relu(self.bn(self.fc(x)))
                return y.view(y.size(0), -1) * 2
        torch.manual_seed(0)
        net = Net()
        net(torch.randn(8, 3))
        net.eval()
        torch.jit.trace(net, torch.randn(2, 3)).save(sys.argv[1])
        torch.save(net(torch.ones(5, 3)), sys.argv[2])
    """))
    model_file, out_file = tmp_path / "net.pt", tmp_path / "out.pt"
    subprocess.run([sys.executable, str(script), str(model_file), str(out_file)], check=True)
    loaded = ember.jit.load(model_file)  # no Net here: the trace runs
    assert not loaded.training
    assert ember.equal(loaded(ember.ones(5, 3)), ember.load(out_file))  # another batch size
    assert "fc.weight" in loaded.state_dict()


def test_a_trace_that_does_not_export_keeps_the_class_form():
    class Branchy(nn.Module):
        def forward(self, x):
            return x * 2 if x.sum() > 0 else x  # data-dependent: export refuses it
    buf = io.BytesIO()
    ember.jit.trace(Branchy(), ember.ones(2)).save(buf)
    buf.seek(0)
    with pytest.raises(RuntimeError, match="is not an allowed class"):
        ember.jit.load(buf)
