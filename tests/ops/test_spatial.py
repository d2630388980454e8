"""Spatial layers and ops beyond the op table: layer reprs, arguments and outputs against
PyTorch, grad_fn names, double backward."""
import numpy as np
import pytest

import ember
import ember.nn as nn

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")

LAYERS = [
    ("ZeroPad1d", (2,)), ("ZeroPad1d", ((1, 2),)), ("ZeroPad2d", (2,)),
    ("ZeroPad2d", ((1, 2, 0, 1),)), ("ZeroPad3d", (1,)),
    ("ConstantPad1d", (2, 3.5)), ("ConstantPad2d", ((1, 0, 2, 1), -1.0)),
    ("ConstantPad3d", (1, 0.5)),
    ("ReflectionPad1d", (2,)), ("ReflectionPad2d", ((1, 2, 0, 1),)), ("ReflectionPad3d", (1,)),
    ("ReplicationPad1d", (2,)), ("ReplicationPad2d", (1,)), ("ReplicationPad3d", ((1, 0, 1, 0, 0, 1),)),
    ("CircularPad1d", (2,)), ("CircularPad2d", ((1, 2, 0, 1),)), ("CircularPad3d", (1,)),
    ("PixelShuffle", (2,)), ("PixelUnshuffle", (2,)), ("ChannelShuffle", (2,)),
    ("Upsample", ()), ("Upsample", ((5, 6),)), ("UpsamplingNearest2d", ()),
    ("UpsamplingBilinear2d", ()), ("Fold", ((4, 5), 2)), ("Unfold", ((2, 3),)),
    ("Unfold", (2, 1, 1, 2)),
]
KW = {"Upsample": [dict(scale_factor=2), dict(scale_factor=2, mode="bilinear", align_corners=True),
                   dict(scale_factor=(1.5, 2), mode="bicubic")],
      "UpsamplingNearest2d": [dict(scale_factor=2)], "UpsamplingBilinear2d": [dict(size=(3, 7))]}


def _input(name, lib):
    rng = np.random.default_rng(0)
    nd = 1 if name.endswith("1d") else 3 if name.endswith("3d") else 2
    shape = {"Fold": (2, 8, 12), "Unfold": (2, 2, 5, 6), "PixelShuffle": (2, 8, 3, 4),
             "PixelUnshuffle": (2, 3, 4, 6)}.get(
        name, (2, 4) + (4, 5, 6)[:nd])
    return lib.tensor(rng.standard_normal(shape), requires_grad=True)


def _cases():
    for name, args in LAYERS:
        for kw in (KW.get(name, [{}]) if not args else [{}]):
            yield pytest.param(name, args, kw, id=f"{name}{args}{kw}")


@needs_torch
@pytest.mark.parametrize("name,args,kw", list(_cases()))
def test_layer_matches_torch(name, args, kw):
    e, t = getattr(nn, name)(*args, **kw), getattr(torch.nn, name)(*args, **kw)
    assert repr(e) == repr(t)
    xe, xt = _input(name, ember), _input(name, torch)
    ye, yt = e(xe), t(xt)
    assert tuple(ye.shape) == tuple(yt.shape)
    np.testing.assert_allclose(ye.detach().numpy(), yt.detach().numpy(), rtol=1e-6, atol=1e-6)
    w = np.random.default_rng(1).standard_normal(tuple(yt.shape))
    (ye * ember.tensor(w)).sum().backward()
    (yt * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(xe.grad.numpy(), xt.grad.numpy(), rtol=1e-6, atol=1e-6)


@needs_torch
def test_circular_pad_layer_checks_dims():
    for lib in (ember, torch):
        with pytest.raises(ValueError, match=r"expected 3D or 4D input \(got 2D input\)"):
            lib.nn.CircularPad2d(1)(lib.zeros(3, 4))


@needs_torch
@pytest.mark.parametrize("call", [
    lambda lib, x: lib.nn.functional.pad(x, (1, 2, 2, 1)),
    lambda lib, x: lib.nn.functional.pad(x, (1, 2, 2, 1), mode="reflect"),
    lambda lib, x: lib.nn.functional.pad(x, (1, 2, 2, 1), mode="replicate"),
    lambda lib, x: lib.nn.functional.pad(x[0], (1, 2), mode="reflect"),
    lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2),
    lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2, mode="nearest-exact"),
    lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2, mode="bilinear"),
    lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2, mode="bicubic"),
    lambda lib, x: lib.nn.functional.interpolate(x, scale_factor=2, mode="area"),
    lambda lib, x: lib.nn.functional.interpolate(x[0], scale_factor=2, mode="linear"),
    lambda lib, x: lib.nn.functional.interpolate(x[None], scale_factor=2, mode="trilinear"),
    lambda lib, x: lib.nn.functional.pixel_shuffle(x, 2),
    lambda lib, x: lib.nn.functional.channel_shuffle(x, 2),
    lambda lib, x: lib.nn.functional.grid_sample(
        x, lib.zeros(2, 3, 3, 2, dtype=x.dtype), align_corners=False),
    lambda lib, x: lib.nn.functional.affine_grid(x[:, 0, :2, :3], (2, 1, 3, 4),
                                                 align_corners=False),
])
def test_grad_fn_names(call):
    xe = ember.randn(2, 4, 4, 4, requires_grad=True)
    xt = torch.randn(2, 4, 4, 4, requires_grad=True)
    assert type(call(ember, xe).grad_fn).__name__ == type(call(torch, xt).grad_fn).__name__


def test_interpolate_double_backward():
    x = ember.randn(1, 2, 3, 4, dtype=ember.float64, requires_grad=True)
    y = ember.nn.functional.interpolate(x, scale_factor=2, mode="bilinear")
    (g,) = ember.autograd.grad((y ** 2).sum(), x, create_graph=True)
    (gg,) = ember.autograd.grad(g.sum(), x)
    assert gg.shape == x.shape


def test_grid_sample_identity_grid_gives_input():
    x = ember.randn(2, 3, 4, 5)
    theta = ember.tensor([[[1.0, 0, 0], [0, 1, 0]]] * 2)
    grid = ember.nn.functional.affine_grid(theta, (2, 3, 4, 5), align_corners=False)
    y = ember.nn.functional.grid_sample(x, grid, align_corners=False)
    np.testing.assert_allclose(y.numpy(), x.numpy(), rtol=1e-5, atol=1e-6)


def test_top_level_names():
    for name in ("pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "constant_pad_nd",
                 "grid_sampler", "affine_grid_generator"):
        assert callable(getattr(ember, name))
    for name in ("pad", "interpolate", "upsample", "upsample_nearest", "upsample_bilinear",
                 "grid_sample", "affine_grid"):
        assert callable(getattr(ember.nn.functional, name))
        assert not hasattr(ember, name) or name in ("pad",)
