"""PASCAL VOC (torchvision.datasets.voc): VOCSegmentation (image, class-mask PNG) and
VOCDetection (image, the annotation XML as nested dicts), read from
root/VOCdevkit/VOC<year> as the official archives unpack."""
import collections
import os
from xml.etree.ElementTree import parse as parse_xml

from .utils import download_and_extract_archive, verify_str_arg
from .vision import VisionDataset

__all__ = ["VOCSegmentation", "VOCDetection"]

_MIRROR = "https://thor.robots.ox.ac.uk/pascal/VOC/"
# year -> (archive url, archive name, md5, folder inside root)
DATASET_YEAR_DICT = {
    key: {"url": _MIRROR + url, "filename": filename, "md5": md5, "base_dir": base_dir}
    for key, url, filename, md5, base_dir in [
        ("2012", "voc2012/VOCtrainval_11-May-2012.tar", "VOCtrainval_11-May-2012.tar",
         "6cd6e144f989b92b3379bac3b3de84fd", os.path.join("VOCdevkit", "VOC2012")),
        ("2011", "voc2011/VOCtrainval_25-May-2011.tar", "VOCtrainval_25-May-2011.tar",
         "6c3384ef61512963050cb5d687e5bf1e", os.path.join("TrainVal", "VOCdevkit", "VOC2011")),
        ("2010", "voc2010/VOCtrainval_03-May-2010.tar", "VOCtrainval_03-May-2010.tar",
         "da459979d0c395079b5c75ee67908abb", os.path.join("VOCdevkit", "VOC2010")),
        ("2009", "voc2009/VOCtrainval_11-May-2009.tar", "VOCtrainval_11-May-2009.tar",
         "a3e00b113cfcfebf17e343f59da3caa1", os.path.join("VOCdevkit", "VOC2009")),
        # torchvision saves the 2008 archive under the 2012 name; kept so both find one file
        ("2008", "voc2008/VOCtrainval_14-Jul-2008.tar", "VOCtrainval_11-May-2012.tar",
         "2629fa636546599198acfcfbfcf1904a", os.path.join("VOCdevkit", "VOC2008")),
        ("2007", "voc2007/VOCtrainval_06-Nov-2007.tar", "VOCtrainval_06-Nov-2007.tar",
         "c52e279531787c972589f7e41ab4ae64", os.path.join("VOCdevkit", "VOC2007")),
        ("2007-test", "voc2007/VOCtest_06-Nov-2007.tar", "VOCtest_06-Nov-2007.tar",
         "b6e924de25625d8de591ea690078ad9f", os.path.join("VOCdevkit", "VOC2007")),
    ]}


class _VOCBase(VisionDataset):
    _SPLITS_DIR = _TARGET_DIR = _TARGET_FILE_EXT = None

    def __init__(self, root, year="2012", image_set="train", download=False, transform=None,
                 target_transform=None, transforms=None):
        super().__init__(root, transforms, transform, target_transform)
        self.year = verify_str_arg(year, "year", [str(y) for y in range(2007, 2013)])
        valid_sets = ["train", "trainval", "val"] + (["test"] if year == "2007" else [])
        self.image_set = verify_str_arg(image_set, "image_set", valid_sets)
        entry = DATASET_YEAR_DICT["2007-test" if year == "2007" and image_set == "test"
                                  else year]
        self.url, self.filename, self.md5 = entry["url"], entry["filename"], entry["md5"]
        voc_root = os.path.join(self.root, entry["base_dir"])
        if download:
            download_and_extract_archive(self.url, self.root, filename=self.filename,
                                         md5=self.md5)
        if not os.path.isdir(voc_root):
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        split_file = os.path.join(voc_root, "ImageSets", self._SPLITS_DIR, image_set + ".txt")
        with open(split_file) as f:
            names = [line.strip() for line in f.readlines()]
        self.images = [os.path.join(voc_root, "JPEGImages", n + ".jpg") for n in names]
        self.targets = [os.path.join(voc_root, self._TARGET_DIR, n + self._TARGET_FILE_EXT)
                        for n in names]

    def __len__(self):
        return len(self.images)

    def _finish(self, img, target):
        if self.transforms is not None:
            img, target = self.transforms(img, target)
        return img, target


class VOCSegmentation(_VOCBase):
    _SPLITS_DIR, _TARGET_DIR, _TARGET_FILE_EXT = "Segmentation", "SegmentationClass", ".png"

    @property
    def masks(self):
        return self.targets

    def __getitem__(self, index):
        from PIL import Image
        img = Image.open(self.images[index]).convert("RGB")
        return self._finish(img, Image.open(self.masks[index]))


class VOCDetection(_VOCBase):
    _SPLITS_DIR, _TARGET_DIR, _TARGET_FILE_EXT = "Main", "Annotations", ".xml"

    @property
    def annotations(self):
        return self.targets

    def __getitem__(self, index):
        from PIL import Image
        img = Image.open(self.images[index]).convert("RGB")
        target = self.parse_voc_xml(parse_xml(self.annotations[index]).getroot())
        return self._finish(img, target)

    @staticmethod
    def parse_voc_xml(node):
        """{tag: text} for a leaf; {tag: {child tag: value or list of values}} otherwise. The
        annotation's "object" is always a list, also when the image has one object."""
        children = list(node)
        if not children:
            text = node.text.strip() if node.text else None
            return {node.tag: text} if text is not None else {}
        grouped = collections.defaultdict(list)
        for child in map(VOCDetection.parse_voc_xml, children):
            for tag, value in child.items():
                grouped[tag].append(value)
        if node.tag == "annotation":
            grouped["object"] = [grouped["object"]]
        return {node.tag: {tag: v[0] if len(v) == 1 else v for tag, v in grouped.items()}}
