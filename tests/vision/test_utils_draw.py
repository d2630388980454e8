"""ember.vision.utils' drawing helpers and flow_to_image against torchvision's own
(pure-Python, Pillow-drawn) functions: the pixels must be equal."""
import warnings

import numpy as np
import pytest

import ember
from ember.vision import utils as U
from tests._torchvision_oracle import import_torchvision

RNG = np.random.default_rng(11)
IMG = RNG.integers(0, 256, (3, 40, 50), dtype=np.uint8)
BOXES = np.array([[2, 3, 20, 30], [10, 5, 45, 38.7], [0, 0, 49, 39]], np.float32)


@pytest.fixture(scope="module")
def TU():
    import_torchvision()
    import torchvision.utils as TU
    return TU


def _pair(TU, name, args, kwargs, to_torch):
    import torch
    ours = getattr(U, name)(*[ember.tensor(a) if isinstance(a, np.ndarray) else a
                              for a in args], **kwargs)
    ref = getattr(TU, name)(*[torch.tensor(a) if isinstance(a, np.ndarray) else a
                              for a in args], **kwargs)
    assert str(ours.dtype).split(".")[-1] == str(ref.dtype).split(".")[-1]
    return ours.numpy(), ref.numpy()


@pytest.mark.parametrize("kwargs", [
    {}, dict(labels=["a", "bb", "person"], width=3), dict(colors="red", fill=True),
    dict(colors=[(255, 0, 0), "blue", "#00ff00"], labels=["x", "y", "z"], fill_labels=True,
         label_background_colors="white"),
    dict(labels=["1", "2", "3"], label_colors=["yellow", "green", "cyan"])])
def test_draw_bounding_boxes_matches_torchvision(TU, kwargs):
    ours, ref = _pair(TU, "draw_bounding_boxes", (IMG, BOXES), kwargs, True)
    assert np.array_equal(ours, ref)


def test_draw_bounding_boxes_float_gray_and_oriented(TU):
    gray = IMG[:1].astype(np.float32) / 255
    ours, ref = _pair(TU, "draw_bounding_boxes", (gray, BOXES), {}, True)
    np.testing.assert_allclose(ours, ref, atol=1e-7)
    oriented = np.array([[5, 5, 30, 8, 28, 30, 3, 27]], np.float32)
    ours, ref = _pair(TU, "draw_bounding_boxes", (IMG, oriented), dict(fill=True), True)
    assert np.array_equal(ours, ref)


def test_draw_bounding_boxes_errors():
    img = ember.tensor(IMG)
    with pytest.raises(ValueError, match="Boxes need to be in \\(xmin, ymin, xmax, ymax\\)"):
        U.draw_bounding_boxes(img, ember.tensor([[5.0, 5, 2, 9]]))
    with pytest.raises(ValueError, match=r"Number of boxes \(3\) and labels \(1\) mismatch"):
        U.draw_bounding_boxes(img, ember.tensor(BOXES), labels=["a"])
    with pytest.raises(ValueError, match="The image dtype must be uint8 or float"):
        U.draw_bounding_boxes(img.int(), ember.tensor(BOXES))
    with pytest.raises(ValueError, match="Number of colors must be equal or larger"):
        U.draw_bounding_boxes(img, ember.tensor(BOXES), colors=["red"])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert U.draw_bounding_boxes(img, ember.zeros(0, 4)) is img
    assert "No box was drawn" in str(caught[0].message)


@pytest.mark.parametrize("alpha,colors", [(0.8, None), (0.3, ["red", (0, 0, 255), "#123456"])])
@pytest.mark.parametrize("dtype", [np.uint8, np.float32])
def test_draw_segmentation_masks_matches_torchvision(TU, alpha, colors, dtype):
    img = IMG if dtype == np.uint8 else IMG.astype(np.float32) / 255
    masks = RNG.random((3, 40, 50)) > 0.6
    ours, ref = _pair(TU, "draw_segmentation_masks", (img, masks), dict(alpha=alpha,
                                                                        colors=colors), True)
    np.testing.assert_allclose(ours, ref, atol=1e-6)
    with pytest.raises(ValueError, match="The masks must be of dtype bool"):
        U.draw_segmentation_masks(ember.tensor(IMG), ember.zeros(40, 50))


def test_draw_keypoints_matches_torchvision(TU):
    import torch
    kpts = RNG.uniform(0, 40, (2, 5, 2)).astype(np.float32)
    vis = RNG.random((2, 5)) > 0.3
    conn = [(0, 1), (1, 2), (2, 3), (3, 4)]
    for img in (IMG, IMG.astype(np.float32) / 255):
        ours = U.draw_keypoints(ember.tensor(img), ember.tensor(kpts), conn, colors="blue",
                                radius=3, width=2, visibility=ember.tensor(vis))
        ref = TU.draw_keypoints(torch.tensor(img), torch.tensor(kpts), conn, colors="blue",
                                radius=3, width=2, visibility=torch.tensor(vis))
        np.testing.assert_allclose(ours.numpy(), ref.numpy(), atol=1e-7)
    with pytest.raises(ValueError, match="keypoints must be of shape"):
        U.draw_keypoints(ember.tensor(IMG), ember.zeros(5, 2))


def test_flow_to_image_matches_torchvision(TU):
    import torch
    flow = RNG.standard_normal((2, 2, 15, 17)).astype(np.float32)
    flow[0, :, 0, 0] = 0.0
    ours = U.flow_to_image(ember.tensor(flow)).numpy()
    ref = TU.flow_to_image(torch.tensor(flow)).numpy()
    assert ours.dtype == np.uint8 and ours.shape == (2, 3, 15, 17)
    assert np.abs(ours.astype(int) - ref.astype(int)).max() <= 1  # floor at float32 ties
    assert (ours != ref).mean() < 0.01
    single = U.flow_to_image(ember.tensor(flow[1])).numpy()  # normalized by its own max
    assert np.abs(single.astype(int) - TU.flow_to_image(torch.tensor(flow[1])).numpy()).max() <= 1
    np.testing.assert_array_equal(U._make_colorwheel().numpy(), TU._make_colorwheel().numpy())
    with pytest.raises(ValueError, match="Flow should be of dtype torch.float"):
        U.flow_to_image(ember.zeros(2, 3, 3, dtype=ember.float64))
    with pytest.raises(ValueError, match=r"Input flow should have shape \(2, H, W\)"):
        U.flow_to_image(ember.zeros(3, 3, 3))


@pytest.mark.parametrize("mode,shape", [("RGB", (6, 7, 3)), ("L", (6, 7)), ("HSV", (6, 7, 3)),
                                        ("RGBA", (6, 7, 4))])
def test_image_fromarray_matches_torchvision(TU, mode, shape):
    arr = RNG.integers(0, 256, shape, dtype=np.uint8)
    for a in (arr, arr[:, ::-1]):  # contiguous and strided
        ours, ref = U._Image_fromarray(a, mode), TU._Image_fromarray(a, mode)
        assert ours.mode == ref.mode and ours.size == ref.size
        assert np.array_equal(np.asarray(ours), np.asarray(ref))
