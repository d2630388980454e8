"""Small handwriting sets (torchvision's usps, semeion and omniglot): 16x16 digits from USPS's
bz2 libsvm files and SEMEION's text table, and Omniglot's character PNGs under
root/omniglot-py/images_{background,evaluation}/<alphabet>/<character>/."""
import bz2
import os

import numpy as np

from .utils import check_integrity, download_and_extract_archive, download_url, list_dir, \
    list_files
from .vision import VisionDataset

__all__ = ["USPS", "SEMEION", "Omniglot"]


class _GrayDigits(VisionDataset):
    """Items are (PIL 'L' image of self.data[i], int label) through the transforms."""

    def _label(self, index):
        raise NotImplementedError

    def __getitem__(self, index):
        from PIL import Image
        img, target = Image.fromarray(self.data[index], mode="L"), self._label(index)
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.data)


_LIBSVM = "https://www.csie.ntu.edu.tw/~cjlin/libsvmtools/datasets/multiclass/"


class USPS(_GrayDigits):
    split_list = {
        "train": [_LIBSVM + "usps.bz2", "usps.bz2", "ec16c51db3855ca6c91edd34d0e9b197"],
        "test": [_LIBSVM + "usps.t.bz2", "usps.t.bz2", "8ea070ee2aca1ac39742fdd1ef5ed118"],
    }

    def __init__(self, root, train=True, transform=None, target_transform=None,
                 download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        url, filename, checksum = self.split_list["train" if train else "test"]
        full_path = os.path.join(self.root, filename)
        if download and not os.path.exists(full_path):
            download_url(url, self.root, filename, md5=checksum)
        # libsvm lines: "<label 1..10> 1:<v> 2:<v> ...", values in [-1, 1]
        with bz2.open(full_path) as f:
            rows = [line.decode().split() for line in f.readlines()]
        values = np.asarray([[v.split(":")[-1] for v in row[1:]] for row in rows],
                            dtype=np.float32).reshape((-1, 16, 16))
        self.data = ((values + 1) / 2 * 255).astype(np.uint8)
        self.targets = [int(row[0]) - 1 for row in rows]

    def _label(self, index):
        return int(self.targets[index])


class SEMEION(_GrayDigits):
    url = "http://archive.ics.uci.edu/ml/machine-learning-databases/semeion/semeion.data"
    filename = "semeion.data"
    md5_checksum = "cb545d371d2ce14ec121470795a77432"

    def __init__(self, root, transform=None, target_transform=None, download=True):
        super().__init__(root, transform=transform, target_transform=target_transform)
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        # each row: 256 binary pixels, then the label one-hot over 10 columns
        table = np.loadtxt(os.path.join(self.root, self.filename))
        self.data = (table[:, :256] * 255).astype("uint8").reshape((-1, 16, 16))
        self.labels = np.nonzero(table[:, 256:])[1]

    def _label(self, index):
        return int(self.labels[index])

    def _check_integrity(self):
        return check_integrity(os.path.join(self.root, self.filename), self.md5_checksum)

    def download(self):
        if not self._check_integrity():
            download_url(self.url, self.root, self.filename, self.md5_checksum)


class Omniglot(VisionDataset):
    folder = "omniglot-py"
    download_url_prefix = "https://raw.githubusercontent.com/brendenlake/omniglot/master/python"
    zips_md5 = {"images_background": "68d2efa1b9178cc56df9314c21c6e718",
                "images_evaluation": "6b91aef0f799c5bb55b94e3f2daec811"}

    def __init__(self, root, background=True, transform=None, target_transform=None,
                 download=False, loader=None):
        super().__init__(os.path.join(root, self.folder), transform=transform,
                         target_transform=target_transform)
        self.background = background
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        self.target_folder = os.path.join(self.root, self._get_target_folder())
        self._alphabets = list_dir(self.target_folder)
        # one class per character, alphabet by alphabet, in directory-listing order
        self._characters = [os.path.join(a, c) for a in self._alphabets
                            for c in list_dir(os.path.join(self.target_folder, a))]
        self._character_images = [
            [(image, idx) for image in list_files(os.path.join(self.target_folder, character),
                                                  ".png")]
            for idx, character in enumerate(self._characters)]
        self._flat_character_images = [item for images in self._character_images
                                       for item in images]
        self.loader = loader

    def __len__(self):
        return len(self._flat_character_images)

    def __getitem__(self, index):
        from PIL import Image
        image_name, character_class = self._flat_character_images[index]
        path = os.path.join(self.target_folder, self._characters[character_class], image_name)
        image = (Image.open(path, mode="r").convert("L") if self.loader is None
                 else self.loader(path))
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            character_class = self.target_transform(character_class)
        return image, character_class

    def _check_integrity(self):
        name = self._get_target_folder()
        return check_integrity(os.path.join(self.root, name + ".zip"), self.zips_md5[name])

    def download(self):
        if self._check_integrity():
            return
        name = self._get_target_folder()
        download_and_extract_archive(f"{self.download_url_prefix}/{name}.zip", self.root,
                                     filename=name + ".zip", md5=self.zips_md5[name])

    def _get_target_folder(self):
        return "images_background" if self.background else "images_evaluation"
