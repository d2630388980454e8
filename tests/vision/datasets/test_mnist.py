"""EMNIST and QMNIST against torchvision's readers over the same small IDX files."""
import numpy as np
import pytest

import ember.vision.datasets as D
from tests.vision.datasets._parity import assert_same_dataset, tv_datasets, write_idx

pytest.importorskip("PIL")


def test_emnist_matches_torchvision(tmp_path):
    tv = tv_datasets()
    raw = tmp_path / "EMNIST" / "raw"
    raw.mkdir(parents=True)
    rng = np.random.default_rng(0)
    for part, n in (("train", 4), ("test", 3)):
        write_idx(str(raw / f"emnist-letters-{part}-images-idx3-ubyte"),
                  rng.integers(0, 256, (n, 28, 28)))
        write_idx(str(raw / f"emnist-letters-{part}-labels-idx1-ubyte"), np.arange(1, n + 1))
    for train in (True, False):
        ours = D.EMNIST(str(tmp_path), "letters", train=train)
        theirs = tv.EMNIST(str(tmp_path), "letters", train=train)
        assert_same_dataset(ours, theirs, attrs=("classes", "class_to_idx"))
    with pytest.raises(ValueError, match="Unknown value 'bogus' for argument split. Valid values "
                       "are {'byclass', 'bymerge', 'balanced', 'letters', 'digits', 'mnist'}."):
        D.EMNIST(str(tmp_path), "bogus")
    with pytest.raises(RuntimeError, match="^Dataset not found. You can use download=True"):
        D.EMNIST(str(tmp_path), "digits")


@pytest.mark.parametrize("what", ["train", "test10k", "test50k"])
def test_qmnist_matches_torchvision(tmp_path, what):
    tv = tv_datasets()
    raw = tmp_path / "QMNIST" / "raw"
    raw.mkdir(parents=True)
    rng = np.random.default_rng(1)
    for part in ("train", "test"):
        write_idx(str(raw / f"qmnist-{part}-images-idx3-ubyte"), rng.integers(0, 256, (3, 28, 28)))
        write_idx(str(raw / f"qmnist-{part}-labels-idx2-int"),
                  rng.integers(0, 70000, (3, 8)), code=12)
    for compat in (True, False):
        ours, theirs = (M(str(tmp_path), what=what, compat=compat) for M in (D.QMNIST, tv.QMNIST))
        assert_same_dataset(ours, theirs)
    with pytest.raises(ValueError, match="Unknown value 'x' for argument what"):
        D.QMNIST(str(tmp_path), what="x")
