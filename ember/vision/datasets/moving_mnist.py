"""MovingMNIST (torchvision.datasets.moving_mnist): 10,000 sequences of 20 64x64 frames of two
moving digits, from root/MovingMNIST/mnist_test_seq.npy (stored frame-major). Items are uint8
tensors (T, 1, 64, 64); split="train" keeps the first split_ratio frames, "test" the rest."""
import os

import numpy as np

from .utils import download_url, verify_str_arg
from .vision import VisionDataset

__all__ = ["MovingMNIST"]


class MovingMNIST(VisionDataset):
    _URL = "http://www.cs.toronto.edu/~nitish/unsupervised_video/mnist_test_seq.npy"

    def __init__(self, root, split=None, split_ratio=10, download=False, transform=None):
        from ... import from_numpy
        super().__init__(root, transform=transform)
        self._base_folder = os.path.join(self.root, type(self).__name__)
        self._filename = self._URL.split("/")[-1]
        if split is not None:
            verify_str_arg(split, "split", ("train", "test"))
        self.split = split
        if not isinstance(split_ratio, int):
            raise TypeError(f"`split_ratio` should be an integer, but got {type(split_ratio)}")
        if not 1 <= split_ratio <= 19:
            raise ValueError("`split_ratio` should be `1 <= split_ratio <= 19`, but got "
                             f"{split_ratio} instead.")
        self.split_ratio = split_ratio
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found. You can use download=True to download it.")
        frames = np.load(os.path.join(self._base_folder, self._filename))  # (T, N, H, W)
        if self.split == "train":
            frames = frames[:self.split_ratio]
        elif self.split == "test":
            frames = frames[self.split_ratio:]
        self.data = from_numpy(np.ascontiguousarray(frames.transpose(1, 0, 2, 3)[:, :, None]))

    def __getitem__(self, idx):
        data = self.data[idx]
        return self.transform(data) if self.transform is not None else data

    def __len__(self):
        return len(self.data)

    def _check_exists(self):
        return os.path.exists(os.path.join(self._base_folder, self._filename))

    def download(self):
        if not self._check_exists():
            download_url(url=self._URL, root=self._base_folder, filename=self._filename,
                         md5="be083ec986bfe91a449d63653c411eb2")
