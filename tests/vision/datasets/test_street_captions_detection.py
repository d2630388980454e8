"""Cityscapes, SBU, Flickr8k, Flickr30k, Kitti, WIDERFace and SBDataset against torchvision
over fake files."""
import json

import numpy as np
import pytest

import ember.vision.datasets as D
from tests.vision.datasets._parity import assert_same_dataset, tv_datasets, write_image, \
    write_text

pytest.importorskip("PIL")


def _both(name, *args, **kwargs):
    return getattr(D, name)(*args, **kwargs), getattr(tv_datasets(), name)(*args, **kwargs)


@pytest.mark.parametrize("target_type", ["instance", ["semantic", "polygon", "color"]])
def test_cityscapes(tmp_path, target_type):
    for k, (city, frame) in enumerate([("aachen", "000000_000019"), ("bonn", "000001_000019")]):
        stem = f"{city}_{frame}"
        write_image(tmp_path / "leftImg8bit" / "val" / city / f"{stem}_leftImg8bit.png", seed=k)
        for suffix in ("instanceIds", "labelIds", "color"):
            write_image(tmp_path / "gtFine" / "val" / city / f"{stem}_gtFine_{suffix}.png",
                        mode="L", seed=k + 3)
        write_text(tmp_path / "gtFine" / "val" / city / f"{stem}_gtFine_polygons.json",
                   json.dumps({"imgHeight": 5, "objects": [{"label": "car"}]}))
    assert_same_dataset(*_both("Cityscapes", str(tmp_path), "val", target_type=target_type),
                        attrs=("images", "targets", "classes"))
    with pytest.raises(ValueError, match="Unknown value 'test' for argument split if mode is "
                       "'coarse'. Valid values are {'train', 'train_extra', 'val'}."):
        D.Cityscapes(str(tmp_path), "test", mode="coarse")
    with pytest.raises(RuntimeError, match="Dataset not found or incomplete"):
        D.Cityscapes(str(tmp_path), "train")


def test_sbu(tmp_path, monkeypatch):
    for cls in (D.SBU, tv_datasets().SBU):
        monkeypatch.setattr(cls, "md5_checksum", None)
    write_text(tmp_path / cls.filename, "")
    write_text(tmp_path / "dataset" / "SBU_captioned_photo_dataset_urls.txt",
               "http://x/1.jpg\nhttp://x/2.jpg\nhttp://x/3.jpg\n")
    write_text(tmp_path / "dataset" / "SBU_captioned_photo_dataset_captions.txt",
               "one\ntwo\nthree\n")
    for k in (1, 3):
        write_image(tmp_path / "dataset" / f"{k}.jpg", seed=k)
    assert_same_dataset(*_both("SBU", str(tmp_path), download=False),
                        attrs=("photos", "captions"))


def test_flickr(tmp_path):
    for k, name in enumerate(["100_a.jpg", "200_b.jpg", "300_c.jpg"]):
        write_image(tmp_path / name, seed=k)
    write_text(tmp_path / "flickr8k.html",
               "<html><table><tr><td><a href='x'>http://f/100/</a></td><td><ul>"
               "<li>a dog</li><li> runs </li></ul></td></tr>"
               "<tr><td><a href='y'>http://f/300/</a></td><td><ul><li>a cat</li></ul></td>"
               "</tr></table></html>")
    assert_same_dataset(*_both("Flickr8k", str(tmp_path), str(tmp_path / "flickr8k.html")),
                        attrs=("ids", "annotations"))
    write_text(tmp_path / "tokens.txt", "200_b.jpg#0\tfirst\n100_a.jpg#0\tx\n200_b.jpg#1\tsecond\n")
    assert_same_dataset(*_both("Flickr30k", str(tmp_path), str(tmp_path / "tokens.txt")),
                        attrs=("ids",))


def test_kitti(tmp_path):
    raw = tmp_path / "Kitti" / "raw"
    for k in range(2):
        for location in ("training", "testing"):
            write_image(raw / location / "image_2" / f"00000{k}.png", seed=k)
        lines = ["Car 0.00 0 -1.58 587.01 173.33 614.12 200.12 1.65 1.67 3.64 -0.65 1.71 46.70 "
                 "-1.59\n", "Pedestrian 0.50 1 0.2 1 2 3 4 1.7 0.6 0.8 1 2 3 0.5\n"]
        write_text(raw / "training" / "label_2" / f"00000{k}.txt", "".join(lines[:k + 1]))
    for train in (True, False):
        assert_same_dataset(*_both("Kitti", str(tmp_path), train=train))
    with pytest.raises(RuntimeError, match="Dataset not found. You may use download=True"):
        D.Kitti(str(tmp_path / "none"))


def test_widerface(tmp_path):
    base = tmp_path / "widerface"
    for folder in ("WIDER_train", "WIDER_val", "WIDER_test", "wider_face_split"):
        (base / folder).mkdir(parents=True)
    for k, rel in enumerate(["0--Parade/a.jpg", "1--Handshaking/b.jpg"]):
        write_image(base / "WIDER_val" / "images" / rel, seed=k)
        write_image(base / "WIDER_test" / "images" / rel, seed=k)
    write_text(base / "wider_face_split" / "wider_face_val_bbx_gt.txt",
               "0--Parade/a.jpg\n2\n1 2 3 4 0 0 0 0 0 0 \n5 6 7 8 2 0 1 0 0 0 \n"
               "1--Handshaking/b.jpg\n0\n0 0 0 0 0 0 0 0 0 0 \n")
    write_text(base / "wider_face_split" / "wider_face_test_filelist.txt",
               "0--Parade/a.jpg\n1--Handshaking/b.jpg\n")
    for split in ("val", "test"):
        assert_same_dataset(*_both("WIDERFace", str(tmp_path), split))


@pytest.mark.parametrize("mode", ["segmentation", "boundaries"])
def test_sbd(tmp_path, mode):
    scipy_io = pytest.importorskip("scipy.io")
    scipy_sparse = pytest.importorskip("scipy.sparse")
    rng = np.random.default_rng(0)
    for k, name in enumerate(["2008_000002", "2008_000003"]):
        write_image(tmp_path / "img" / f"{name}.jpg", seed=k)
        boundaries = np.empty((20, 1), dtype=object)
        for c in range(20):
            boundaries[c, 0] = scipy_sparse.csc_matrix(rng.integers(0, 2, (5, 6)).astype(bool))
        gt = np.empty((1,), dtype=[("Segmentation", object), ("Boundaries", object)])
        gt[0] = (rng.integers(0, 21, (5, 6)).astype(np.uint8), boundaries)
        (tmp_path / "cls").mkdir(exist_ok=True)
        scipy_io.savemat(str(tmp_path / "cls" / f"{name}.mat"), {"GTcls": gt})
    write_text(tmp_path / "val.txt", "2008_000002\n2008_000003\n")
    assert_same_dataset(*_both("SBDataset", str(tmp_path), "val", mode))
