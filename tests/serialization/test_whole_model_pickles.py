"""Whole models pickled with `torch.save(model)` move between ember and PyTorch both ways: ember
writes PyTorch's names for its classes (`torch.nn.modules.linear.Linear`), PyTorch loads the
file and runs the model to the same outputs, and ember loads PyTorch's files (with or without
the compat layer). A user's own module class is pickled by reference, so the test writes it to a
file that each side imports with its own `torch`: ember under `python -m ember.compat`."""
import io
import os
import pickle
import pickletools
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import ember

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

MODELS = textwrap.dedent('''
    import torch
    from torch import nn


    class Scale(nn.Module):
        """A user's own layer inside a Sequential."""

        def __init__(self, factor):
            super().__init__()
            self.factor = factor
            self.register_buffer("offset", torch.full((4,), 0.25))

        def forward(self, x):
            return x * self.factor + self.offset


    class SmallCNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.features = nn.Sequential(nn.Conv2d(3, 4, 3, padding=1), nn.BatchNorm2d(4),
                                          nn.ReLU(), nn.MaxPool2d(2),
                                          nn.Conv2d(4, 2, 3, padding=1, padding_mode="reflect"))
            self.head = nn.Linear(2 * 4 * 4, 3)

        def forward(self, x):
            return self.head(torch.flatten(self.features(x), 1))


    class LSTMNet(nn.Module):
        def __init__(self):
            super().__init__()
            self.lstm = nn.LSTM(3, 5, num_layers=2, batch_first=True, bidirectional=True)
            self.out = nn.Linear(10, 2)

        def forward(self, x):
            y, _ = self.lstm(x)
            return self.out(y[:, -1])


    def build():
        torch.manual_seed(0)
        models = {"cnn": SmallCNN(), "lstm": LSTMNet(),
                  "seq": nn.Sequential(nn.Linear(4, 4), Scale(2.0), nn.Tanh())}
        models["cnn"](torch.randn(4, 3, 8, 8))  # training mode: BatchNorm's running stats move
        for m in models.values():
            m.eval()
        inputs = {"cnn": torch.randn(2, 3, 8, 8), "lstm": torch.randn(2, 6, 3),
                  "seq": torch.randn(3, 4)}
        return models, inputs
''')

SAVE = textwrap.dedent('''
    import sys
    import torch
    import models
    nets, inputs = models.build()
    torch.save(nets, sys.argv[1])
    with torch.no_grad():
        torch.save({"inputs": inputs, "outputs": {k: nets[k](inputs[k]) for k in nets}},
                   sys.argv[2])
''')

LOAD = textwrap.dedent('''
    import sys
    import torch
    nets = torch.load(sys.argv[1], weights_only=False)
    expected = torch.load(sys.argv[2])
    for name, net in nets.items():
        assert isinstance(net, torch.nn.Module), type(net)
        with torch.no_grad():
            got = net(expected["inputs"][name])
        torch.testing.assert_close(got, expected["outputs"][name], rtol=1e-5, atol=1e-5)
    print("OK", sorted(nets))
''')


def _run(tmp_path, script, args, compat):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([ROOT, str(tmp_path)]))
    launcher = [sys.executable, "-m", "ember.compat"] if compat else [sys.executable]
    result = subprocess.run(launcher + [str(tmp_path / script)] + args, capture_output=True,
                            text=True, timeout=300, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    return result.stdout


@pytest.mark.parametrize("writer", ["ember", "torch"])
def test_whole_models_cross_between_ember_and_pytorch(torch, tmp_path, writer):
    for name, text in (("models.py", MODELS), ("save.py", SAVE), ("load.py", LOAD)):
        (tmp_path / name).write_text(text)
    files = [str(tmp_path / "nets.pt"), str(tmp_path / "expected.pt")]
    _run(tmp_path, "save.py", files, compat=writer == "ember")
    out = _run(tmp_path, "load.py", files, compat=writer == "torch")
    assert "OK ['cnn', 'lstm', 'seq']" in out


def _ember_file(obj):
    buf = io.BytesIO()
    ember.save(obj, buf)
    buf.seek(0)
    return buf


def _pickle_globals(buf):
    import zipfile
    with zipfile.ZipFile(buf) as z:
        data = z.read(next(n for n in z.namelist() if n.endswith("data.pkl")))
    return {arg.replace(" ", ".") for op, arg, _ in pickletools.genops(data)
            if op.name == "GLOBAL"}


def test_ember_writes_pytorch_names_for_its_classes():
    nn = ember.nn
    model = nn.Sequential(nn.Conv2d(1, 2, 3), nn.GELU(), nn.TransformerEncoderLayer(4, 2))
    names = _pickle_globals(_ember_file(model))
    assert "torch.nn.modules.container.Sequential" in names
    assert "torch.nn.modules.conv.Conv2d" in names
    assert "torch.nn.functional.relu" in names  # the encoder layer's activation function
    assert not [n for n in names if n.startswith("ember")]


def test_ember_loads_its_own_whole_model_back_without_pytorch():
    nn = ember.nn
    ember.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 2, 3, padding=1, padding_mode="circular"),
                          nn.BatchNorm2d(2), nn.Flatten(), nn.Linear(2 * 16, 2)).eval()
    lstm = nn.LSTM(2, 3).eval()
    back = ember.load(_ember_file({"m": model, "lstm": lstm}), weights_only=False)
    assert type(back["m"][0]) is nn.Conv2d and type(back["lstm"]) is nn.LSTM
    x = ember.randn(2, 1, 4, 4)
    assert ember.equal(back["m"](x), model(x))
    seq = ember.randn(5, 1, 2)
    assert ember.equal(back["lstm"](seq)[0], lstm(seq)[0])
    assert "_flat_weights" not in back["lstm"].__dict__  # the property computes it


@pytest.mark.filterwarnings("ignore:LSTM with projections")
@pytest.mark.parametrize("build", ["cnn", "lstm", "transformer"])
def test_pytorch_whole_model_loads_in_ember_without_compat(torch, build):
    tnn = torch.nn
    torch.manual_seed(0)
    model, x = {
        "cnn": lambda: (tnn.Sequential(tnn.Conv2d(3, 4, 3, padding=1, padding_mode="reflect"),
                                       tnn.BatchNorm2d(4), tnn.ReLU(), tnn.AdaptiveAvgPool2d(1),
                                       tnn.Flatten(), tnn.Linear(4, 2)),
                        np.random.rand(2, 3, 6, 6)),
        "lstm": lambda: (tnn.LSTM(3, 4, num_layers=2, proj_size=2), np.random.rand(5, 2, 3)),
        "transformer": lambda: (tnn.TransformerEncoderLayer(8, 2, 16, dropout=0.0),
                                np.random.rand(2, 5, 8)),
    }[build]()
    model.eval()
    x = x.astype(np.float32)
    buf = io.BytesIO()
    torch.save(model, buf)
    buf.seek(0)
    ours = ember.load(buf, weights_only=False)
    assert type(ours).__module__.startswith("ember.nn.modules.")
    want, got = model(torch.tensor(x)), ours(ember.tensor(x))
    if isinstance(want, tuple):
        want, got = want[0], got[0]
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-5,
                               atol=1e-6)
    # and ember's pickle of the model it loaded goes back to PyTorch
    again = torch.load(_ember_file(ours), weights_only=False)
    assert type(again) is type(model)
    out = again(torch.tensor(x))
    np.testing.assert_allclose((out[0] if isinstance(out, tuple) else out).detach().numpy(),
                               want.detach().numpy(), rtol=1e-5, atol=1e-6)


def _refusal(load, buf):
    with pytest.raises(pickle.UnpicklingError) as info:
        load(buf)
    return str(info.value)


def test_weights_only_refusal_names_the_pytorch_path(torch):
    model = ember.nn.Sequential(ember.nn.Linear(2, 2))
    ours = _refusal(ember.load, _ember_file(model))
    theirs = _refusal(lambda b: torch.load(b, weights_only=True), _ember_file(model))
    assert "GLOBAL torch.nn.modules.container.Sequential was not an allowed global" in ours
    assert ours == theirs


def test_an_older_ember_file_is_refused_by_pytorch_name():
    """A pickle naming ember's own path (as ember wrote before) loads, and the weights-only
    refusal still names PyTorch's path, as a user reads it in PyTorch's documentation."""
    raw = pickle.dumps(ember.nn.ReLU(), protocol=2)  # names ember.nn.modules.activation.ReLU
    from ember.serialization.loading import _unpickle
    with pytest.raises(pickle.UnpicklingError, match="GLOBAL torch.nn.modules.activation.ReLU"):
        _unpickle(raw, weights_only=True)
    assert type(_unpickle(raw, weights_only=False)) is ember.nn.ReLU


def test_vision_models_cross_as_torchvision_classes():
    from tests._torchvision_oracle import import_torchvision
    tv = import_torchvision()
    import torch
    import ember.vision
    ember.manual_seed(0)
    model = ember.vision.models.resnet18(num_classes=4).eval()
    theirs = torch.load(_ember_file(model), weights_only=False).eval()
    assert type(theirs) is tv.models.resnet.ResNet
    x = np.random.rand(1, 3, 32, 32).astype(np.float32)
    np.testing.assert_allclose(theirs(torch.tensor(x)).detach().numpy(),
                               model(ember.tensor(x)).detach().numpy(), rtol=1e-4, atol=1e-5)
    buf = io.BytesIO()
    torch.save(theirs, buf)
    buf.seek(0)
    assert type(ember.load(buf, weights_only=False)) is ember.vision.models.resnet.ResNet
