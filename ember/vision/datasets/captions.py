"""Image-caption sets (torchvision's sbu and flickr): SBU (photo, caption) from
root/dataset, Flickr8k (image, its captions) from the HTML annotation page, Flickr30k (image,
its captions) from the tab-separated token file."""
import glob
import os
from collections import defaultdict
from html.parser import HTMLParser

from .folder import default_loader
from .utils import check_integrity, download_and_extract_archive, download_url
from .vision import VisionDataset

__all__ = ["SBU", "Flickr8k", "Flickr30k"]


class _Captioned(VisionDataset):
    """Items are (loader(path of id i), self.annotations[id i]) through the transforms."""

    def _path(self, img_id):
        return img_id

    def __getitem__(self, index):
        img_id = self.ids[index]
        img = self.loader(self._path(img_id))
        if self.transform is not None:
            img = self.transform(img)
        target = self.annotations[img_id]
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.ids)


class SBU(VisionDataset):
    url = "https://www.cs.rice.edu/~vo9/sbucaptions/SBUCaptionedPhotoDataset.tar.gz"
    filename = "SBUCaptionedPhotoDataset.tar.gz"
    md5_checksum = "9aec147b3488753cf758b4d493422285"

    def __init__(self, root, transform=None, target_transform=None, download=True,
                 loader=default_loader):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.loader = loader
        if download:
            self.download()
        if not self._check_integrity():
            raise RuntimeError("Dataset not found or corrupted. You can use download=True to "
                               "download it")
        self.photos, self.captions = [], []
        dataset = os.path.join(self.root, "dataset")
        with open(os.path.join(dataset, "SBU_captioned_photo_dataset_urls.txt")) as urls, \
                open(os.path.join(dataset, "SBU_captioned_photo_dataset_captions.txt")) as caps:
            # photos that could not be fetched are left out with their captions
            for url, caption in zip(urls, caps):
                photo = os.path.basename(url.rstrip())
                if os.path.exists(os.path.join(dataset, photo)):
                    self.photos.append(photo)
                    self.captions.append(caption.rstrip())

    def __getitem__(self, index):
        img = self.loader(os.path.join(self.root, "dataset", self.photos[index]))
        if self.transform is not None:
            img = self.transform(img)
        target = self.captions[index]
        if self.target_transform is not None:
            target = self.target_transform(target)
        return img, target

    def __len__(self):
        return len(self.photos)

    def _check_integrity(self):
        return check_integrity(os.path.join(self.root, self.filename), self.md5_checksum)

    def download(self):
        if self._check_integrity():
            return
        download_and_extract_archive(self.url, self.root, self.root, self.filename,
                                     self.md5_checksum)
        with open(os.path.join(self.root, "dataset", "SBU_captioned_photo_dataset_urls.txt")) as f:
            for line in f:
                try:
                    download_url(line.rstrip(), os.path.join(self.root, "dataset"))
                except (OSError, RuntimeError):
                    pass  # many of the Flickr photos are gone; the rest still make a dataset


class Flickr8kParser(HTMLParser):
    """Collects {image path: [captions]} from the Flickr8k annotation page: a table whose links
    name the images (".../<id>/") and whose list items hold the captions."""

    def __init__(self, root):
        super().__init__()
        self.root = root
        self.annotations = {}
        self.in_table = False
        self.current_tag = None
        self.current_img = None

    def handle_starttag(self, tag, attrs):
        self.current_tag = tag
        if tag == "table":
            self.in_table = True

    def handle_endtag(self, tag):
        self.current_tag = None
        if tag == "table":
            self.in_table = False

    def handle_data(self, data):
        if not self.in_table:
            return
        if data == "Image Not Found":
            self.current_img = None
        elif self.current_tag == "a":
            img_id = data.split("/")[-2]
            self.current_img = glob.glob(os.path.join(self.root, img_id + "_*.jpg"))[0]
            self.annotations[self.current_img] = []
        elif self.current_tag == "li" and self.current_img:
            self.annotations[self.current_img].append(data.strip())


class Flickr8k(_Captioned):
    def __init__(self, root, ann_file, transform=None, target_transform=None,
                 loader=default_loader):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.ann_file = os.path.expanduser(ann_file)
        parser = Flickr8kParser(self.root)
        with open(self.ann_file) as f:
            parser.feed(f.read())
        self.annotations = parser.annotations
        self.ids = sorted(self.annotations.keys())
        self.loader = loader


class Flickr30k(_Captioned):
    def __init__(self, root, ann_file, transform=None, target_transform=None,
                 loader=default_loader):
        super().__init__(root, transform=transform, target_transform=target_transform)
        self.ann_file = os.path.expanduser(ann_file)
        self.annotations = defaultdict(list)
        with open(self.ann_file) as f:
            # lines: "<image>.jpg#<n>\t<caption>"
            for line in f:
                img_id, caption = line.strip().split("\t")
                self.annotations[img_id[:-2]].append(caption)
        self.ids = sorted(self.annotations.keys())
        self.loader = loader

    def _path(self, img_id):
        return os.path.join(self.root, img_id)
