"""A batch of size 0 (the last, empty shard of a split; a filter that kept nothing) runs
forward and backward through every common layer as in PyTorch: empty outputs of the right
shape, zero parameter gradients, and no state spoiled (BatchNorm's running statistics)."""
import warnings

import pytest

import ember


def _SelfAttention(nn):
    class SelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.attention = nn.MultiheadAttention(4, 2, batch_first=True)

        def forward(self, x):
            return self.attention(x, x, x)[0]
    return SelfAttention()


def _layers(nn):
    return {
        "linear": (lambda: nn.Linear(4, 3), (0, 4)),
        "linear_3d": (lambda: nn.Linear(4, 3), (2, 0, 4)),
        "conv1d": (lambda: nn.Conv1d(3, 4, 3), (0, 3, 5)),
        "conv2d": (lambda: nn.Conv2d(3, 4, 3, padding=1), (0, 3, 5, 5)),
        "conv_transpose2d": (lambda: nn.ConvTranspose2d(3, 4, 3, stride=2), (0, 3, 5, 5)),
        "batch_norm_train": (lambda: nn.BatchNorm1d(3), (0, 3)),
        "batch_norm2d_train": (lambda: nn.BatchNorm2d(3), (0, 3, 4, 4)),
        "batch_norm_eval": (lambda: nn.BatchNorm2d(3).eval(), (0, 3, 4, 4)),
        "layer_norm": (lambda: nn.LayerNorm(4), (0, 4)),
        "group_norm": (lambda: nn.GroupNorm(1, 3), (0, 3, 4)),
        "instance_norm": (lambda: nn.InstanceNorm2d(3), (0, 3, 4, 4)),
        "max_pool": (lambda: nn.MaxPool2d(2), (0, 3, 4, 4)),
        "avg_pool": (lambda: nn.AvgPool2d(2), (0, 3, 4, 4)),
        "adaptive_avg_pool": (lambda: nn.AdaptiveAvgPool2d(1), (0, 3, 4, 4)),
        "adaptive_max_pool": (lambda: nn.AdaptiveMaxPool2d((2, 2)), (0, 3, 4, 4)),
        "upsample": (lambda: nn.Upsample(scale_factor=2), (0, 3, 4, 4)),
        "lstm": (lambda: nn.LSTM(4, 5, batch_first=True), (0, 2, 4)),
        "gru": (lambda: nn.GRU(4, 5), (2, 0, 4)),
        "multihead_attention": (lambda: _SelfAttention(nn), (0, 3, 4)),
        "transformer_encoder_layer": (lambda: nn.TransformerEncoderLayer(
            4, 2, 8, dropout=0.0, batch_first=True), (0, 3, 4)),
        "softmax": (lambda: nn.Softmax(-1), (0, 3)),
        "flatten": (lambda: nn.Flatten(), (0, 3, 4)),
    }


def _run(lib, name):
    lib.manual_seed(0)
    build, shape = _layers(lib.nn)[name]
    layer = build()
    x = lib.randn(*shape, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = layer(x)
    y = y[0] if isinstance(y, tuple) else y
    y.sum().backward()
    grads = [None if p.grad is None else (tuple(p.grad.shape), p.grad.abs().sum().item())
             for p in layer.parameters()]
    buffers = [b.tolist() for b in layer.buffers()]
    return tuple(y.shape), tuple(x.grad.shape), grads, buffers


@pytest.mark.parametrize("name", sorted(_layers(ember.nn)))
def test_an_empty_batch_runs_as_in_torch(torch, name):
    assert _run(ember, name) == _run(torch, name)


def test_batch_norm_keeps_its_running_statistics_on_an_empty_batch():
    bn = ember.nn.BatchNorm2d(3)
    bn(ember.randn(4, 3, 2, 2))
    before = (bn.running_mean.clone(), bn.running_var.clone())
    out = bn(ember.randn(0, 3, 2, 2, requires_grad=True))
    out.sum().backward()
    assert out.shape == (0, 3, 2, 2)
    assert ember.equal(bn.running_mean, before[0]) and ember.equal(bn.running_var, before[1])
    assert bn.weight.grad.abs().sum().item() == 0 and bn.bias.grad.abs().sum().item() == 0
