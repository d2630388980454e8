"""USPS, SEMEION, Omniglot, LFWPeople/LFWPairs and PCAM against torchvision over fake files."""
import bz2

import numpy as np
import pytest

import ember.vision.datasets as D
from tests.vision.datasets._parity import assert_same_dataset, tv_datasets, write_image, \
    write_text

pytest.importorskip("PIL")


def _both(name, *args, **kwargs):
    return getattr(D, name)(*args, **kwargs), getattr(tv_datasets(), name)(*args, **kwargs)


def test_usps(tmp_path):
    rng = np.random.default_rng(0)
    lines = [f"{label} " + " ".join(f"{j + 1}:{v:.4f}" for j, v in
                                     enumerate(rng.uniform(-1, 1, 256)))
             for label in (3, 10, 1)]
    with bz2.open(tmp_path / "usps.t.bz2", "wt") as f:
        f.write("\n".join(lines) + "\n")
    assert_same_dataset(*_both("USPS", str(tmp_path), train=False), attrs=("data", "targets"))
    with pytest.raises(FileNotFoundError):
        D.USPS(str(tmp_path))


def test_semeion(tmp_path, monkeypatch):
    for cls in (D.SEMEION, tv_datasets().SEMEION):
        monkeypatch.setattr(cls, "md5_checksum", None)
    rng = np.random.default_rng(1)
    rows = [np.concatenate([rng.integers(0, 2, 256), np.eye(10)[label]]) for label in (4, 0)]
    write_text(tmp_path / "semeion.data",
               "".join(" ".join(f"{v:.4f}" for v in row) + "\n" for row in rows))
    assert_same_dataset(*_both("SEMEION", str(tmp_path), download=False),
                        attrs=("data", "labels"))


def test_omniglot(tmp_path, monkeypatch):
    for cls in (D.Omniglot, tv_datasets().Omniglot):
        monkeypatch.setattr(cls, "zips_md5", dict.fromkeys(cls.zips_md5))
    base = tmp_path / "omniglot-py"
    write_text(base / "images_evaluation.zip", "")
    for k, (alphabet, character, n) in enumerate([("Angelic", "character01", 2),
                                                  ("Angelic", "character02", 1),
                                                  ("Tengwar", "character01", 1)]):
        for i in range(n):
            write_image(base / "images_evaluation" / alphabet / character / f"{k}_{i}.png",
                        mode="L", seed=k + i)
    assert_same_dataset(*_both("Omniglot", str(tmp_path), background=False),
                        attrs=("_characters", "_flat_character_images"))
    with pytest.raises(RuntimeError, match="^Dataset not found or corrupted"):
        D.Omniglot(str(tmp_path))


@pytest.fixture
def lfw_root(tmp_path, monkeypatch):
    from ember.vision.datasets import lfw
    for cls in (lfw._LFW, tv_datasets().lfw._LFW):
        monkeypatch.setattr(cls, "checksums", dict.fromkeys(cls.checksums))
        monkeypatch.setattr(cls, "file_dict", {k: (d, f, None) for k, (d, f, _) in
                                               cls.file_dict.items()})
    base = tmp_path / "lfw-py"
    write_text(base / "lfw-funneled.tgz", "")
    for k, (name, n) in enumerate([("Ann_A", 2), ("Bob_B", 1), ("Cy_C", 1)]):
        for i in range(1, n + 1):
            write_image(base / "lfw_funneled" / name / f"{name}_{i:04d}.jpg", seed=k + i)
    write_text(base / "lfw-names.txt", "Ann_A\t2\nBob_B\t1\nCy_C\t1\n")
    write_text(base / "peopleDevTest.txt", "2\nAnn_A\t2\nCy_C\t1\n")
    write_text(base / "people.txt", "2\n1\nBob_B\t1\n1\nAnn_A\t1\n")
    write_text(base / "pairs.txt", "2\t1\nAnn_A\t1\t2\nBob_B\t1\tCy_C\t1\n"
                                   "Ann_A\t2\t1\nCy_C\t1\tAnn_A\t2\n")
    return tmp_path


def test_lfw(lfw_root):
    for split in ("test", "10fold"):
        assert_same_dataset(*_both("LFWPeople", str(lfw_root), split),
                            attrs=("class_to_idx", "targets"))
    assert_same_dataset(*_both("LFWPairs", str(lfw_root)), attrs=("pair_names", "targets"))
    with pytest.raises(ValueError, match="no longer available for automatic download"):
        D.LFWPeople(str(lfw_root), download=True)
    with pytest.raises(ValueError, match="Unknown value 'raw' for argument image_set"):
        D.LFWPairs(str(lfw_root), image_set="raw")


def test_pcam_without_h5py(tmp_path):
    try:
        import h5py  # noqa: F401
    except ImportError:
        with pytest.raises(RuntimeError, match="h5py is not found. This dataset needs to have "
                           "h5py installed: please run pip install h5py"):
            D.PCAM(str(tmp_path))
    else:
        with pytest.raises(RuntimeError, match="^Dataset not found"):
            D.PCAM(str(tmp_path))
