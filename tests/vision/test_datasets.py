"""ember.vision.datasets: readers on small files written here in the real formats (IDX,
CIFAR pickles, a folder of PNGs), attributes, reprs, transforms and offline download errors."""
import gzip
import os
import pickle
import struct
import time
from urllib.error import URLError

import numpy as np
import pytest

import ember
import ember.vision.datasets as D
import ember.vision.transforms as T
from ember.vision.datasets import utils as dutils

Image = pytest.importorskip("PIL.Image")


def _write_idx(path, arr, gz):
    header = struct.pack(">BBBB", 0, 0, 8, arr.ndim) + struct.pack(f">{arr.ndim}I", *arr.shape)
    data = header + arr.astype(np.uint8).tobytes()
    with (gzip.open(path + ".gz", "wb") if gz else open(path, "wb")) as f:
        f.write(data)


@pytest.fixture
def mnist_root(tmp_path):
    rng = np.random.default_rng(0)
    for cls, gz in (("MNIST", True), ("FashionMNIST", False), ("KMNIST", True)):
        raw = tmp_path / cls / "raw"
        raw.mkdir(parents=True)
        for prefix, n in (("train", 5), ("t10k", 3)):
            _write_idx(str(raw / f"{prefix}-images-idx3-ubyte"),
                       rng.integers(0, 256, (n, 28, 28)), gz)
            _write_idx(str(raw / f"{prefix}-labels-idx1-ubyte"), np.arange(n) % 10, gz)
    return tmp_path


@pytest.mark.parametrize("cls", [D.MNIST, D.FashionMNIST, D.KMNIST])
def test_mnist_family(mnist_root, cls):
    train = cls(str(mnist_root), train=True)
    test = cls(str(mnist_root), train=False, transform=T.ToTensor())
    assert len(train) == 5 and len(test) == 3
    assert train.data.dtype == ember.uint8 and train.data.shape == (5, 28, 28)
    assert train.targets.dtype == ember.int64 and train.targets.tolist() == [0, 1, 2, 3, 4]
    img, target = train[2]
    assert img.mode == "L" and img.size == (28, 28) and target == 2
    assert np.array_equal(np.asarray(img), train.data[2].numpy())
    x, y = test[1]
    assert x.shape == (1, 28, 28) and x.dtype == ember.float32 and y == 1
    assert len(cls.classes) == 10 and train.class_to_idx[cls.classes[3]] == 3
    assert repr(test) == (f"Dataset {cls.__name__}\n    Number of datapoints: 3\n"
                          f"    Root location: {mnist_root}\n    Split: Test\n"
                          # torchvision indents only the first line of the transform block
                          "    StandardTransform\nTransform: ToTensor()")


def test_mnist_missing_and_offline_download(tmp_path, monkeypatch):
    with pytest.raises(RuntimeError,
                       match="^Dataset not found. You can use download=True to download it$"):
        D.MNIST(str(tmp_path))
    monkeypatch.setattr(dutils, "DOWNLOAD_TIMEOUT", 2)
    start = time.time()
    with pytest.raises(RuntimeError, match="Error downloading train-images-idx3-ubyte.gz"):
        D.MNIST(str(tmp_path), download=True)
    assert time.time() - start < 30


@pytest.fixture
def cifar_root(tmp_path):
    rng = np.random.default_rng(1)

    def dump(path, obj):
        with open(path, "wb") as f:
            pickle.dump(obj, f)
    c10 = tmp_path / "cifar-10-batches-py"
    c10.mkdir()
    for i in range(1, 6):
        dump(c10 / f"data_batch_{i}", {"data": rng.integers(0, 256, (2, 3072), dtype=np.uint8),
                                       "labels": [i % 10, (i + 1) % 10]})
    dump(c10 / "test_batch", {"data": rng.integers(0, 256, (3, 3072), dtype=np.uint8),
                              "labels": [7, 8, 9]})
    dump(c10 / "batches.meta", {"label_names": [f"c{i}" for i in range(10)]})
    c100 = tmp_path / "cifar-100-python"
    c100.mkdir()
    dump(c100 / "train", {"data": rng.integers(0, 256, (4, 3072), dtype=np.uint8),
                          "fine_labels": [99, 0, 5, 42], "coarse_labels": [1, 2, 3, 4]})
    dump(c100 / "test", {"data": rng.integers(0, 256, (1, 3072), dtype=np.uint8),
                         "fine_labels": [3], "coarse_labels": [0]})
    dump(c100 / "meta", {"fine_label_names": [f"f{i}" for i in range(100)]})
    return tmp_path


def test_cifar(cifar_root):
    ds = D.CIFAR10(str(cifar_root))
    assert len(ds) == 10 and ds.data.shape == (10, 32, 32, 3) and ds.data.dtype == np.uint8
    assert ds.targets[:4] == [1, 2, 2, 3] and ds.classes[2] == "c2"
    assert ds.class_to_idx["c9"] == 9
    with open(cifar_root / "cifar-10-batches-py" / "data_batch_1", "rb") as f:
        raw = pickle.load(f)["data"][0]
    img, target = ds[0]
    assert img.mode == "RGB" and target == 1
    assert np.array_equal(np.asarray(img), raw.reshape(3, 32, 32).transpose(1, 2, 0))
    test = D.CIFAR10(str(cifar_root), train=False, target_transform=lambda y: y * 10)
    assert len(test) == 3 and test[0][1] == 70
    assert repr(test).splitlines()[:4] == ["Dataset CIFAR10", "    Number of datapoints: 3",
                                           f"    Root location: {cifar_root}", "    Split: Test"]
    c100 = D.CIFAR100(str(cifar_root))
    assert c100.targets == [99, 0, 5, 42] and len(c100.classes) == 100
    assert D.CIFAR100(str(cifar_root), train=False)[0][1] == 3


def test_cifar_missing(tmp_path, monkeypatch):
    with pytest.raises(RuntimeError, match="Dataset not found or corrupted. You can use "
                                           "download=True to download it"):
        D.CIFAR10(str(tmp_path))
    monkeypatch.setattr(dutils, "DOWNLOAD_TIMEOUT", 2)
    with pytest.raises(URLError):  # urllib's own error, as torchvision lets it through
        D.CIFAR100(str(tmp_path), download=True)
    assert not any(name.endswith(".part") for name in os.listdir(tmp_path))


def _offline(monkeypatch):
    def refuse(req, timeout=None):
        raise URLError("offline")
    monkeypatch.setattr(dutils.urllib.request, "urlopen", refuse)


def test_download_url_raises_urllibs_error(tmp_path, monkeypatch):
    _offline(monkeypatch)
    with pytest.raises(URLError, match="offline") as info:
        dutils.download_url("https://example.invalid/a.bin", str(tmp_path))
    assert type(info.value) is URLError
    assert os.listdir(tmp_path) == []


def test_mnist_reports_every_mirror(tmp_path, monkeypatch, capsys):
    _offline(monkeypatch)
    monkeypatch.setattr(D.MNIST, "mirrors", ["https://a.invalid/", "https://b.invalid/"])
    with pytest.raises(RuntimeError) as info:
        D.MNIST(str(tmp_path), download=True)
    assert str(info.value) == ("Error downloading train-images-idx3-ubyte.gz:\n"
                               "Tried https://a.invalid/, got:\n<urlopen error offline>\n"
                               "Tried https://b.invalid/, got:\n<urlopen error offline>\n")
    assert capsys.readouterr().out == ""  # torchvision 0.28 tries the mirrors silently


def test_image_folder(tmp_path):
    rng = np.random.default_rng(2)
    for cls, n in (("cat", 2), ("dog", 3)):
        (tmp_path / cls / "sub").mkdir(parents=True)
        for i in range(n):
            where = tmp_path / cls / ("sub" if i == 2 else "")
            Image.fromarray(rng.integers(0, 256, (6, 5, 3), dtype=np.uint8)).save(
                where / f"{i}.png")
    (tmp_path / "cat" / "notes.txt").write_text("not an image")
    ds = D.ImageFolder(str(tmp_path), transform=T.ToTensor())
    assert ds.classes == ["cat", "dog"] and ds.class_to_idx == {"cat": 0, "dog": 1}
    assert ds.targets == [0, 0, 1, 1, 1] and len(ds) == 5 and ds.imgs == ds.samples
    assert ds.samples[4][0].endswith(os.path.join("dog", "sub", "2.png"))
    x, y = ds[3]
    assert x.shape == (3, 6, 5) and y == 1
    only_png = D.DatasetFolder(str(tmp_path), loader=lambda p: p, extensions=(".txt",),
                               allow_empty=True)
    assert [os.path.basename(p) for p, _ in only_png.samples] == ["notes.txt"]
    with pytest.raises(FileNotFoundError, match="Found no valid file for the classes dog. "
                                                "Supported extensions are: .txt"):
        D.DatasetFolder(str(tmp_path), loader=lambda p: p, extensions=(".txt",))
    picked = D.ImageFolder(str(tmp_path), is_valid_file=lambda p: p.endswith("0.png"))
    assert len(picked) == 2

    class Renamed(D.ImageFolder):
        def find_classes(self, directory):
            return ["dog"], {"dog": 0}
    assert len(Renamed(str(tmp_path))) == 3
    with pytest.raises(FileNotFoundError, match="Couldn't find any class folder"):
        D.ImageFolder(str(tmp_path / "cat" / "sub"))


def test_fake_data():
    ds = D.FakeData(size=4, image_size=(3, 8, 6), num_classes=3, transform=T.ToTensor())
    x, y = ds[1]
    x2, y2 = ds[1]
    assert x.shape == (3, 8, 6) and ember.equal(x, x2) and y == y2 and 0 <= y < 3
    ember.manual_seed(5)
    a = ember.rand(1)
    ember.manual_seed(5)
    ds[0]
    assert ember.equal(ember.rand(1), a)  # the caller's random stream is left alone
    with pytest.raises(IndexError, match="FakeData index out of range"):
        ds[4]
    assert repr(ds).startswith("Dataset FakeData\n    Number of datapoints: 4\n")


def test_vision_dataset_transforms_exclusive():
    with pytest.raises(ValueError, match="Only transforms or transform/target_transform"):
        D.VisionDataset("x", transforms=lambda a, b: (a, b), transform=lambda a: a)


def test_extract_and_md5(tmp_path):
    src = tmp_path / "a.bin"
    src.write_bytes(b"hello")
    with gzip.open(str(src) + ".gz", "wb") as f:
        f.write(b"hello")
    dutils.extract_archive(str(src) + ".gz", str(tmp_path / "out"))
    assert (tmp_path / "out" / "a.bin").read_bytes() == b"hello"
    assert dutils.check_integrity(str(src), "5d41402abc4b2a76b9719d911017c592")
    assert not dutils.check_integrity(str(src), "0" * 32)
