"""VOCSegmentation/VOCDetection against torchvision over a fake VOCdevkit; CocoDetection and
CocoCaptions against hand-written expectations (torchvision's need pycocotools)."""
import json

import pytest

import ember.vision.datasets as D
from tests.vision.datasets._parity import assert_same, assert_same_dataset, tv_datasets, \
    write_image, write_text

Image = pytest.importorskip("PIL.Image")

_XML = """<annotation><folder>VOC2012</folder><filename>{name}.jpg</filename>
<size><width>6</width><height>5</height><depth>3</depth></size><segmented>0</segmented>
{objects}</annotation>"""
_OBJECT = ("<object><name>{label}</name><difficult>0</difficult><bndbox><xmin>1</xmin>"
           "<ymin>2</ymin><xmax>3</xmax><ymax>4</ymax></bndbox></object>")


@pytest.fixture
def voc_root(tmp_path):
    voc = tmp_path / "VOCdevkit" / "VOC2012"
    names = ["2008_000001", "2008_000002"]
    for i, name in enumerate(names):
        write_image(voc / "JPEGImages" / f"{name}.jpg", seed=i)
        write_image(voc / "SegmentationClass" / f"{name}.png", mode="L", seed=i + 5)
        objects = "".join(_OBJECT.format(label=label) for label in ["cat", "dog"][:i + 1])
        write_text(voc / "Annotations" / f"{name}.xml", _XML.format(name=name, objects=objects))
    for kind in ("Segmentation", "Main"):
        write_text(voc / "ImageSets" / kind / "train.txt", "\n".join(names) + "\n")
    return tmp_path


@pytest.mark.parametrize("name", ["VOCSegmentation", "VOCDetection"])
def test_voc(voc_root, name):
    tv = tv_datasets()
    ours, theirs = (getattr(M, name)(str(voc_root)) for M in (D, tv))
    assert_same_dataset(ours, theirs, attrs=("images", "targets"))
    if name == "VOCDetection":  # the parsed XML keeps the file's order
        assert list(ours[1][1]["annotation"]) == list(theirs[1][1]["annotation"])
    with pytest.raises(ValueError, match="Unknown value 'test' for argument image_set"):
        getattr(D, name)(str(voc_root), image_set="test")
    with pytest.raises(RuntimeError, match="^Dataset not found or corrupted"):
        getattr(D, name)(str(voc_root), year="2011")


def test_coco(tmp_path):
    for i in (1, 2):
        write_image(tmp_path / "images" / f"{i:012d}.jpg", seed=i)
    annotations = [
        {"id": 10, "image_id": 2, "category_id": 1, "bbox": [0, 0, 2, 2], "area": 4.0,
         "iscrowd": 0, "caption": "a b"},
        {"id": 11, "image_id": 1, "category_id": 1, "bbox": [1, 1, 2, 2], "area": 4.0,
         "iscrowd": 0, "caption": "c"},
        {"id": 12, "image_id": 2, "category_id": 2, "bbox": [1, 0, 1, 1], "area": 1.0,
         "iscrowd": 1, "caption": "d"}]
    ann_file = tmp_path / "ann.json"
    ann_file.write_text(json.dumps({
        "images": [{"id": 2, "file_name": "images/000000000002.jpg"},
                   {"id": 1, "file_name": "images/000000000001.jpg"}],
        "annotations": annotations,
        "categories": [{"id": 1, "name": "cat", "supercategory": "animal"},
                       {"id": 2, "name": "car", "supercategory": "vehicle"}]}))
    det = D.CocoDetection(str(tmp_path), str(ann_file))
    assert det.ids == [1, 2] and len(det) == 2
    img, target = det[1]
    with Image.open(tmp_path / "images" / "000000000002.jpg") as expected:
        assert_same(img, expected.convert("RGB"))
    assert target == [annotations[0], annotations[2]]
    assert D.CocoCaptions(str(tmp_path), str(ann_file))[1][1] == ["a b", "d"]
    assert det.coco.getCatIds(supNms="vehicle") == [2]
    assert det.coco.getAnnIds(catIds=[1], iscrowd=0) == [10, 11]
    assert sorted(det.coco.getImgIds(catIds=[2])) == [2]
    with pytest.raises(ValueError, match="Index must be of type integer, got <class 'slice'>"):
        det[0:1]
