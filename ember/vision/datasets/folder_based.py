"""Sets stored as class folders (torchvision's eurosat, country211, gtsrb, imagenette and
rendered_sst2): each reads its own root sub-folder and splits, then lists samples as
ImageFolder does (sorted classes, sorted files)."""
import csv
import os
import pathlib

from .folder import ImageFolder, default_loader, find_classes, make_dataset
from .utils import download_and_extract_archive, verify_str_arg
from .vision import VisionDataset

__all__ = ["EuroSAT", "Country211", "GTSRB", "Imagenette", "RenderedSST2"]

_NOT_FOUND = "Dataset not found. You can use download=True to download it"


class _Samples(VisionDataset):
    """Items are (loader(path), label) for (path, label) in self._samples."""

    def __len__(self):
        return len(self._samples)

    def __getitem__(self, idx):
        path, label = self._samples[idx]
        image = self.loader(path)
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            label = self.target_transform(label)
        return image, label


class EuroSAT(ImageFolder):
    def __init__(self, root, transform=None, target_transform=None, download=False,
                 loader=default_loader):
        self.root = os.path.expanduser(root)
        self._base_folder = os.path.join(self.root, "eurosat")
        self._data_folder = os.path.join(self._base_folder, "2750")
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError(_NOT_FOUND)
        super().__init__(self._data_folder, transform=transform,
                         target_transform=target_transform, loader=loader)
        self.root = os.path.expanduser(root)

    def _check_exists(self):
        return os.path.exists(self._data_folder)

    def download(self):
        if self._check_exists():
            return
        os.makedirs(self._base_folder, exist_ok=True)
        download_and_extract_archive(
            "https://huggingface.co/datasets/torchgeo/eurosat/resolve/"
            "c877bcd43f099cd0196738f714544e355477f3fd/EuroSAT.zip",
            download_root=self._base_folder, md5="c8fa014336c82ac7804f0398fcb19387")


class Country211(ImageFolder):
    _URL = "https://openaipublic.azureedge.net/clip/data/country211.tgz"
    _MD5 = "84988d7644798601126c29e9877aab6a"

    def __init__(self, root, split="train", transform=None, target_transform=None,
                 download=False, loader=default_loader):
        self._split = verify_str_arg(split, "split", ("train", "valid", "test"))
        root = pathlib.Path(root).expanduser()
        self.root = str(root)
        self._base_folder = root / "country211"
        if download:
            self._download()
        if not self._check_exists():
            raise RuntimeError(_NOT_FOUND)
        super().__init__(str(self._base_folder / self._split), transform=transform,
                         target_transform=target_transform, loader=loader)
        self.root = str(root)

    def _check_exists(self):
        return self._base_folder.is_dir()

    def _download(self):
        if not self._check_exists():
            download_and_extract_archive(self._URL, download_root=self.root, md5=self._MD5)


class GTSRB(_Samples):
    _BASE_URL = "https://sid.erda.dk/public/archives/daaeac0d7ce1152aea9b61d9f1e19370/"

    def __init__(self, root, split="train", transform=None, target_transform=None,
                 download=False):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "test"))
        self._base_folder = pathlib.Path(root) / "gtsrb"
        self._target_folder = self._base_folder / "GTSRB" / (
            "Training" if self._split == "train" else "Final_Test/Images")
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError(_NOT_FOUND)
        if self._split == "train":
            samples = make_dataset(str(self._target_folder), extensions=(".ppm",))
        else:
            with open(self._base_folder / "GT-final_test.csv") as f:
                samples = [(str(self._target_folder / row["Filename"]), int(row["ClassId"]))
                           for row in csv.DictReader(f, delimiter=";", skipinitialspace=True)]
        self._samples = samples

    @staticmethod
    def loader(path):
        from PIL import Image
        return Image.open(path).convert("RGB")

    def _check_exists(self):
        return self._target_folder.is_dir()

    def download(self):
        if self._check_exists():
            return
        archives = ([("GTSRB-Training_fixed.zip", "513f3c79a4c5141765e10e952eaa2478")]
                    if self._split == "train" else
                    [("GTSRB_Final_Test_Images.zip", "c7e4e6327067d32654124b0fe9e82185"),
                     ("GTSRB_Final_Test_GT.zip", "fe31e9c9270bbcd7b84b7f21a9d9d9e5")])
        for name, md5 in archives:
            download_and_extract_archive(self._BASE_URL + name,
                                         download_root=str(self._base_folder), md5=md5)


class Imagenette(_Samples):
    _ARCHIVES = {
        "full": ("https://s3.amazonaws.com/fast-ai-imageclas/imagenette2.tgz",
                 "fe2fc210e6bb7c5664d602c3cd71e612"),
        "320px": ("https://s3.amazonaws.com/fast-ai-imageclas/imagenette2-320.tgz",
                  "3df6f0d01a2c9592104656642f5e78a3"),
        "160px": ("https://s3.amazonaws.com/fast-ai-imageclas/imagenette2-160.tgz",
                  "e793b78cc4c9e9a4ccc0c1155377a412"),
    }
    _WNID_TO_CLASS = {
        "n01440764": ("tench", "Tinca tinca"),
        "n02102040": ("English springer", "English springer spaniel"),
        "n02979186": ("cassette player",),
        "n03000684": ("chain saw", "chainsaw"),
        "n03028079": ("church", "church building"),
        "n03394916": ("French horn", "horn"),
        "n03417042": ("garbage truck", "dustcart"),
        "n03425413": ("gas pump", "gasoline pump", "petrol pump", "island dispenser"),
        "n03445777": ("golf ball",),
        "n03888257": ("parachute", "chute"),
    }

    def __init__(self, root, split="train", size="full", download=False, transform=None,
                 target_transform=None, loader=default_loader):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ["train", "val"])
        self._size = verify_str_arg(size, "size", ["full", "320px", "160px"])
        self._url, self._md5 = self._ARCHIVES[self._size]
        self._size_root = pathlib.Path(self.root) / pathlib.Path(self._url).stem
        self._image_root = str(self._size_root / self._split)
        if download:
            self._download()
        elif not self._check_exists():
            raise RuntimeError(_NOT_FOUND + ".")
        self.wnids, self.wnid_to_idx = find_classes(self._image_root)
        self.classes = [self._WNID_TO_CLASS[wnid] for wnid in self.wnids]
        self.class_to_idx = {name: idx for wnid, idx in self.wnid_to_idx.items()
                             for name in self._WNID_TO_CLASS[wnid]}
        self._samples = make_dataset(self._image_root, self.wnid_to_idx, extensions=".jpeg")
        self.loader = loader

    def _check_exists(self):
        return self._size_root.exists()

    def _download(self):
        if not self._check_exists():
            download_and_extract_archive(self._url, self.root, md5=self._md5)


class RenderedSST2(_Samples):
    _URL = "https://openaipublic.azureedge.net/clip/data/rendered-sst2.tgz"
    _MD5 = "2384d08e9dcfa4bd55b324e610496ee5"

    def __init__(self, root, split="train", transform=None, target_transform=None,
                 download=False, loader=default_loader):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "val", "test"))
        self._split_to_folder = {"train": "train", "val": "valid", "test": "test"}
        self._base_folder = pathlib.Path(self.root) / "rendered-sst2"
        self.classes = ["negative", "positive"]
        self.class_to_idx = {"negative": 0, "positive": 1}
        if download:
            self._download()
        if not self._check_exists():
            raise RuntimeError(_NOT_FOUND)
        self._samples = make_dataset(str(self._split_folder), extensions=("png",))
        self.loader = loader

    @property
    def _split_folder(self):
        return self._base_folder / self._split_to_folder[self._split]

    def __getitem__(self, idx):
        # torchvision tests the transforms by truthiness here
        image_file, label = self._samples[idx]
        image = self.loader(image_file)
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            label = self.target_transform(label)
        return image, label

    def extra_repr(self):
        return f"split={self._split}"

    def _check_exists(self):
        return all((self._split_folder / label).is_dir() for label in self.classes)

    def _download(self):
        if not self._check_exists():
            download_and_extract_archive(self._URL, download_root=self.root, md5=self._MD5)
