"""Fine-grained classification sets (torchvision's flowers102, food101, oxford_iiit_pet,
stanford_cars, fgvc_aircraft, dtd and sun397): image files with labels read from each set's
own metadata, under the folder its archive unpacks to in root."""
import os
import pathlib

from .folder import default_loader
from .utils import check_integrity, download_and_extract_archive, download_url, verify_str_arg
from .vision import VisionDataset

__all__ = ["Flowers102", "Food101", "OxfordIIITPet", "StanfordCars", "FGVCAircraft", "DTD",
           "SUN397"]

_NOT_FOUND = "Dataset not found. You can use download=True to download it"


class _LabelledFiles(VisionDataset):
    """Items are (loader(self._image_files[i]), self._labels[i]) through the transforms."""

    def __len__(self):
        return len(self._image_files)

    def __getitem__(self, idx):
        image_file, label = self._image_files[idx], self._labels[idx]
        image = self.loader(image_file)
        # truthiness, not `is not None`, as torchvision tests these
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            label = self.target_transform(label)
        return image, label

    def _index_classes(self, classes):
        self.classes = classes
        self.class_to_idx = dict(zip(classes, range(len(classes))))


class Flowers102(_LabelledFiles):
    _download_url_prefix = "https://www.robots.ox.ac.uk/~vgg/data/flowers/102/"
    _file_dict = {"image": ("102flowers.tgz", "52808999861908f626f3c1f4e79d11fa"),
                  "label": ("imagelabels.mat", "e0620be6f572b9609742df49c70aed4d"),
                  "setid": ("setid.mat", "a5357ecc9cb78c4bef273ce3793fc85c")}
    _splits_map = {"train": "trnid", "val": "valid", "test": "tstid"}
    classes = """
    pink primrose|hard-leaved pocket orchid|canterbury bells|sweet pea|english
    marigold|tiger lily|moon orchid|bird of paradise|monkshood|globe
    thistle|snapdragon|colt's foot|king protea|spear thistle|yellow iris|globe-flower|purple
    coneflower|peruvian lily|balloon flower|giant white arum lily|fire lily|pincushion
    flower|fritillary|red ginger|grape hyacinth|corn poppy|prince of wales feathers|stemless
    gentian|artichoke|sweet william|carnation|garden phlox|love in the mist|mexican
    aster|alpine sea holly|ruby-lipped cattleya|cape flower|great masterwort|siam
    tulip|lenten rose|barbeton daisy|daffodil|sword lily|poinsettia|bolero deep
    blue|wallflower|marigold|buttercup|oxeye daisy|common dandelion|petunia|wild
    pansy|primula|sunflower|pelargonium|bishop of llandaff|gaura|geranium|orange
    dahlia|pink-yellow dahlia?|cautleya spicata|japanese anemone|black-eyed
    susan|silverbush|californian poppy|osteospermum|spring crocus|bearded
    iris|windflower|tree poppy|gazania|azalea|water lily|rose|thorn apple|morning
    glory|passion flower|lotus|toad
    lily|anthurium|frangipani|clematis|hibiscus|columbine|desert-rose|tree
    mallow|magnolia|cyclamen|watercress|canna lily|hippeastrum|bee balm|ball
    moss|foxglove|bougainvillea|camellia|mallow|mexican petunia|bromelia|blanket
    flower|trumpet creeper|blackberry lily""".replace("\n    ", " ").strip().split("|")

    def __init__(self, root, split="train", transform=None, target_transform=None,
                 download=False, loader=default_loader):
        from scipy.io import loadmat
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "val", "test"))
        self._base_folder = pathlib.Path(self.root) / "flowers-102"
        self._images_folder = self._base_folder / "jpg"
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        set_ids = loadmat(self._base_folder / self._file_dict["setid"][0], squeeze_me=True)
        labels = loadmat(self._base_folder / self._file_dict["label"][0], squeeze_me=True)
        # image numbers count from 1, labels from 1 in the file
        label_of = dict(enumerate((labels["labels"] - 1).tolist(), 1))
        image_ids = set_ids[self._splits_map[self._split]].tolist()
        self._labels = [label_of[i] for i in image_ids]
        self._image_files = [self._images_folder / f"image_{i:05d}.jpg" for i in image_ids]
        self.loader = loader

    def extra_repr(self):
        return f"split={self._split}"

    def _check_integrity(self):
        if not self._images_folder.is_dir():
            return False
        return all(check_integrity(str(self._base_folder / self._file_dict[key][0]),
                                   self._file_dict[key][1]) for key in ("label", "setid"))

    def download(self):
        if self._check_integrity():
            return
        image_file, md5 = self._file_dict["image"]
        download_and_extract_archive(self._download_url_prefix + image_file,
                                     str(self._base_folder), md5=md5)
        for key in ("label", "setid"):
            filename, md5 = self._file_dict[key]
            download_url(self._download_url_prefix + filename, str(self._base_folder), md5=md5)


class Food101(_LabelledFiles):
    _URL = "http://data.vision.ee.ethz.ch/cvl/food-101.tar.gz"
    _MD5 = "85eeb15f3717b99a5da872d97d918f87"

    def __init__(self, root, split="train", transform=None, target_transform=None,
                 download=False, loader=default_loader):
        import json
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "test"))
        self._base_folder = pathlib.Path(self.root) / "food-101"
        self._meta_folder = self._base_folder / "meta"
        self._images_folder = self._base_folder / "images"
        if download:
            self._download()
        if not self._check_exists():
            raise RuntimeError(_NOT_FOUND)
        with open(self._meta_folder / f"{split}.json") as f:
            metadata = json.loads(f.read())
        self._index_classes(sorted(metadata.keys()))
        self._labels, self._image_files = [], []
        for label, rel_paths in metadata.items():
            self._labels += [self.class_to_idx[label]] * len(rel_paths)
            self._image_files += [self._images_folder.joinpath(*f"{p}.jpg".split("/"))
                                  for p in rel_paths]
        self.loader = loader

    def extra_repr(self):
        return f"split={self._split}"

    def _check_exists(self):
        return self._meta_folder.is_dir() and self._images_folder.is_dir()

    def _download(self):
        if not self._check_exists():
            download_and_extract_archive(self._URL, download_root=self.root, md5=self._MD5)


class OxfordIIITPet(VisionDataset):
    _RESOURCES = (
        ("https://www.robots.ox.ac.uk/~vgg/data/pets/data/images.tar.gz",
         "5c4f3ee8e5d25df40f4fd59a7f44e54c"),
        ("https://www.robots.ox.ac.uk/~vgg/data/pets/data/annotations.tar.gz",
         "95a8c909bbe2e81eed6a22bccdf3f68f"))
    _VALID_TARGET_TYPES = ("category", "binary-category", "segmentation")

    def __init__(self, root, split="trainval", target_types="category", transforms=None,
                 transform=None, target_transform=None, download=False):
        self._split = verify_str_arg(split, "split", ("trainval", "test"))
        if isinstance(target_types, str):
            target_types = [target_types]
        self._target_types = [verify_str_arg(t, "target_types", self._VALID_TARGET_TYPES)
                              for t in target_types]
        super().__init__(root, transforms=transforms, transform=transform,
                         target_transform=target_transform)
        self._base_folder = pathlib.Path(self.root) / "oxford-iiit-pet"
        self._images_folder = self._base_folder / "images"
        self._anns_folder = self._base_folder / "annotations"
        self._segs_folder = self._anns_folder / "trimaps"
        if download:
            self._download()
        if not self._check_exists():
            raise RuntimeError(_NOT_FOUND)
        image_ids, self._labels, self._bin_labels = [], [], []
        with open(self._anns_folder / f"{self._split}.txt") as file:
            for line in file:
                image_id, label, bin_label, _ = line.strip().split()
                image_ids.append(image_id)
                self._labels.append(int(label) - 1)
                self._bin_labels.append(int(bin_label) - 1)
        self.bin_classes = ["Cat", "Dog"]
        # class names from the image ids ("great_pyrenees_12" -> "Great Pyrenees"), by label
        breeds = sorted({(i.rsplit("_", 1)[0], label) for i, label in zip(image_ids,
                                                                           self._labels)},
                        key=lambda breed_and_label: breed_and_label[1])
        self.classes = [" ".join(part.title() for part in breed.split("_"))
                        for breed, _ in breeds]
        self.bin_class_to_idx = dict(zip(self.bin_classes, range(len(self.bin_classes))))
        self.class_to_idx = dict(zip(self.classes, range(len(self.classes))))
        self._images = [self._images_folder / f"{i}.jpg" for i in image_ids]
        self._segs = [self._segs_folder / f"{i}.png" for i in image_ids]

    def __len__(self):
        return len(self._images)

    def __getitem__(self, idx):
        from PIL import Image
        image = Image.open(self._images[idx]).convert("RGB")
        target = []
        for kind in self._target_types:
            if kind == "category":
                target.append(self._labels[idx])
            elif kind == "binary-category":
                target.append(self._bin_labels[idx])
            else:
                target.append(Image.open(self._segs[idx]))
        target = None if not target else target[0] if len(target) == 1 else tuple(target)
        if self.transforms:
            image, target = self.transforms(image, target)
        return image, target

    def _check_exists(self):
        return self._images_folder.is_dir() and self._anns_folder.is_dir()

    def _download(self):
        if self._check_exists():
            return
        for url, md5 in self._RESOURCES:
            download_and_extract_archive(url, download_root=str(self._base_folder), md5=md5)


class StanfordCars(_LabelledFiles):
    def __init__(self, root, split="train", transform=None, target_transform=None,
                 download=False, loader=default_loader):
        try:
            import scipy.io as sio
        except ImportError:
            raise RuntimeError("Scipy is not found. This dataset needs to have scipy installed: "
                               "pip install scipy")
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "test"))
        self._base_folder = pathlib.Path(root) / "stanford_cars"
        devkit = self._base_folder / "devkit"
        if self._split == "train":
            self._annotations_mat_path = devkit / "cars_train_annos.mat"
            self._images_base_path = self._base_folder / "cars_train"
        else:
            self._annotations_mat_path = self._base_folder / "cars_test_annos_withlabels.mat"
            self._images_base_path = self._base_folder / "cars_test"
        if download:
            self.download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found.")
        annotations = sio.loadmat(self._annotations_mat_path, squeeze_me=True)["annotations"]
        # classes count from 1 in the annotations
        self._samples = [(str(self._images_base_path / a["fname"]), a["class"] - 1)
                         for a in annotations]
        self._index_classes(sio.loadmat(str(devkit / "cars_meta.mat"),
                                        squeeze_me=True)["class_names"].tolist())
        self.loader = loader

    def __getitem__(self, idx):
        image_path, target = self._samples[idx]
        image = self.loader(image_path)
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def __len__(self):
        return len(self._samples)

    def _check_exists(self):
        return ((self._base_folder / "devkit").is_dir() and self._annotations_mat_path.exists()
                and self._images_base_path.is_dir())

    def download(self):
        raise ValueError("The original URL is broken so the StanfordCars dataset cannot be "
                         "downloaded anymore.")


class FGVCAircraft(_LabelledFiles):
    _URL = ("https://www.robots.ox.ac.uk/~vgg/data/fgvc-aircraft/archives/"
            "fgvc-aircraft-2013b.tar.gz")

    def __init__(self, root, split="trainval", annotation_level="variant", transform=None,
                 target_transform=None, download=False, loader=default_loader):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._split = verify_str_arg(split, "split", ("train", "val", "trainval", "test"))
        self._annotation_level = verify_str_arg(annotation_level, "annotation_level",
                                                ("variant", "family", "manufacturer"))
        self._data_path = os.path.join(self.root, "fgvc-aircraft-2013b")
        if download:
            self._download()
        if not self._check_exists():
            raise RuntimeError(_NOT_FOUND)
        data = os.path.join(self._data_path, "data")
        class_file = {"variant": "variants.txt", "family": "families.txt",
                      "manufacturer": "manufacturers.txt"}[self._annotation_level]
        with open(os.path.join(data, class_file)) as f:
            self._index_classes([line.strip() for line in f])
        self._image_files, self._labels = [], []
        with open(os.path.join(data, f"images_{self._annotation_level}_{self._split}.txt")) as f:
            for line in f:
                image_name, label_name = line.strip().split(" ", 1)
                self._image_files.append(os.path.join(data, "images", f"{image_name}.jpg"))
                self._labels.append(self.class_to_idx[label_name])
        self.loader = loader

    def _download(self):
        if not self._check_exists():
            download_and_extract_archive(self._URL, self.root)

    def _check_exists(self):
        return os.path.isdir(self._data_path)


class DTD(_LabelledFiles):
    _URL = "https://www.robots.ox.ac.uk/~vgg/data/dtd/download/dtd-r1.0.1.tar.gz"
    _MD5 = "fff73e5086ae6bdbea199a49dfb8a4c1"

    def __init__(self, root, split="train", partition=1, transform=None, target_transform=None,
                 download=False, loader=default_loader):
        self._split = verify_str_arg(split, "split", ("train", "val", "test"))
        # torchvision's test (an `and`) lets any int through; kept so both accept the same
        if not isinstance(partition, int) and not (1 <= partition <= 10):
            raise ValueError("Parameter 'partition' should be an integer with `1 <= partition "
                             f"<= 10`, but got {partition} instead")
        self._partition = partition
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._base_folder = pathlib.Path(self.root) / type(self).__name__.lower()
        self._data_folder = self._base_folder / "dtd"
        self._meta_folder = self._data_folder / "labels"
        self._images_folder = self._data_folder / "images"
        if download:
            self._download()
        if not self._check_exists():
            raise RuntimeError(_NOT_FOUND)
        self._image_files, classes = [], []
        with open(self._meta_folder / f"{self._split}{self._partition}.txt") as file:
            for line in file:
                cls, name = line.strip().split("/")
                self._image_files.append(self._images_folder.joinpath(cls, name))
                classes.append(cls)
        self._index_classes(sorted(set(classes)))
        self._labels = [self.class_to_idx[cls] for cls in classes]
        self.loader = loader

    def extra_repr(self):
        return f"split={self._split}, partition={self._partition}"

    def _check_exists(self):
        return self._data_folder.is_dir()

    def _download(self):
        if not self._check_exists():
            download_and_extract_archive(self._URL, download_root=str(self._base_folder),
                                         md5=self._MD5)


class SUN397(_LabelledFiles):
    _DATASET_URL = "http://vision.princeton.edu/projects/2010/SUN/SUN397.tar.gz"
    _DATASET_MD5 = "8ca2778205c41d23104230ba66911c7a"

    def __init__(self, root, transform=None, target_transform=None, download=False,
                 loader=default_loader):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._data_dir = pathlib.Path(self.root) / "SUN397"
        if download:
            self._download()
        if not self._check_exists():
            raise RuntimeError(_NOT_FOUND)
        with open(self._data_dir / "ClassName.txt") as f:
            # lines look like "/a/abbey": the class is the path without its "/x/" head
            self._index_classes([line[3:].strip() for line in f])
        self._image_files = list(self._data_dir.rglob("sun_*.jpg"))
        self._labels = [
            self.class_to_idx["/".join(p.relative_to(self._data_dir).parts[1:-1])]
            for p in self._image_files]
        self.loader = loader

    def _check_exists(self):
        return self._data_dir.is_dir()

    def _download(self):
        if not self._check_exists():
            download_and_extract_archive(self._DATASET_URL, download_root=self.root,
                                         md5=self._DATASET_MD5)
