"""PhotoTour (torchvision.datasets.phototour): the Multi-view Stereo Correspondence patches.
The patch bitmaps in root/<name>/ (16x16 grids of 64x64 patches), info.txt (3D point ids) and
the 100k match list are parsed once into root/<name>.pt, in PyTorch's checkpoint format.
Training items are single patches; test items are (patch, patch, matched?)."""
import os
import zipfile

import numpy as np

from .utils import download_url
from .vision import VisionDataset

__all__ = ["PhotoTour"]


class PhotoTour(VisionDataset):
    urls = {
        "notredame_harris": ["http://matthewalunbrown.com/patchdata/notredame_harris.zip",
                             "notredame_harris.zip", "69f8c90f78e171349abdf0307afefe4d"],
        "yosemite_harris": ["http://matthewalunbrown.com/patchdata/yosemite_harris.zip",
                            "yosemite_harris.zip", "a73253d1c6fbd3ba2613c45065c00d46"],
        "liberty_harris": ["http://matthewalunbrown.com/patchdata/liberty_harris.zip",
                           "liberty_harris.zip", "c731fcfb3abb4091110d0ae8c7ba182c"],
        "notredame": ["http://icvl.ee.ic.ac.uk/vbalnt/notredame.zip", "notredame.zip",
                      "509eda8535847b8c0a90bbb210c83484"],
        "yosemite": ["http://icvl.ee.ic.ac.uk/vbalnt/yosemite.zip", "yosemite.zip",
                     "533b2e8eb7ede31be40abc317b2fd4f0"],
        "liberty": ["http://icvl.ee.ic.ac.uk/vbalnt/liberty.zip", "liberty.zip",
                    "fdd9152f138ea5ef2091746689176414"],
    }
    means = {"notredame": 0.4854, "yosemite": 0.4844, "liberty": 0.4437,
             "notredame_harris": 0.4854, "yosemite_harris": 0.4844, "liberty_harris": 0.4437}
    stds = {"notredame": 0.1864, "yosemite": 0.1818, "liberty": 0.2019,
            "notredame_harris": 0.1864, "yosemite_harris": 0.1818, "liberty_harris": 0.2019}
    lens = {"notredame": 468159, "yosemite": 633587, "liberty": 450092,
            "liberty_harris": 379587, "yosemite_harris": 450912, "notredame_harris": 325295}
    image_ext = "bmp"
    info_file = "info.txt"
    matches_files = "m50_100000_100000_0.txt"

    def __init__(self, root, name, train=True, transform=None, download=False):
        from ... import load
        super().__init__(root, transform=transform)
        self.name = name
        self.data_dir = os.path.join(self.root, name)
        self.data_down = os.path.join(self.root, f"{name}.zip")
        self.data_file = os.path.join(self.root, f"{name}.pt")
        self.train = train
        self.mean = self.means[name]
        self.std = self.stds[name]
        if download:
            self.download()
        if not self._check_datafile_exists():
            self.cache()
        self.data, self.labels, self.matches = load(self.data_file, weights_only=True)

    def __getitem__(self, index):
        if self.train:
            data = self.data[index]
            return self.transform(data) if self.transform is not None else data
        m = self.matches[index]
        data1, data2 = self.data[m[0]], self.data[m[1]]
        if self.transform is not None:
            data1, data2 = self.transform(data1), self.transform(data2)
        return data1, data2, m[2]

    def __len__(self):
        return len(self.data if self.train else self.matches)

    def _check_datafile_exists(self):
        return os.path.exists(self.data_file)

    def _check_downloaded(self):
        return os.path.exists(self.data_dir)

    def download(self):
        if self._check_datafile_exists() or self._check_downloaded():
            return
        url, filename, md5 = self.urls[self.name]
        path = os.path.join(self.root, filename)
        download_url(url, self.root, filename, md5)
        with zipfile.ZipFile(path, "r") as z:
            z.extractall(self.data_dir)
        os.unlink(path)

    def cache(self):
        from ... import save
        dataset = (read_image_file(self.data_dir, self.image_ext, self.lens[self.name]),
                   read_info_file(self.data_dir, self.info_file),
                   read_matches_files(self.data_dir, self.matches_files))
        with open(self.data_file, "wb") as f:
            save(dataset, f)

    def extra_repr(self):
        return f"Split: {'Train' if self.train is True else 'Test'}"


def read_image_file(data_dir, image_ext, n):
    """The first n 64x64 patches, row by row through the sorted bitmaps, as uint8 (n, 64, 64)."""
    from PIL import Image
    from ... import from_numpy
    patches = []
    for path in sorted(os.path.join(data_dir, f) for f in os.listdir(data_dir)
                       if f.endswith(image_ext)):
        pixels = np.asarray(Image.open(path).convert("L"), dtype=np.uint8)
        # crops past the edge are black, as PIL pads them
        height, width = -(-pixels.shape[0] // 64) * 64, -(-pixels.shape[1] // 64) * 64
        padded = np.zeros((height, width), np.uint8)
        padded[:pixels.shape[0], :pixels.shape[1]] = pixels
        for y in range(0, height, 64):
            for x in range(0, width, 64):
                patches.append(padded[y:y + 64, x:x + 64])
    return from_numpy(np.array(patches[:n], dtype=np.uint8).reshape(-1, 64, 64))


def read_info_file(data_dir, info_file):
    """The 3D point id of each patch (first column of info.txt), int64."""
    from ... import tensor, int64
    with open(os.path.join(data_dir, info_file)) as f:
        return tensor([int(line.split()[0]) for line in f], dtype=int64)


def read_matches_files(data_dir, matches_file):
    """(patch 1, patch 2, same 3D point?) per line of the match list, int64."""
    from ... import tensor, int64
    with open(os.path.join(data_dir, matches_file)) as f:
        rows = [line.split() for line in f]
    return tensor([[int(r[0]), int(r[3]), int(r[1] == r[4])] for r in rows], dtype=int64)
