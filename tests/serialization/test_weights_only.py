"""The weights-only unpickler allows what PyTorch's allows by default, no more, plus what
add_safe_globals / safe_globals add: files written by PyTorch and by ember, both ways, and a
whole model saved with torch.save(model) and loaded under safe_globals, as tutorials do."""
import collections
import io
import pickle

import pytest

import ember
from ember import nn


def _values(mod):
    return {
        "set": {1, 2}, "frozenset": frozenset([1]), "slice": slice(1, 2), "complex": 1 + 2j,
        "bytearray": bytearray(b"ab"), "bytes": b"ab", "OrderedDict": collections.OrderedDict(a=1),
        "Counter": collections.Counter("aab"), "defaultdict": collections.defaultdict(int, a=1),
        "deque": collections.deque([1]), "range": range(3), "Size": mod.Size([2, 3]),
        "device": mod.device("cpu"), "dtype": mod.float16, "layout": mod.strided,
        "sparse layout": mod.sparse_coo, "Parameter": mod.nn.Parameter(mod.ones(2)),
        "nested": {"a": [(1, 2.5, None, True, "s")]}, "int tensor": mod.arange(3),
    }


def _outcome(save_mod, load_mod, obj, **kw):
    buf = io.BytesIO()
    save_mod.save(obj, buf)
    buf.seek(0)
    try:
        r = load_mod.load(buf, **kw)
    except Exception as exc:  # noqa: BLE001 (compares any error)
        return type(exc).__name__, str(exc).split("WeightsUnpickler error: ")[-1].split(".")[0]
    return type(r).__name__, repr(r.tolist() if hasattr(r, "tolist") else r)


@pytest.mark.parametrize("name", list(_values(ember)))
def test_default_allowlist_matches_pytorch(torch, name):
    theirs = _outcome(torch, torch, _values(torch)[name])
    ours = _outcome(ember, ember, _values(ember)[name])
    assert ours == theirs
    # and across: a file PyTorch wrote, loaded by ember, and one ember wrote, loaded by PyTorch
    assert _outcome(torch, ember, _values(torch)[name]) == theirs
    if theirs[0] != "UnpicklingError":
        assert _outcome(ember, torch, _values(ember)[name]) == theirs


def test_add_safe_globals_allows_more(torch):
    ember.serialization.clear_safe_globals()
    try:
        allowed = [collections.defaultdict, int, frozenset]  # int: the defaultdict's factory
        ember.serialization.add_safe_globals(allowed)
        assert set(ember.serialization.get_safe_globals()) == set(allowed)
        for obj in [collections.defaultdict(int, a=1), frozenset([3])]:
            buf = io.BytesIO()
            torch.save(obj, buf)
            buf.seek(0)
            assert ember.load(buf) == obj
    finally:
        ember.serialization.clear_safe_globals()
    assert ember.serialization.get_safe_globals() == []


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 3)
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x):
        return self.bn(self.fc(x))


def test_whole_model_loads_under_safe_globals(tmp_path):
    model = Net()
    path = tmp_path / "model.pt"
    ember.save(model, path)
    with pytest.raises(Exception, match="Unsupported global"):
        ember.load(path)
    with ember.serialization.safe_globals([Net, nn.Linear, nn.BatchNorm1d]):
        loaded = ember.load(path)
    assert type(loaded) is Net and ember.serialization.get_safe_globals() == []
    x = ember.randn(4, 2)
    model.eval(), loaded.eval()
    assert ember.equal(loaded(x), model(x))


def test_whole_model_pytorch_saved_loads_into_ember_classes(torch, tmp_path):
    class TorchNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(2, 3)
            self.bn = torch.nn.BatchNorm1d(3)

    TorchNet.__qualname__ = "TorchNet"  # pickled by reference: a module-level name
    globals()["TorchNet"] = TorchNet
    theirs = TorchNet()
    path = tmp_path / "model.pt"
    torch.save(theirs, path)
    # a file written under PyTorch names its layers torch.nn.modules.<file>.<Layer>
    where = f"{TorchNet.__module__}.{TorchNet.__qualname__}"
    with ember.serialization.safe_globals([(Net, where), nn.Linear, nn.BatchNorm1d]):
        loaded = ember.load(path)
    assert type(loaded) is Net and type(loaded.bn) is nn.BatchNorm1d
    assert ember.equal(loaded.fc.weight, ember.tensor(theirs.fc.weight.detach().numpy()))
    assert loaded(ember.randn(4, 2)).shape == (4, 3)


class _Unlisted:
    """A class no allow-list names."""


def test_refusal_message_is_pytorchs(torch, tmp_path, monkeypatch):
    import __main__
    monkeypatch.setattr(__main__, "_Unlisted", _Unlisted, raising=False)
    monkeypatch.setattr(_Unlisted, "__module__", "__main__")
    messages = []
    for lib in (torch, ember):
        path = tmp_path / f"{lib.__name__}.pt"
        lib.save({"a": _Unlisted()}, path)
        with pytest.raises(pickle.UnpicklingError) as info:
            lib.load(path)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
