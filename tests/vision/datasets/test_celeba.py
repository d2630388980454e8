"""CelebA against torchvision over a fake celeba folder (four images, two attributes; each split
gets two, as torchvision fails on a split of exactly one image)."""
import pytest

import ember.vision.datasets as D
from tests.vision.datasets._parity import assert_same_dataset, tv_datasets, write_image, \
    write_text


@pytest.fixture
def celeba_root(tmp_path, monkeypatch):
    tv = tv_datasets()
    for cls in (D.CelebA, tv.CelebA):
        monkeypatch.setattr(cls, "file_list", [(i, None, f) for i, _, f in cls.file_list])
    base = tmp_path / "celeba"
    names = [f"00000{i}.jpg" for i in range(1, 5)]
    for i, name in enumerate(names):
        write_image(base / "img_align_celeba" / name, seed=i)
    rows = lambda values: "".join(f"{n} {v}\n" for n, v in zip(names, values))  # noqa: E731
    write_text(base / "list_eval_partition.txt", rows(["0", "1", "0", "1"]))
    write_text(base / "identity_CelebA.txt", rows(["7", "8", "9", "7"]))
    write_text(base / "list_bbox_celeba.txt",
               "3\nimage_id x_1 y_1 width height\n" + rows(["1 2 3 4", "5 6 7 8", "0 0 1 1", "2 2 2 2"]))
    write_text(base / "list_landmarks_align_celeba.txt",
               "3\nlefteye_x lefteye_y\n" + rows(["1  2", "3 4", "5 6", "7 8"]))
    write_text(base / "list_attr_celeba.txt",
               "3\nSmiling Young\n" + rows(["1 -1", "-1 -1", "1  1", "-1 1"]))
    return tmp_path


@pytest.mark.parametrize("split,target_type", [
    ("train", "attr"), ("valid", ["identity", "bbox"]), ("all", ["landmarks", "attr"]),
    ("test", []), ("TRAIN", "identity")])
def test_celeba(celeba_root, split, target_type):
    tv = tv_datasets()
    ours = D.CelebA(str(celeba_root), split, target_type)
    theirs = tv.CelebA(str(celeba_root), split, target_type)
    assert_same_dataset(ours, theirs, attrs=("attr", "identity", "bbox", "attr_names",
                                             "filename"))


def test_celeba_errors(celeba_root, tmp_path):
    with pytest.raises(ValueError, match='Target type "bogus" is not recognized.'):
        D.CelebA(str(celeba_root), target_type="bogus")[0]
    with pytest.raises(ValueError, match="Unknown value 'val' for argument split"):
        D.CelebA(str(celeba_root), "val")
    with pytest.raises(RuntimeError, match="target_transform is specified but target_type"):
        D.CelebA(str(celeba_root), target_type=[], target_transform=str)
    with pytest.raises(RuntimeError, match="^Dataset not found or corrupted"):
        D.CelebA(str(tmp_path / "nowhere"))
