"""ember.vision.transforms: tensor paths against torch's kernels (interpolate, grid_sample),
PIL paths against the tensor paths, conversions, reprs, errors and seeded randomness."""
import numpy as np
import pytest

import ember
import ember.vision.transforms as T
import ember.vision.transforms.functional as F

torch = pytest.importorskip("torch")
Image = pytest.importorskip("PIL.Image")

RNG = np.random.default_rng(0)
X = RNG.random((2, 3, 13, 17)).astype(np.float32)
U8 = RNG.integers(0, 256, (20, 30, 3), dtype=np.uint8)


@pytest.mark.parametrize("mode,aa", [("nearest", False), ("bilinear", False), ("bilinear", True),
                                     ("bicubic", False), ("bicubic", True)])
@pytest.mark.parametrize("size", [(7, 9), (20, 31), (13, 5)])
def test_resize_tensor_matches_interpolate(mode, aa, size):
    out = F.resize(ember.tensor(X), list(size), mode, antialias=aa).numpy()
    kw = {} if mode == "nearest" else dict(align_corners=False, antialias=aa)
    ref = torch.nn.functional.interpolate(torch.tensor(X), size=size, mode=mode, **kw).numpy()
    np.testing.assert_allclose(out, ref, atol=1e-5)


def test_resize_sizes_and_uint8():
    t = ember.tensor(U8).permute(2, 0, 1).contiguous()
    assert F.resize(t, 10).shape == (3, 10, 15)  # int: the shorter side
    assert F.resize(t, [10]).shape == (3, 10, 15)
    assert F.resize(t, 10, max_size=12).shape == (3, 8, 12)
    out = F.resize(t, [7, 9])
    assert out.dtype == ember.uint8
    ref = torch.nn.functional.interpolate(torch.tensor(U8).permute(2, 0, 1)[None].float(),
                                          size=(7, 9), mode="bilinear", antialias=True)
    assert np.abs(out.numpy().astype(int) - ref[0].round().numpy()).max() <= 1
    img = Image.fromarray(U8)
    assert F.resize(img, 10).size == (15, 10)
    assert np.array_equal(np.asarray(F.resize(img, [7, 9])),
                          np.asarray(img.resize((9, 7), Image.BILINEAR)))
    with pytest.raises(ValueError, match="max_size = 10 must be strictly greater"):
        F.resize(t, 10, max_size=10)


def _torch_rotate(x, angle, interp, fill):
    from ember.vision.transforms._functional_tensor import inverse_affine_matrix
    n, c, h, w = x.shape
    m = inverse_affine_matrix([0, 0], -angle, [0, 0], 1.0, [0, 0])
    theta = torch.tensor(m, dtype=torch.float32).reshape(1, 2, 3)
    base = torch.empty(1, h, w, 3)
    base[..., 0].copy_(torch.linspace(-w * 0.5 + 0.5, w * 0.5 - 0.5, w))
    base[..., 1].copy_(torch.linspace(-h * 0.5 + 0.5, h * 0.5 - 0.5, h).unsqueeze(-1))
    base[..., 2].fill_(1)
    grid = base.view(1, h * w, 3).bmm(theta.transpose(1, 2) / torch.tensor([0.5 * w, 0.5 * h]))
    img = torch.cat((x, torch.ones(n, 1, h, w)), 1)
    out = torch.nn.functional.grid_sample(img, grid.view(1, h, w, 2).expand(n, h, w, 2),
                                          mode=interp, padding_mode="zeros",
                                          align_corners=False)
    mask, out = out[:, -1:].expand(n, c, h, w), out[:, :-1]
    fill = torch.tensor(fill).view(1, c, 1, 1).expand_as(out)
    if interp == "nearest":
        out = torch.where(mask < 0.5, fill, out)
    else:
        out = out * mask + (1 - mask) * fill
    return out.numpy()


@pytest.mark.parametrize("angle", [30, -45.5, 90])
@pytest.mark.parametrize("interp", ["nearest", "bilinear"])
def test_rotate_tensor_matches_grid_sample(angle, interp):
    fill = [0.5, 0.2, 0.1]
    out = F.rotate(ember.tensor(X), angle, interp, fill=fill).numpy()
    np.testing.assert_allclose(out, _torch_rotate(torch.tensor(X), angle, interp, fill),
                               atol=1e-5)


PIL_VS_TENSOR = {
    "contrast": lambda x: F.adjust_contrast(x, 1.5),
    "saturation": lambda x: F.adjust_saturation(x, 0.5),
    "brightness": lambda x: F.adjust_brightness(x, 1.3),
    "blur": lambda x: F.gaussian_blur(x, 5, 1.5),
    "pad_symmetric": lambda x: F.pad(x, [1, 2, 3, 4], padding_mode="symmetric"),
    "pad_reflect": lambda x: F.pad(x, [3, 1], padding_mode="reflect"),
    "pad_fill": lambda x: F.pad(x, 2, fill=7),
    "center_crop_big": lambda x: F.center_crop(x, 25),
    "center_crop_pad": lambda x: F.center_crop(x, [24, 33]),
    "crop_outside": lambda x: F.crop(x, -2, 25, 10, 10),
    "rotate_expand": lambda x: F.rotate(x, 33, expand=True),
    "hflip": F.hflip, "vflip": F.vflip,
    "gray3": lambda x: F.rgb_to_grayscale(x, 3),
}


@pytest.mark.parametrize("name", sorted(PIL_VS_TENSOR))
def test_pil_and_tensor_paths_agree(name):
    fn = PIL_VS_TENSOR[name]
    img = Image.fromarray(U8)
    a = np.asarray(fn(img)).astype(int)
    b = fn(T.PILToTensor()(img)).permute(1, 2, 0).numpy().astype(int)
    assert a.shape == b.shape
    assert np.abs(a - b).max() <= 1


def test_color_tensor_formulas():
    t = ember.tensor(X[0])
    gray = (0.2989 * X[0, 0] + 0.587 * X[0, 1] + 0.114 * X[0, 2])
    np.testing.assert_allclose(F.rgb_to_grayscale(t).numpy()[0], gray, rtol=1e-6)
    np.testing.assert_allclose(F.adjust_brightness(t, 2.0).numpy(), np.clip(2 * X[0], 0, 1))
    np.testing.assert_allclose(F.adjust_hue(t, 0.0).numpy(), X[0], atol=1e-6)
    with pytest.raises(ValueError, match=r"hue_factor \(0.7\) is not in \[-0.5, 0.5\]."):
        F.adjust_hue(t, 0.7)
    with pytest.raises(ValueError, match=r"brightness_factor \(-1\) is not non-negative."):
        F.adjust_brightness(t, -1)


def test_convert_image_dtype():
    u = ember.tensor([[[0, 128, 255]]], dtype=ember.uint8)
    f = F.convert_image_dtype(u, ember.float32)
    np.testing.assert_allclose(f.numpy(), [[[0, 128 / 255, 1]]])
    assert F.convert_image_dtype(f, ember.uint8).tolist() == [[[0, 128, 255]]]
    assert T.ConvertImageDtype(ember.float64)(u).dtype == ember.float64
    with pytest.raises(RuntimeError, match="cannot be performed safely"):
        F.convert_image_dtype(f, ember.int64)


def test_to_tensor_and_to_pil_image_modes():
    img = Image.fromarray(U8)
    t = T.ToTensor()(img)
    assert t.dtype == ember.float32 and t.shape == (3, 20, 30)
    np.testing.assert_allclose(t.numpy(), U8.transpose(2, 0, 1) / 255, rtol=1e-6)
    back = T.ToPILImage()(t)
    assert back.mode == "RGB" and np.array_equal(np.asarray(back), U8)
    for mode, dtype in [("L", ember.float32), ("RGBA", ember.float32), ("1", ember.float32),
                        ("I;16", ember.int16), ("F", ember.float32), ("I", ember.int32)]:
        im = Image.new(mode, (3, 2), 1)
        assert T.ToTensor()(im).dtype == dtype
        if mode != "1":  # (a float tensor becomes 'L' unless mode='F' is asked for)
            to_pil = T.ToPILImage("F" if mode == "F" else None)
            assert to_pil(T.PILToTensor()(im)).mode == mode
    assert T.ToTensor()(Image.new("1", (2, 2), 1)).tolist() == [[[1.0, 1.0], [1.0, 1.0]]]
    with pytest.raises(ValueError, match="pic should be 2/3 dimensional"):
        T.ToPILImage()(ember.zeros(1, 1, 2, 2))


def test_reprs():
    tf = T.Compose([T.Resize(256), T.CenterCrop(224), T.RandomResizedCrop(224),
                    T.RandomRotation(30), T.ColorJitter(0.2, hue=0.1), T.RandomErasing(),
                    T.GaussianBlur(3), T.Pad(2), T.RandomCrop(32, padding=4),
                    T.RandomHorizontalFlip(), T.RandomApply([T.Grayscale()], p=0.3),
                    T.RandomChoice([T.Grayscale(3)]), T.RandomGrayscale(), T.ToTensor(),
                    T.Normalize((0.5,), (0.5,))])
    assert repr(tf) == """Compose(
    Resize(size=256, interpolation=bilinear, max_size=None, antialias=True)
    CenterCrop(size=(224, 224))
    RandomResizedCrop(size=(224, 224), scale=(0.08, 1.0), ratio=(0.75, 1.3333), \
interpolation=bilinear, antialias=True)
    RandomRotation(degrees=[-30.0, 30.0], interpolation=nearest, expand=False, fill=0)
    ColorJitter(brightness=(0.8, 1.2), contrast=None, saturation=None, hue=(-0.1, 0.1))
    RandomErasing(p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0, inplace=False)
    GaussianBlur(kernel_size=(3, 3), sigma=(0.1, 2.0))
    Pad(padding=2, fill=0, padding_mode=constant)
    RandomCrop(size=(32, 32), padding=4)
    RandomHorizontalFlip(p=0.5)
    RandomApply(
    p=0.3
    Grayscale(num_output_channels=1)
)
    RandomChoice(
    Grayscale(num_output_channels=3)
)(p=None)
    RandomGrayscale(p=0.1)
    ToTensor()
    Normalize(mean=(0.5,), std=(0.5,))
)"""
    assert isinstance(T.Resize(3), ember.nn.Module)


def test_argument_errors():
    with pytest.raises(ValueError, match="If degrees is a single number, it must be positive."):
        T.RandomRotation(-1)
    with pytest.raises(ValueError, match="Kernel size value should be an odd"):
        T.GaussianBlur(4)
    with pytest.raises(ValueError, match="Padding mode should be either constant"):
        T.Pad(1, padding_mode="wrap")
    with pytest.raises(ValueError, match="Scale should be between 0 and 1"):
        T.RandomErasing(scale=(0.1, 2))
    with pytest.raises(ValueError, match=r"Required crop size \(40, 40\) is larger"):
        T.RandomCrop(40)(ember.zeros(3, 20, 30))
    with pytest.raises(TypeError, match="Argument lambd should be callable, got 'int'"):
        T.Lambda(3)


def test_random_transforms_follow_manual_seed():
    img = Image.fromarray(U8)
    tf = T.Compose([T.RandomResizedCrop(16), T.RandomRotation(20),
                    T.ColorJitter(0.3, 0.3, 0.3, 0.1), T.RandomGrayscale(0.5),
                    T.GaussianBlur(3), T.RandomCrop(18, padding=2, padding_mode="reflect"),
                    T.RandomHorizontalFlip(), T.RandomVerticalFlip(),
                    T.RandomOrder([T.Pad(1), T.Resize((18, 18))]),
                    T.RandomChoice([T.Resize((10, 12)), T.Resize([10, 12])], p=[0.3, 0.7]),
                    T.RandomAffine(10, translate=(0.1, 0.1), scale=(0.9, 1.1), shear=5),
                    T.ToTensor(), T.RandomErasing(p=1, value="random")])
    ember.manual_seed(3)
    a = tf(img)
    ember.manual_seed(3)
    b = tf(img)
    assert a.shape == (3, 10, 12) and ember.equal(a, b)
    c = tf(img)
    assert not ember.equal(a, c)
    t = ember.rand(3, 24, 24)
    ember.manual_seed(0)
    out = T.RandomCrop(20, pad_if_needed=True)(T.RandomResizedCrop(18)(t))
    assert out.shape == (3, 20, 20)


def test_random_erasing_and_flip_probabilities():
    t = ember.ones(3, 10, 10)
    out = T.RandomErasing(p=1.0, value=(0.1, 0.2, 0.3))(t)
    assert float(out.sum()) < 300 and float(t.sum()) == 300  # not in place
    assert ember.equal(T.RandomHorizontalFlip(p=1.0)(t), t)
    x = ember.arange(6.0).view(1, 2, 3)
    assert T.RandomHorizontalFlip(p=1.0)(x).tolist() == [[[2.0, 1.0, 0.0], [5.0, 4.0, 3.0]]]
    assert T.RandomVerticalFlip(p=0.0)(x) is x


def test_five_and_ten_crop():
    t = ember.arange(36.0).view(1, 6, 6)
    crops = T.FiveCrop(2)(t)
    assert [c.tolist() for c in crops[:1]] == [[[[0.0, 1.0], [6.0, 7.0]]]]
    assert len(T.TenCrop(2)(t)) == 10
