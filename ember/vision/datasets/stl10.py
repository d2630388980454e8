"""STL10 (torchvision.datasets.stl10): 96x96 colour images from the binary files in
root/stl10_binary (train_X.bin, train_y.bin, unlabeled_X.bin, test_X.bin, test_y.bin, the
ten training folds in fold_indices.txt); unlabeled images have target -1."""
import os

import numpy as np

from .utils import check_integrity, download_and_extract_archive, verify_str_arg
from .vision import VisionDataset

__all__ = ["STL10"]


class STL10(VisionDataset):
    base_folder = "stl10_binary"
    url = "http://ai.stanford.edu/~acoates/stl10/stl10_binary.tar.gz"
    filename = "stl10_binary.tar.gz"
    tgz_md5 = "91f7769df0f17e558f3565bffb0c7dfb"
    class_names_file = "class_names.txt"
    folds_list_file = "fold_indices.txt"
    train_list = [["train_X.bin", "918c2871b30a85fa023e0c44e0bee87f"],
                  ["train_y.bin", "5a34089d4802c674881badbb80307741"],
                  ["unlabeled_X.bin", "5242ba1fed5e4be9e1e742405eb56ca4"]]
    test_list = [["test_X.bin", "7f263ba9f9e0b06b93213547f721ac82"],
                 ["test_y.bin", "36f9794fa4beb8a2c72628de14fa638e"]]
    splits = ("train", "train+unlabeled", "unlabeled", "test")

    def __init__(self, root, split="train", folds=None, transform=None, target_transform=None,
                 download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", self.splits)
        self.folds = self._verify_folds(folds)
        if download:
            self.download()
        elif not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        if split in ("train", "train+unlabeled"):
            self.data, self.labels = self._load_file("train_X.bin", "train_y.bin")
            self._load_folds(folds)
            if split == "train+unlabeled":
                unlabeled, _ = self._load_file("unlabeled_X.bin")
                self.data = np.concatenate((self.data, unlabeled))
                self.labels = np.concatenate((self.labels, np.asarray([-1] * len(unlabeled))))
        elif split == "unlabeled":
            self.data, _ = self._load_file("unlabeled_X.bin")
            self.labels = np.asarray([-1] * self.data.shape[0])
        else:
            self.data, self.labels = self._load_file("test_X.bin", "test_y.bin")
        class_file = os.path.join(self.root, self.base_folder, self.class_names_file)
        if os.path.isfile(class_file):
            with open(class_file) as f:
                self.classes = f.read().splitlines()

    @staticmethod
    def _verify_folds(folds):
        if folds is None:
            return folds
        if isinstance(folds, int):
            if folds in range(10):
                return folds
            raise ValueError("Value for argument folds should be in the range [0, 10), but got "
                             f"{folds}.")
        raise ValueError("Expected type None or int for argument folds, but got type "
                         f"{type(folds)}.")

    def _load_file(self, data_file, labels_file=None):
        labels = None
        if labels_file:
            path = os.path.join(self.root, self.base_folder, labels_file)
            labels = np.fromfile(path, dtype=np.uint8) - 1  # the files count classes from 1
        everything = np.fromfile(os.path.join(self.root, self.base_folder, data_file), np.uint8)
        # column-major images: (N, C, W, H) on disk
        return np.transpose(everything.reshape(-1, 3, 96, 96), (0, 1, 3, 2)), labels

    def _load_folds(self, folds):
        if folds is None:
            return
        with open(os.path.join(self.root, self.base_folder, self.folds_list_file)) as f:
            line = f.read().splitlines()[folds]
        index = np.array(line.split(), dtype=np.int64)
        self.data, self.labels = self.data[index], self.labels[index]

    def __getitem__(self, index):
        from PIL import Image
        img, target = self.data[index], int(self.labels[index])
        img = Image.fromarray(np.transpose(img, (1, 2, 0)))
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return self.data.shape[0]

    def _check_integrity(self):
        return all(check_integrity(os.path.join(self.root, self.base_folder, name), md5)
                   for name, md5 in self.train_list + self.test_list)

    def download(self):
        if self._check_integrity():
            return
        download_and_extract_archive(self.url, self.root, filename=self.filename,
                                     md5=self.tgz_md5)

    def extra_repr(self):
        return f"Split: {self.split}"
