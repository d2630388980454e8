"""SVHN and STL10 against torchvision over small files in the real formats (md5 checks off:
the fake files cannot match the published sums)."""
import numpy as np
import pytest

import ember.vision.datasets as D
from tests.vision.datasets._parity import assert_same_dataset, tv_datasets

pytest.importorskip("PIL")


def _no_md5(monkeypatch, tv, name, attr, fix):
    for cls in (getattr(D, name), getattr(tv, name)):
        monkeypatch.setattr(cls, attr, fix(getattr(cls, attr)))


def test_svhn(tmp_path, monkeypatch):
    scipy_io = pytest.importorskip("scipy.io")
    tv = tv_datasets()
    _no_md5(monkeypatch, tv, "SVHN", "split_list",
            lambda d: {k: [u, f, None] for k, (u, f, _) in d.items()})
    rng = np.random.default_rng(0)
    scipy_io.savemat(str(tmp_path / "test_32x32.mat"),
                     {"X": rng.integers(0, 256, (32, 32, 3, 4), dtype=np.uint8),
                      "y": np.array([[10], [1], [5], [10]], dtype=np.uint8)})
    ours, theirs = D.SVHN(str(tmp_path), "test"), tv.SVHN(str(tmp_path), "test")
    assert_same_dataset(ours, theirs, attrs=("data", "labels"))
    with pytest.raises(RuntimeError, match="^Dataset not found or corrupted"):
        D.SVHN(str(tmp_path), "train")
    with pytest.raises(ValueError, match="Unknown value 'val' for argument split"):
        D.SVHN(str(tmp_path), "val")


def test_stl10(tmp_path, monkeypatch):
    tv = tv_datasets()
    for attr in ("train_list", "test_list"):
        _no_md5(monkeypatch, tv, "STL10", attr, lambda files: [[f, None] for f, _ in files])
    folder = tmp_path / "stl10_binary"
    folder.mkdir()
    rng = np.random.default_rng(1)
    for name, n in (("train", 4), ("unlabeled", 2), ("test", 3)):
        rng.integers(0, 256, n * 3 * 96 * 96, dtype=np.uint8).tofile(folder / f"{name}_X.bin")
        if name != "unlabeled":
            rng.integers(1, 11, n, dtype=np.uint8).tofile(folder / f"{name}_y.bin")
    (folder / "fold_indices.txt").write_text("0 2\n1 3\n" * 5)
    (folder / "class_names.txt").write_text("\n".join(f"c{i}" for i in range(10)))
    for split, folds in (("train", None), ("train", 1), ("train+unlabeled", 0),
                         ("unlabeled", None), ("test", None)):
        ours = D.STL10(str(tmp_path), split, folds=folds)
        theirs = tv.STL10(str(tmp_path), split, folds=folds)
        assert_same_dataset(ours, theirs, attrs=("labels", "classes"))
    with pytest.raises(ValueError, match=r"should be in the range \[0, 10\), but got 10"):
        D.STL10(str(tmp_path), folds=10)
