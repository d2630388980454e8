"""wrap_dataset_for_transforms_v2 against torchvision's over the same fake datasets: the same
tv_tensor types, box formats, dict keys and values, and the same refusals."""
import pickle

import pytest

import ember.vision.datasets as D
from tests.vision.datasets import test_voc_coco
from tests.vision.datasets._parity import assert_same, tv_datasets, write_image, write_text

pytest.importorskip("PIL")


def _wrapped_pair(name, args, kwargs=None, target_keys=None):
    tv = tv_datasets()
    ours = D.wrap_dataset_for_transforms_v2(getattr(D, name)(*args, **(kwargs or {})),
                                            target_keys)
    theirs = tv.wrap_dataset_for_transforms_v2(getattr(tv, name)(*args, **(kwargs or {})),
                                               target_keys)
    return ours, theirs


def _assert_same_items(ours, theirs):
    assert len(ours) == len(theirs)
    for i in range(len(theirs)):
        assert_same(ours[i], theirs[i], f"item {i}")


@pytest.mark.parametrize("name,target_keys", [("VOCDetection", None),
                                              ("VOCDetection", {"annotation", "boxes"}),
                                              ("VOCSegmentation", None)])
def test_voc(voc_root, name, target_keys):
    ours, theirs = _wrapped_pair(name, (str(voc_root),), target_keys=target_keys)
    assert type(ours).__name__ == f"Wrapped{name}" and isinstance(ours, getattr(D, name))
    _assert_same_items(ours, theirs)
    assert ours.images == theirs.images  # attributes pass through to the dataset
    _assert_same_items(pickle.loads(pickle.dumps(ours)), theirs)


def test_kitti_and_widerface(tmp_path):
    raw = tmp_path / "Kitti" / "raw" / "training"
    write_image(raw / "image_2" / "000000.png")
    write_text(raw / "label_2" / "000000.txt",
               "Car 0.00 0 -1.58 587.01 173.33 614.12 200.12 1.65 1.67 3.64 -0.65 1.71 46.7 -1.5\n"
               "Cyclist 0.5 1 0.2 1 2 3 4 1.7 0.6 0.8 1 2 3 0.5\n")
    for keys in (None, {"boxes", "alpha"}):
        _assert_same_items(*_wrapped_pair("Kitti", (str(tmp_path),), target_keys=keys))
    base = tmp_path / "widerface"
    for folder in ("WIDER_train", "WIDER_val", "WIDER_test", "wider_face_split"):
        (base / folder).mkdir(parents=True)
    write_image(base / "WIDER_val" / "images" / "0--Parade" / "a.jpg")
    write_text(base / "wider_face_split" / "wider_face_val_bbx_gt.txt",
               "0--Parade/a.jpg\n2\n1 2 3 4 0 0 0 0 0 0 \n5 6 7 8 2 0 1 0 0 0 \n")
    _assert_same_items(*_wrapped_pair("WIDERFace", (str(tmp_path), "val")))


def test_cityscapes_instances(tmp_path):
    import numpy as np
    from PIL import Image
    stem = "aachen_000000_000019"
    write_image(tmp_path / "leftImg8bit" / "val" / "aachen" / f"{stem}_leftImg8bit.png")
    # 8-bit ids: torch has no >= for the uint16 masks a 16-bit PNG gives
    ids = np.array([[0, 26, 26], [24, 24, 7]], dtype=np.uint8)
    (tmp_path / "gtFine" / "val" / "aachen").mkdir(parents=True)
    Image.fromarray(ids).save(tmp_path / "gtFine" / "val" / "aachen" /
                              f"{stem}_gtFine_instanceIds.png")
    Image.fromarray(ids.astype(np.uint8) % 30).save(
        tmp_path / "gtFine" / "val" / "aachen" / f"{stem}_gtFine_labelIds.png")
    _assert_same_items(*_wrapped_pair("Cityscapes", (str(tmp_path), "val"),
                                      {"target_type": ["instance", "semantic"]}))


def test_refusals(voc_root, tmp_path):
    with pytest.raises(ValueError, match="`target_keys` is currently only supported for "
                       "`CocoDetection`, `VOCDetection`, `Kitti`, and `WIDERFace`, but got "
                       "VOCSegmentation."):
        D.wrap_dataset_for_transforms_v2(D.VOCSegmentation(str(voc_root)), {"boxes"})
    with pytest.raises(ValueError, match=r"Target keys \['bogus'\] are not available"):
        D.wrap_dataset_for_transforms_v2(D.VOCDetection(str(voc_root)), {"bogus"})
    with pytest.raises(ValueError, match="`target_keys` can be None, 'all', or a collection"):
        D.wrap_dataset_for_transforms_v2(D.VOCDetection(str(voc_root)), 3)
    with pytest.raises(TypeError, match="No wrapper exists for dataset class FakeData. Please "
                       "wrap the output yourself. If an automated wrapper"):
        D.wrap_dataset_for_transforms_v2(D.FakeData(size=2))
    with pytest.raises(TypeError, match="meant for subclasses of `torchvision.datasets."
                       "VisionDataset`, but got a 'list' instead"):
        D.wrap_dataset_for_transforms_v2([1, 2])


voc_root = test_voc_coco.voc_root
