"""SVHN (torchvision.datasets.svhn): 32x32 house-number digits from the MATLAB files
root/{train,test,extra}_32x32.mat; label 10 (the digit 0) becomes 0."""
import os

import numpy as np

from .utils import check_integrity, download_url, verify_str_arg
from .vision import VisionDataset

__all__ = ["SVHN"]

_URL = "http://ufldl.stanford.edu/housenumbers/"


class SVHN(VisionDataset):
    split_list = {
        "train": [_URL + "train_32x32.mat", "train_32x32.mat",
                  "e26dedcc434d2e4c54c9b2d4a06d8373"],
        "test": [_URL + "test_32x32.mat", "test_32x32.mat", "eb5a983be6a315427106f1b164d9cef3"],
        "extra": [_URL + "extra_32x32.mat", "extra_32x32.mat",
                  "a93ce644f1a588dc4d68dda5feec44a7"],
    }

    def __init__(self, root, split="train", transform=None, target_transform=None,
                 download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = verify_str_arg(split, "split", tuple(self.split_list))
        self.url, self.filename, self.file_md5 = self.split_list[split]
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        import scipy.io
        mat = scipy.io.loadmat(os.path.join(self.root, self.filename))
        self.labels = mat["y"].astype(np.int64).squeeze()
        self.labels[self.labels == 10] = 0
        # stored (H, W, C, N); kept (N, C, H, W) as torchvision keeps it
        self.data = np.transpose(mat["X"], (3, 2, 0, 1))

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
        return len(self.data)

    def _check_integrity(self):
        return check_integrity(os.path.join(self.root, self.filename), self.file_md5)

    def download(self):
        download_url(self.url, self.root, self.filename, self.file_md5)

    def extra_repr(self):
        return f"Split: {self.split}"
