"""Optical-flow datasets: Sintel, FlyingChairs and FlyingThings3D against torchvision over
fake .flo/.pfm files; KittiFlow and HD1K (whose 16-bit flow PNGs torchvision decodes with its
compiled kernels) against values written by hand, and their test splits against torchvision."""
import numpy as np
import pytest

import ember.vision.datasets as D
from ember.vision.datasets._png import read_png
from tests.vision.datasets._parity import assert_same_dataset, tv_datasets, write_flo, \
    write_image, write_pfm, write_png16, write_text

pytest.importorskip("PIL")
RNG = np.random.default_rng(0)


def _both(name, *args, **kwargs):
    return getattr(D, name)(*args, **kwargs), getattr(tv_datasets(), name)(*args, **kwargs)


def test_sintel(tmp_path):
    base = tmp_path / "Sintel"
    for split in ("training", "test"):
        for pass_name in ("clean", "final"):
            for scene, n in (("alley_1", 3), ("cave_2", 2)):
                for i in range(n):
                    write_image(base / split / pass_name / scene / f"frame_{i:04d}.png", seed=i)
    for scene, n in (("alley_1", 2), ("cave_2", 1)):
        for i in range(n):
            write_flo(base / "training" / "flow" / scene / f"frame_{i:04d}.flo",
                      RNG.normal(size=(2, 5, 6)))
    for split, pass_name in (("train", "both"), ("test", "final")):
        assert_same_dataset(*_both("Sintel", str(tmp_path), split, pass_name),
                            attrs=("_image_list",))


def test_flying_chairs(tmp_path):
    data = tmp_path / "FlyingChairs" / "data"
    for i in range(3):
        for k in (1, 2):
            write_image(data / f"{i:05d}_img{k}.ppm", seed=i * 2 + k)
        write_flo(data / f"{i:05d}_flow.flo", RNG.normal(size=(2, 5, 6)))
    with pytest.raises(FileNotFoundError, match="FlyingChairs_train_val.txt file was not found"):
        D.FlyingChairs(str(tmp_path))
    write_text(tmp_path / "FlyingChairs" / "FlyingChairs_train_val.txt", "1\n2\n1\n")
    for split in ("train", "val"):
        assert_same_dataset(*_both("FlyingChairs", str(tmp_path), split))


def test_flying_things(tmp_path):
    base = tmp_path / "FlyingThings3D"
    for seq in ("A/0000", "B/0001"):
        for camera in ("left", "right"):
            for i in range(3):
                write_image(base / "frames_cleanpass" / "TRAIN" / seq / camera / f"{i:04d}.png",
                            seed=i)
                for direction in ("into_future", "into_past"):
                    write_pfm(base / "optical_flow" / "TRAIN" / seq / direction / camera /
                              f"OpticalFlowInto_{i:04d}.pfm", RNG.normal(size=(5, 6, 3)))
    assert_same_dataset(*_both("FlyingThings3D", str(tmp_path), camera="both"),
                        attrs=("_flow_list",))
    with pytest.raises(FileNotFoundError, match="Could not find the FlyingThings3D flow images"):
        D.FlyingThings3D(str(tmp_path), pass_name="final")


def test_png16_reader_undoes_every_filter(tmp_path):
    pixels = RNG.integers(0, 2 ** 16, (7, 5, 3)).astype(np.uint16)
    write_png16(tmp_path / "x.png", pixels)
    np.testing.assert_array_equal(read_png(str(tmp_path / "x.png")), pixels.transpose(2, 0, 1))


def _flow_png(path):
    """A KITTI-style flow PNG and the (flow, mask) it stands for."""
    flow = RNG.integers(-500, 500, (2, 4, 5)) / 64
    valid = RNG.integers(0, 2, (4, 5))
    pixels = np.concatenate([flow * 64 + 2 ** 15, valid[None]]).transpose(1, 2, 0)
    write_png16(path, pixels.astype(np.uint16))
    return flow.astype(np.float32), valid.astype(bool)


def test_kitti_flow(tmp_path):
    root = tmp_path / "KittiFlow"
    expected = []
    for i in range(2):
        for split in ("training", "testing"):
            for frame in (10, 11):
                write_image(root / split / "image_2" / f"{i:06d}_{frame}.png", seed=i + frame)
        expected.append(_flow_png(root / "training" / "flow_occ" / f"{i:06d}_10.png"))
    ours = D.KittiFlow(str(tmp_path))
    for (img1, img2, flow, valid), (flow_expected, valid_expected) in zip(ours, expected):
        assert img1.size == (6, 5) and flow.dtype == np.float32 and valid.dtype == bool
        np.testing.assert_array_equal(flow, flow_expected)
        np.testing.assert_array_equal(valid, valid_expected)
    assert_same_dataset(*_both("KittiFlow", str(tmp_path), "test"))
    with pytest.raises(FileNotFoundError, match="Could not find the Kitti flow images"):
        D.KittiFlow(str(tmp_path / "none"))


def test_hd1k(tmp_path):
    root = tmp_path / "hd1k"
    expected = []
    for i in range(3):
        write_image(root / "hd1k_input" / "image_2" / f"000000_{i:04d}.png", seed=i)
        expected.append(_flow_png(root / "hd1k_flow_gt" / "flow_occ" / f"000000_{i:04d}.png"))
    ours = D.HD1K(str(tmp_path))
    assert len(ours) == 2
    np.testing.assert_array_equal(ours[1][2], expected[1][0])
    np.testing.assert_array_equal(ours[1][3], expected[1][1])
    for frame in (10, 11):
        write_image(root / "hd1k_challenge" / "image_2" / f"000000_{frame}.png", seed=frame)
    assert_same_dataset(*_both("HD1K", str(tmp_path), "test"))
    assert len(3 * ours) == 6
