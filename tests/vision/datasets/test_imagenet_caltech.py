"""ImageNet (over a parsed root: meta.bin and train/<wnid>/) and Caltech101/256 against
torchvision."""
import numpy as np
import pytest

import ember.vision.datasets as D
from tests.vision.datasets._parity import assert_same_dataset, tv_datasets, write_image

pytest.importorskip("PIL")


def test_imagenet(tmp_path):
    import torch
    tv = tv_datasets()
    wnid_to_classes = {"n01": ("tench", "Tinca tinca"), "n02": ("goldfish",)}
    torch.save((wnid_to_classes, ["n02", "n01"]), str(tmp_path / "meta.bin"))
    for i, wnid in enumerate(["n01", "n01", "n02"]):
        write_image(tmp_path / "train" / wnid / f"{wnid}_{i}.JPEG", seed=i)
    ours, theirs = D.ImageNet(str(tmp_path)), tv.ImageNet(str(tmp_path))
    assert_same_dataset(ours, theirs, attrs=("classes", "class_to_idx", "wnids", "samples"))
    with pytest.raises(RuntimeError, match="The archive ILSVRC2012_img_val.tar is not present in "
                       "the root directory or is corrupted. You need to download it externally"):
        D.ImageNet(str(tmp_path), "val")
    with pytest.raises(RuntimeError, match="The archive ILSVRC2012_devkit_t12.tar.gz is not"):
        D.ImageNet(str(tmp_path / "empty"))


def test_caltech101(tmp_path):
    scipy_io = pytest.importorskip("scipy.io")
    tv = tv_datasets()
    base = tmp_path / "caltech101"
    for category, n in (("BACKGROUND_Google", 1), ("Faces", 2), ("ant", 1)):
        for i in range(1, n + 1):
            write_image(base / "101_ObjectCategories" / category / f"image_{i:04d}.jpg", seed=i)
    for folder, n in (("Faces_2", 2), ("ant", 1)):
        (base / "Annotations" / folder).mkdir(parents=True)
        for i in range(1, n + 1):
            scipy_io.savemat(str(base / "Annotations" / folder / f"annotation_{i:04d}.mat"),
                             {"obj_contour": np.arange(6.0).reshape(2, 3) * i})
    for target_type in ("category", ["annotation", "category"]):
        ours = D.Caltech101(str(tmp_path), target_type)
        theirs = tv.Caltech101(str(tmp_path), target_type)
        assert_same_dataset(ours, theirs, attrs=("categories", "annotation_categories", "y"))
    with pytest.raises(ValueError, match="Unknown value 'box' for argument target_type"):
        D.Caltech101(str(tmp_path), "box")


def test_caltech256(tmp_path):
    tv = tv_datasets()
    for k, (category, n) in enumerate((("001.ak47", 2), ("002.bat", 1))):
        for i in range(1, n + 1):
            write_image(tmp_path / "caltech256" / "256_ObjectCategories" / category /
                        f"{k + 1:03d}_{i:04d}.jpg", seed=i)
    assert_same_dataset(D.Caltech256(str(tmp_path)), tv.Caltech256(str(tmp_path)),
                        attrs=("categories", "index", "y"))
    with pytest.raises(RuntimeError, match="^Dataset not found or corrupted"):
        D.Caltech256(str(tmp_path / "none"))
