"""`ember.vision.datasets`: image datasets, as torchvision.datasets."""
import importlib

from .digits import Digits

__all__ = ["Digits"]
# Dataset families written alongside (each lists its classes in __all__).
for _name in ("vision", "mnist", "cifar", "folder", "fakedata", "svhn", "stl10", "celeba", "voc",
              "coco", "imagenet", "caltech", "fine_grained", "folder_based", "handwritten",
              "lfw", "pcam", "places365", "clevr", "fer2013", "inaturalist", "cityscapes",
              "captions", "detection_sets", "lsun", "phototour", "moving_mnist", "optical_flow",
              "stereo_matching", "video", "_dataset_wrapper"):
    try:
        _mod = importlib.import_module(f".{_name}", __name__)
    except ModuleNotFoundError as e:
        if e.name != f"{__name__}.{_name}":
            raise
        continue
    globals().update({n: getattr(_mod, n) for n in _mod.__all__})
    __all__ += list(_mod.__all__)
# the v2 wrapper knows the dataset classes, so it registers them once all are imported
_dataset_wrapper._register_all()
