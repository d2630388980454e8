"""MS COCO (torchvision.datasets.coco): CocoDetection (image, its annotation dicts) and
CocoCaptions (image, its caption strings), images under root named by the annotation file.

The annotation file is indexed with pycocotools' COCO when it is installed; otherwise with
`COCOIndex`, which offers the same look-ups datasets and users call (imgs, anns, cats,
getAnnIds, getImgIds, getCatIds, loadAnns, loadImgs, loadCats) in the same orders."""
import collections
import json
import os

from .vision import VisionDataset

__all__ = ["CocoDetection", "CocoCaptions"]


def _as_list(ids):
    return list(ids) if isinstance(ids, (list, tuple)) else [ids]


class COCOIndex:
    def __init__(self, annotation_file):
        with open(annotation_file) as f:
            self.dataset = json.load(f)
        self.anns = {a["id"]: a for a in self.dataset.get("annotations", [])}
        self.imgs = {i["id"]: i for i in self.dataset.get("images", [])}
        self.cats = {c["id"]: c for c in self.dataset.get("categories", [])}
        self.imgToAnns = collections.defaultdict(list)
        self.catToImgs = collections.defaultdict(list)
        for ann in self.dataset.get("annotations", []):
            self.imgToAnns[ann["image_id"]].append(ann)
            if "category_id" in ann:
                self.catToImgs[ann["category_id"]].append(ann["image_id"])

    def getAnnIds(self, imgIds=(), catIds=(), areaRng=(), iscrowd=None):
        imgIds, catIds = _as_list(imgIds), _as_list(catIds)
        anns = ([a for i in imgIds if i in self.imgToAnns for a in self.imgToAnns[i]]
                if imgIds else self.dataset.get("annotations", []))
        if catIds:
            anns = [a for a in anns if a["category_id"] in catIds]
        if areaRng:
            anns = [a for a in anns if areaRng[0] < a["area"] < areaRng[1]]
        if iscrowd is not None:
            anns = [a for a in anns if a["iscrowd"] == iscrowd]
        return [a["id"] for a in anns]

    def getCatIds(self, catNms=(), supNms=(), catIds=()):
        cats = self.dataset.get("categories", [])
        catNms, supNms, catIds = _as_list(catNms), _as_list(supNms), _as_list(catIds)
        return [c["id"] for c in cats if (not catNms or c["name"] in catNms)
                and (not supNms or c["supercategory"] in supNms)
                and (not catIds or c["id"] in catIds)]

    def getImgIds(self, imgIds=(), catIds=()):
        ids = set(_as_list(imgIds)) if _as_list(imgIds) else set(self.imgs)
        for i, cat in enumerate(_as_list(catIds)):
            ids = set(self.catToImgs[cat]) if i == 0 and not _as_list(imgIds) \
                else ids & set(self.catToImgs[cat])
        return list(ids)

    def loadAnns(self, ids=()):
        return [self.anns[i] for i in _as_list(ids)]

    def loadCats(self, ids=()):
        return [self.cats[i] for i in _as_list(ids)]

    def loadImgs(self, ids=()):
        return [self.imgs[i] for i in _as_list(ids)]


def _coco_index(annotation_file):
    try:
        from pycocotools.coco import COCO
    except ModuleNotFoundError:
        return COCOIndex(annotation_file)
    return COCO(annotation_file)


class CocoDetection(VisionDataset):
    def __init__(self, root, annFile, transform=None, target_transform=None, transforms=None):
        super().__init__(root, transforms, transform, target_transform)
        self.coco = _coco_index(annFile)
        self.ids = sorted(self.coco.imgs.keys())

    def _load_image(self, id):
        from PIL import Image
        path = self.coco.loadImgs(id)[0]["file_name"]
        return Image.open(os.path.join(self.root, path)).convert("RGB")

    def _load_target(self, id):
        return self.coco.loadAnns(self.coco.getAnnIds(id))

    def __getitem__(self, index):
        if not isinstance(index, int):
            raise ValueError(f"Index must be of type integer, got {type(index)} instead.")
        id = self.ids[index]
        image, target = self._load_image(id), self._load_target(id)
        if self.transforms is not None:
            image, target = self.transforms(image, target)
        return image, target

    def __len__(self):
        return len(self.ids)


class CocoCaptions(CocoDetection):
    def _load_target(self, id):
        return [ann["caption"] for ann in super()._load_target(id)]
