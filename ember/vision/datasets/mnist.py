"""MNIST, FashionMNIST and KMNIST: 28x28 grayscale digits/clothes/characters in IDX files.

Files live in root/<ClassName>/raw as torchvision lays them out (train-images-idx3-ubyte,
train-labels-idx1-ubyte, t10k-...; plain or .gz) and are parsed into memory on construction.
"""
import gzip
import os

import numpy as np

from .utils import check_integrity, download_and_extract_archive
from .vision import VisionDataset

__all__ = ["MNIST", "FashionMNIST", "KMNIST"]

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
                url = f"{mirror}{filename}"
                try:
                    print(f"Downloading {url}")
                    download_and_extract_archive(url, download_root=self.raw_folder,
                                                 filename=filename, md5=md5)
                    break
                except RuntimeError as error:
                    print(f"Failed to download (trying next):\n{error}\n")
                    errors.append(str(error))
            else:
                raise RuntimeError(f"Error downloading {filename}: " + "; ".join(errors))

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
