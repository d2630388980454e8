"""Detection and segmentation sets with their own annotation formats (torchvision's kitti,
widerface and sbd): Kitti (image, list of object dicts) from root/Kitti/raw, WIDERFace (image,
dict of int64 box tensors) from root/widerface, SBDataset (image, class mask or boundaries)
from the Berkeley benchmark's .mat files."""
import csv
import os
import shutil

import numpy as np

from .utils import download_and_extract_archive, download_file_from_google_drive, \
    download_url, extract_archive, verify_str_arg
from .vision import VisionDataset

__all__ = ["Kitti", "WIDERFace", "SBDataset"]


class Kitti(VisionDataset):
    data_url = "https://s3.eu-central-1.amazonaws.com/avg-kitti/"
    resources = ["data_object_image_2.zip", "data_object_label_2.zip"]
    image_dir_name = "image_2"
    labels_dir_name = "label_2"

    def __init__(self, root, train=True, transform=None, target_transform=None,
                 transforms=None, download=False):
        super().__init__(root, transform=transform, target_transform=target_transform,
                         transforms=transforms)
        self.images, self.targets = [], []
        self.train = train
        self._location = "training" if self.train else "testing"
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found. You may use download=True to download it.")
        image_dir = os.path.join(self._raw_folder, self._location, self.image_dir_name)
        labels_dir = os.path.join(self._raw_folder, self._location, self.labels_dir_name)
        for img_file in os.listdir(image_dir):
            self.images.append(os.path.join(image_dir, img_file))
            if self.train:
                self.targets.append(os.path.join(labels_dir, f"{img_file.split('.')[0]}.txt"))

    def __getitem__(self, index):
        from PIL import Image
        image = Image.open(self.images[index])
        target = self._parse_target(index) if self.train else None
        if self.transforms:
            image, target = self.transforms(image, target)
        return image, target

    def _parse_target(self, index):
        """One dict per line of the KITTI label file (15 space-separated fields)."""
        with open(self.targets[index]) as f:
            return [{"type": line[0], "truncated": float(line[1]), "occluded": int(line[2]),
                     "alpha": float(line[3]), "bbox": [float(x) for x in line[4:8]],
                     "dimensions": [float(x) for x in line[8:11]],
                     "location": [float(x) for x in line[11:14]],
                     "rotation_y": float(line[14])}
                    for line in csv.reader(f, delimiter=" ")]

    def __len__(self):
        return len(self.images)

    @property
    def _raw_folder(self):
        return os.path.join(self.root, type(self).__name__, "raw")

    def _check_exists(self):
        folders = [self.image_dir_name] + ([self.labels_dir_name] if self.train else [])
        return all(os.path.isdir(os.path.join(self._raw_folder, self._location, name))
                   for name in folders)

    def download(self):
        if self._check_exists():
            return
        os.makedirs(self._raw_folder, exist_ok=True)
        for name in self.resources:
            download_and_extract_archive(url=f"{self.data_url}{name}",
                                         download_root=self._raw_folder, filename=name)


class WIDERFace(VisionDataset):
    BASE_FOLDER = "widerface"
    # (Google Drive id, md5, archive)
    FILE_LIST = [
        ("15hGDLhsx8bLgLcIRD5DhYt5iBxnjNF1M", "3fedf70df600953d25982bcd13d91ba2",
         "WIDER_train.zip"),
        ("1GUCogbp16PMGa39thoMMeWxp7Rp5oM8Q", "dfa7d7e790efa35df3788964cf0bbaea",
         "WIDER_val.zip"),
        ("1HIfDbVEWKmsYKJZm4lchTBDLW5N7dY5T", "e5d8f4248ed24c334bbd12f49c29dd40",
         "WIDER_test.zip"),
    ]
    ANNOTATIONS_FILE = (
        "http://shuoyang1213.me/WIDERFACE/support/bbx_annotation/wider_face_split.zip",
        "0e3767bcf0e326556d407bf5bff5d27c", "wider_face_split.zip")
    _KEYS = ("blur", "expression", "illumination", "occlusion", "pose", "invalid")

    def __init__(self, root, split="train", transform=None, target_transform=None,
                 download=False):
        super().__init__(root=os.path.join(root, self.BASE_FOLDER), transform=transform,
                         target_transform=target_transform)
        self.split = verify_str_arg(split, "split", ("train", "val", "test"))
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download and prepare it")
        self.img_info = []
        if self.split in ("train", "val"):
            self.parse_train_val_annotations_file()
        else:
            self.parse_test_annotations_file()

    def __getitem__(self, index):
        from PIL import Image
        img = Image.open(self.img_info[index]["img_path"])
        if self.transform is not None:
            img = self.transform(img)
        target = None if self.split == "test" else self.img_info[index]["annotations"]
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.img_info)

    def extra_repr(self):
        return f"Split: {self.split}"

    def _image_path(self, line):
        path = os.path.join(self.root, "WIDER_" + self.split, "images", line)
        return os.path.abspath(os.path.expanduser(path))

    def parse_train_val_annotations_file(self):
        """Blocks of: image path, box count, then that many lines of 10 ints per box."""
        from ... import from_numpy
        path = os.path.join(self.root, "wider_face_split", f"wider_face_{self.split}_bbx_gt.txt")
        with open(path) as f:
            lines = [line.rstrip() for line in f.readlines()]
        at = 0
        while at < len(lines):
            img_path, n_boxes = self._image_path(lines[at]), int(lines[at + 1])
            # an image with no faces still has one line of zeros
            rows = lines[at + 2:at + 2 + max(n_boxes, 1)]
            at += 2 + max(n_boxes, 1)
            labels = np.array([[int(x) for x in row.split(" ")] for row in rows], np.int64)
            annotations = {"bbox": from_numpy(labels[:, 0:4].copy())}
            for column, key in enumerate(self._KEYS, start=4):
                annotations[key] = from_numpy(labels[:, column].copy())
            self.img_info.append({"img_path": img_path, "annotations": annotations})

    def parse_test_annotations_file(self):
        path = os.path.join(self.root, "wider_face_split", "wider_face_test_filelist.txt")
        with open(os.path.abspath(os.path.expanduser(path))) as f:
            self.img_info = [{"img_path": self._image_path(line.rstrip())}
                             for line in f.readlines()]

    def _check_integrity(self):
        return all(os.path.exists(os.path.join(self.root, os.path.splitext(name)[0]))
                   for _, _, name in self.FILE_LIST + [self.ANNOTATIONS_FILE])

    def download(self):
        if self._check_integrity():
            return
        for file_id, md5, filename in self.FILE_LIST:
            download_file_from_google_drive(file_id, self.root, filename, md5)
            extract_archive(os.path.join(self.root, filename))
        download_and_extract_archive(url=self.ANNOTATIONS_FILE[0], download_root=self.root,
                                     md5=self.ANNOTATIONS_FILE[1])


class SBDataset(VisionDataset):
    url = ("https://www2.eecs.berkeley.edu/Research/Projects/CS/vision/grouping/"
           "semantic_contours/benchmark.tgz")
    md5 = "82b4d87ceb2ed10f6038a1cba92111cb"
    filename = "benchmark.tgz"
    voc_train_url = "https://www.cs.cornell.edu/~bharathh/train_noval.txt"
    voc_split_filename = "train_noval.txt"
    voc_split_md5 = "79bff800c5f0b1ec6b21080a3c066722"

    def __init__(self, root, image_set="train", mode="boundaries", download=False,
                 transforms=None):
        try:
            from scipy.io import loadmat
        except ImportError:
            raise RuntimeError("Scipy is not found. This dataset needs to have scipy installed: "
                               "pip install scipy")
        self._loadmat = loadmat
        super().__init__(root, transforms)
        self.image_set = verify_str_arg(image_set, "image_set", ("train", "val", "train_noval"))
        self.mode = verify_str_arg(mode, "mode", ("segmentation", "boundaries"))
        self.num_classes = 20
        if download:
            self._download()
        if not os.path.isdir(self.root):
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        with open(os.path.join(self.root, image_set + ".txt")) as f:
            names = [line.strip() for line in f.readlines()]
        self.images = [os.path.join(self.root, "img", n + ".jpg") for n in names]
        self.masks = [os.path.join(self.root, "cls", n + ".mat") for n in names]
        self._get_target = (self._get_segmentation_target if self.mode == "segmentation"
                            else self._get_boundaries_target)

    def _download(self):
        download_and_extract_archive(self.url, self.root, filename=self.filename, md5=self.md5)
        extracted = os.path.join(self.root, "benchmark_RELEASE", "dataset")
        for name in ("cls", "img", "inst", "train.txt", "val.txt"):
            shutil.move(os.path.join(extracted, name), self.root)
        if self.image_set == "train_noval":
            download_url(self.voc_train_url, self.root, self.voc_split_filename,
                         self.voc_split_md5)

    def _get_segmentation_target(self, filepath):
        from PIL import Image
        return Image.fromarray(self._loadmat(filepath)["GTcls"][0]["Segmentation"][0])

    def _get_boundaries_target(self, filepath):
        """(num_classes, H, W) array: one dense boundary map per class (sparse on disk)."""
        boundaries = self._loadmat(filepath)["GTcls"][0]["Boundaries"][0]
        return np.concatenate([np.expand_dims(boundaries[i][0].toarray(), axis=0)
                               for i in range(self.num_classes)], axis=0)

    def __getitem__(self, index):
        from PIL import Image
        img = Image.open(self.images[index]).convert("RGB")
        target = self._get_target(self.masks[index])
        if self.transforms is not None:
            img, target = self.transforms(img, target)
        return img, target

    def __len__(self):
        return len(self.images)

    def extra_repr(self):
        return f"Image set: {self.image_set}\nMode: {self.mode}"
