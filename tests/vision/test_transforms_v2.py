"""ember.vision.transforms.v2 and tv_tensors. Expected values were computed with torchvision
0.28 (transforms.v2 and its functional kernels on the same inputs)."""
import pickle
import warnings

import numpy as np
import pytest

import ember
from ember.vision import tv_tensors as T
from ember.vision.transforms import v2
from ember.vision.transforms.v2 import functional as F

DATA = [[1, 2, 5, 6], [0, 0, 11, 9], [8, 7, 12, 10]]


def _boxes(fmt, floating=False):
    d = (np.array(DATA, dtype=np.float64) + 0.25).tolist() if floating else DATA
    return T.BoundingBoxes(ember.tensor(d, dtype=ember.float32 if floating else ember.int64),
                           format=fmt, canvas_size=(10, 12))


BOX_CASES = {  # (format, floating, kernel): (values, canvas_size)
    ("XYXY", False, "hflip"): ([[7, 2, 11, 6], [1, 0, 12, 9], [0, 7, 4, 10]], (10, 12)),
    ("XYXY", False, "resize"): ([[0, 1, 2, 3], [0, 0, 6, 4], [4, 3, 7, 5]], (5, 7)),
    ("XYXY", False, "resize6"): ([[0, 1, 2, 3], [0, 0, 6, 5], [4, 4, 7, 6]], (6, 7)),
    ("XYXY", False, "crop"): ([[0, 0, 2, 4], [0, 0, 5, 4], [5, 4, 5, 4]], (4, 5)),
    ("XYXY", False, "cc14"): ([[2, 4, 6, 8], [1, 2, 12, 11], [9, 9, 13, 12]], (14, 14)),
    ("XYXY", False, "cc4"): ([[0, 0, 1, 3], [0, 0, 4, 4], [4, 4, 4, 4]], (4, 4)),
    ("XYXY", False, "pad"): ([[2, 4, 6, 8], [1, 2, 12, 11], [9, 9, 13, 12]], (16, 16)),
    ("XYXY", False, "rc"): ([[0, 0, 1, 2], [0, 0, 4, 3], [3, 3, 4, 3]], (3, 4)),
    ("XYWH", False, "crop"): ([[0, 0, 3, 4], [0, 0, 5, 4], [5, 4, 0, 0]], (4, 5)),
    ("XYWH", False, "hflip"): ([[6, 2, 5, 6], [1, 0, 11, 9], [-8, 7, 12, 10]], (10, 12)),
    ("CXCYWH", False, "hflip"): ([[11, 2, 5, 6], [12, 0, 11, 9], [4, 7, 12, 10]], (10, 12)),
    ("XYXY", True, "resize"): ([[0.7292, 1.125, 3.0625, 3.125], [0.1458, 0.125, 6.5625, 4.625],
                                [4.8125, 3.625, 7.1458, 5.125]], (5, 7)),
    ("XYWH", True, "rc"): ([[0.0, 0.625, 2.25, 2.375], [0.0, 0.0, 4.0, 3.0],
                            [3.125, 3.0, 0.875, 0.0]], (3, 4)),
    ("CXCYWH", True, "crop"): ([[0.4375, 1.6875, 0.875, 3.375], [1.4375, 1.4375, 2.875, 2.875],
                                [2.5, 2.0625, 5.0, 3.875]], (4, 5)),
    ("CXCYWH", True, "pad"): ([[2.4375, 4.25, 4.875, 6.25], [3.4375, 3.4375, 6.875, 6.875],
                               [9.25, 9.25, 12.25, 10.25]], (16, 16)),
    ("XYWH", True, "conv"): ([[1.25, 2.25, 6.5, 8.5], [0.25, 0.25, 11.5, 9.5],
                              [8.25, 7.25, 20.5, 17.5]], (10, 12)),
}
KERNELS = {
    "hflip": F.horizontal_flip, "resize": lambda b: F.resize(b, [5, 7]),
    "resize6": lambda b: F.resize(b, [6]), "crop": lambda b: F.crop(b, 2, 3, 4, 5),
    "cc14": lambda b: F.center_crop(b, [14, 14]), "cc4": lambda b: F.center_crop(b, [4, 4]),
    "pad": lambda b: F.pad(b, [1, 2, 3, 4]), "rc": lambda b: F.resized_crop(b, 1, 2, 6, 8, [3, 4]),
    "conv": lambda b: F.convert_bounding_box_format(b, new_format="XYXY"),
}


@pytest.mark.parametrize("case", sorted(BOX_CASES), ids=lambda c: "-".join(map(str, c)))
def test_bounding_box_kernels(case):
    fmt, floating, kernel = case
    boxes = _boxes(fmt, floating)
    out = KERNELS[kernel](boxes)
    values, canvas = BOX_CASES[case]
    assert isinstance(out, T.BoundingBoxes) and out.canvas_size == canvas
    assert out.dtype == boxes.dtype
    assert out.format == (T.BoundingBoxFormat.XYXY if kernel == "conv" else boxes.format)
    np.testing.assert_allclose(out.numpy(), values, atol=1e-4)


def _img():
    return ember.tensor(((np.arange(3 * 10 * 12) * 7) % 256).astype(np.uint8).reshape(3, 10, 12))


def test_pipeline_moves_images_and_boxes_together():
    pipe = v2.Compose([v2.RandomHorizontalFlip(p=1.0), v2.RandomCrop((14, 16), padding=2),
                       v2.CenterCrop(8), v2.ToDtype(ember.float32, scale=True),
                       v2.Resize([5, 6], antialias=False),
                       v2.Normalize([0.5, 0.4, 0.3], [0.2, 0.3, 0.4])])
    boxes = T.BoundingBoxes(DATA, format="XYXY", canvas_size=(10, 12))
    out = pipe({"image": T.Image(_img()), "boxes": boxes, "label": 3})
    assert type(out["image"]) is T.Image and out["label"] == 3
    assert out["boxes"].tolist() == [[3, 0, 6, 3], [0, 0, 6, 5], [0, 3, 1, 5]]
    assert out["boxes"].canvas_size == (5, 6)
    img = out["image"].numpy()
    np.testing.assert_allclose(img[0, 0, :2], [0.8536, 0.6706], atol=1e-4)
    np.testing.assert_allclose(img[1, 2], [0.3377, 0.2157, 0.0937, -0.0283, -0.1503, 1.122],
                               atol=1e-4)
    np.testing.assert_allclose(img[2, 4], [0.0797, -0.0118, -0.1033, 0.5582, 0.4667, 0.3752],
                               atol=1e-4)
    # a plain tensor is the image when nothing else is; it stays a plain tensor
    plain, b2 = pipe(_img(), boxes)
    assert type(plain) is ember.Tensor and np.allclose(plain.numpy(), img)
    assert b2.tolist() == out["boxes"].tolist()
    # with an Image present, other plain tensors pass through untouched
    extra = ember.ones(3, 10, 12)
    _, untouched = v2.CenterCrop(4)(T.Image(_img()), extra)
    assert untouched is extra
    first, second = v2.CenterCrop(4)(ember.ones(3, 10, 12), ember.ones(3, 10, 12))
    assert tuple(first.shape) == (3, 4, 4) and tuple(second.shape) == (3, 10, 12)


def test_to_dtype_scaling():
    img = _img()[:, :2, :3]
    f = v2.ToDtype(ember.float32, scale=True)(img)
    assert f.dtype == ember.float32
    np.testing.assert_allclose(f.numpy()[0], [[0.0, 0.027451, 0.054902],
                                              [0.3294118, 0.3568628, 0.3843138]], atol=1e-7)
    assert (f.numpy() == (img.numpy().astype(np.float32) * np.float32(1 / 255))).all()
    assert v2.ToDtype(ember.int16, scale=True)(img).numpy()[0].tolist() == \
        [[0, 896, 1792], [10752, 11648, 12544]]
    assert v2.ToDtype(ember.int32, scale=True)(img).numpy()[2, 1].tolist() == \
        [1912602624, 1971322880, 2030043136]
    assert v2.ToDtype(ember.uint8, scale=True)(f).numpy()[1].tolist() == \
        [[72, 79, 86], [156, 163, 170]]
    assert v2.ToDtype(ember.float32)(img).numpy()[0, 0, 1] == 7.0
    boxes = T.BoundingBoxes(DATA, format="XYXY", canvas_size=(10, 12))
    assert v2.ToDtype(ember.float32, scale=True)(boxes).dtype == ember.int64
    assert v2.ToDtype({T.BoundingBoxes: ember.float32, "others": None})(boxes).dtype == \
        ember.float32
    with pytest.raises(RuntimeError, match="cannot be performed safely"):
        v2.ToDtype(ember.int32, scale=True)(f)


def test_to_image_and_to_pure_tensor():
    PIL = pytest.importorskip("PIL.Image")
    arr = ((np.arange(4 * 5 * 3) * 11) % 256).astype(np.uint8).reshape(4, 5, 3)
    a = v2.ToImage()(arr)
    assert type(a) is T.Image and a.numpy().tolist() == arr.transpose(2, 0, 1).tolist()
    p = v2.ToImage()(PIL.fromarray(arr))
    assert type(p) is T.Image and p.numpy().tolist() == a.numpy().tolist()
    assert tuple(v2.ToImage()(arr[:, :, 0]).shape) == (1, 4, 5)
    pure = v2.ToPureTensor()(a)
    assert type(pure) is ember.Tensor and pure.numpy().tolist() == a.numpy().tolist()


def test_tv_tensors_behave_like_torchvision():
    im = T.Image(ember.arange(12, dtype=ember.uint8).reshape(1, 3, 4))
    assert repr(im) == ("Image([[[ 0,  1,  2,  3],\n        [ 4,  5,  6,  7],\n"
                        "        [ 8,  9, 10, 11]]], dtype=torch.uint8, )")
    assert type(im + 1) is ember.Tensor and type(im[0]) is ember.Tensor
    assert type(im.float()) is ember.Tensor
    assert type(im.clone()) is T.Image and type(im.to(ember.float32)) is T.Image
    assert type(im.detach()) is T.Image
    assert tuple(T.Image(ember.zeros(2, 3)).shape) == (1, 2, 3)
    bb = T.BoundingBoxes([[1, 2, 5, 6], [0, 0, 3, 3]], format="xyxy", canvas_size=(10, 12))
    assert repr(bb) == ("BoundingBoxes([[1, 2, 5, 6],\n               [0, 0, 3, 3]], "
                        "format=BoundingBoxFormat.XYXY, canvas_size=(10, 12), "
                        "clamping_mode=soft)")
    assert bb.dtype == ember.int64 and bb.clone().canvas_size == (10, 12)
    again = pickle.loads(pickle.dumps(bb))
    assert type(again) is T.BoundingBoxes and again.format is T.BoundingBoxFormat.XYXY
    with pytest.raises(ValueError, match="Expected a 1D or 2D tensor, got 3D"):
        T.BoundingBoxes(ember.zeros(2, 2, 4), format="XYXY", canvas_size=(3, 3))
    w = T.wrap(ember.zeros(1, 4), like=bb, canvas_size=(2, 2))
    assert type(w) is T.BoundingBoxes and w.canvas_size == (2, 2) and w.format == bb.format
    x = ember.ones(1, 2, 2, requires_grad=True)
    img = T.Image(x)
    assert img.requires_grad
    (img * 2).sum().backward()
    assert x.grad.tolist() == [[[2.0, 2.0], [2.0, 2.0]]]


def test_random_transforms_apply_one_draw_to_everything():
    ember.manual_seed(0)
    img = T.Image(_img())
    boxes = T.BoundingBoxes(DATA, format="XYXY", canvas_size=(10, 12))
    for _ in range(5):
        out_img, out_boxes = v2.RandomResizedCrop((6, 8))(img, boxes)
        assert tuple(out_img.shape) == (3, 6, 8) and out_boxes.canvas_size == (6, 8)
        out_img, out_boxes = v2.RandomCrop(7)(img, boxes)
        assert tuple(out_img.shape) == (3, 7, 7) and out_boxes.canvas_size == (7, 7)
        # the crop is where the boxes say: a box's corner marks the same pixel
        flipped, fb = v2.RandomHorizontalFlip(p=0.5)(img, boxes)
        assert (fb.tolist() == boxes.tolist()) == (flipped.numpy() == img.numpy()).all()
    jit = v2.ColorJitter(brightness=0.5, contrast=0.5, saturation=0.5, hue=0.1)
    out_img, out_boxes = jit(img, boxes)
    assert out_boxes is boxes and type(out_img) is T.Image and out_img.dtype == ember.uint8
    f = v2.ToDtype(ember.float32, scale=True)(img)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        erased, eb = v2.RandomErasing(p=1.0, value=0.5)(f, boxes)
    assert eb is boxes and any("passing through inputs of type tv_tensors.BoundingBoxes"
                               in str(r.message) for r in rec)
    changed = erased.numpy() != f.numpy()
    assert changed.any() and (erased.numpy()[changed] == 0.5).all()
    with pytest.raises(TypeError, match="No image or video was found in the sample"):
        v2.RandomErasing(p=1.0)(boxes)
    with pytest.raises(ValueError, match="`p` should be a floating point value"):
        v2.RandomHorizontalFlip(p=2)


def test_reprs():
    pipe = v2.Compose([v2.ToImage(), v2.ToDtype(ember.float32, scale=True), v2.Resize(4),
                       v2.Normalize([0.5], [0.5])])
    assert repr(pipe) == (
        "Compose(\n      ToImage()\n      ToDtype(scale=True)\n"
        "      Resize(size=[4], interpolation=bilinear, antialias=True)\n"
        "      Normalize(mean=[0.5], std=[0.5], inplace=False)\n)")
    assert repr(v2.RandomResizedCrop(8)) == (
        "RandomResizedCrop(size=(8, 8), scale=(0.08, 1.0), ratio=(0.75, 1.3333333333333333), "
        "interpolation=bilinear, antialias=True)")
    assert repr(v2.RandomCrop(3, padding=1)) == (
        "RandomCrop(size=(3, 3), padding=[1, 1, 1, 1], pad_if_needed=False, fill=0, "
        "padding_mode=constant)")
    assert repr(v2.ColorJitter(0.2, 0.3)) == "ColorJitter(brightness=(0.8, 1.2), " \
                                             "contrast=(0.7, 1.3))"
    assert repr(v2.RandomErasing()) == ("RandomErasing(p=0.5, scale=(0.02, 0.33), "
                                        "ratio=(0.3, 3.3), value=[0.0], inplace=False)")
    assert repr(v2.CenterCrop(3)) == "CenterCrop(size=(3, 3))"
