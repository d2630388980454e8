"""Flowers102, Food101, OxfordIIITPet, StanfordCars, FGVCAircraft, DTD and SUN397 against
torchvision over fake copies of their folders (two or three images each)."""
import json

import numpy as np
import pytest

import ember.vision.datasets as D
from tests.vision.datasets._parity import assert_same_dataset, tv_datasets, write_image, \
    write_text

pytest.importorskip("PIL")


def _both(name, *args, **kwargs):
    return getattr(D, name)(*args, **kwargs), getattr(tv_datasets(), name)(*args, **kwargs)


def test_flowers102(tmp_path, monkeypatch):
    scipy_io = pytest.importorskip("scipy.io")
    for cls in (D.Flowers102, tv_datasets().Flowers102):
        monkeypatch.setattr(cls, "_file_dict", {k: (f, None) for k, (f, _) in
                                                cls._file_dict.items()})
    base = tmp_path / "flowers-102"
    for i in range(1, 5):
        write_image(base / "jpg" / f"image_{i:05d}.jpg", seed=i)
    scipy_io.savemat(str(base / "imagelabels.mat"), {"labels": np.array([[3, 1, 102, 7]])})
    scipy_io.savemat(str(base / "setid.mat"), {"trnid": np.array([[4, 1]]),
                                               "valid": np.array([[2]]),
                                               "tstid": np.array([[3, 2]])})
    for split in ("train", "test"):
        assert_same_dataset(*_both("Flowers102", str(tmp_path), split), attrs=("_labels",))


def test_food101(tmp_path):
    meta = {"apple_pie": ["apple_pie/1", "apple_pie/2"], "beignets": ["beignets/3"]}
    for rel in ("apple_pie/1", "apple_pie/2", "beignets/3"):
        write_image(tmp_path / "food-101" / "images" / f"{rel}.jpg", seed=len(rel))
    write_text(tmp_path / "food-101" / "meta" / "test.json", json.dumps(meta))
    assert_same_dataset(*_both("Food101", str(tmp_path), "test"),
                        attrs=("classes", "class_to_idx"))
    with pytest.raises(RuntimeError, match="^Dataset not found. You can use download=True"):
        D.Food101(str(tmp_path / "x"))


@pytest.mark.parametrize("target_types", ["category", ["segmentation", "binary-category"], []])
def test_oxford_pet(tmp_path, target_types):
    base = tmp_path / "oxford-iiit-pet"
    ids = [("great_pyrenees_1", 2, 2), ("Abyssinian_5", 1, 1), ("great_pyrenees_7", 2, 2)]
    for k, (image_id, _, _) in enumerate(ids):
        write_image(base / "images" / f"{image_id}.jpg", seed=k)
        write_image(base / "annotations" / "trimaps" / f"{image_id}.png", mode="L", seed=k)
    write_text(base / "annotations" / "test.txt",
               "".join(f"{i} {c} {b} 1\n" for i, c, b in ids))
    assert_same_dataset(*_both("OxfordIIITPet", str(tmp_path), "test", target_types),
                        attrs=("classes", "class_to_idx", "bin_class_to_idx"))


def test_stanford_cars(tmp_path):
    scipy_io = pytest.importorskip("scipy.io")
    base = tmp_path / "stanford_cars"
    (base / "devkit").mkdir(parents=True)
    for k, name in enumerate(["00001.jpg", "00002.jpg"]):
        write_image(base / "cars_train" / name, seed=k)
    annos = np.array([("00001.jpg", 2), ("00002.jpg", 1)],
                     dtype=[("fname", object), ("class", np.uint8)])
    scipy_io.savemat(str(base / "devkit" / "cars_train_annos.mat"), {"annotations": annos})
    scipy_io.savemat(str(base / "devkit" / "cars_meta.mat"),
                     {"class_names": np.array(["AM General Hummer", "Acura RL"], dtype=object)})
    assert_same_dataset(*_both("StanfordCars", str(tmp_path)), attrs=("classes", "_samples"))
    with pytest.raises(ValueError, match="The original URL is broken"):
        D.StanfordCars(str(tmp_path), download=True)


def test_fgvc_aircraft(tmp_path):
    data = tmp_path / "fgvc-aircraft-2013b" / "data"
    for k, name in enumerate(["0001", "0002"]):
        write_image(data / "images" / f"{name}.jpg", seed=k)
    write_text(data / "families.txt", "Boeing 707\nA300\n")
    write_text(data / "images_family_val.txt", "0001 A300\n0002 Boeing 707\n")
    assert_same_dataset(*_both("FGVCAircraft", str(tmp_path), "val", "family"),
                        attrs=("classes",))


def test_dtd(tmp_path):
    data = tmp_path / "dtd" / "dtd"
    for k, rel in enumerate(["woven/w_1.jpg", "banded/b_2.jpg", "woven/w_3.jpg"]):
        write_image(data / "images" / rel, seed=k)
    write_text(data / "labels" / "val3.txt", "woven/w_1.jpg\nbanded/b_2.jpg\nwoven/w_3.jpg\n")
    assert_same_dataset(*_both("DTD", str(tmp_path), "val", partition=3), attrs=("classes",))


def test_sun397(tmp_path):
    data = tmp_path / "SUN397"
    write_text(data / "ClassName.txt", "/a/abbey\n/b/bus_interior\n/o/office/indoor\n")
    for k, rel in enumerate(["a/abbey/sun_1.jpg", "o/office/indoor/sun_2.jpg",
                             "b/bus_interior/sun_3.jpg"]):
        write_image(data / rel, seed=k)
    assert_same_dataset(*_both("SUN397", str(tmp_path)), attrs=("classes", "_labels"))
