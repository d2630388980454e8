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
