"""CelebA (torchvision.datasets.celeba): aligned face images in
root/celeba/img_align_celeba with the attribute, identity, box, landmark and split lists
beside them; targets are int64 tensors, attributes mapped from -1/1 to 0/1."""
import csv
import os
from collections import namedtuple

import numpy as np

from .utils import check_integrity, download_file_from_google_drive, extract_archive, \
    verify_str_arg
from .vision import VisionDataset

__all__ = ["CelebA"]

CSV = namedtuple("CSV", ["header", "index", "data"])


class CelebA(VisionDataset):
    base_folder = "celeba"
    # (Google Drive id, md5, file name)
    file_list = [
        ("0B7EVK8r0v71pZjFTYXZWM3FlRnM", "00d2c5bc6d35e252742224ab0c1e8fcb",
         "img_align_celeba.zip"),
        ("0B7EVK8r0v71pblRyaVFSWGxPY0U", "75e246fa4810816ffd6ee81facbd244c",
         "list_attr_celeba.txt"),
        ("1_ee_0u7vcNLOfNLegJRHmolfH5ICW-XS", "32bd1bd63d3c78cd57e08160ec5ed1e2",
         "identity_CelebA.txt"),
        ("0B7EVK8r0v71pbThiMVRxWXZ4dU0", "00566efa6fedff7a56946cd1c10f1c16",
         "list_bbox_celeba.txt"),
        ("0B7EVK8r0v71pd0FJY3Blby1HUTQ", "cc24ecafdb5b50baae59b03474781f8c",
         "list_landmarks_align_celeba.txt"),
        ("0B7EVK8r0v71pY0NSMzRuSXJEVkk", "d32c9cbf5e040fd4025c592c306e6668",
         "list_eval_partition.txt"),
    ]

    def __init__(self, root, split="train", target_type="attr", transform=None,
                 target_transform=None, download=False):
        from ... import from_numpy
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = split
        self.target_type = target_type if isinstance(target_type, list) else [target_type]
        if not self.target_type and self.target_transform is not None:
            raise RuntimeError("target_transform is specified but target_type is empty")
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        split_code = {"train": 0, "valid": 1, "test": 2, "all": None}[verify_str_arg(
            split.lower() if isinstance(split, str) else split, "split",
            ("train", "valid", "test", "all"))]
        splits = self._load_csv("list_eval_partition.txt")
        identity = self._load_csv("identity_CelebA.txt")
        bbox = self._load_csv("list_bbox_celeba.txt", header=1)
        landmarks = self._load_csv("list_landmarks_align_celeba.txt", header=1)
        attr = self._load_csv("list_attr_celeba.txt", header=1)
        if split_code is None:
            rows = np.arange(len(splits.index))
            self.filename = splits.index
        else:
            rows = np.flatnonzero(splits.data[:, 0] == split_code)
            self.filename = [splits.index[i] for i in rows]
        self.identity = from_numpy(identity.data[rows])
        self.bbox = from_numpy(bbox.data[rows])
        self.landmarks_align = from_numpy(landmarks.data[rows])
        self.attr = from_numpy((attr.data[rows] + 1) // 2)
        self.attr_names = attr.header

    def _load_csv(self, filename, header=None):
        with open(os.path.join(self.root, self.base_folder, filename)) as f:
            rows = list(csv.reader(f, delimiter=" ", skipinitialspace=True))
        headers = []
        if header is not None:
            headers, rows = rows[header], rows[header + 1:]
        data = np.array([[int(v) for v in row[1:]] for row in rows], dtype=np.int64)
        return CSV(headers, [row[0] for row in rows], data)

    def _check_integrity(self):
        for _, md5, filename in self.file_list:
            if os.path.splitext(filename)[1] not in (".zip", ".7z") and not check_integrity(
                    os.path.join(self.root, self.base_folder, filename), md5):
                return False
        return os.path.isdir(os.path.join(self.root, self.base_folder, "img_align_celeba"))

    def download(self):
        if self._check_integrity():
            return
        for file_id, md5, filename in self.file_list:
            download_file_from_google_drive(file_id, os.path.join(self.root, self.base_folder),
                                            filename, md5)
        extract_archive(os.path.join(self.root, self.base_folder, "img_align_celeba.zip"))

    def __getitem__(self, index):
        from PIL import Image
        X = Image.open(os.path.join(self.root, self.base_folder, "img_align_celeba",
                                    self.filename[index]))
        target = []
        for kind in self.target_type:
            if kind == "attr":
                target.append(self.attr[index, :])
            elif kind == "identity":
                target.append(self.identity[index, 0])
            elif kind == "bbox":
                target.append(self.bbox[index, :])
            elif kind == "landmarks":
                target.append(self.landmarks_align[index, :])
            else:
                raise ValueError(f'Target type "{kind}" is not recognized.')
        if self.transform is not None:
            X = self.transform(X)
        if not target:
            return X, None
        target = tuple(target) if len(target) > 1 else target[0]
        if self.target_transform is not None:
            target = self.target_transform(target)
        return X, target

    def __len__(self):
        return len(self.attr)

    def extra_repr(self):
        return f"Target type: {self.target_type}\nSplit: {self.split}"
