"""The AutoAugment operations of ember.vision.transforms.functional (gamma, sharpness,
autocontrast, equalize, invert, posterize, solarize, perspective, elastic_transform) against
torchvision's own pure-Python tensor code running on CPU torch, and against Pillow."""
import numpy as np
import pytest

import ember
import ember.vision.transforms.functional as F
from tests._torchvision_oracle import import_torchvision

Image = pytest.importorskip("PIL.Image")

RNG = np.random.default_rng(3)
U8 = RNG.integers(0, 256, (2, 3, 11, 13), dtype=np.uint8)
U8[1, 2] = 77  # a constant channel (autocontrast's degenerate case)
F32 = RNG.random((2, 3, 11, 13)).astype(np.float32)
GRAY = RNG.integers(40, 200, (1, 9, 10), dtype=np.uint8)


@pytest.fixture(scope="module")
def TF():
    import_torchvision()
    import torchvision.transforms.functional as TF
    return TF


def _both(TF, name, arr, *args):
    import torch
    ours = getattr(F, name)(ember.tensor(arr), *args)
    ref = getattr(TF, name)(torch.tensor(arr), *args)
    assert str(ours.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    return ours.numpy(), ref.numpy()


CASES = [("adjust_gamma", (0.5,)), ("adjust_gamma", (2.2, 0.8)), ("adjust_sharpness", (0.3,)),
         ("adjust_sharpness", (2.0,)), ("autocontrast", ()), ("invert", ()),
         ("solarize", (0.4,))]


@pytest.mark.parametrize("name,args", CASES)
def test_float_images_match_torchvision(TF, name, args):
    ours, ref = _both(TF, name, F32, *args)
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-6)
    ours, ref = _both(TF, name, F32[0], *args)  # unbatched
    np.testing.assert_allclose(ours, ref, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("name,args", CASES[:-1] + [("solarize", (128,)), ("posterize", (3,)),
                                                    ("posterize", (0,)), ("equalize", ())])
@pytest.mark.parametrize("arr", [U8, U8[0], GRAY], ids=["batch", "rgb", "gray"])
def test_uint8_images_match_torchvision(TF, name, args, arr):
    ours, ref = _both(TF, name, arr, *args)
    assert np.array_equal(ours, ref)


@pytest.mark.parametrize("interp", ["nearest", "bilinear"])
@pytest.mark.parametrize("fill", [None, [10.0, 20.0, 30.0]])
@pytest.mark.parametrize("arr", [U8, F32])
def test_perspective_matches_torchvision(TF, interp, fill, arr):
    import torch
    start = [[0, 0], [12, 0], [12, 10], [0, 10]]
    end = [[2, 1], [11, 0], [12, 9], [1, 10]]
    mode = F.InterpolationMode(interp)
    ours = F.perspective(ember.tensor(arr), start, end, mode, fill).numpy()
    ref = TF.perspective(torch.tensor(arr), start, end, TF.InterpolationMode(interp),
                         fill).numpy()
    if arr.dtype == np.uint8:
        assert np.abs(ours.astype(int) - ref.astype(int)).max() <= 1  # .5 rounding ties
        assert (ours != ref).mean() < 0.01
    else:  # PyTorch's grid rounds otherwise on AVX-512 (5e-6 relative apart)
        np.testing.assert_allclose(ours, ref, atol=1e-5, rtol=1e-5)


@pytest.mark.parametrize("interp", ["nearest", "bilinear"])
@pytest.mark.parametrize("arr", [U8, F32])
def test_elastic_transform_matches_torchvision(TF, interp, arr):
    import torch
    disp = (RNG.random((1, 11, 13, 2)).astype(np.float32) - 0.5) * 0.3
    ours = F.elastic_transform(ember.tensor(arr), ember.tensor(disp),
                               F.InterpolationMode(interp), fill=[5.0]).numpy()
    ref = TF.elastic_transform(torch.tensor(arr), torch.tensor(disp),
                               TF.InterpolationMode(interp), fill=[5.0]).numpy()
    if arr.dtype == np.uint8:
        assert np.abs(ours.astype(int) - ref.astype(int)).max() <= 1
    else:  # PyTorch's grid rounds otherwise on AVX-512 (5e-6 relative apart)
        np.testing.assert_allclose(ours, ref, atol=1e-5, rtol=1e-5)
    with pytest.raises(ValueError, match=r"displacement shape should be \(1, 11, 13, 2\)"):
        F.elastic_transform(ember.tensor(arr), ember.zeros(1, 5, 5, 2))


@pytest.mark.parametrize("name,args", [("adjust_gamma", (0.7,)), ("adjust_sharpness", (1.7,)),
                                       ("autocontrast", ()), ("equalize", ()), ("invert", ()),
                                       ("posterize", (2,)), ("solarize", (100,))])
def test_pil_images_match_torchvision(TF, name, args):
    img = Image.fromarray(np.ascontiguousarray(U8[0].transpose(1, 2, 0)))
    assert np.array_equal(np.asarray(getattr(F, name)(img, *args)),
                          np.asarray(getattr(TF, name)(img, *args)))


def test_pil_perspective_and_elastic(TF):
    import torch
    img = Image.fromarray(np.ascontiguousarray(U8[0].transpose(1, 2, 0)))
    start = [[0, 0], [12, 0], [12, 10], [0, 10]]
    end = [[2, 1], [11, 0], [12, 9], [1, 10]]
    assert np.array_equal(np.asarray(F.perspective(img, start, end, fill=3)),
                          np.asarray(TF.perspective(img, start, end, fill=3)))
    disp = (RNG.random((1, 11, 13, 2)).astype(np.float32) - 0.5) * 0.2
    ours = F.elastic_transform(img, ember.tensor(disp))
    ref = TF.elastic_transform(img, torch.tensor(disp))
    assert ours.mode == ref.mode == "RGB"
    assert np.abs(np.asarray(ours).astype(int) - np.asarray(ref).astype(int)).max() <= 1


def test_perspective_coeffs_and_pil_modes_mapping(TF):
    start = [[0, 0], [30, 0], [30, 20], [0, 20]]
    end = [[3, 2], [27, 1], [29, 18], [1, 19]]
    assert F._get_perspective_coeffs(start, end) == pytest.approx(
        TF._get_perspective_coeffs(start, end), rel=1e-6)
    assert {k.value: v for k, v in F.pil_modes_mapping.items()} == \
        {k.value: v for k, v in TF.pil_modes_mapping.items()}


def test_errors_match_torchvision():
    t = ember.tensor(F32)
    with pytest.raises(TypeError, match="Only torch.uint8 image tensors are supported"):
        F.posterize(t, 2)
    with pytest.raises(ValueError, match="The number if bits should be between 0 and 8"):
        F.posterize(ember.tensor(U8), 9)
    with pytest.raises(TypeError, match="Only torch.uint8 image tensors are supported"):
        F.equalize(t)
    with pytest.raises(TypeError, match="Threshold should be less than bound of img."):
        F.solarize(t, 2.0)
    with pytest.raises(ValueError, match=r"sharpness_factor \(-1\) is not non-negative."):
        F.adjust_sharpness(t, -1)
    with pytest.raises(ValueError, match="Gamma should be a non-negative real number"):
        F.adjust_gamma(t, -1)
    with pytest.raises(TypeError, match="permitted channel values are"):
        F.invert(ember.zeros(2, 4, 4))
    with pytest.raises(ValueError, match="Please provide exactly four corners"):
        F.perspective(t, [[0, 0]] * 3, [[0, 0]] * 4)


def test_float_gamma_keeps_the_graph():
    x = ember.tensor(F32[0] * 0.9 + 0.05, requires_grad=True)
    F.adjust_gamma(x, 2.0).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy(), rtol=1e-5)
