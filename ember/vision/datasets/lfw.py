"""Labeled Faces in the Wild (torchvision.datasets.lfw): LFWPeople (face, identity index) and
LFWPairs (face, face, same person?) over root/lfw-py with one of the three alignments
(lfw, lfw_funneled, lfw-deepfunneled) and the people/pairs lists beside it."""
import os

from .folder import default_loader
from .utils import check_integrity, download_and_extract_archive, download_url, verify_str_arg
from .vision import VisionDataset

__all__ = ["LFWPeople", "LFWPairs"]


class _LFW(VisionDataset):
    base_folder = "lfw-py"
    download_url_prefix = "http://vis-www.cs.umass.edu/lfw/"
    # alignment -> (images folder, archive, md5)
    file_dict = {
        "original": ("lfw", "lfw.tgz", "a17d05bd522c52d84eca14327a23d494"),
        "funneled": ("lfw_funneled", "lfw-funneled.tgz", "1b42dfed7d15c9b2dd63d5e5840c86ad"),
        "deepfunneled": ("lfw-deepfunneled", "lfw-deepfunneled.tgz",
                         "68331da3eb755a505a502b5aacb3c201"),
    }
    checksums = {
        "pairs.txt": "9f1ba174e4e1c508ff7cdf10ac338a7d",
        "pairsDevTest.txt": "5132f7440eb68cf58910c8a45a2ac10b",
        "pairsDevTrain.txt": "4f27cbf15b2da4a85c1907eb4181ad21",
        "people.txt": "450f0863dd89e85e73936a6d71a3474b",
        "peopleDevTest.txt": "e4bf5be0a43b5dcd9dc5ccfcb8fb19c5",
        "peopleDevTrain.txt": "54eaac34beb6d042ed3a7d883e247a21",
        "lfw-names.txt": "a6d0a479bd074669f656265a6e693f6d",
    }
    annot_file = {"10fold": "", "train": "DevTrain", "test": "DevTest"}
    names = "lfw-names.txt"

    def __init__(self, root, split, image_set, view, transform=None, target_transform=None,
                 download=False, loader=default_loader):
        super().__init__(os.path.join(root, self.base_folder), transform=transform,
                         target_transform=target_transform)
        self.image_set = verify_str_arg(image_set.lower(), "image_set", self.file_dict.keys())
        images_dir, self.filename, self.md5 = self.file_dict[self.image_set]
        self.view = verify_str_arg(view.lower(), "view", ["people", "pairs"])
        self.split = verify_str_arg(split.lower(), "split", ["10fold", "train", "test"])
        self.labels_file = f"{self.view}{self.annot_file[self.split]}.txt"
        self.data = []
        if download:
            # torchvision's words, run together as it prints them
            raise ValueError("LFW dataset is no longer available for automatic download."
                             "Please download the dataset manually and place it in the "
                             "specified directory.A commonly used mirror is available at: "
                             "https://www.kaggle.com/datasets/jessicali9530/lfw-dataset")
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        self.images_dir = os.path.join(self.root, images_dir)
        self._loader = loader

    def _check_integrity(self):
        if not (check_integrity(os.path.join(self.root, self.filename), self.md5) and
                check_integrity(os.path.join(self.root, self.labels_file),
                                self.checksums[self.labels_file])):
            return False
        return self.view != "people" or check_integrity(os.path.join(self.root, self.names),
                                                        self.checksums[self.names])

    def download(self):
        if self._check_integrity():
            return
        download_and_extract_archive(f"{self.download_url_prefix}{self.filename}", self.root,
                                     filename=self.filename, md5=self.md5)
        download_url(f"{self.download_url_prefix}{self.labels_file}", self.root)
        if self.view == "people":
            download_url(f"{self.download_url_prefix}{self.names}", self.root)

    def _get_path(self, identity, no):
        return os.path.join(self.images_dir, identity, f"{identity}_{int(no):04d}.jpg")

    def _read_lines(self):
        with open(os.path.join(self.root, self.labels_file)) as f:
            return f.readlines()

    def extra_repr(self):
        return f"Alignment: {self.image_set}\nSplit: {self.split}"

    def __len__(self):
        return len(self.data)


class LFWPeople(_LFW):
    def __init__(self, root, split="10fold", image_set="funneled", transform=None,
                 target_transform=None, download=False, loader=default_loader):
        super().__init__(root, split, image_set, "people", transform, target_transform,
                         download, loader=loader)
        self.class_to_idx = self._get_classes()
        self.data, self.targets = self._get_people()

    def _get_people(self):
        """people*.txt: [fold count,] then per fold a count line and "name<TAB>images" lines."""
        data, targets = [], []
        lines = self._read_lines()
        n_folds, start = (int(lines[0]), 1) if self.split == "10fold" else (1, 0)
        for _ in range(n_folds):
            n_lines = int(lines[start])
            people = [line.strip().split("\t") for line in lines[start + 1:start + n_lines + 1]]
            start += n_lines + 1
            for identity, n_images in people:
                for number in range(1, int(n_images) + 1):
                    data.append(self._get_path(identity, number))
                    targets.append(self.class_to_idx[identity])
        return data, targets

    def _get_classes(self):
        with open(os.path.join(self.root, self.names)) as f:
            names = [line.strip().split()[0] for line in f.readlines()]
        return {name: i for i, name in enumerate(names)}

    def __getitem__(self, index):
        img, target = self._loader(self.data[index]), self.targets[index]
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def extra_repr(self):
        return super().extra_repr() + f"\nClasses (identities): {len(self.class_to_idx)}"


class LFWPairs(_LFW):
    def __init__(self, root, split="10fold", image_set="funneled", transform=None,
                 target_transform=None, download=False, loader=default_loader):
        super().__init__(root, split, image_set, "pairs", transform, target_transform,
                         download, loader=loader)
        self.pair_names, self.data, self.targets = self._get_pairs(self.images_dir)

    def _get_pairs(self, images_dir):
        """pairs*.txt: a "[folds<TAB>]pairs" head, then per fold that many matched pairs
        (name, n1, n2) followed by as many unmatched ones (name1, n1, name2, n2)."""
        pair_names, data, targets = [], [], []
        lines = self._read_lines()
        if self.split == "10fold":
            n_folds, n_pairs = (int(v) for v in lines[0].split("\t"))
        else:
            n_folds, n_pairs = 1, int(lines[0])
        start = 1
        for _ in range(n_folds):
            block = [line.strip().split("\t") for line in lines[start:start + 2 * n_pairs]]
            start += 2 * n_pairs
            for name, first, second in block[:n_pairs]:
                pair_names.append((name, name))
                data.append((self._get_path(name, first), self._get_path(name, second)))
                targets.append(1)
            for name1, first, name2, second in block[n_pairs:]:
                pair_names.append((name1, name2))
                data.append((self._get_path(name1, first), self._get_path(name2, second)))
                targets.append(0)
        return pair_names, data, targets

    def __getitem__(self, index):
        img1, img2 = (self._loader(path) for path in self.data[index])
        target = self.targets[index]
        if self.transform is not None:
            img1, img2 = self.transform(img1), self.transform(img2)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img1, img2, target
