"""PatchCamelyon (torchvision.datasets.pcam): 96x96 histology patches and their binary labels
in the HDF5 files of root/pcam, read item by item through h5py (an optional dependency:
without it the dataset raises torchvision's RuntimeError)."""
import pathlib

from .utils import download_file_from_google_drive, extract_archive, verify_str_arg
from .vision import VisionDataset

__all__ = ["PCAM"]


def _files(stem, image_id, image_md5, target_id, target_md5):
    prefix = f"camelyonpatch_level_2_split_{stem}_"
    return {"images": (prefix + "x.h5", image_id, image_md5),
            "targets": (prefix + "y.h5", target_id, target_md5)}


class PCAM(VisionDataset):
    # split -> {"images"/"targets": (file name, Google Drive id, md5 of the .gz)}
    _FILES = {
        "train": _files("train", "1Ka0XfEMiwgCYPdTI-vv6eUElOBnKFKQ2",
                        "1571f514728f59376b705fc836ff4b63", "1269yhu3pZDP8UYFQs-NYs3FPwuK-nGSG",
                        "35c2d7259d906cfc8143347bb8e05be7"),
        "test": _files("test", "1qV65ZqZvWzuIVthK8eVDhIwrbnsJdbg_",
                       "d8c2d60d490dbd479f8199bdfa0cf6ec", "17BHrSrwWKjYsOgTMmoqrIjDy6Fa2o_gP",
                       "60a7035772fbdb7f34eb86d4420cf66a"),
        "val": _files("valid", "1hgshYGWK8V-eGRy8LToWJJgDU_rXWVJ3",
                      "d5b63470df7cfa627aeec8b9dc0c066e", "1bH8ZRbhSVAhScTS0p9-ZzGnX91cHT3uO",
                      "2b85f58b927af9964a4c15b8f7e8f179"),
    }

    def __init__(self, root, split="train", transform=None, target_transform=None,
                 download=False):
        try:
            import h5py
        except ImportError:
            raise RuntimeError("h5py is not found. This dataset needs to have h5py installed: "
                               "please run pip install h5py")
        self.h5py = h5py
        self._split = verify_str_arg(split, "split", ("train", "test", "val"))
        super().__init__(root, transform=transform, target_transform=target_transform)
        self._base_folder = pathlib.Path(self.root) / "pcam"
        if download:
            self._download()
        if not self._check_exists():
            raise RuntimeError("Dataset not found. You can use download=True to download it")

    def _path(self, kind):
        return self._base_folder / self._FILES[self._split][kind][0]

    def __len__(self):
        with self.h5py.File(self._path("images")) as images:
            return images["x"].shape[0]

    def __getitem__(self, idx):
        from PIL import Image
        with self.h5py.File(self._path("images")) as images:
            image = Image.fromarray(images["x"][idx]).convert("RGB")
        with self.h5py.File(self._path("targets")) as targets:
            target = int(targets["y"][idx, 0, 0, 0])  # stored (N, 1, 1, 1)
        if self.transform:
            image = self.transform(image)
        if self.target_transform:
            target = self.target_transform(target)
        return image, target

    def _check_exists(self):
        return all(self._path(kind).exists() for kind in ("images", "targets"))

    def _download(self):
        if self._check_exists():
            return
        for file_name, file_id, md5 in self._FILES[self._split].values():
            archive = file_name + ".gz"
            download_file_from_google_drive(file_id, str(self._base_folder), filename=archive,
                                            md5=md5)
            extract_archive(str(self._base_folder / archive))
