"""transforms.v2's photometric random transforms and augmentation policies.

The Random* classes run the v2 kernels on every image in the sample (bounding boxes and
masks pass through). The policies transform the sample's single image with the v1 policy
classes and refuse boxes and masks, whose geometry they would not follow, as torchvision's v2
does."""
from enum import Enum

from ...._tensor import Tensor
from ... import tv_tensors
from .. import autoaugment as _v1
from ..autoaugment import AutoAugmentPolicy
from ..functional import InterpolationMode
from . import functional as F
from .functional import _is_pil, _plain, is_pure_tensor

__all__ = ["RandomInvert", "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness",
           "RandomAutocontrast", "RandomEqualize", "AutoAugment", "RandAugment",
           "TrivialAugmentWide", "AugMix", "AutoAugmentPolicy"]


def _bases():
    from . import Transform, _RandomApplyTransform, _flatten, _unflatten
    return Transform, _RandomApplyTransform, _flatten, _unflatten


Transform, _RandomApplyTransform, _flatten, _unflatten = _bases()


class RandomInvert(_RandomApplyTransform):
    def transform(self, inpt, params):
        return F.invert(inpt)


class RandomAutocontrast(_RandomApplyTransform):
    def transform(self, inpt, params):
        return F.autocontrast(inpt)


class RandomEqualize(_RandomApplyTransform):
    def transform(self, inpt, params):
        return F.equalize(inpt)


class RandomPosterize(_RandomApplyTransform):
    def __init__(self, bits, p=0.5):
        super().__init__(p=p)
        self.bits = bits

    def transform(self, inpt, params):
        return F.posterize(inpt, bits=self.bits)


class RandomSolarize(_RandomApplyTransform):
    def __init__(self, threshold, p=0.5):
        super().__init__(p=p)
        self.threshold = threshold

    def transform(self, inpt, params):
        return F.solarize(inpt, threshold=self.threshold)


class RandomAdjustSharpness(_RandomApplyTransform):
    def __init__(self, sharpness_factor, p=0.5):
        super().__init__(p=p)
        self.sharpness_factor = sharpness_factor

    def transform(self, inpt, params):
        return F.adjust_sharpness(inpt, sharpness_factor=self.sharpness_factor)


def _fill_for(fill, inpt):
    """v2's fill may be a dict keyed by input type (or 'others')."""
    if not isinstance(fill, dict):
        return fill
    for key in (type(inpt), Tensor if is_pure_tensor(inpt) else None, "others"):
        if key in fill:
            return fill[key]
    return None


class _AutoAugmentBase(Transform):
    _v1_class = None

    def __init__(self, *, interpolation="nearest", fill=None):
        super().__init__()
        self.interpolation = interpolation
        self.fill = fill

    def _v1_kwargs(self):
        raise NotImplementedError

    def extra_repr(self):
        # torchvision prints these attributes as stored (an enum as Enum.MEMBER)
        return ", ".join(f"{name}={value}" for name, value in self.__dict__.items()
                         if not name.startswith("_") and name != "training"
                         and isinstance(value, (bool, int, float, str, tuple, list, Enum)))

    def forward(self, *inputs):
        flat, spec = _flatten(inputs if len(inputs) > 1 else inputs[0])
        images = []
        for idx, (x, need) in enumerate(zip(flat, self._needs_transform_list(flat))):
            if need and (isinstance(x, tv_tensors.Image) or is_pure_tensor(x) or _is_pil(x)):
                images.append(idx)
            elif isinstance(x, (tv_tensors.BoundingBoxes, tv_tensors.Mask)):
                raise TypeError(f"Inputs of type {type(x).__name__} are not supported by "
                                f"{type(self).__name__}()")
        if not images:
            raise TypeError("Found no image in the sample.")
        if len(images) > 1:
            raise TypeError("Auto augment transformations are only properly defined for a "
                            f"single image or video, but found {len(images)}.")
        image = flat[images[0]]
        interpolation = self.interpolation
        if isinstance(interpolation, str):
            interpolation = InterpolationMode(interpolation)
        elif isinstance(interpolation, int):
            interpolation = _v1.F._interp(interpolation)
        policy = self._v1_class(**self._v1_kwargs(), interpolation=interpolation,
                                fill=_fill_for(self.fill, image))
        out = policy(_plain(image))
        flat[images[0]] = tv_tensors.wrap(out, like=image) \
            if isinstance(image, tv_tensors.Image) else out
        return _unflatten(flat, spec)


class AutoAugment(_AutoAugmentBase):
    _v1_class = _v1.AutoAugment

    def __init__(self, policy=AutoAugmentPolicy.IMAGENET, interpolation="nearest", fill=None):
        super().__init__(interpolation=interpolation, fill=fill)
        self.policy = policy
        self._policies = _v1.AutoAugment(policy).policies

    def _v1_kwargs(self):
        return dict(policy=self.policy)


class RandAugment(_AutoAugmentBase):
    _v1_class = _v1.RandAugment

    def __init__(self, num_ops=2, magnitude=9, num_magnitude_bins=31, interpolation="nearest",
                 fill=None):
        super().__init__(interpolation=interpolation, fill=fill)
        self.num_ops = num_ops
        self.magnitude = magnitude
        self.num_magnitude_bins = num_magnitude_bins

    def _v1_kwargs(self):
        return dict(num_ops=self.num_ops, magnitude=self.magnitude,
                    num_magnitude_bins=self.num_magnitude_bins)


class TrivialAugmentWide(_AutoAugmentBase):
    _v1_class = _v1.TrivialAugmentWide

    def __init__(self, num_magnitude_bins=31, interpolation="nearest", fill=None):
        super().__init__(interpolation=interpolation, fill=fill)
        self.num_magnitude_bins = num_magnitude_bins

    def _v1_kwargs(self):
        return dict(num_magnitude_bins=self.num_magnitude_bins)


class AugMix(_AutoAugmentBase):
    _v1_class = _v1.AugMix

    def __init__(self, severity=3, mixture_width=3, chain_depth=-1, alpha=1.0, all_ops=True,
                 interpolation="bilinear", fill=None):
        super().__init__(interpolation=interpolation, fill=fill)
        self._PARAMETER_MAX = 10
        if not 1 <= severity <= self._PARAMETER_MAX:
            raise ValueError(f"The severity must be between [1, {self._PARAMETER_MAX}]. Got "
                             f"{severity} instead.")
        self.severity = severity
        self.mixture_width = mixture_width
        self.chain_depth = chain_depth
        self.alpha = alpha
        self.all_ops = all_ops

    def _v1_kwargs(self):
        return dict(severity=self.severity, mixture_width=self.mixture_width,
                    chain_depth=self.chain_depth, alpha=self.alpha, all_ops=self.all_ops)
