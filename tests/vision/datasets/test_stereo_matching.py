"""Stereo-matching datasets against torchvision over fake scenes (PNG/JPEG views, .pfm and
16-bit PNG disparities, masks)."""
import json

import numpy as np
import pytest

import ember.vision.datasets as D
from tests.vision.datasets._parity import assert_same_dataset, tv_datasets, write_image, \
    write_pfm, write_text

Image = pytest.importorskip("PIL.Image")
RNG = np.random.default_rng(0)


def _both(name, *args, **kwargs):
    return getattr(D, name)(*args, **kwargs), getattr(tv_datasets(), name)(*args, **kwargs)


def _png16(path, low=0, high=2 ** 16):
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(RNG.integers(low, high, (5, 6)).astype(np.uint16)).save(path)


def _pfm(path):
    write_pfm(path, RNG.normal(size=(5, 6)).astype(np.float32) * 10)


def _views(folder, left, right, seed=0):
    write_image(folder / left, seed=seed)
    write_image(folder / right, seed=seed + 1)


def test_carla(tmp_path):
    for k, scene in enumerate(["a", "b"]):
        folder = tmp_path / "carla-highres" / "trainingF" / scene
        _views(folder, "im0.png", "im1.png", k)
        _pfm(folder / "disp0GT.pfm")
        _pfm(folder / "disp1GT.pfm")
    assert_same_dataset(*_both("CarlaStereo", str(tmp_path)))


@pytest.mark.parametrize("split", ["train", "test"])
def test_kitti_stereo(tmp_path, split):
    for k in range(2):
        for location in ("training", "testing"):
            base = tmp_path / "Kitti2012" / location
            _views(base, f"colored_0/{k:06d}_10.png", f"colored_1/{k:06d}_10.png", k)
            base = tmp_path / "Kitti2015" / location
            _views(base, f"image_2/{k:06d}_10.png", f"image_3/{k:06d}_10.png", k)
        _png16(tmp_path / "Kitti2012" / "training" / "disp_noc" / f"{k:06d}_10.png")
        for side in (0, 1):
            _png16(tmp_path / "Kitti2015" / "training" / f"disp_occ_{side}" / f"{k:06d}_10.png")
    for name in ("Kitti2012Stereo", "Kitti2015Stereo"):
        assert_same_dataset(*_both(name, str(tmp_path), split))


def test_middlebury(tmp_path):
    for k, scene in enumerate(["Adirondack-perfect", "Piano-imperfect"]):
        folder = tmp_path / "Middlebury2014" / "train" / scene
        _views(folder, "im0.png", "im1.png", k)
        for side in (0, 1):
            disparity = RNG.normal(size=(5, 6)).astype(np.float32) * 10
            disparity[0, 0] = np.inf
            write_pfm(folder / f"disp{side}.pfm", disparity)
    assert_same_dataset(*_both("Middlebury2014Stereo", str(tmp_path), calibration="both"))
    with pytest.raises(ValueError, match="Split 'test' has only no calibration settings"):
        D.Middlebury2014Stereo(str(tmp_path), "test")
    with pytest.raises(FileNotFoundError, match="The additional directory was not found"):
        D.Middlebury2014Stereo(str(tmp_path), "additional")


def test_crestereo_and_instereo(tmp_path):
    for part in ("shapenet", "reflective", "tree", "hole"):
        folder = tmp_path / "CREStereo" / part
        _views(folder, "0_left.jpg", "0_right.jpg")
        _png16(folder / "0_left.disp.png")
        _png16(folder / "0_right.disp.png")
    assert_same_dataset(*_both("CREStereo", str(tmp_path)))
    for k in range(2):
        folder = tmp_path / "InStereo2k" / "test" / f"{k:06d}"
        _views(folder, "left.png", "right.png", k)
        _png16(folder / "left_disp.png")
        _png16(folder / "right_disp.png")
    assert_same_dataset(*_both("InStereo2k", str(tmp_path), "test"))


def test_falling_things(tmp_path):
    for variant, scene in (("single", "a/kitchen_0"), ("mixed", "kitchen_1")):
        folder = tmp_path / "FallingThings" / variant / scene
        _views(folder, "000000.left.jpg", "000000.right.jpg")
        _png16(folder / "000000.left.depth.png", low=1)
        _png16(folder / "000000.right.depth.png", low=1)
        write_text(folder / "_camera_settings.json", json.dumps(
            {"camera_settings": [{"intrinsic_settings": {"fx": 768.16}}]}))
    assert_same_dataset(*_both("FallingThingsStereo", str(tmp_path), "both"))


def test_scene_flow(tmp_path):
    for variant, prefix in (("Monkaa", "a_rain"), ("Driving", "15mm/forward/fast")):
        base = tmp_path / "SceneFlow" / variant
        _views(base / "frames_finalpass" / prefix, "left/0006.png", "right/0006.png")
        _pfm(base / "disparity" / prefix / "left" / "0006.pfm")
        _pfm(base / "disparity" / prefix / "right" / "0006.pfm")
        assert_same_dataset(*_both("SceneFlowStereo", str(tmp_path), variant, "final"))


def test_sintel_stereo(tmp_path):
    base = tmp_path / "Sintel" / "training"
    for k, scene in enumerate(["alley_1", "cave_2"]):
        name = "frame_0001.png"
        _views(base, f"clean_left/{scene}/{name}", f"clean_right/{scene}/{name}", k)
        write_image(base / "disparities" / scene / name, seed=k + 5)
        write_image(base / "occlusions" / scene / name, mode="L", seed=k + 6)
        write_image(base / "outofframe" / scene / name, mode="L", seed=k + 7)
    assert_same_dataset(*_both("SintelStereo", str(tmp_path), "clean"))


@pytest.mark.parametrize("split", ["train", "test"])
def test_eth3d(tmp_path, split):
    for k, scene in enumerate(["delivery_area_1l", "electro_1s"]):
        root = tmp_path / "ETH3D"
        for folder in ("two_view_training", "two_view_test"):
            _views(root / folder / scene, "im0.png", "im1.png", k)
        _pfm(root / "two_view_training_gt" / scene / "disp0GT.pfm")
        write_image(root / "two_view_training_gt" / scene / "mask0nocc.png", mode="L", seed=k)
    assert_same_dataset(*_both("ETH3DStereo", str(tmp_path), split))
    with pytest.raises(FileNotFoundError, match="Could not find any files matching"):
        D.ETH3DStereo(str(tmp_path / "none"))
