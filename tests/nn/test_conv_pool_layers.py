"""Convolution and pooling layers against PyTorch: reprs, parameter names and shapes,
outputs and gradients with the same weights."""
import numpy as np
import pytest

import ember

LAYERS = [
    ("Conv1d", (3, 4, 3), {"stride": 2, "padding": 1}, (2, 3, 9)),
    ("Conv2d", (3, 16, 3, 1), {"padding": 1, "bias": False}, (2, 3, 8, 8)),
    ("Conv2d", (4, 6, (3, 2)), {"dilation": 2, "groups": 2}, (1, 4, 9, 9)),
    ("Conv2d", (2, 4, 3), {"padding": "same", "padding_mode": "reflect"}, (1, 2, 6, 6)),
    ("Conv2d", (2, 2, 3), {"padding": 1, "padding_mode": "circular"}, (1, 2, 5, 5)),
    ("Conv3d", (2, 3, 2), {"stride": (1, 2, 1)}, (1, 2, 4, 5, 4)),
    ("ConvTranspose1d", (3, 2, 3), {"stride": 2, "output_padding": 1}, (2, 3, 5)),
    ("ConvTranspose2d", (4, 2, 3), {"stride": 2, "padding": 1, "groups": 2}, (1, 4, 4, 4)),
    ("MaxPool2d", (2,), {}, (2, 3, 6, 6)),
    ("MaxPool2d", (3, 2), {"padding": 1, "ceil_mode": True}, (1, 2, 7, 7)),
    ("MaxPool1d", (2,), {"stride": 1}, (2, 3, 7)),
    ("AvgPool2d", (2,), {"count_include_pad": False, "padding": 1}, (1, 2, 5, 5)),
    ("AvgPool1d", (3,), {"stride": 2}, (2, 2, 9)),
    ("AdaptiveAvgPool2d", ((2, 3),), {}, (1, 3, 7, 8)),
    ("AdaptiveMaxPool2d", (2,), {}, (1, 3, 7, 8)),
    ("AdaptiveAvgPool1d", (4,), {}, (2, 3, 10)),
    ("LPPool2d", (2, 2), {}, (1, 2, 6, 6)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", LAYERS,
                         ids=[f"{n}-{i}" for i, (n, *_) in enumerate(LAYERS)])
def test_layer_matches_torch(torch, name, args, kwargs, shape):
    ours = getattr(ember.nn, name)(*args, **kwargs).double()
    theirs = getattr(torch.nn, name)(*args, **kwargs).double()
    assert repr(ours) == repr(theirs)
    sd_t = theirs.state_dict()
    assert list(ours.state_dict()) == list(sd_t)
    ours.load_state_dict({k: ember.tensor(v.numpy()) for k, v in sd_t.items()})
    x = np.random.default_rng(0).standard_normal(shape)
    xe = ember.tensor(x, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    ye, yt = ours(xe), theirs(xt)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-12)
    w = np.random.default_rng(1).standard_normal(tuple(yt.shape))
    (ye * ember.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)
    for (n, pe), (_, pt) in zip(ours.named_parameters(), theirs.named_parameters()):
        np.testing.assert_allclose(pe.grad.numpy(), pt.grad.numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=n)


def test_conv_errors_match_torch(torch):
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="in_channels must be divisible by groups"):
            lib.nn.Conv2d(3, 4, 3, groups=2)
        with pytest.raises(ValueError, match="padding='same' is not supported"):
            lib.nn.Conv2d(3, 4, 3, stride=2, padding="same")


def test_transposed_output_size_argument(torch):
    ours, theirs = ember.nn.ConvTranspose2d(2, 3, 3, stride=2), torch.nn.ConvTranspose2d(2, 3, 3,
                                                                                         stride=2)
    x = np.ones((1, 2, 4, 4))
    assert ours(ember.tensor(x).float(), output_size=[10, 10]).shape == \
        tuple(theirs(torch.tensor(x).float(), output_size=[10, 10]).shape)


@pytest.mark.parametrize("make", [lambda nn: nn.Conv2d(4, 6, 3, padding=1, groups=2),
                                  lambda nn: nn.ConvTranspose2d(4, 3, 2, 2),
                                  lambda nn: nn.ConvTranspose2d(4, 3, 3, 1),
                                  lambda nn: nn.Conv3d(4, 2, 2)])
def test_convolutions_take_an_empty_batch(torch, make):
    # Mask R-CNN's mask head meets zero detections: PyTorch returns an empty batch
    x = np.zeros((0, 4, 5, 5, 5) if "3d" in repr(make(ember.nn)) else (0, 4, 5, 5), np.float32)
    ours = make(ember.nn)
    theirs = make(torch.nn)
    e = ember.tensor(x, requires_grad=True)
    out = ours(e)
    assert tuple(out.shape) == tuple(theirs(torch.tensor(x)).shape)
    out.sum().backward()
    assert tuple(e.grad.shape) == x.shape and float(ours.weight.grad.abs().sum()) == 0.0
