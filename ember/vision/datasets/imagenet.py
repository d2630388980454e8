"""ImageNet (torchvision.datasets.imagenet): ILSVRC2012 as an ImageFolder over root/train or
root/val, with class names from root/meta.bin. The first use parses the archives the user
placed in root (ILSVRC2012_devkit_t12.tar.gz, ILSVRC2012_img_{train,val}.tar): ImageNet is
not downloadable, so missing archives raise torchvision's message saying so."""
import os
import shutil
import tempfile

from .folder import ImageFolder
from .utils import check_integrity, extract_archive, verify_str_arg

__all__ = ["ImageNet"]

ARCHIVE_META = {
    "train": ("ILSVRC2012_img_train.tar", "1d675b47d978889d74fa0da5fadfb00e"),
    "val": ("ILSVRC2012_img_val.tar", "29b22e2961454d5413ddabcf34fc5622"),
    "devkit": ("ILSVRC2012_devkit_t12.tar.gz", "fa75699e90414af021442c21a62c3abf"),
}
META_FILE = "meta.bin"


class ImageNet(ImageFolder):
    def __init__(self, root, split="train", **kwargs):
        root = self.root = os.path.expanduser(root)
        self.split = verify_str_arg(split, "split", ("train", "val"))
        self.parse_archives()
        wnid_to_classes = load_meta_file(self.root)[0]
        super().__init__(self.split_folder, **kwargs)
        self.root = root
        self.wnids = self.classes
        self.wnid_to_idx = self.class_to_idx
        self.classes = [wnid_to_classes[wnid] for wnid in self.wnids]
        # every synonym of a class names its index
        self.class_to_idx = {name: idx for idx, names in enumerate(self.classes)
                             for name in names}

    def parse_archives(self):
        if not check_integrity(os.path.join(self.root, META_FILE)):
            parse_devkit_archive(self.root)
        if not os.path.isdir(self.split_folder):
            (parse_train_archive if self.split == "train" else parse_val_archive)(self.root)

    @property
    def split_folder(self):
        return os.path.join(self.root, self.split)

    def extra_repr(self):
        return f"Split: {self.split}"


def load_meta_file(root, file=None):
    """(wnid -> class-name tuple, the validation images' wnids) from meta.bin."""
    from ... import load
    file = os.path.join(root, file or META_FILE)
    if not check_integrity(file):
        raise RuntimeError(f"The meta file {file} is not present in the root directory or is "
                           "corrupted. This file is automatically created by the ImageNet "
                           "dataset.")
    return load(file, weights_only=True)


def _verify_archive(root, file, md5):
    if not check_integrity(os.path.join(root, file), md5):
        raise RuntimeError(f"The archive {file} is not present in the root directory or is "
                           f"corrupted. You need to download it externally and place it in "
                           f"{root}.")


def parse_devkit_archive(root, file=None):
    """Writes root/meta.bin from the devkit: the leaf synsets' names and the validation
    ground truth as wnids."""
    import scipy.io
    from ... import save
    name, md5 = ARCHIVE_META["devkit"]
    file = file or name
    _verify_archive(root, file, md5)
    tmp_dir = tempfile.mkdtemp()
    try:
        extract_archive(os.path.join(root, file), tmp_dir)
        devkit = os.path.join(tmp_dir, "ILSVRC2012_devkit_t12", "data")
        synsets = scipy.io.loadmat(os.path.join(devkit, "meta.mat"), squeeze_me=True)["synsets"]
        # leaves of the synset tree (no children) are the 1000 classes
        leaves = [s for s in synsets if s[4] == 0]
        idx_to_wnid = {s[0]: s[1] for s in leaves}
        wnid_to_classes = {s[1]: tuple(s[2].split(", ")) for s in leaves}
        with open(os.path.join(devkit, "ILSVRC2012_validation_ground_truth.txt")) as f:
            val_wnids = [idx_to_wnid[int(line)] for line in f.readlines()]
    finally:
        shutil.rmtree(tmp_dir)
    save((wnid_to_classes, val_wnids), os.path.join(root, META_FILE))


def parse_train_archive(root, file=None, folder="train"):
    """root/train/<wnid>/ from the train archive, which holds one tar per class."""
    name, md5 = ARCHIVE_META["train"]
    file = file or name
    _verify_archive(root, file, md5)
    train_root = os.path.join(root, folder)
    extract_archive(os.path.join(root, file), train_root)
    for archive in [os.path.join(train_root, a) for a in os.listdir(train_root)]:
        extract_archive(archive, os.path.splitext(archive)[0], remove_finished=True)


def parse_val_archive(root, file=None, wnids=None, folder="val"):
    """root/val/<wnid>/ from the flat validation archive and the ground truth in meta.bin."""
    name, md5 = ARCHIVE_META["val"]
    file = file or name
    if wnids is None:
        wnids = load_meta_file(root)[1]
    _verify_archive(root, file, md5)
    val_root = os.path.join(root, folder)
    extract_archive(os.path.join(root, file), val_root)
    images = sorted(os.path.join(val_root, image) for image in os.listdir(val_root))
    for wnid in set(wnids):
        os.mkdir(os.path.join(val_root, wnid))
    for wnid, image in zip(wnids, images):
        shutil.move(image, os.path.join(val_root, wnid, os.path.basename(image)))
