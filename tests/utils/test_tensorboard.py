"""ember.utils.tensorboard: the event files SummaryWriter writes, read back with TensorBoard's
own reader, hold what PyTorch's SummaryWriter writes for the same calls; and the import fails
clearly when the tensorboard package is missing."""
import importlib
import os
import sys

import numpy as np
import pytest

import ember

pytest.importorskip("tensorboard")
from tensorboard.backend.event_processing.event_accumulator import EventAccumulator  # noqa

from ember.utils.tensorboard import SummaryWriter  # noqa: E402

RNG = np.random.default_rng(0)
VALUES = RNG.standard_normal(200).astype(np.float32)
IMAGE = RNG.random((3, 6, 5)).astype(np.float32)
BATCH = (RNG.random((5, 1, 4, 4)) * 255).astype(np.uint8)
LABELS = RNG.integers(0, 2, 50)
RNG_IMAGE = RNG.random((3, 40, 48)).astype(np.float32)
BOXES = np.array([[2.0, 3.0, 30.0, 35.0], [10.0, 5.0, 45.0, 20.0]])
MESH_POINTS = RNG.random((1, 4, 3)).astype(np.float32)
MESH_COLORS = RNG.integers(0, 255, (1, 4, 3)).astype(np.uint8)
MESH_FACES = np.array([[[0, 1, 2], [0, 2, 3]]], dtype=np.int32)
SCORES = RNG.random(50)


def _log(writer, tensor):
    """The same calls, for ember's writer or torch's; `tensor` builds the library's tensor."""
    for step, value in enumerate([0.5, 0.25, 0.125]):
        writer.add_scalar("loss/train", tensor(value), step)
    writer.add_scalar("lr", 0.1, global_step=7, new_style=True)
    writer.add_scalars("acc", {"train": 0.5, "val": 0.25}, 3)
    writer.add_histogram("weights", tensor(VALUES), 1)
    writer.add_histogram("coarse", tensor(VALUES), 1, bins="auto", max_bins=4)
    writer.add_image("picture", tensor(IMAGE), 2)
    writer.add_images("batch", tensor(BATCH), 2)
    writer.add_image("hwc", IMAGE.transpose(1, 2, 0), 2, dataformats="HWC")
    writer.add_text("note", "hello **world**", 4)
    writer.add_hparams({"lr": 0.1, "optim": "sgd", "layers": 3}, {"hp/acc": 0.9},
                       run_name="hp")
    writer.add_histogram_raw("raw", -1.0, 2.0, 6, 3.0, 9.0, [0.0, 1.0, 2.0], [1, 3, 2], 5)
    writer.add_audio("tone", tensor(np.sin(np.linspace(0, 60, 400)) * 1.5), 1,
                     sample_rate=8000)
    writer.add_pr_curve("pr", tensor(LABELS), tensor(SCORES), 2, num_thresholds=200)
    writer.add_pr_curve_raw("pr_raw", *[np.arange(4.0)] * 6, 3, num_thresholds=4)
    writer.add_custom_scalars({"losses": {"both": ["Multiline", ["loss/train", "lr"]]}})
    writer.add_custom_scalars_marginchart(["a", "b", "c"], title="band")
    writer.add_image_with_boxes("boxed", tensor(RNG_IMAGE), tensor(BOXES), 4,
                                labels=["cat", "dog"])
    writer.add_image_with_boxes("boxed_nolabels", tensor(RNG_IMAGE), tensor(BOXES), 4,
                                labels=["only one"], rescale=2)
    writer.add_mesh("cube", tensor(MESH_POINTS), colors=tensor(MESH_COLORS),
                    faces=tensor(MESH_FACES), config_dict={"camera": {"fov": 75}},
                    global_step=2)
    writer.add_embedding(tensor(VALUES[:40].reshape(10, 4)), metadata=list(range(10)),
                         label_img=tensor(IMAGE[None].repeat(10, 0)), global_step=3,
                         tag="feat/ures")
    writer.add_embedding(tensor(VALUES[:6].reshape(3, 2)),
                         metadata=[["a", 1], ["b", 2], ["c", 3]], metadata_header=["k", "v"])
    for dtype in ("float32", "float64", "float16", "bfloat16", "int64", "uint8", "bool",
                  "complex64"):
        writer.add_tensor(f"tensor/{dtype}",
                          tensor(np.arange(-2, 4).reshape(2, 3)).to(getattr(
                              ember if tensor is ember.tensor else sys.modules["torch"],
                              dtype)), 0)


def _read(path):
    acc = EventAccumulator(str(path), size_guidance={"tensors": 0, "scalars": 0})
    acc.Reload()
    tags = acc.Tags()
    out = {"tags": {k: sorted(v) for k, v in tags.items() if isinstance(v, list)}}
    for tag in tags["scalars"]:
        out[tag] = [(e.step, e.value) for e in acc.Scalars(tag)]
    for tag in tags["histograms"]:
        out[tag] = [(e.step, e.histogram_value) for e in acc.Histograms(tag)]
    for tag in tags["images"]:
        out[tag] = [(e.step, e.width, e.height, e.encoded_image_string) for e in acc.Images(tag)]
    for tag in tags["audio"]:
        out[tag] = [(e.step, e.encoded_audio_string, e.sample_rate, e.length_frames)
                    for e in acc.Audio(tag)]
    for tag in tags["tensors"]:
        out[tag] = [(e.step, e.tensor_proto.SerializeToString()) for e in acc.Tensors(tag)]
    out["metadata"] = {t: acc.SummaryMetadata(t).SerializeToString() for t in tags["tensors"]}
    return out


def _runs(root):
    return sorted(os.path.relpath(d, root) for d, _, files in os.walk(root)
                  if any(f.startswith("events.out.tfevents") for f in files))


def test_reads_back_what_was_logged(tmp_path):
    with SummaryWriter(tmp_path) as writer:
        _log(writer, ember.tensor)
    logged = _read(tmp_path)
    assert logged["loss/train"] == [(0, 0.5), (1, 0.25), (2, 0.125)]
    histogram = logged["weights"][0][1]
    assert histogram.num == 200
    assert histogram.min == pytest.approx(VALUES.min())
    assert sum(histogram.bucket) == 200
    step, width, height, png = logged["batch"][0]
    assert (step, width, height) == (2, 4 * 5, 4)  # five images tiled in one row
    assert png.startswith(b"\x89PNG")
    assert "note/text_summary" in logged["tags"]["tensors"]
    assert {"pr", "pr_raw", "custom_scalars__config__"} <= set(logged["tags"]["tensors"])
    assert logged["tone"][0][2:] == (8000, 400)
    assert logged["raw"][0][1].bucket == [1, 3, 2]
    assert _runs(tmp_path) == [".", "acc_train", "acc_val", "hp"]
    assert _read(tmp_path / "acc_val")["acc"] == [(3, 0.25)]
    assert _read(tmp_path / "hp")["hp/acc"] == [(0, pytest.approx(0.9))]


def test_event_files_match_torch(torch, tmp_path):
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    with SummaryWriter(tmp_path / "ember") as writer:
        _log(writer, ember.tensor)
    with TorchWriter(tmp_path / "torch") as writer:
        _log(writer, torch.tensor)
    assert _runs(tmp_path / "ember") == _runs(tmp_path / "torch")
    for run in _runs(tmp_path / "ember"):
        assert _read(tmp_path / "ember" / run) == _read(tmp_path / "torch" / run), run
    projector = sorted(os.path.relpath(os.path.join(d, f), tmp_path / "ember")
                       for d, _, files in os.walk(tmp_path / "ember") for f in files
                       if not f.startswith("events.out"))
    assert "00003/feat%2fures/sprite.png" in projector
    for name in projector:
        assert (tmp_path / "ember" / name).read_bytes() == \
            (tmp_path / "torch" / name).read_bytes(), name


def test_default_log_dir_comment_and_purge_step(torch, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    writer = SummaryWriter(comment="_lr0.1")
    writer.close()
    name = os.path.basename(writer.log_dir)
    assert os.path.dirname(writer.log_dir) == "runs" and name.endswith("_lr0.1")
    import socket
    assert socket.gethostname() in name
    with SummaryWriter(tmp_path / "p") as writer:
        for step in range(5):
            writer.add_scalar("x", step, step)
    with SummaryWriter(tmp_path / "p", purge_step=2) as writer:
        writer.add_scalar("x", 20.0, 2)
    assert _read(tmp_path / "p")["x"] == [(0, 0.0), (1, 1.0), (2, 20.0)]


def test_reopens_after_close_and_flushes(tmp_path):
    writer = SummaryWriter(tmp_path)
    writer.add_scalar("a", 1.0, 0)
    writer.flush()
    assert _read(tmp_path)["a"] == [(0, 1.0)]
    writer.close()
    writer.add_scalar("a", 2.0, 1)  # a closed writer opens a new file, as PyTorch's
    writer.close()
    assert _read(tmp_path)["a"] == [(0, 1.0), (1, 2.0)]


def test_bad_input_errors():
    from ember.utils.tensorboard.summary import hparams, scalar
    with pytest.raises(AssertionError, match="one element"):
        scalar("x", ember.ones(2))
    with pytest.raises(TypeError, match="should be a dictionary"):
        hparams([("lr", 1)], {})
    with pytest.raises(ValueError, match="int, float, str, bool"):
        hparams({"lr": [1]}, {})


def test_figure(tmp_path):
    pytest.importorskip("matplotlib")
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    figure = plt.figure(figsize=(2, 1), dpi=20)
    plt.plot([0, 1], [1, 0])
    with SummaryWriter(tmp_path) as writer:
        writer.add_figure("plot", figure, 0)
    assert _read(tmp_path)["plot"][0][1:3] == (40, 20)


def test_missing_tensorboard_is_a_clear_import_error(monkeypatch):
    for name in [n for n in sys.modules if n.startswith("ember.utils.tensorboard")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "tensorboard", None)  # what `import` finds: nothing
    with pytest.raises(ModuleNotFoundError, match="pip install tensorboard") as info:
        importlib.import_module("ember.utils.tensorboard")
    assert info.value.name == "tensorboard"


def _net(lib):
    nn = lib.nn

    class Net(nn.Module):  # the shape of the tutorials' add_graph models
        def __init__(self):
            super().__init__()
            self.conv = nn.Conv2d(1, 4, 3)
            self.pool = nn.MaxPool2d(2)
            self.head = nn.Sequential(nn.Linear(36, 8), nn.ReLU(), nn.Linear(8, 3))

        def forward(self, x):
            x = self.pool(lib.relu(self.conv(x)))
            return self.head(x.view(-1, 36)).softmax(-1)
    lib.manual_seed(0)
    return Net()


def _graph(path):
    acc = EventAccumulator(str(path))
    acc.Reload()
    graph = acc.Graph()
    shapes = {n.name: [[d.size for d in s.dim] for s in n.attr["_output_shapes"].list.shape]
              for n in graph.node}
    return graph, shapes


def _ops(graph, shapes):
    """(scope, op, output shapes) of every op node (not PyTorch's constants and GetAttrs),
    and the input and output nodes'."""
    found = []
    for n in graph.node:
        if n.op in ("prim::Constant", "prim::GetAttr", "prim::ListConstruct"):
            continue
        found.append((n.name.rsplit("/", 1)[0], n.op, str(shapes[n.name])))
    return sorted(found)


def test_add_graph(tmp_path):
    net = _net(ember)
    net.train()
    with SummaryWriter(tmp_path) as writer:
        writer.add_graph(net, ember.ones(2, 1, 8, 8))
    assert net.training  # traced in eval mode, then put back
    graph, shapes = _graph(tmp_path)
    ops = _ops(graph, shapes)
    assert ("Net/Sequential[head]/Linear[0]", "aten::linear", "[[2, 8]]") in ops
    assert ("Net/Sequential[head]/ReLU[1]", "aten::relu", "[[2, 8]]") in ops
    assert ("Net/MaxPool2d[pool]", "aten::max_pool2d", "[[2, 4, 3, 3]]") in ops
    assert ("input", "IO Node", "[[2, 1, 8, 8]]") in ops
    assert ("output", "IO Node", "[[2, 3]]") in ops
    by_name = {n.name: n for n in graph.node}
    softmax = next(n for n in graph.node if n.op == "aten::softmax")
    assert by_name["output/output.1"].input == [softmax.name]
    weight = next(n for n in graph.node if n.op == "prim::GetAttr" and "Linear[2]" in n.name
                  and "weight" in n.attr["attr"].s.decode())
    assert weight.name in next(n for n in graph.node if n.op == "aten::linear"
                               and n.name.startswith("Net/Sequential[head]/Linear[2]")).input


def test_add_graph_beside_pytorch(torch, tmp_path):
    """The scopes, op types and shapes PyTorch's traced graph shows, for the ops both name
    alike (PyTorch's trace records a convolution as aten::_convolution)."""
    from torch.utils.tensorboard import SummaryWriter as TorchWriter
    with SummaryWriter(tmp_path / "ember") as writer:
        writer.add_graph(_net(ember), ember.ones(2, 1, 8, 8))
    with TorchWriter(tmp_path / "torch") as writer:
        writer.add_graph(_net(torch), torch.ones(2, 1, 8, 8))
    ours, theirs = _ops(*_graph(tmp_path / "ember")), _ops(*_graph(tmp_path / "torch"))
    convolutions = {"aten::conv2d", "aten::_convolution"}
    assert [o for o in ours if o[1] not in convolutions] == \
        [o for o in theirs if o[1] not in convolutions]


def test_add_graph_follows_the_example_where_values_decide(tmp_path):
    # as PyTorch's trace: the branch the example takes, with PyTorch's TracerWarning
    class DataDependent(ember.nn.Module):
        def forward(self, x):
            x = x if x.sum().item() > 0 else -x
            return x.exp() if x.sum() > 0 else x.sin()
    with SummaryWriter(tmp_path) as writer:
        with pytest.warns(ember.jit.TracerWarning, match="Python number") as caught:
            writer.add_graph(DataDependent(), ember.ones(2))
    assert any("Python boolean" in str(w.message) for w in caught)
    graph, _ = _graph(tmp_path)
    # only what the output needs, as in PyTorch's
    assert [n.op for n in graph.node if n.op.startswith("aten::")] == ["aten::exp"]


def test_add_graph_of_a_model_that_fails_says_so(tmp_path, capsys):
    class Broken(ember.nn.Module):
        def forward(self, x):
            return x @ ember.ones(5, 5)
    with SummaryWriter(tmp_path) as writer:
        with pytest.raises(RuntimeError):
            writer.add_graph(Broken(), ember.ones(2, 3))
    assert "No graph saved" in capsys.readouterr().out
