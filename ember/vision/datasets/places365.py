"""Places365 (torchvision.datasets.places365): scene photos listed by the devkit's file lists
(root/places365_<split>.txt, categories_places365.txt), images in root/data_<size>_<variant>
for training and root/<split>_<size> otherwise. Test images have target None."""
import os
from urllib.parse import urljoin

from .folder import default_loader
from .utils import check_integrity, download_and_extract_archive, verify_str_arg
from .vision import VisionDataset

__all__ = ["Places365"]


class Places365(VisionDataset):
    _SPLITS = ("train-standard", "train-challenge", "val", "test")
    _BASE_URL = "http://data.csail.mit.edu/places/places365/"
    _DEVKIT_META = {
        "standard": ("filelist_places365-standard.tar", "35a0585fee1fa656440f3ab298f8479c"),
        "challenge": ("filelist_places365-challenge.tar", "70a8307e459c3de41690a7c76c931734"),
    }
    _CATEGORIES_META = ("categories_places365.txt", "06c963b85866bd0649f97cb43dd16673")
    _FILE_LIST_META = {
        "train-standard": ("places365_train_standard.txt", "30f37515461640559006b8329efbed1a"),
        "train-challenge": ("places365_train_challenge.txt", "b2931dc997b8c33c27e7329c073a6b57"),
        "val": ("places365_val.txt", "e9f2fd57bfd9d07630173f4e8708e4b1"),
        "test": ("places365_test.txt", "2fce8233fe493576d724142e45d93653"),
    }
    # (split, small) -> image archive
    _IMAGES_META = {
        ("train-standard", False): ("train_large_places365standard.tar",
                                    "67e186b496a84c929568076ed01a8aa1"),
        ("train-challenge", False): ("train_large_places365challenge.tar",
                                     "605f18e68e510c82b958664ea134545f"),
        ("val", False): ("val_large.tar", "9b71c4993ad89d2d8bcbdc4aef38042f"),
        ("test", False): ("test_large.tar", "41a4b6b724b1d2cd862fb3871ed59913"),
        ("train-standard", True): ("train_256_places365standard.tar",
                                   "53ca1c756c3d1e7809517cc47c5561c5"),
        ("train-challenge", True): ("train_256_places365challenge.tar",
                                    "741915038a5e3471ec7332404dfb64ef"),
        ("val", True): ("val_256.tar", "e27b17d8d44f4af9a78502beb927f808"),
        ("test", True): ("test_256.tar", "f532f6ad7b582262a2ec8009075e186b"),
    }

    def __init__(self, root, split="train-standard", small=False, download=False,
                 transform=None, target_transform=None, loader=default_loader):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.split = self._verify_split(split)
        self.small = small
        self.loader = loader
        self.classes, self.class_to_idx = self.load_categories(download)
        self.imgs, self.targets = self.load_file_list(download)
        if download:
            self.download_images()

    def __getitem__(self, index):
        file, target = self.imgs[index]
        image = self.loader(file)
        if self.transforms is not None:
            image, target = self.transforms(image, target)
        return image, target

    def __len__(self):
        return len(self.imgs)

    @property
    def variant(self):
        return "challenge" if "challenge" in self.split else "standard"

    @property
    def images_dir(self):
        size = "256" if self.small else "large"
        folder = (f"data_{size}_{self.variant}" if self.split.startswith("train")
                  else f"{self.split}_{size}")
        return os.path.join(self.root, folder)

    def load_categories(self, download=True):
        file, md5 = self._CATEGORIES_META
        file = os.path.join(self.root, file)
        if not self._check_integrity(file, md5, download):
            self.download_devkit()
        with open(file) as f:
            # lines: "/a/airfield 0"
            class_to_idx = {name: int(idx) for name, idx in (line.split() for line in f)}
        return sorted(class_to_idx), class_to_idx

    def load_file_list(self, download=True):
        file, md5 = self._FILE_LIST_META[self.split]
        file = os.path.join(self.root, file)
        if not self._check_integrity(file, md5, download):
            self.download_devkit()
        images = []
        with open(file) as f:
            for line in f:
                # "/a/airfield/00000001.jpg 0", or just the image for the test split
                image, idx = (line.split() + [None])[:2]
                images.append((os.path.join(self.images_dir,
                                            image.lstrip("/").replace("/", os.sep)),
                               int(idx) if idx is not None else None))
        return images, [target for _, target in images]

    def download_devkit(self):
        file, md5 = self._DEVKIT_META[self.variant]
        download_and_extract_archive(urljoin(self._BASE_URL, file), self.root, md5=md5)

    def download_images(self):
        if os.path.exists(self.images_dir):
            return
        file, md5 = self._IMAGES_META[(self.split, self.small)]
        download_and_extract_archive(urljoin(self._BASE_URL, file), self.root, md5=md5)
        if self.split.startswith("train"):
            os.rename(self.images_dir.rsplit("_", 1)[0], self.images_dir)

    def extra_repr(self):
        return f"Split: {self.split}\nSmall: {self.small}"

    def _verify_split(self, split):
        return verify_str_arg(split, "split", self._SPLITS)

    def _check_integrity(self, file, md5, download):
        ok = check_integrity(file, md5=md5)
        if not ok and not download:
            raise RuntimeError(f"The file {file} does not exist or is corrupted. You can set "
                               "download=True to download it.")
        return ok
