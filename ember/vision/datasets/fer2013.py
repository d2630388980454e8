"""FER2013 (torchvision.datasets.fer2013): 48x48 grayscale faces with an emotion label, from
root/fer2013/{train,test}.csv, or from the combined fer2013.csv / icml_face_data.csv when one
of those is there (its Usage column picks the split). Not downloadable (Kaggle)."""
import csv
import pathlib

import numpy as np

from .utils import check_integrity, verify_str_arg
from .vision import VisionDataset

__all__ = ["FER2013"]


class FER2013(VisionDataset):
    _RESOURCES = {
        "train": ("train.csv", "3f0dfb3d3fd99c811a1299cb947e3131"),
        "test": ("test.csv", "b02c2298636a634e8c2faabbf3ea9a23"),
        "fer": ("fer2013.csv", "f8428a1edbd21e88f42c73edd2a14f95"),
        "icml": ("icml_face_data.csv", "b114b9e04e6949e5fe8b6a98b3892b1d"),
    }

    def __init__(self, root, split="train", transform=None, target_transform=None):
        from ... import from_numpy
        self._split = verify_str_arg(split, "split", ("train", "test"))
        super().__init__(root, transform=transform, target_transform=target_transform)
        base_folder = pathlib.Path(self.root) / "fer2013"
        use_fer = (base_folder / self._RESOURCES["fer"][0]).exists()
        use_icml = not use_fer and (base_folder / self._RESOURCES["icml"][0]).exists()
        file_name, md5 = self._RESOURCES["fer" if use_fer else "icml" if use_icml
                                         else self._split]
        if not check_integrity(str(base_folder / file_name), md5=md5):
            raise RuntimeError(
                f"{file_name} not found in {base_folder} or corrupted. You can download it from "
                "https://www.kaggle.com/c/challenges-in-representation-learning-facial-"
                "expression-recognition-challenge")
        # the ICML file's column names start with a space
        pixels_key, usage_key = (" pixels", " Usage") if use_icml else ("pixels", "Usage")
        labelled = use_fer or use_icml or self._split == "train"
        usages = ("Training",) if self._split == "train" else ("PublicTest", "PrivateTest")
        with open(base_folder / file_name, newline="") as f:
            rows = [row for row in csv.DictReader(f)
                    if not (use_fer or use_icml) or row[usage_key] in usages]
        self._samples = [
            (from_numpy(np.array(row[pixels_key].split(), dtype=np.uint8).reshape(48, 48)),
             int(row["emotion"]) if labelled else None) for row in rows]

    def __len__(self):
        return len(self._samples)

    def __getitem__(self, idx):
        from PIL import Image
        image_tensor, target = self._samples[idx]
        image = Image.fromarray(image_tensor.numpy())
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def extra_repr(self):
        return f"split={self._split}"
