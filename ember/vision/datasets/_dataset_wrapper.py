"""wrap_dataset_for_transforms_v2 (torchvision.tv_tensors._dataset_wrapper): a dataset whose
items come out as the v2 transforms expect them (boxes as BoundingBoxes, masks as Mask, videos
as Video, detection targets as dicts of tensors), with the dataset's own transforms moved to
after that conversion. One wrapper factory per dataset class, found along the class's MRO."""
import collections.abc
import contextlib
from collections import defaultdict
from copy import copy

from .. import tv_tensors

__all__ = ["wrap_dataset_for_transforms_v2"]


def wrap_dataset_for_transforms_v2(dataset, target_keys=None):
    if not (target_keys is None or target_keys == "all" or (
            isinstance(target_keys, collections.abc.Collection)
            and all(isinstance(key, str) for key in target_keys))):
        raise ValueError("`target_keys` can be None, 'all', or a collection of strings denoting "
                         f"the keys to be returned, but got {target_keys}")
    # a subclass of both, so isinstance(wrapped, type(dataset)) still holds
    wrapped_cls = type(f"Wrapped{type(dataset).__name__}",
                       (VisionDatasetTVTensorWrapper, type(dataset)), {})
    return wrapped_cls(dataset, target_keys)


WRAPPER_FACTORIES = {}


def _register(*dataset_classes):
    def decorator(factory):
        for cls in dataset_classes:
            WRAPPER_FACTORIES[cls] = factory
        return factory
    return decorator


class VisionDatasetTVTensorWrapper:
    def __init__(self, dataset, target_keys):
        from . import CocoDetection, Kitti, VisionDataset, VOCDetection, WIDERFace
        from .. import datasets
        dataset_cls = type(dataset)
        if not isinstance(dataset, VisionDataset):
            raise TypeError(
                "This wrapper is meant for subclasses of `torchvision.datasets.VisionDataset`, "
                f"but got a '{dataset_cls.__name__}' instead.\nFor an example of how to perform "
                "the wrapping for custom datasets, see\n\nhttps://pytorch.org/vision/main/"
                "auto_examples/plot_tv_tensors.html#do-i-have-to-wrap-the-output-of-the-"
                "datasets-myself")
        for cls in dataset_cls.mro():
            if cls in WRAPPER_FACTORIES:
                factory = WRAPPER_FACTORIES[cls]
                if target_keys is not None and cls not in {CocoDetection, VOCDetection, Kitti,
                                                           WIDERFace}:
                    raise ValueError("`target_keys` is currently only supported for "
                                     "`CocoDetection`, `VOCDetection`, `Kitti`, and `WIDERFace`, "
                                     f"but got {cls.__name__}.")
                break
            if cls is VisionDataset:
                msg = (f"No wrapper exists for dataset class {dataset_cls.__name__}. Please wrap "
                       "the output yourself.")
                if dataset_cls in vars(datasets).values():
                    msg += (" If an automated wrapper for this dataset would be useful for you, "
                            "please open an issue at https://github.com/pytorch/vision/issues.")
                raise TypeError(msg)
        self._dataset = dataset
        self._target_keys = target_keys
        self._wrapper = factory(dataset, target_keys)
        # the transforms run after the conversion, so they see tv_tensors
        self.transform, dataset.transform = dataset.transform, None
        self.target_transform, dataset.target_transform = dataset.target_transform, None
        self.transforms, dataset.transforms = dataset.transforms, None

    def __getattr__(self, item):
        with contextlib.suppress(AttributeError):
            return object.__getattribute__(self, item)
        return getattr(self._dataset, item)

    def __getitem__(self, idx):
        sample = self._wrapper(idx, self._dataset[idx])
        if self.transforms is not None:
            sample = self.transforms(*sample)
        return sample

    def __len__(self):
        return len(self._dataset)

    def __reduce__(self):
        dataset = copy(self._dataset)
        dataset.transform = self.transform
        dataset.transforms = self.transforms
        dataset.target_transform = self.target_transform
        return wrap_dataset_for_transforms_v2, (dataset, self._target_keys)


def raise_not_supported(description):
    raise RuntimeError(f"{description} is currently not supported by this wrapper. If this would "
                       "be helpful for you, please open an issue at "
                       "https://github.com/pytorch/vision/issues.")


def parse_target_keys(target_keys, *, available, default):
    if target_keys is None:
        target_keys = default
    if target_keys == "all":
        return available
    target_keys = set(target_keys)
    extra = target_keys - available
    if extra:
        raise ValueError(f"Target keys {sorted(extra)} are not available")
    return target_keys


def list_of_dicts_to_dict_of_lists(list_of_dicts):
    dict_of_lists = defaultdict(list)
    for dct in list_of_dicts:
        for key, value in dct.items():
            dict_of_lists[key].append(value)
    return dict(dict_of_lists)


def wrap_target_by_type(target, *, target_types, type_wrappers):
    """Each part of a multi-type target through the wrapper of its type (identity if none)."""
    if not isinstance(target, (tuple, list)):
        target = [target]
    wrapped = tuple(type_wrappers.get(kind, lambda item: item)(item)
                    for kind, item in zip(target_types, target))
    return wrapped[0] if len(wrapped) == 1 else wrapped


def _xywh_boxes_as_xyxy(boxes, canvas_size):
    from ..transforms.v2 import functional as F
    return F.convert_bounding_box_format(
        tv_tensors.BoundingBoxes(boxes, format=tv_tensors.BoundingBoxFormat.XYWH,
                                 canvas_size=canvas_size),
        new_format=tv_tensors.BoundingBoxFormat.XYXY)


def identity_wrapper_factory(dataset, target_keys):
    return lambda idx, sample: sample


def segmentation_wrapper_factory(dataset, target_keys):
    def wrapper(idx, sample):
        image, mask = sample
        return image, tv_tensors.Mask(mask)
    return wrapper


def video_classification_wrapper_factory(dataset, target_keys):
    if dataset.video_clips.output_format == "THWC":
        raise RuntimeError(f"{type(dataset).__name__} with `output_format='THWC'` is not "
                           "supported by this wrapper, since it is not compatible with the "
                           "transformations. Please use `output_format='TCHW'` instead.")

    def wrapper(idx, sample):
        video, audio, label = sample
        return tv_tensors.Video(video), audio, label
    return wrapper


def caltech101_wrapper_factory(dataset, target_keys):
    if "annotation" in dataset.target_type:
        raise_not_supported("Caltech101 dataset with `target_type=['annotation', ...]`")
    return identity_wrapper_factory(dataset, target_keys)


def coco_detection_wrapper_factory(dataset, target_keys):
    from ... import from_numpy, stack, tensor
    from ..transforms.v2 import functional as F
    target_keys = parse_target_keys(
        target_keys, available={"segmentation", "area", "iscrowd", "image_id", "bbox",
                                "category_id", "boxes", "masks", "labels"},
        default={"image_id", "boxes", "labels"})

    def segmentation_to_mask(segmentation, *, canvas_size):
        from pycocotools import mask
        if isinstance(segmentation, dict):
            if not isinstance(segmentation["counts"], str):
                segmentation = mask.frPyObjects(segmentation, *canvas_size)
        elif isinstance(segmentation, list):
            segmentation = mask.merge(mask.frPyObjects(segmentation, *canvas_size))
        else:
            raise ValueError("COCO segmentation expected to be a dict or a list, got "
                             f"{type(segmentation)}")
        return from_numpy(mask.decode(segmentation))

    def wrapper(idx, sample):
        image_id = dataset.ids[idx]
        image, target = sample
        if not target:
            return image, dict(image_id=image_id)
        canvas_size = tuple(F.get_size(image))
        batched = list_of_dicts_to_dict_of_lists(target)
        target = {}
        if "image_id" in target_keys:
            target["image_id"] = image_id
        if "boxes" in target_keys:
            target["boxes"] = _xywh_boxes_as_xyxy(batched["bbox"], canvas_size)
        if "masks" in target_keys:
            target["masks"] = tv_tensors.Mask(stack([
                segmentation_to_mask(s, canvas_size=canvas_size)
                for s in batched["segmentation"]]))
        if "labels" in target_keys:
            target["labels"] = tensor(batched["category_id"])
        for key in target_keys - {"image_id", "boxes", "masks", "labels"}:
            target[key] = batched[key]
        return image, target
    return wrapper


VOC_DETECTION_CATEGORIES = [
    "__background__", "aeroplane", "bicycle", "bird", "boat", "bottle", "bus", "car", "cat",
    "chair", "cow", "diningtable", "dog", "horse", "motorbike", "person", "pottedplant", "sheep",
    "sofa", "train", "tvmonitor"]
VOC_DETECTION_CATEGORY_TO_IDX = {c: i for i, c in enumerate(VOC_DETECTION_CATEGORIES)}


def voc_detection_wrapper_factory(dataset, target_keys):
    from ... import tensor
    target_keys = parse_target_keys(target_keys, available={"annotation", "boxes", "labels"},
                                    default={"boxes", "labels"})

    def wrapper(idx, sample):
        image, target = sample
        batched = list_of_dicts_to_dict_of_lists(target["annotation"]["object"])
        if "annotation" not in target_keys:
            target = {}
        if "boxes" in target_keys:
            target["boxes"] = tv_tensors.BoundingBoxes(
                [[int(box[part]) for part in ("xmin", "ymin", "xmax", "ymax")]
                 for box in batched["bndbox"]],
                format=tv_tensors.BoundingBoxFormat.XYXY, canvas_size=(image.height, image.width))
        if "labels" in target_keys:
            target["labels"] = tensor([VOC_DETECTION_CATEGORY_TO_IDX[c] for c in batched["name"]])
        return image, target
    return wrapper


def sbd_wrapper(dataset, target_keys):
    if dataset.mode == "boundaries":
        raise_not_supported("SBDataset with mode='boundaries'")
    return segmentation_wrapper_factory(dataset, target_keys)


def celeba_wrapper_factory(dataset, target_keys):
    if any(kind in dataset.target_type for kind in ["attr", "landmarks"]):
        raise_not_supported("`CelebA` dataset with `target_type=['attr', 'landmarks', ...]`")

    def wrapper(idx, sample):
        image, target = sample
        return image, wrap_target_by_type(target, target_types=dataset.target_type, type_wrappers={
            "bbox": lambda item: _xywh_boxes_as_xyxy(item, (image.height, image.width))})
    return wrapper


KITTI_CATEGORIES = ["Car", "Van", "Truck", "Pedestrian", "Person_sitting", "Cyclist", "Tram",
                    "Misc", "DontCare"]
KITTI_CATEGORY_TO_IDX = {c: i for i, c in enumerate(KITTI_CATEGORIES)}


def kitti_wrapper_factory(dataset, target_keys):
    from ... import tensor
    target_keys = parse_target_keys(
        target_keys, available={"type", "truncated", "occluded", "alpha", "bbox", "dimensions",
                                "location", "rotation_y", "boxes", "labels"},
        default={"boxes", "labels"})

    def wrapper(idx, sample):
        image, target = sample
        if target is None:
            return image, target
        batched = list_of_dicts_to_dict_of_lists(target)
        target = {}
        if "boxes" in target_keys:
            target["boxes"] = tv_tensors.BoundingBoxes(
                batched["bbox"], format=tv_tensors.BoundingBoxFormat.XYXY,
                canvas_size=(image.height, image.width))
        if "labels" in target_keys:
            target["labels"] = tensor([KITTI_CATEGORY_TO_IDX[c] for c in batched["type"]])
        for key in target_keys - {"boxes", "labels"}:
            target[key] = batched[key]
        return image, target
    return wrapper


def oxford_iiit_pet_wrapper_factory(dataset, target_keys):
    def wrapper(idx, sample):
        image, target = sample
        if target is not None:
            target = wrap_target_by_type(target, target_types=dataset._target_types,
                                         type_wrappers={"segmentation": tv_tensors.Mask})
        return image, target
    return wrapper


def cityscapes_wrapper_factory(dataset, target_keys):
    from ... import stack
    if any(kind in dataset.target_type for kind in ["polygon", "color"]):
        raise_not_supported("`Cityscapes` dataset with `target_type=['polygon', 'color', ...]`")

    def instance_segmentation_wrapper(mask):
        # instance ids are class id * 1000 + instance number; stuff classes are the class id
        data = tv_tensors.Mask(mask)
        masks, labels = [], []
        for id in data.unique():
            masks.append(data == id)
            labels.append(id // 1_000 if id >= 1_000 else id)
        return dict(masks=tv_tensors.Mask(stack(masks)), labels=stack(labels))

    def wrapper(idx, sample):
        image, target = sample
        return image, wrap_target_by_type(target, target_types=dataset.target_type, type_wrappers={
            "instance": instance_segmentation_wrapper, "semantic": tv_tensors.Mask})
    return wrapper


def widerface_wrapper(dataset, target_keys):
    target_keys = parse_target_keys(
        target_keys, available={"bbox", "blur", "expression", "illumination", "occlusion",
                                "pose", "invalid"}, default="all")

    def wrapper(idx, sample):
        image, target = sample
        if target is None:
            return image, target
        target = {key: target[key] for key in target_keys}
        if "bbox" in target_keys:
            target["bbox"] = _xywh_boxes_as_xyxy(target["bbox"], (image.height, image.width))
        return image, target
    return wrapper


def _register_all():
    from . import (CIFAR10, CIFAR100, GTSRB, HMDB51, MNIST, SBDataset, UCF101, Caltech101,
                   Caltech256, CelebA, Cityscapes, CocoCaptions, CocoDetection, DatasetFolder,
                   FashionMNIST, ImageFolder, ImageNet, Imagenette, Kinetics, Kitti,
                   OxfordIIITPet, VOCDetection, VOCSegmentation, WIDERFace)
    _register(Caltech256, CIFAR10, CIFAR100, ImageNet, MNIST, FashionMNIST, GTSRB, DatasetFolder,
              ImageFolder, Imagenette, CocoCaptions)(identity_wrapper_factory)
    _register(VOCSegmentation)(segmentation_wrapper_factory)
    _register(HMDB51, Kinetics, UCF101)(video_classification_wrapper_factory)
    _register(Caltech101)(caltech101_wrapper_factory)
    _register(CocoDetection)(coco_detection_wrapper_factory)
    _register(VOCDetection)(voc_detection_wrapper_factory)
    _register(SBDataset)(sbd_wrapper)
    _register(CelebA)(celeba_wrapper_factory)
    _register(Kitti)(kitti_wrapper_factory)
    _register(OxfordIIITPet)(oxford_iiit_pet_wrapper_factory)
    _register(Cityscapes)(cityscapes_wrapper_factory)
    _register(WIDERFace)(widerface_wrapper)
