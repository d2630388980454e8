"""PhotoTour and MovingMNIST against torchvision; LSUN's class checks (its databases need
lmdb, which CI lacks)."""
import shutil

import numpy as np
import pytest

import ember.vision.datasets as D
from tests.vision.datasets._parity import assert_same, assert_same_dataset, tv_datasets, \
    write_text

Image = pytest.importorskip("PIL.Image")


@pytest.fixture
def phototour_roots(tmp_path, monkeypatch):
    for cls in (D.PhotoTour, tv_datasets().PhotoTour):
        monkeypatch.setattr(cls, "lens", dict(cls.lens, liberty=5))
    data = tmp_path / "ours" / "liberty"
    data.mkdir(parents=True)
    rng = np.random.default_rng(0)
    # a 128x192 bitmap holds 2x3 patches; the second is a partial 64x100 one
    Image.fromarray(rng.integers(0, 256, (128, 192), dtype=np.uint8)).save(data / "p000.bmp")
    Image.fromarray(rng.integers(0, 256, (64, 100), dtype=np.uint8)).save(data / "p001.bmp")
    write_text(data / "info.txt", "".join(f"{i // 2} 0\n" for i in range(8)))
    write_text(data / "m50_100000_100000_0.txt", "0 0 0 1 0 0 0\n2 1 0 4 2 0 0\n")
    shutil.copytree(tmp_path / "ours", tmp_path / "theirs")
    return tmp_path


@pytest.mark.filterwarnings("ignore::DeprecationWarning")
@pytest.mark.parametrize("train", [True, False])
def test_phototour(phototour_roots, train):
    tv = tv_datasets()
    ours = D.PhotoTour(str(phototour_roots / "ours"), "liberty", train=train)
    theirs = tv.PhotoTour(str(phototour_roots / "theirs"), "liberty", train=train)
    assert_same_dataset(ours, theirs, attrs=("data", "labels", "matches"), check_repr=False)
    assert repr(ours).replace("ours", "theirs") == repr(theirs)
    # ember reads the cache torchvision wrote, and torchvision ember's
    assert_same(tv.PhotoTour(str(phototour_roots / "ours"), "liberty").data, theirs.data)
    swapped = D.PhotoTour(str(phototour_roots / "theirs"), "liberty", train=train)
    assert_same(swapped.data, theirs.data)


@pytest.mark.parametrize("split", [None, "train", "test"])
def test_moving_mnist(tmp_path, split):
    (tmp_path / "MovingMNIST").mkdir()
    frames = np.random.default_rng(1).integers(0, 256, (20, 3, 64, 64), dtype=np.uint8)
    np.save(tmp_path / "MovingMNIST" / "mnist_test_seq.npy", frames)
    ours = D.MovingMNIST(str(tmp_path), split=split, split_ratio=7)
    theirs = tv_datasets().MovingMNIST(str(tmp_path), split=split, split_ratio=7)
    assert_same_dataset(ours, theirs)
    with pytest.raises(ValueError, match="`split_ratio` should be `1 <= split_ratio <= 19`"):
        D.MovingMNIST(str(tmp_path), split_ratio=20)
    with pytest.raises(TypeError, match="`split_ratio` should be an integer"):
        D.MovingMNIST(str(tmp_path), split_ratio=2.0)


def test_lsun_classes(tmp_path):
    assert D.LSUN._verify_classes("val")[:2] == ["bedroom_val", "bridge_val"]
    assert D.LSUN._verify_classes("test") == ["test"]
    assert D.LSUN._verify_classes(["tower_train"]) == ["tower_train"]
    with pytest.raises(ValueError, match="Unknown value 'castle' for LSUN class. Valid values"):
        D.LSUN._verify_classes(["castle_train"])
    with pytest.raises(ValueError, match="Unknown value 'dev' for postfix. Valid values are "
                       "{'train', 'val', 'test'}."):
        D.LSUN._verify_classes(["tower_dev"])
    with pytest.raises(ValueError, match="Expected type str or Iterable for argument classes"):
        D.LSUN._verify_classes(3)
    try:
        import lmdb  # noqa: F401
    except ImportError:
        with pytest.raises(ModuleNotFoundError, match="lmdb"):
            D.LSUN(str(tmp_path), ["tower_val"])
