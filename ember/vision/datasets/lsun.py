"""LSUN (torchvision.datasets.lsun): scene images stored in LMDB databases
root/<category>_<split>_lmdb, read through the lmdb package (an optional dependency, imported
when a database is opened). LSUNClass is one database; LSUN chains several, target = which."""
import io
import os
import pickle
import string
from collections.abc import Iterable

from .utils import iterable_to_str, verify_str_arg
from .vision import VisionDataset

__all__ = ["LSUN", "LSUNClass"]

_CATEGORIES = ["bedroom", "bridge", "church_outdoor", "classroom", "conference_room",
               "dining_room", "kitchen", "living_room", "restaurant", "tower"]
_SPLITS = ["train", "val", "test"]


class LSUNClass(VisionDataset):
    def __init__(self, root, transform=None, target_transform=None):
        import lmdb
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.env = lmdb.open(root, max_readers=1, readonly=True, lock=False, readahead=False,
                             meminit=False)
        with self.env.begin(write=False) as txn:
            self.length = txn.stat()["entries"]
        # torchvision caches the key list in the working directory, named after the root
        cache_file = "_cache_" + "".join(c for c in root if c in string.ascii_letters)
        if os.path.isfile(cache_file):
            with open(cache_file, "rb") as f:
                self.keys = _load_key_cache(f, cache_file)
        else:
            with self.env.begin(write=False) as txn:
                self.keys = list(txn.cursor().iternext(keys=True, values=False))
            with open(cache_file, "wb") as f:
                pickle.dump(self.keys, f)

    def __getitem__(self, index):
        from PIL import Image
        with self.env.begin(write=False) as txn:
            img = Image.open(io.BytesIO(txn.get(self.keys[index]))).convert("RGB")
        target = None
        if self.transform is not None:
            img = self.transform(img)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return self.length


class LSUN(VisionDataset):
    def __init__(self, root, classes="train", transform=None, target_transform=None):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.classes = self._verify_classes(classes)
        self.dbs = [LSUNClass(root=os.path.join(root, f"{c}_lmdb"), transform=transform)
                    for c in self.classes]
        # running totals: item i belongs to the first database whose total exceeds i
        self.indices, count = [], 0
        for db in self.dbs:
            count += len(db)
            self.indices.append(count)
        self.length = count

    @staticmethod
    def _verify_classes(classes):
        """"train"/"val" -> every category of that split; "test"; or a list of
        "<category>_<split>" names, each checked."""
        if isinstance(classes, str) and classes in _SPLITS:
            return [classes] if classes == "test" else [f"{c}_{classes}" for c in _CATEGORIES]
        if isinstance(classes, str):
            # torchvision checks a string's characters as class names, so the first fails
            classes = list(classes)
        elif not isinstance(classes, Iterable):
            raise ValueError("Expected type str or Iterable for argument classes, but got type "
                             f"{type(classes)}.")
        classes = list(classes)
        for c in classes:
            verify_str_arg(c, custom_msg="Expected type str for elements in argument classes, "
                                         f"but got type {type(c)}.")
            category, split = "_".join(c.split("_")[:-1]), c.split("_")[-1]
            verify_str_arg(category, valid_values=_CATEGORIES,
                           custom_msg=f"Unknown value '{category}' for LSUN class. Valid values "
                                      f"are {{{iterable_to_str(_CATEGORIES)}}}.")
            verify_str_arg(split, valid_values=_SPLITS,
                           custom_msg=f"Unknown value '{split}' for postfix. Valid values are "
                                      f"{{{iterable_to_str(_SPLITS)}}}.")
        return classes

    def __getitem__(self, index):
        target, start = 0, 0
        for end in self.indices:
            if index < end:
                break
            target, start = target + 1, end
        if self.target_transform is not None:
            target = self.target_transform(target)
        img, _ = self.dbs[target][index - start]
        return img, target

    def __len__(self):
        return self.length

    def extra_repr(self):
        return f"Classes: {self.classes}"


class _NoGlobals(pickle.Unpickler):
    """Reads a pickle of plain containers only: the cache sits in the working directory, where
    anyone could have planted a file, so it may name no class or function to call."""

    def find_class(self, module, name):
        raise pickle.UnpicklingError(f"the LSUN key cache may hold only a list of bytes, not "
                                     f"{module}.{name}")


def _load_key_cache(f, path):
    keys = _NoGlobals(f).load()
    if not (isinstance(keys, list) and all(isinstance(k, bytes) for k in keys)):
        raise RuntimeError(f"{path} is not an LSUN key cache (a list of bytes); delete it to "
                           "rebuild it")
    return keys
