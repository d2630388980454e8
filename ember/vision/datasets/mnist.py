"""MNIST, FashionMNIST, KMNIST, EMNIST and QMNIST: 28x28 grayscale digits, clothes, letters and
characters in IDX files.

Files live in root/<ClassName>/raw as torchvision lays them out (train-images-idx3-ubyte,
train-labels-idx1-ubyte, t10k-...; plain or .gz) and are parsed into memory on construction.
"""
import gzip
import os
import shutil
import string
from urllib.error import URLError

import numpy as np

from .utils import check_integrity, download_and_extract_archive, extract_archive, verify_str_arg
from .vision import VisionDataset

__all__ = ["MNIST", "FashionMNIST", "KMNIST", "EMNIST", "QMNIST"]

# IDX type codes -> big-endian NumPy dtypes
_IDX_TYPES = {8: np.dtype(">u1"), 9: np.dtype(">i1"), 11: np.dtype(">i2"),
              12: np.dtype(">i4"), 13: np.dtype(">f4"), 14: np.dtype(">f8")}


def read_idx(path):
    """An IDX file (optionally gzipped) as a NumPy array in native byte order."""
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    if len(data) < 4 or data[0] != 0 or data[1] != 0 or data[2] not in _IDX_TYPES:
        raise RuntimeError(f"{path} is not an IDX file")
    ndim = data[3]
    shape = tuple(int(v) for v in np.frombuffer(data, ">i4", ndim, offset=4))
    dtype = _IDX_TYPES[data[2]]
    arr = np.frombuffer(data, dtype, int(np.prod(shape)), offset=4 + 4 * ndim)
    return arr.reshape(shape).astype(dtype.newbyteorder("="))


def _mirrors_failed(filename, errors):
    """torchvision 0.28's message once every mirror has failed: one block per mirror."""
    tried = "".join(f"Tried {mirror}, got:\n{error}\n" for mirror, error in errors)
    return f"Error downloading {filename}:\n{tried}"


class MNIST(VisionDataset):
    mirrors = ["https://ossci-datasets.s3.amazonaws.com/mnist/",
               "http://yann.lecun.com/exdb/mnist/"]
    resources = [("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
                 ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
                 ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
                 ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c")]
    training_file = "training.pt"
    test_file = "test.pt"
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five",
               "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root, train=True, transform=None, target_transform=None,
                 download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.train = train
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found. You can use download=True to download it")
        self.data, self.targets = self._load_data()

    @property
    def raw_folder(self):
        return os.path.join(self.root, type(self).__name__, "raw")

    @property
    def processed_folder(self):
        return os.path.join(self.root, type(self).__name__, "processed")

    @property
    def class_to_idx(self):
        return {_class: i for i, _class in enumerate(self.classes)}

    def _find(self, stem):
        """The raw file for `stem`, plain or gzipped; None if neither is there."""
        for name in (stem, stem + ".gz"):
            path = os.path.join(self.raw_folder, name)
            if check_integrity(path):
                return path
        return None

    def _check_exists(self):
        return all(self._find(os.path.splitext(name)[0]) for name, _ in self.resources)

    def _load_data(self):
        from ...ops.creation import from_numpy
        prefix = "train" if self.train else "t10k"
        images = read_idx(self._find(f"{prefix}-images-idx3-ubyte"))
        labels = read_idx(self._find(f"{prefix}-labels-idx1-ubyte"))
        return (from_numpy(np.ascontiguousarray(images.astype(np.uint8))),
                from_numpy(labels.astype(np.int64)))

    def __getitem__(self, index):
        from PIL import Image
        img, target = self.data[index], int(self.targets[index])
        img = Image.fromarray(img.numpy(), mode="L")
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)

    def download(self):
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        for filename, md5 in self.resources:
            errors = []
            for mirror in self.mirrors:
                try:
                    download_and_extract_archive(f"{mirror}{filename}",
                                                 download_root=self.raw_folder,
                                                 filename=filename, md5=md5)
                    break
                except (RuntimeError, URLError) as error:  # quietly on to the next mirror
                    errors.append((mirror, error))
            else:
                raise RuntimeError(_mirrors_failed(filename, errors))

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"


class FashionMNIST(MNIST):
    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
                 ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
                 ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
                 ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310")]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]


class KMNIST(MNIST):
    mirrors = ["http://codh.rois.ac.jp/kmnist/dataset/kmnist/"]
    resources = [("train-images-idx3-ubyte.gz", "bdb82020997e1d708af4cf47b453dcf7"),
                 ("train-labels-idx1-ubyte.gz", "e144d726b3acfaa3e44228e80efcd344"),
                 ("t10k-images-idx3-ubyte.gz", "5c965bf0a639b31b8f53240b1b52f4d7"),
                 ("t10k-labels-idx1-ubyte.gz", "7320c461ea6c1c855c0b718fb2a4b134")]
    classes = ["o", "ki", "su", "tsu", "na", "ha", "ma", "ya", "re", "wo"]


class EMNIST(MNIST):
    url = "https://biometrics.nist.gov/cs_links/EMNIST/gzip.zip"
    md5 = "58c8d27c78d21e728a6bc7b3cc06412e"
    splits = ("byclass", "bymerge", "balanced", "letters", "digits", "mnist")
    # the merged splits fold these lowercase letters into their uppercase twins
    _merged_classes = set("cijklmopsuvwxyz")
    _all_classes = set(string.digits + string.ascii_letters)
    classes_split_dict = {
        "byclass": sorted(_all_classes),
        "bymerge": sorted(_all_classes - _merged_classes),
        "balanced": sorted(_all_classes - _merged_classes),
        "letters": ["N/A"] + list(string.ascii_lowercase),
        "digits": list(string.digits),
        "mnist": list(string.digits),
    }

    def __init__(self, root, split, **kwargs):
        self.split = verify_str_arg(split, "split", self.splits)
        self.training_file = f"training_{split}.pt"
        self.test_file = f"test_{split}.pt"
        super().__init__(root, **kwargs)
        self.classes = self.classes_split_dict[self.split]

    @property
    def _file_prefix(self):
        return f"emnist-{self.split}-{'train' if self.train else 'test'}"

    @property
    def images_file(self):
        return os.path.join(self.raw_folder, f"{self._file_prefix}-images-idx3-ubyte")

    @property
    def labels_file(self):
        return os.path.join(self.raw_folder, f"{self._file_prefix}-labels-idx1-ubyte")

    def _check_exists(self):
        return all(check_integrity(f) for f in (self.images_file, self.labels_file))

    def _load_data(self):
        from ... import from_numpy
        return (from_numpy(np.ascontiguousarray(read_idx(self.images_file))),
                from_numpy(read_idx(self.labels_file).astype(np.int64)))

    def download(self):
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        download_and_extract_archive(self.url, download_root=self.raw_folder, md5=self.md5)
        gzip_folder = os.path.join(self.raw_folder, "gzip")
        for name in os.listdir(gzip_folder):
            if name.endswith(".gz"):
                extract_archive(os.path.join(gzip_folder, name), self.raw_folder)
        shutil.rmtree(gzip_folder)


_QMNIST_URL = "https://raw.githubusercontent.com/facebookresearch/qmnist/master/"


class QMNIST(MNIST):
    subsets = {"train": "train", "test": "test", "test10k": "test", "test50k": "test",
               "nist": "nist"}
    resources = {
        "train": [(_QMNIST_URL + "qmnist-train-images-idx3-ubyte.gz",
                   "ed72d4157d28c017586c42bc6afe6370"),
                  (_QMNIST_URL + "qmnist-train-labels-idx2-int.gz",
                   "0058f8dd561b90ffdd0f734c6a30e5e4")],
        "test": [(_QMNIST_URL + "qmnist-test-images-idx3-ubyte.gz",
                  "1394631089c404de565df7b7aeaf9412"),
                 (_QMNIST_URL + "qmnist-test-labels-idx2-int.gz",
                  "5b5b05890a5e13444e108efe57b788aa")],
        "nist": [(_QMNIST_URL + "xnist-images-idx3-ubyte.xz",
                  "7f124b3b8ab81486c9d8c2749c17f834"),
                 (_QMNIST_URL + "xnist-labels-idx2-int.xz",
                  "5ed0e788978e45d4a8bd4b7caec3d79d")],
    }

    def __init__(self, root, what=None, compat=True, train=True, **kwargs):
        if what is None:
            what = "train" if train else "test"
        self.what = verify_str_arg(what, "what", tuple(self.subsets))
        self.compat = compat
        self.data_file = what + ".pt"
        self.training_file = self.test_file = self.data_file
        super().__init__(root, train, **kwargs)

    def _raw_path(self, which):
        url = self.resources[self.subsets[self.what]][which][0]
        return os.path.join(self.raw_folder, os.path.splitext(os.path.basename(url))[0])

    @property
    def images_file(self):
        return self._raw_path(0)

    @property
    def labels_file(self):
        return self._raw_path(1)

    def _check_exists(self):
        return all(check_integrity(f) for f in (self.images_file, self.labels_file))

    def _load_data(self):
        from ... import from_numpy
        data, targets = read_idx(self.images_file), read_idx(self.labels_file)
        if data.dtype != np.uint8:
            raise TypeError(f"data should be of dtype torch.uint8 instead of torch.{data.dtype}")
        if data.ndim != 3:
            raise ValueError("data should have 3 dimensions instead of {data.ndimension()}")
        if targets.ndim != 2:
            raise ValueError(f"targets should have 2 dimensions instead of {targets.ndim}")
        # test10k is the part of the test set that matches MNIST's; test50k the rest
        rows = {"test10k": slice(0, 10000), "test50k": slice(10000, None)}.get(self.what,
                                                                              slice(None))
        return (from_numpy(np.ascontiguousarray(data[rows])),
                from_numpy(np.ascontiguousarray(targets[rows].astype(np.int64))))

    def download(self):
        if self._check_exists():
            return
        os.makedirs(self.raw_folder, exist_ok=True)
        for url, md5 in self.resources[self.subsets[self.what]]:
            download_and_extract_archive(url, self.raw_folder, md5=md5)

    def __getitem__(self, index):
        from PIL import Image
        img, target = self.data[index], self.targets[index]
        img = Image.fromarray(img.numpy(), mode="L")
        if self.transform is not None:
            img = self.transform(img)
        if self.compat:
            target = int(target[0])
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def extra_repr(self):
        return f"Split: {self.what}"
