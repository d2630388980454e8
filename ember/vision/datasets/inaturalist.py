"""INaturalist (torchvision.datasets.inaturalist): species photos under root/<version>/, one
folder per category. 2021 folders are named "<id>_<kingdom>_..._<genus>_<species>" and give
six taxonomic targets; 2017-2019 nest "<super category>/<category>" and give "super"."""
import os

from .utils import download_and_extract_archive, verify_str_arg
from .vision import VisionDataset

__all__ = ["INaturalist"]

CATEGORIES_2021 = ["kingdom", "phylum", "class", "order", "family", "genus"]
_S3 = "https://ml-inat-competition-datasets.s3.amazonaws.com/"
DATASET_URLS = {
    "2017": _S3 + "2017/train_val_images.tar.gz",
    "2018": _S3 + "2018/train_val2018.tar.gz",
    "2019": _S3 + "2019/train_val2019.tar.gz",
    "2021_train": _S3 + "2021/train.tar.gz",
    "2021_train_mini": _S3 + "2021/train_mini.tar.gz",
    "2021_valid": _S3 + "2021/val.tar.gz",
}
DATASET_MD5 = {
    "2017": "7c784ea5e424efaec655bd392f87301f",
    "2018": "b1c6952ce38f31868cc50ea72d066cc3",
    "2019": "c60a6e2962c9b8ccbd458d12c8582644",
    "2021_train": "e0526d53c7f7b2e3167b2b43bb2690ed",
    "2021_train_mini": "db6ed8330e634445efc8fec83ae81442",
    "2021_valid": "f6f6e0e242e3d4c9569ba56400938afc",
}


class INaturalist(VisionDataset):
    def __init__(self, root, version="2021_train", target_type="full", transform=None,
                 target_transform=None, download=False, loader=None):
        self.version = verify_str_arg(version, "version", DATASET_URLS.keys())
        super().__init__(os.path.join(root, version), transform=transform,
                         target_transform=target_transform)
        os.makedirs(root, exist_ok=True)
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        self.all_categories, self.categories_index, self.categories_map = [], {}, []
        if not isinstance(target_type, list):
            target_type = [target_type]
        valid = ("full", *CATEGORIES_2021) if self.version[:4] == "2021" else ("full", "super")
        self.target_type = [verify_str_arg(t, "target_type", valid) for t in target_type]
        if self.version[:4] == "2021":
            self._init_2021()
        else:
            self._init_pre2021()
        self.index = [(category, name) for category, folder in enumerate(self.all_categories)
                      for name in os.listdir(os.path.join(self.root, folder))]
        self.loader = loader

    def _init_2021(self):
        self.all_categories = sorted(os.listdir(self.root))
        self.categories_index = {k: {} for k in CATEGORIES_2021}
        for dir_index, dir_name in enumerate(self.all_categories):
            pieces = dir_name.split("_")
            if len(pieces) != 8:
                raise RuntimeError(f"Unexpected category name {dir_name}, wrong number of "
                                   "pieces")
            if pieces[0] != f"{dir_index:05d}":
                raise RuntimeError(f"Unexpected category id {pieces[0]}, expecting "
                                   f"{dir_index:05d}")
            # each taxonomic level numbers its names in order of first appearance
            self.categories_map.append({
                level: self.categories_index[level].setdefault(
                    name, len(self.categories_index[level]))
                for level, name in zip(CATEGORIES_2021, pieces[1:7])})

    def _init_pre2021(self):
        self.categories_index = {"super": {}}
        next_index = 0
        for super_index, super_name in enumerate(sorted(os.listdir(self.root))):
            self.categories_index["super"][super_name] = super_index
            for sub in sorted(os.listdir(os.path.join(self.root, super_name))):
                if self.version == "2017":
                    sub_index, next_index = next_index, next_index + 1
                else:
                    try:
                        sub_index = int(sub)
                    except ValueError:
                        raise RuntimeError(f"Unexpected non-numeric dir name: {sub}")
                if sub_index >= len(self.categories_map):
                    grow = sub_index - len(self.categories_map) + 1
                    self.categories_map.extend({} for _ in range(grow))
                    self.all_categories.extend([""] * grow)
                if self.categories_map[sub_index]:
                    raise RuntimeError(f"Duplicate category {sub}")
                self.categories_map[sub_index] = {"super": super_index}
                self.all_categories[sub_index] = os.path.join(super_name, sub)
        for index, category in enumerate(self.categories_map):
            if not category:
                raise RuntimeError(f"Missing category {index}")

    def __getitem__(self, index):
        from PIL import Image
        cat_id, fname = self.index[index]
        path = os.path.join(self.root, self.all_categories[cat_id], fname)
        img = self.loader(path) if self.loader is not None else Image.open(path)
        target = [cat_id if kind == "full" else self.categories_map[cat_id][kind]
                  for kind in self.target_type]
        target = tuple(target) if len(target) > 1 else target[0]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.index)

    def category_name(self, category_type, category_id):
        if category_type == "full":
            return self.all_categories[category_id]
        if category_type not in self.categories_index:
            raise ValueError(f"Invalid category type '{category_type}'")
        for name, id in self.categories_index[category_type].items():
            if id == category_id:
                return name
        raise ValueError(f"Invalid category id {category_id} for {category_type}")

    def _check_exists(self):
        return os.path.exists(self.root) and len(os.listdir(self.root)) > 0

    def download(self):
        if self._check_exists():
            return
        base_root = os.path.dirname(self.root)
        download_and_extract_archive(DATASET_URLS[self.version], base_root,
                                     filename=f"{self.version}.tgz",
                                     md5=DATASET_MD5[self.version])
        # torchvision strips the characters of ".tar.gz" (rstrip), not the suffix; kept
        unpacked = os.path.join(base_root,
                                os.path.basename(DATASET_URLS[self.version]).rstrip(".tar.gz"))
        if not os.path.exists(unpacked):
            raise RuntimeError(f"Unable to find downloaded files at {unpacked}")
        os.rename(unpacked, self.root)
