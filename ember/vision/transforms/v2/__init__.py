"""`ember.vision.transforms.v2` (torchvision.transforms.v2, the common subset).

A v2 transform takes any structure (an image, a tuple, a dict ...) and transforms every image
and bounding box in it with the same random parameters. Plain tensors count as the image only
when the sample holds no tv_tensors.Image or PIL image, and then only the first one; other
plain tensors, numbers and strings pass through. Random draws come from ember's default
generator in torchvision's order; the image kernels are the v1 functional ones.
"""
import enum
import math
import numbers
import warnings
from collections.abc import Sequence

import numpy as np

from ...._tensor import Tensor
from ....nn import Module
from ... import tv_tensors
from .. import _augment
from ..functional import InterpolationMode
from .._arguments import _interpolation, _setup_size
from . import functional as F
from .functional import _is_pil, is_pure_tensor

__all__ = ["Transform", "Compose", "ToImage", "ToDtype", "ToPureTensor", "Resize",
           "RandomResizedCrop", "CenterCrop", "RandomCrop", "RandomHorizontalFlip", "Normalize",
           "ColorJitter", "RandomErasing", "InterpolationMode"]


# ---- structures in, structures out -----------------------------------------------------
def _flatten(obj):
    if isinstance(obj, (list, tuple)) and not hasattr(obj, "_fields"):
        leaves, specs = [], []
        for item in obj:
            sub, spec = _flatten(item)
            leaves += sub
            specs.append(spec)
        return leaves, (type(obj), specs)
    if isinstance(obj, tuple):  # a namedtuple
        leaves, specs = [], []
        for item in obj:
            sub, spec = _flatten(item)
            leaves += sub
            specs.append(spec)
        return leaves, ("namedtuple", type(obj), specs)
    if isinstance(obj, dict):
        leaves, specs = [], []
        for key, item in obj.items():
            sub, spec = _flatten(item)
            leaves += sub
            specs.append((key, spec))
        return leaves, (dict, type(obj), specs)
    return [obj], None


def _unflatten(leaves, spec):
    it = iter(leaves)

    def build(spec):
        if spec is None:
            return next(it)
        if spec[0] == "namedtuple":
            return spec[1](*[build(s) for s in spec[2]])
        if spec[0] is dict:
            return spec[1]((k, build(s)) for k, s in spec[2])
        return spec[0](build(s) for s in spec[1])
    return build(spec)


def _is_image_like(x):
    return isinstance(x, tv_tensors.Image) or _is_pil(x)


def query_size(flat_inputs):
    sizes = {tuple(F.get_size(x)) for x in flat_inputs
             if isinstance(x, (tv_tensors.Image, tv_tensors.BoundingBoxes, tv_tensors.Mask))
             or is_pure_tensor(x)
             or _is_pil(x)}
    if not sizes:
        raise TypeError("No image, video, mask, bounding box of keypoint was found in the "
                        "sample")
    if len(sizes) > 1:
        raise ValueError("Found multiple HxW dimensions in the sample: "
                         + ", ".join(str(list(s)) for s in sorted(sizes)))
    return sizes.pop()


def query_chw(flat_inputs):
    from .. import functional as F1
    chws = {tuple(F1.get_dimensions(x)) for x in flat_inputs
            if isinstance(x, tv_tensors.Image) or is_pure_tensor(x) or _is_pil(x)}
    if not chws:
        raise TypeError("No image or video was found in the sample")
    if len(chws) > 1:
        raise ValueError("Found multiple CxHxW dimensions in the sample: "
                         + ", ".join(str(list(s)) for s in sorted(chws)))
    return chws.pop()


class Transform(Module):
    """Base of the v2 transforms: make_params once per call, transform each input."""
    _transformed_types = (Tensor, "pil")

    def _accepts(self, x):
        for t in self._transformed_types:
            if t == "pil":
                if _is_pil(x):
                    return True
            elif t == "pure":
                if is_pure_tensor(x):
                    return True
            elif t == "ndarray":
                if isinstance(x, np.ndarray):
                    return True
            elif isinstance(x, t):
                return True
        return False

    def check_inputs(self, flat_inputs):
        pass

    def make_params(self, flat_inputs):
        return {}

    def transform(self, inpt, params):
        raise NotImplementedError

    def _needs_transform_list(self, flat_inputs):
        transform_pure_tensor = not any(_is_image_like(x) for x in flat_inputs)
        needs = []
        for x in flat_inputs:
            need = True
            if not self._accepts(x):
                need = False
            elif is_pure_tensor(x):
                if transform_pure_tensor:
                    transform_pure_tensor = False
                else:
                    need = False
            needs.append(need)
        return needs

    def forward(self, *inputs):
        flat, spec = _flatten(inputs if len(inputs) > 1 else inputs[0])
        self.check_inputs(flat)
        needs = self._needs_transform_list(flat)
        params = self.make_params([x for x, n in zip(flat, needs) if n])
        out = [self.transform(x, params) if n else x for x, n in zip(flat, needs)]
        return _unflatten(out, spec)

    def extra_repr(self):
        extra = []
        for name, value in self.__dict__.items():
            if name.startswith("_") or name == "training":
                continue
            if not isinstance(value, (bool, int, float, str, tuple, list, enum.Enum)):
                continue
            if isinstance(value, enum.Enum):
                value = value.value
            extra.append(f"{name}={value}")
        return ", ".join(extra)


class _RandomApplyTransform(Transform):
    def __init__(self, p=0.5):
        if not (0.0 <= p <= 1.0):
            raise ValueError("`p` should be a floating point value in the interval [0.0, 1.0].")
        super().__init__()
        self.p = p

    def forward(self, *inputs):
        flat, spec = _flatten(inputs if len(inputs) > 1 else inputs[0])
        self.check_inputs(flat)
        if _augment._rand() >= self.p:
            return inputs if len(inputs) > 1 else inputs[0]
        needs = self._needs_transform_list(flat)
        params = self.make_params([x for x, n in zip(flat, needs) if n])
        out = [self.transform(x, params) if n else x for x, n in zip(flat, needs)]
        return _unflatten(out, spec)


class Compose(Transform):
    def __init__(self, transforms):
        super().__init__()
        if not isinstance(transforms, Sequence):
            raise TypeError("Argument transforms should be a sequence of callables")
        if not transforms:
            raise ValueError("Pass at least one transform")
        self.transforms = transforms

    def forward(self, *inputs):
        needs_unpacking = len(inputs) > 1
        outputs = inputs
        for t in self.transforms:
            outputs = t(*inputs)
            inputs = outputs if needs_unpacking else (outputs,)
        return outputs

    def extra_repr(self):
        return "\n".join(f"    {t}" for t in self.transforms)


# ---- conversions -----------------------------------------------------------------------
class ToImage(Transform):
    _transformed_types = ("pure", "pil", "ndarray")

    def transform(self, inpt, params):
        return F.to_image(inpt)


class ToPureTensor(Transform):
    _transformed_types = (tv_tensors.TVTensor,)

    def transform(self, inpt, params):
        return inpt.as_subclass(Tensor)


class ToDtype(Transform):
    def __init__(self, dtype, scale=False):
        super().__init__()
        if not isinstance(dtype, dict) and not hasattr(dtype, "is_floating_point"):
            raise ValueError(f"dtype must be a dict or a torch.dtype, got {type(dtype)} instead")
        if isinstance(dtype, dict) and Tensor in dtype and any(
                c in dtype for c in (tv_tensors.Image,)):
            warnings.warn("Got `dtype` values for `torch.Tensor` and either `tv_tensors.Image` "
                          "or `tv_tensors.Video`. Note that a plain `torch.Tensor` will *not* "
                          "be transformed by this (or any other transformation) in case a "
                          "`tv_tensors.Image` or `tv_tensors.Video` is present in the input.")
        self.dtype = dtype
        self.scale = scale

    def transform(self, inpt, params):
        if isinstance(self.dtype, dict):
            if type(inpt) in self.dtype:
                dtype = self.dtype[type(inpt)]
            elif is_pure_tensor(inpt) and Tensor in self.dtype:
                dtype = self.dtype[Tensor]
            elif "others" in self.dtype:
                dtype = self.dtype["others"]
            else:
                raise ValueError(f"No dtype was specified for type {type(inpt)}. If you only "
                                 "need to convert the dtype of images or videos, you can just "
                                 "pass e.g. dtype=torch.float32. If you're passing a dict as "
                                 "dtype, you can use 'others' as a catch-all key e.g. "
                                 "dtype={tv_tensors.Mask: torch.int64, 'others': None} to "
                                 "pass-through the rest of the inputs.")
        else:
            if not (is_pure_tensor(inpt) or isinstance(inpt, tv_tensors.Image)):
                return inpt
            dtype = self.dtype
        supports_scaling = is_pure_tensor(inpt) or isinstance(inpt, tv_tensors.Image)
        if dtype is None:
            if self.scale and supports_scaling:
                warnings.warn("scale was set to True but no dtype was specified for images or "
                              "videos: no scaling will be done.")
            return inpt
        return F.to_dtype(inpt, dtype=dtype, scale=self.scale)


class Normalize(Transform):
    def __init__(self, mean, std, inplace=False):
        super().__init__()
        self.mean = list(mean)
        self.std = list(std)
        self.inplace = inplace

    def check_inputs(self, flat_inputs):
        if any(_is_pil(x) for x in flat_inputs):
            raise TypeError(f"{type(self).__name__}() does not support PIL images.")

    def transform(self, inpt, params):
        return F.normalize(inpt, mean=self.mean, std=self.std, inplace=self.inplace)


# ---- geometry --------------------------------------------------------------------------
class Resize(Transform):
    def __init__(self, size, interpolation=InterpolationMode.BILINEAR, max_size=None,
                 antialias=True):
        super().__init__()
        if isinstance(size, int):
            size = [size]
        elif isinstance(size, Sequence) and len(size) in {1, 2}:
            size = list(size)
        elif size is None:
            if not isinstance(max_size, int):
                raise ValueError(f"max_size must be an integer when size is None, but got "
                                 f"{max_size} instead.")
        else:
            raise ValueError("size can be an integer, a sequence of one or two integers, or "
                             f"None, but got {size} instead.")
        self.size = size
        self.max_size = max_size
        self.interpolation = _interpolation(interpolation)
        self.antialias = antialias

    def transform(self, inpt, params):
        return F.resize(inpt, self.size, interpolation=self.interpolation,
                        max_size=self.max_size, antialias=self.antialias)


class CenterCrop(Transform):
    def __init__(self, size):
        super().__init__()
        self.size = _setup_size(size, "Please provide only two dimensions (h, w) for size.")

    def transform(self, inpt, params):
        return F.center_crop(inpt, output_size=self.size)


class RandomResizedCrop(Transform):
    def __init__(self, size, scale=(0.08, 1.0), ratio=(3.0 / 4.0, 4.0 / 3.0),
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
        super().__init__()
        self.size = _setup_size(size, "Please provide only two dimensions (h, w) for size.")
        if not isinstance(scale, Sequence):
            raise TypeError("Scale should be a sequence")
        if not isinstance(ratio, Sequence):
            raise TypeError("Ratio should be a sequence")
        if (scale[0] > scale[1]) or (ratio[0] > ratio[1]):
            warnings.warn("Scale and ratio should be of kind (min, max)")
        self.scale = scale
        self.ratio = ratio
        self.interpolation = _interpolation(interpolation)
        self.antialias = antialias
        self._log_ratio = (math.log(ratio[0]), math.log(ratio[1]))

    def make_params(self, flat_inputs):
        height, width = query_size(flat_inputs)
        area = height * width
        for _ in range(10):
            target_area = area * _augment._uniform(self.scale[0], self.scale[1])
            aspect_ratio = math.exp(_augment._uniform(self._log_ratio[0], self._log_ratio[1]))
            w = int(round(math.sqrt(target_area * aspect_ratio)))
            h = int(round(math.sqrt(target_area / aspect_ratio)))
            if 0 < w <= width and 0 < h <= height:
                i = _augment._randint(0, height - h + 1)
                j = _augment._randint(0, width - w + 1)
                return dict(top=i, left=j, height=h, width=w)
        in_ratio = float(width) / float(height)  # fallback: central crop
        if in_ratio < min(self.ratio):
            w = width
            h = int(round(w / min(self.ratio)))
        elif in_ratio > max(self.ratio):
            h = height
            w = int(round(h * max(self.ratio)))
        else:
            w, h = width, height
        return dict(top=(height - h) // 2, left=(width - w) // 2, height=h, width=w)

    def transform(self, inpt, params):
        return F.resized_crop(inpt, **params, size=self.size, interpolation=self.interpolation,
                              antialias=self.antialias)


def _fill_for(fill, inpt):
    if isinstance(fill, dict):
        if type(inpt) in fill:
            return fill[type(inpt)]
        return fill.get("others", 0)
    return fill


class RandomCrop(Transform):
    def __init__(self, size, padding=None, pad_if_needed=False, fill=0,
                 padding_mode="constant"):
        super().__init__()
        self.size = _setup_size(size, "Please provide only two dimensions (h, w) for size.")
        if pad_if_needed or padding is not None:
            if padding_mode not in ("constant", "edge", "reflect", "symmetric"):
                raise ValueError("Padding mode should be either constant, edge, reflect or "
                                 "symmetric")
        self.padding = F._parse_pad_padding(padding) if padding else None
        self.pad_if_needed = pad_if_needed
        self.fill = fill
        self._fill = fill
        self.padding_mode = padding_mode

    def make_params(self, flat_inputs):
        height, width = query_size(flat_inputs)
        if self.padding is not None:
            pad_left, pad_right, pad_top, pad_bottom = self.padding
            height += pad_top + pad_bottom
            width += pad_left + pad_right
        else:
            pad_left = pad_right = pad_top = pad_bottom = 0
        ch, cw = self.size
        if self.pad_if_needed:
            if height < ch:
                diff = ch - height
                pad_top += diff
                pad_bottom += diff
                height += 2 * diff
            if width < cw:
                diff = cw - width
                pad_left += diff
                pad_right += diff
                width += 2 * diff
        if height < ch or width < cw:
            raise ValueError(f"Required crop size {(ch, cw)} is larger than input image size "
                             f"{(height, width)}.")
        padding = [pad_left, pad_top, pad_right, pad_bottom]
        vert = height > ch
        top = _augment._randint(0, height - ch + 1) if vert else 0
        horz = width > cw
        left = _augment._randint(0, width - cw + 1) if horz else 0
        return dict(needs_crop=vert or horz, top=top, left=left, height=ch, width=cw,
                    needs_pad=any(padding), padding=padding)

    def transform(self, inpt, params):
        if params["needs_pad"]:
            inpt = F.pad(inpt, padding=params["padding"], fill=_fill_for(self._fill, inpt),
                         padding_mode=self.padding_mode)
        if params["needs_crop"]:
            inpt = F.crop(inpt, top=params["top"], left=params["left"],
                          height=params["height"], width=params["width"])
        return inpt


class RandomHorizontalFlip(_RandomApplyTransform):
    def transform(self, inpt, params):
        return F.horizontal_flip(inpt)


# ---- colour and erasing ----------------------------------------------------------------
class ColorJitter(Transform):
    def __init__(self, brightness=None, contrast=None, saturation=None, hue=None):
        super().__init__()
        check = _augment.ColorJitter._check_input
        self.brightness = None if brightness is None else check(brightness, "brightness")
        self.contrast = None if contrast is None else check(contrast, "contrast")
        self.saturation = None if saturation is None else check(saturation, "saturation")
        self.hue = None if hue is None else check(hue, "hue", center=0, bound=(-0.5, 0.5),
                                                  clip_first_on_zero=False)

    def make_params(self, flat_inputs):
        fn_idx, b, c, s, h = _augment.ColorJitter.get_params(self.brightness, self.contrast,
                                                             self.saturation, self.hue)
        return dict(fn_idx=fn_idx, brightness_factor=b, contrast_factor=c,
                    saturation_factor=s, hue_factor=h)

    def transform(self, inpt, params):
        output = inpt
        for fn_id in params["fn_idx"]:
            if fn_id == 0 and params["brightness_factor"] is not None:
                output = F.adjust_brightness(output, params["brightness_factor"])
            elif fn_id == 1 and params["contrast_factor"] is not None:
                output = F.adjust_contrast(output, params["contrast_factor"])
            elif fn_id == 2 and params["saturation_factor"] is not None:
                output = F.adjust_saturation(output, params["saturation_factor"])
            elif fn_id == 3 and params["hue_factor"] is not None:
                output = F.adjust_hue(output, params["hue_factor"])
        return output


class RandomErasing(_RandomApplyTransform):
    def __init__(self, p=0.5, scale=(0.02, 0.33), ratio=(0.3, 3.3), value=0.0, inplace=False):
        super().__init__(p=p)
        _augment.check_erasing_args(value, scale, ratio)
        self.scale = scale
        self.ratio = ratio
        if isinstance(value, (int, float)):
            self.value = [float(value)]
        elif isinstance(value, str):
            self.value = None
        elif isinstance(value, tuple):
            self.value = list(value)
        else:
            self.value = value
        self.inplace = inplace
        self._log_ratio = (math.log(ratio[0]), math.log(ratio[1]))

    def check_inputs(self, flat_inputs):
        for x in flat_inputs:
            if isinstance(x, tv_tensors.BoundingBoxes):
                warnings.warn(f"{type(self).__name__}() is currently passing through inputs of "
                              "type tv_tensors.BoundingBoxes. This will likely change in the "
                              "future.")

    def make_params(self, flat_inputs):
        from .... import empty, float32, tensor
        img_c, img_h, img_w = query_chw(flat_inputs)
        if self.value is not None and not (len(self.value) in (1, img_c)):
            raise ValueError("If value is a sequence, it should have either a single value or "
                             f"{img_c} (number of inpt channels)")
        area = img_h * img_w
        for _ in range(10):
            erase_area = area * _augment._uniform(self.scale[0], self.scale[1])
            aspect_ratio = math.exp(_augment._uniform(self._log_ratio[0], self._log_ratio[1]))
            h = int(round(math.sqrt(erase_area * aspect_ratio)))
            w = int(round(math.sqrt(erase_area / aspect_ratio)))
            if not (h < img_h and w < img_w):
                continue
            if self.value is None:
                v = empty([img_c, h, w], dtype=float32).normal_()
            else:
                v = tensor(self.value)[:, None, None]
            i = _augment._randint(0, img_h - h + 1)
            j = _augment._randint(0, img_w - w + 1)
            return dict(i=i, j=j, h=h, w=w, v=v)
        return dict(i=0, j=0, h=img_h, w=img_w, v=None)

    def transform(self, inpt, params):
        if params["v"] is None or isinstance(inpt, tv_tensors.BoundingBoxes):
            return inpt
        if _is_pil(inpt):
            from .. import functional as F1
            t = F1.pil_to_tensor(inpt)
            out = F1.erase(t, params["i"], params["j"], params["h"], params["w"],
                           params["v"].to(t.dtype), self.inplace)
            return F1.to_pil_image(out, mode=inpt.mode)
        v = params["v"].to(inpt.dtype)
        return F.erase(inpt, params["i"], params["j"], params["h"], params["w"], v,
                       inplace=self.inplace)


# the photometric Random* transforms and the augmentation policies (they subclass the above)
from ._auto_augment import *  # noqa: E402,F401,F403
from ._auto_augment import __all__ as _auto_augment_all  # noqa: E402
__all__ += _auto_augment_all
from ._warp import *  # noqa: E402,F401,F403
from ._warp import __all__ as _warp_all  # noqa: E402
__all__ += _warp_all
