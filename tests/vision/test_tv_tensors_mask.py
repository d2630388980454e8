"""tv_tensors.Mask and the v2 kernels on masks (flip, crop, pad, nearest resize) against
torchvision, and a detection sample (image, boxes, masks) through a v2 pipeline."""
import numpy as np
import pytest

import ember
import ember.vision.transforms.v2 as T2
from ember.vision import tv_tensors
from tests._torchvision_oracle import import_torchvision

RNG = np.random.default_rng(8)
MASKS = (RNG.random((3, 11, 14)) > 0.5).astype(np.uint8)


@pytest.mark.parametrize("call", [
    ("horizontal_flip", ()), ("crop", (2, 3, 6, 7)), ("pad", ([1, 2, 3, 4],)),
    ("resize", ([7, 9],)), ("center_crop", ([5, 6],))])
@pytest.mark.parametrize("arr", [MASKS, MASKS[0]], ids=["instances", "2d"])
def test_mask_kernels_match_torchvision(call, arr):
    import_torchvision()
    import torch
    import torchvision.transforms.v2.functional as TF
    from torchvision import tv_tensors as TVT
    name, args = call
    ours = getattr(T2.functional, name)(tv_tensors.Mask(ember.tensor(arr)), *args)
    ref = getattr(TF, name)(TVT.Mask(torch.tensor(arr)), *args)
    assert type(ours) is tv_tensors.Mask and type(ref) is TVT.Mask
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def test_detection_sample_through_a_v2_pipeline():
    img = tv_tensors.Image(ember.randint(0, 256, (3, 11, 14), dtype=ember.uint8))
    target = {"boxes": tv_tensors.BoundingBoxes([[1, 2, 6, 9]], format="XYXY",
                                                canvas_size=(11, 14)),
              "masks": tv_tensors.Mask(ember.tensor(MASKS)), "labels": ember.tensor([1])}
    pipeline = T2.Compose([T2.RandomHorizontalFlip(1.0), T2.ToDtype(ember.float, scale=True),
                           T2.ToPureTensor()])
    out_img, out_target = pipeline(img, target)
    assert type(out_img) is ember.Tensor and out_img.dtype == ember.float32
    assert type(out_target["masks"]) is ember.Tensor
    assert out_target["masks"].dtype == ember.uint8  # ToDtype leaves masks alone
    np.testing.assert_array_equal(out_target["masks"].numpy(), MASKS[..., ::-1])
    np.testing.assert_array_equal(out_target["boxes"].numpy(), [[8, 2, 13, 9]])


START, END = [[0, 0], [13, 0], [13, 10], [0, 10]], [[2, 1], [12, 0], [13, 9], [1, 10]]


@pytest.mark.parametrize("kind", ["image", "mask", "boxes", "int_boxes"])
def test_v2_perspective_and_elastic_match_torchvision(kind):
    import_torchvision()
    import torch
    import torchvision.transforms.v2.functional as TF
    from torchvision import tv_tensors as TVT
    disp = ((RNG.random((1, 11, 14, 2)) - 0.5) * 0.3).astype(np.float32)
    if kind == "image":
        arr = RNG.integers(0, 256, (3, 11, 14), dtype=np.uint8)
        ours, ref = tv_tensors.Image(ember.tensor(arr)), TVT.Image(torch.tensor(arr))
    elif kind == "mask":
        ours, ref = tv_tensors.Mask(ember.tensor(MASKS)), TVT.Mask(torch.tensor(MASKS))
    else:
        boxes = np.array([[1.5, 2, 9, 8.5], [4, 0, 13, 10]], np.float32)
        if kind == "int_boxes":
            boxes = boxes.astype(np.int64)
        ours = tv_tensors.BoundingBoxes(ember.tensor(boxes), format="XYXY", canvas_size=(11, 14))
        ref = TVT.BoundingBoxes(torch.tensor(boxes), format="XYXY", canvas_size=(11, 14))
    got = T2.functional.perspective(ours, START, END, fill=[3] if kind == "image" else None)
    want = TF.perspective(ref, START, END, fill=[3] if kind == "image" else None)
    assert type(got).__name__ == type(want).__name__
    diff = np.abs(got.numpy().astype(float) - want.numpy().astype(float))
    assert diff.max() <= (1 if kind == "image" else 1e-4)  # uint8 rounding ties
    got = T2.functional.elastic(ours, ember.tensor(disp))
    want = TF.elastic(ref, torch.tensor(disp))
    diff = np.abs(got.numpy().astype(float) - want.numpy().astype(float))
    assert diff.max() <= (1 if kind == "image" else 1e-4)


def test_v2_random_perspective_and_elastic_classes():
    import_torchvision()
    import inspect
    import torchvision.transforms.v2 as TV2
    for name in ("RandomPerspective", "ElasticTransform"):
        assert list(inspect.signature(getattr(T2, name)).parameters) == \
            list(inspect.signature(getattr(TV2, name)).parameters)
        assert repr(getattr(T2, name)()) == repr(getattr(TV2, name)())
    img = tv_tensors.Image(ember.randint(0, 256, (3, 11, 14), dtype=ember.uint8))
    boxes = tv_tensors.BoundingBoxes([[1, 2, 9, 8]], format="XYXY", canvas_size=(11, 14))
    for t in (T2.RandomPerspective(p=1.0), T2.ElasticTransform(alpha=5.0)):
        out_img, out_boxes, out_mask = t(img, boxes, tv_tensors.Mask(ember.tensor(MASKS)))
        assert type(out_img) is tv_tensors.Image and type(out_boxes) is tv_tensors.BoundingBoxes
        assert type(out_mask) is tv_tensors.Mask and out_mask.dtype == ember.uint8
        assert set(np.unique(out_mask.numpy())) <= {0, 1}
    with pytest.raises(ValueError, match="distortion_scale value should be between 0 and 1"):
        T2.RandomPerspective(distortion_scale=2)
