"""`torch.onnx.export` of whole models: every file passes `onnx.checker` and runs in ONNX
Runtime with ember's own outputs (float32, within 1e-5), including with a dynamic batch axis
fed a batch size other than the example's."""
import io

import numpy as np
import pytest

import ember
import ember.nn as nn
import ember.nn.functional as F

onnx = pytest.importorskip("onnx")
ort = pytest.importorskip("onnxruntime")


def _run(model, args, dynamic_batch=False, other_batch=None, input_names=None, batch_axis=0,
         **kwargs):
    """Export, check, run in ONNX Runtime; returns the loaded model."""
    model.eval()
    names = input_names or [f"x{i}" for i in range(len(args))]
    dynamic = {n: {batch_axis: "batch"} for n in names} if dynamic_batch else None
    if dynamic:
        dynamic["out"] = {batch_axis: "batch"}
    f = io.BytesIO()
    ember.onnx.export(model, tuple(args), f, input_names=names, output_names=["out"],
                      dynamic_axes=dynamic, **kwargs)
    proto = onnx.load_from_string(f.getvalue())
    onnx.checker.check_model(proto, full_check=True)
    sess = ort.InferenceSession(f.getvalue(), providers=["CPUExecutionProvider"])
    batches = [args] + ([other_batch] if other_batch is not None else [])
    for batch in batches:
        with ember.no_grad():
            want = model(*batch)
        want = want[0] if isinstance(want, tuple) else want
        got = sess.run(None, {n: a.numpy() for n, a in zip(names, batch)})[0]
        assert got.shape == tuple(want.shape)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-5)
    return proto


def _ops(proto):
    return {n.op_type for n in proto.graph.node}


def test_mlp():
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(10, 32), nn.ReLU(), nn.Dropout(0.5), nn.Linear(32, 4),
                          nn.LogSoftmax(dim=1))
    proto = _run(model, [ember.randn(3, 10)], dynamic_batch=True,
                 other_batch=[ember.randn(7, 10)])
    assert {"Gemm", "Relu", "LogSoftmax"} <= _ops(proto)
    assert len(proto.graph.initializer) >= 4  # the parameters


def test_cnn():
    ember.manual_seed(0)

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 8, 3, padding=1)
            self.bn = nn.BatchNorm2d(8)
            self.conv2 = nn.Conv2d(8, 16, 3, stride=2, groups=2, dilation=1)
            self.pool = nn.MaxPool2d(2)
            self.fc = nn.Linear(16 * 3 * 3, 10)

        def forward(self, x):
            x = F.relu(self.bn(self.conv1(x)))
            x = self.pool(F.silu(self.conv2(x)))
            return self.fc(x.flatten(1))

    model = CNN()
    model.bn.running_mean.normal_()
    _run(model, [ember.randn(2, 1, 14, 14)], dynamic_batch=True,
         other_batch=[ember.randn(5, 1, 14, 14)])


def test_resnet18():
    from ember.vision.models import resnet18
    ember.manual_seed(0)
    proto = _run(resnet18(num_classes=10), [ember.randn(2, 3, 64, 64)], dynamic_batch=True,
                 other_batch=[ember.randn(1, 3, 64, 64)])
    assert {"Conv", "BatchNormalization", "MaxPool", "GlobalAveragePool"} <= _ops(proto)


def test_lstm_language_model():
    ember.manual_seed(0)

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(50, 16)
            self.rnn = nn.LSTM(16, 24, num_layers=2)
            self.head = nn.Linear(24, 50)

        def forward(self, tokens):
            out, _ = self.rnn(self.embed(tokens))
            return self.head(out)

    tokens = ember.randint(0, 50, (7, 3))
    proto = _run(LM(), [tokens], dynamic_batch=True, batch_axis=1,
                 other_batch=[ember.randint(0, 50, (7, 5))])
    assert "LSTM" in _ops(proto)


def test_lstm_language_model_taking_its_hidden_state():
    # pytorch/examples' word_language_model exports `model(input, (h, c))`: the pair is two
    # inputs of the graph, not constants baked from the example
    ember.manual_seed(0)

    class LM(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed, self.rnn = nn.Embedding(50, 8), nn.LSTM(8, 12, num_layers=2)
            self.head = nn.Linear(12, 50)

        def forward(self, tokens, hidden):
            out, hidden = self.rnn(self.embed(tokens), hidden)
            return self.head(out), hidden

    model = LM().eval()
    tokens = ember.randint(0, 50, (6, 1))
    zeros = (ember.zeros(2, 1, 12), ember.zeros(2, 1, 12))
    f = io.BytesIO()
    ember.onnx.export(model, (tokens, zeros), f)
    sess = ort.InferenceSession(f.getvalue(), providers=["CPUExecutionProvider"])
    assert len(sess.get_inputs()) == 3
    hidden = (ember.randn(2, 1, 12), ember.randn(2, 1, 12))
    got = sess.run(None, dict(zip([i.name for i in sess.get_inputs()],
                                  [tokens.numpy(), hidden[0].numpy(), hidden[1].numpy()])))
    with ember.no_grad():
        want, (h, c) = model(tokens, hidden)
    for a, b in zip(got, (want, h, c)):
        np.testing.assert_allclose(a, b.numpy(), rtol=1e-5, atol=1e-5)


def test_transformer_encoder():
    ember.manual_seed(0)
    layer = nn.TransformerEncoderLayer(16, 4, dim_feedforward=32, batch_first=True)
    model = nn.TransformerEncoder(layer, 2, enable_nested_tensor=False)
    _run(model, [ember.randn(2, 5, 16)], dynamic_batch=True, other_batch=[ember.randn(4, 5, 16)])


class _CausalBlock(nn.Module):
    def __init__(self, width=16, heads=4):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.qkv, self.proj = nn.Linear(width, 3 * width), nn.Linear(width, width)
        self.mlp = nn.Sequential(nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).contiguous().view(b, t, c))
        return x + self.mlp(self.ln2(x))


def test_causal_gpt_block_with_a_dynamic_batch():
    ember.manual_seed(0)
    proto = _run(_CausalBlock(), [ember.randn(2, 6, 16)], dynamic_batch=True,
                 other_batch=[ember.randn(3, 6, 16)])
    assert "LayerNormalization" in _ops(proto)


def test_an_op_without_a_mapping_names_it():
    class Odd(nn.Module):
        def forward(self, x):
            return ember.special.bessel_j0(x)

    with pytest.raises(ember.onnx.errors.UnsupportedOperatorError, match="bessel_j0"):
        ember.onnx.export(Odd(), (ember.randn(3),), io.BytesIO())


def test_export_params_false_and_opset():
    model = nn.Linear(3, 2)
    f = io.BytesIO()
    ember.onnx.export(model, (ember.randn(1, 3),), f, export_params=False, opset_version=17)
    proto = onnx.load_from_string(f.getvalue())
    assert not proto.graph.initializer
    assert proto.opset_import[0].version == 17
    with pytest.raises(ValueError, match="opset"):
        ember.onnx.export(model, (ember.randn(1, 3),), io.BytesIO(), opset_version=9)


def test_export_to_a_path_restores_training_mode(tmp_path):
    model = nn.Sequential(nn.Linear(3, 3), nn.Dropout())
    model.train()
    ember.onnx.export(model, (ember.randn(2, 3),), str(tmp_path / "m.onnx"))
    assert model.training
    onnx.checker.check_model(str(tmp_path / "m.onnx"))


def test_an_unchanged_pytorch_script_exports_under_compat(tmp_path):
    import subprocess
    import sys
    script = tmp_path / "export_script.py"
    script.write_text(
        "import sys, torch, torch.onnx\n"
        "model = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.ReLU(),\n"
        "                            torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(),\n"
        "                            torch.nn.Linear(4, 2))\n"
        "if '--onnx-export' in sys.argv:\n"
        "    torch.onnx.export(model, (torch.randn(1, 3, 8, 8),), sys.argv[-1],\n"
        "                      input_names=['image'], output_names=['logits'],\n"
        "                      dynamic_axes={'image': {0: 'n'}, 'logits': {0: 'n'}})\n"
        "    print('exported')\n")
    out = tmp_path / "model.onnx"
    run = subprocess.run([sys.executable, "-m", "ember.compat", str(script), "--onnx-export",
                          str(out)], capture_output=True, text=True, timeout=120)
    assert run.stdout.strip() == "exported", run.stderr
    proto = onnx.load(str(out))
    onnx.checker.check_model(proto, full_check=True)
    assert proto.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "n"


def test_a_cuda_model_exports_as_its_cpu_twin():
    from tests._strict_cupy import strict_cupy
    ember.manual_seed(0)
    model = nn.Sequential(nn.Linear(6, 8), nn.GELU(), nn.LSTM(8, 5)).eval()
    x = ember.randn(4, 2, 6)
    cpu, gpu = io.BytesIO(), io.BytesIO()
    ember.onnx.export(model, (x,), cpu)
    with strict_cupy():
        ember.onnx.export(model.to("cuda"), (x.to("cuda"),), gpu)
    assert cpu.getvalue() == gpu.getvalue()
