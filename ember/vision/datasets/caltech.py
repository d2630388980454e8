"""Caltech101 and Caltech256 (torchvision.datasets.caltech): object photos in
root/caltech101/101_ObjectCategories/<class>/image_NNNN.jpg (with contour annotations in
Annotations/<class>/annotation_NNNN.mat) and root/caltech256/256_ObjectCategories/
NNN.<class>/NNN_NNNN.jpg."""
import os
import shutil

from .utils import download_and_extract_archive, extract_archive, verify_str_arg
from .vision import VisionDataset

__all__ = ["Caltech101", "Caltech256"]


class _Caltech(VisionDataset):
    _folder = None

    def _check_integrity(self):
        return os.path.exists(os.path.join(self.root, self._folder))

    def _require(self, download):
        os.makedirs(self.root, exist_ok=True)
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")

    def _finish(self, img, target):
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.index)


def _index(dataset, keep):
    dataset.index, dataset.y = [], []
    for i, category in enumerate(dataset.categories):
        n = len([f for f in os.listdir(os.path.join(dataset.root, dataset._folder, category))
                 if keep(f)])
        dataset.index.extend(range(1, n + 1))
        dataset.y.extend(n * [i])


class Caltech101(_Caltech):
    _folder = "101_ObjectCategories"
    # annotation folders that are named differently from their image folders
    _annotation_names = {"Faces": "Faces_2", "Faces_easy": "Faces_3",
                         "Motorbikes": "Motorbikes_16", "airplanes": "Airplanes_Side_2"}

    def __init__(self, root, target_type="category", transform=None, target_transform=None,
                 download=False):
        super().__init__(os.path.join(root, "caltech101"), transform=transform,
                         target_transform=target_transform)
        if isinstance(target_type, str):
            target_type = [target_type]
        self.target_type = [verify_str_arg(t, "target_type", ("category", "annotation"))
                            for t in target_type]
        self._require(download)
        self.categories = sorted(os.listdir(os.path.join(self.root, self._folder)))
        self.categories.remove("BACKGROUND_Google")  # clutter, not a class
        self.annotation_categories = [self._annotation_names.get(c, c) for c in self.categories]
        _index(self, lambda name: True)

    def __getitem__(self, index):
        from PIL import Image
        import scipy.io
        category, number = self.y[index], self.index[index]
        img = Image.open(os.path.join(self.root, self._folder, self.categories[category],
                                      f"image_{number:04d}.jpg"))
        target = []
        for kind in self.target_type:
            if kind == "category":
                target.append(category)
            else:
                target.append(scipy.io.loadmat(os.path.join(
                    self.root, "Annotations", self.annotation_categories[category],
                    f"annotation_{number:04d}.mat"))["obj_contour"])
        return self._finish(img, tuple(target) if len(target) > 1 else target[0])

    def download(self):
        if self._check_integrity():
            return
        download_and_extract_archive(
            "https://data.caltech.edu/records/mzrjq-6wc02/files/caltech-101.zip",
            download_root=self.root, filename="caltech-101.zip",
            md5="3138e1922a9193bfa496528edbbc45d0")
        inner = os.path.join(self.root, "caltech-101")
        for name in os.listdir(inner):
            if name.endswith(".gz"):
                extract_archive(os.path.join(inner, name), self.root)
        shutil.rmtree(inner)
        os.remove(os.path.join(self.root, "caltech-101.zip"))

    def extra_repr(self):
        return f"Target type: {self.target_type}"


class Caltech256(_Caltech):
    _folder = "256_ObjectCategories"

    def __init__(self, root, transform=None, target_transform=None, download=False):
        super().__init__(os.path.join(root, "caltech256"), transform=transform,
                         target_transform=target_transform)
        self._require(download)
        self.categories = sorted(os.listdir(os.path.join(self.root, self._folder)))
        _index(self, lambda name: name.endswith(".jpg"))

    def __getitem__(self, index):
        from PIL import Image
        category = self.y[index]
        img = Image.open(os.path.join(self.root, self._folder, self.categories[category],
                                      f"{category + 1:03d}_{self.index[index]:04d}.jpg"))
        return self._finish(img, category)

    def download(self):
        if self._check_integrity():
            return
        download_and_extract_archive(
            "https://data.caltech.edu/records/nyy15-4j048/files/256_ObjectCategories.tar",
            self.root, filename="256_ObjectCategories.tar",
            md5="67b4f42ca05d46448c6bb8ecd2220f6d")
