"""Functional image transforms (torchvision.transforms.functional) on PIL images and tensors.

Each function checks its arguments as torchvision does, then hands PIL images to
`_functional_pil` and CxHxW tensors to `_functional_tensor`.
"""
import numbers
import sys
from enum import Enum

import numpy as np

from ... import dtypes
from ..._tensor import Tensor
from . import _functional_pil as F_pil
from . import _functional_tensor as F_t
from . import _functional_tensor_photometric as F_tp

__all__ = ["InterpolationMode", "to_tensor", "pil_to_tensor", "to_pil_image", "normalize",
           "convert_image_dtype", "get_dimensions", "get_image_size", "get_image_num_channels",
           "resize", "crop", "center_crop", "resized_crop", "pad", "hflip", "vflip", "rotate",
           "affine", "rgb_to_grayscale", "to_grayscale", "adjust_brightness",
           "adjust_contrast", "adjust_saturation", "adjust_hue", "gaussian_blur", "erase",
           "five_crop", "ten_crop", "adjust_gamma", "adjust_sharpness", "autocontrast",
           "equalize", "invert", "posterize", "solarize", "perspective", "elastic_transform"]


class InterpolationMode(Enum):
    NEAREST = "nearest"
    NEAREST_EXACT = "nearest-exact"
    BILINEAR = "bilinear"
    BICUBIC = "bicubic"
    BOX = "box"
    HAMMING = "hamming"
    LANCZOS = "lanczos"


# Pillow's resampling filter numbers (Image.Resampling), fixed since Pillow 2
_PIL_MODES = {InterpolationMode.NEAREST: 0, InterpolationMode.NEAREST_EXACT: 0,
              InterpolationMode.BILINEAR: 2, InterpolationMode.BICUBIC: 3,
              InterpolationMode.BOX: 4, InterpolationMode.HAMMING: 5,
              InterpolationMode.LANCZOS: 1}
pil_modes_mapping = _PIL_MODES  # torchvision's public name for the table
_FROM_INT = {0: InterpolationMode.NEAREST, 2: InterpolationMode.BILINEAR,
             3: InterpolationMode.BICUBIC, 4: InterpolationMode.BOX,
             5: InterpolationMode.HAMMING, 1: InterpolationMode.LANCZOS}


def _interp(interpolation):
    if isinstance(interpolation, int) and not isinstance(interpolation, bool):
        return _FROM_INT[interpolation]  # Pillow constants, as torchvision still accepts
    if isinstance(interpolation, str):
        return InterpolationMode(interpolation)
    if not isinstance(interpolation, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode or a "
                        "corresponding Pillow integer constant")
    return interpolation


_is_pil = F_pil.is_pil_image


def _check_img(img):
    if not (isinstance(img, Tensor) or _is_pil(img)):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")


# ---- conversions --------------------------------------------------------------------
def to_tensor(pic):
    """PIL image or HxWxC ndarray -> CxHxW tensor; uint8 scaled from [0, 255] to [0, 1] float32."""
    from ...ops.creation import from_numpy
    if not (_is_pil(pic) or isinstance(pic, np.ndarray)):
        raise TypeError(f"pic should be PIL Image or ndarray. Got {type(pic)}")
    if isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        arr = pic[:, :, None] if pic.ndim == 2 else pic
        t = from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))
        if arr.dtype == np.uint8:
            return t.to(dtypes.get_default_dtype()).div(255)
        return t
    mode_dtypes = {"I": np.int32, "I;16": np.int16, "I;16B": np.int16, "F": np.float32}
    arr = np.array(pic, dtype=mode_dtypes.get(pic.mode, np.uint8), copy=True)
    if pic.mode == "1":
        arr = 255 * arr
    if arr.ndim == 2:
        arr = arr[:, :, None]
    t = from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))
    if t.dtype is dtypes.uint8:
        return t.to(dtypes.get_default_dtype()).div(255)
    return t


def pil_to_tensor(pic):
    from ...ops.creation import from_numpy
    if not _is_pil(pic):
        raise TypeError(f"pic should be PIL Image. Got {type(pic)}")
    arr = np.array(pic, copy=True)
    if arr.dtype == np.uint16:  # ember has no uint16: 16-bit images ('I;16') as int16
        arr = arr.view(np.int16)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    return from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))


def to_pil_image(pic, mode=None):
    """CxHxW tensor (float in [0, 1] is scaled to uint8) or HxWxC ndarray -> PIL image."""
    from PIL import Image
    if isinstance(pic, Tensor):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        if pic.ndim == 2:
            pic = pic.unsqueeze(0)
        if pic.shape[-3] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {pic.shape[-3]} channels.")
        if pic.is_floating_point() and mode != "F":
            pic = pic.mul(255).byte()
        arr = np.transpose(pic.detach().cpu().numpy(), (1, 2, 0))
    elif isinstance(pic, np.ndarray):
        if pic.ndim not in (2, 3):
            raise ValueError(f"pic should be 2/3 dimensional. Got {pic.ndim} dimensions.")
        arr = pic[:, :, None] if pic.ndim == 2 else pic
        if arr.shape[-1] > 4:
            raise ValueError(f"pic should not have > 4 channels. Got {arr.shape[-1]} channels.")
    else:
        raise TypeError(f"pic should be Tensor or ndarray. Got {type(pic)}.")
    if arr.shape[2] == 1:
        arr = arr[:, :, 0]
        expected = {np.uint8: "L", np.int16: "I;16", np.uint16: "I;16", np.int32: "I",
                    np.float32: "F"}.get(arr.dtype.type)
        if mode is not None and mode != expected:
            raise ValueError(f"Incorrect mode ({mode}) supplied for input type {np.dtype}. "
                             f"Should be {expected}")
        mode = expected
        if mode == "I;16":  # Pillow builds 16-bit images from unsigned data only
            arr = arr.view(np.uint16) if arr.dtype == np.int16 else arr
            return Image.fromarray(np.ascontiguousarray(arr))
    else:
        permitted = {2: ["LA"], 3: ["RGB", "YCbCr", "HSV"], 4: ["RGBA", "CMYK", "RGBX"]}
        permitted = permitted[arr.shape[2]]
        if mode is not None and mode not in permitted:
            raise ValueError(f"Only modes {permitted} are supported for "
                             f"{arr.shape[2]}D inputs")
        if mode is None and arr.dtype == np.uint8:
            mode = permitted[0]
    if mode is None:
        raise TypeError(f"Input type {arr.dtype} is not supported")
    arr = np.ascontiguousarray(arr)
    if mode in ("L", "I", "F", "LA", "RGB", "RGBA") and Image.fromarray(arr).mode == mode:
        return Image.fromarray(arr)
    return Image.fromarray(arr, mode=mode)


def normalize(tensor, mean, std, inplace=False):
    from ...ops.creation import as_tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(tensor)}")
    if not tensor.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {tensor.dtype}.")
    if tensor.ndim < 3:
        raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got "
                         f"tensor.size() = {tuple(tensor.size())}")
    mean = as_tensor(mean, dtype=tensor.dtype, device=tensor.device)
    std = as_tensor(std, dtype=tensor.dtype, device=tensor.device)
    if bool((std == 0).any()):
        raise ValueError(f"std evaluated to zero after conversion to {tensor.dtype}, leading to "
                         "division by zero.")
    if mean.ndim == 1:
        mean = mean.view(-1, 1, 1)
    if std.ndim == 1:
        std = std.view(-1, 1, 1)
    if inplace:
        return tensor.sub_(mean).div_(std)
    return tensor.sub(mean).div(std)


def convert_image_dtype(image, dtype=dtypes.float32):
    return F_t.convert_image_dtype(image, dtype)


# ---- geometry -----------------------------------------------------------------------
def get_dimensions(img):
    if isinstance(img, Tensor):
        return F_t.get_dimensions(img)
    return F_pil.get_dimensions(img)


def get_image_size(img):
    _, h, w = get_dimensions(img)
    return [w, h]


def get_image_num_channels(img):
    return get_dimensions(img)[0]


def _resized_output_size(image_size, size, max_size=None):
    h, w = image_size
    if size is None or len(size) == 1:
        short, long = (w, h) if w <= h else (h, w)
        if size is None:  # only max_size: the longer side becomes max_size
            new_long = max_size
            new_short = int(new_long * short / long)
        else:
            requested = size[0]
            new_short, new_long = requested, int(requested * long / short)
            if max_size is not None:
                if max_size <= requested:
                    raise ValueError(f"max_size = {max_size} must be strictly greater than the "
                                     f"requested size for the smaller edge size = {size}")
                if new_long > max_size:
                    new_short, new_long = int(max_size * new_short / new_long), max_size
        new_w, new_h = (new_short, new_long) if w <= h else (new_long, new_short)
        return [new_h, new_w]
    return [size[0], size[1]]


def resize(img, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    _check_img(img)
    interpolation = _interp(interpolation)
    if isinstance(size, (list, tuple)):
        if len(size) not in [1, 2]:
            raise ValueError("Size must be an int or a 1 or 2 element tuple/list, not a "
                             f"{len(size)} element tuple/list")
        if max_size is not None and len(size) != 1:
            raise ValueError("max_size should only be passed if size is None or specifies the "
                             "length of the smaller edge, i.e. size should be an int or a "
                             "sequence of length 1 in torchscript mode.")
    elif size is not None and not isinstance(size, int):
        raise TypeError(f"Size should be int or sequence. Got {type(size)}")
    elif size is None and max_size is None:
        raise ValueError("If size=None, then max_size must be an int. Got max_size=None")
    if isinstance(size, int):
        size = [size]
    _, h, w = get_dimensions(img)
    out = _resized_output_size((h, w), size, max_size)
    if [h, w] == out:
        return img
    if not isinstance(img, Tensor):
        return F_pil.resize(img, out, _PIL_MODES[interpolation])
    return F_t.resize(img, out, interpolation.value, antialias)


def crop(img, top, left, height, width):
    _check_img(img)
    if isinstance(img, Tensor):
        return F_t.crop(img, top, left, height, width)
    return F_pil.crop(img, top, left, height, width)


def center_crop(img, output_size):
    if isinstance(output_size, numbers.Number):
        output_size = (int(output_size), int(output_size))
    elif isinstance(output_size, (tuple, list)) and len(output_size) == 1:
        output_size = (output_size[0], output_size[0])
    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = output_size
    if crop_width > image_width or crop_height > image_height:
        padding_ltrb = [
            (crop_width - image_width) // 2 if crop_width > image_width else 0,
            (crop_height - image_height) // 2 if crop_height > image_height else 0,
            (crop_width - image_width + 1) // 2 if crop_width > image_width else 0,
            (crop_height - image_height + 1) // 2 if crop_height > image_height else 0,
        ]
        img = pad(img, padding_ltrb, fill=0)
        _, image_height, image_width = get_dimensions(img)
        if crop_width == image_width and crop_height == image_height:
            return img
    crop_top = int(round((image_height - crop_height) / 2.0))
    crop_left = int(round((image_width - crop_width) / 2.0))
    return crop(img, crop_top, crop_left, crop_height, crop_width)


def resized_crop(img, top, left, height, width, size,
                 interpolation=InterpolationMode.BILINEAR, antialias=True):
    img = crop(img, top, left, height, width)
    return resize(img, size, interpolation, antialias=antialias)


def pad(img, padding, fill=0, padding_mode="constant"):
    _check_img(img)
    if not isinstance(img, Tensor):
        return F_pil.pad(img, padding, fill, padding_mode)
    if not isinstance(padding, (int, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if not isinstance(fill, (int, float)):
        raise TypeError("Got inappropriate fill arg")
    if not isinstance(padding_mode, str):
        raise TypeError("Got inappropriate padding_mode arg")
    if isinstance(padding, (tuple, list)) and len(padding) not in [1, 2, 4]:
        raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple, not a "
                         f"{len(padding)} element tuple")
    if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    return F_t.pad(img, padding, fill, padding_mode)


def hflip(img):
    _check_img(img)
    return F_t.hflip(img) if isinstance(img, Tensor) else F_pil.hflip(img)


def vflip(img):
    _check_img(img)
    return F_t.vflip(img) if isinstance(img, Tensor) else F_pil.vflip(img)


def rotate(img, angle, interpolation=InterpolationMode.NEAREST, expand=False, center=None,
           fill=None):
    _check_img(img)
    interpolation = _interp(interpolation)
    if not isinstance(angle, (int, float)):
        raise TypeError("Argument angle should be int or float")
    if center is not None and not isinstance(center, (list, tuple)):
        raise TypeError("Argument center should be a sequence")
    if not isinstance(img, Tensor):
        return F_pil.rotate(img, angle, _PIL_MODES[interpolation], expand, center, fill)
    center_f = [0.0, 0.0]
    if center is not None:
        _, height, width = get_dimensions(img)
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height])]
    matrix = F_t.inverse_affine_matrix(center_f, -angle, [0.0, 0.0], 1.0, [0.0, 0.0])
    return F_t.affine(img, matrix, interpolation.value, fill, expand=expand)


def affine(img, angle, translate, scale, shear, interpolation=InterpolationMode.NEAREST,
           fill=None, center=None):
    _check_img(img)
    interpolation = _interp(interpolation)
    if not isinstance(translate, (list, tuple)) or len(translate) != 2:
        raise ValueError("Argument translate should be a sequence of length 2")
    if scale <= 0.0:
        raise ValueError("Argument scale should be positive")
    if isinstance(shear, numbers.Number):
        shear = [shear, 0.0]
    shear = list(shear) if len(shear) == 2 else [shear[0], 0.0]
    _, height, width = get_dimensions(img)
    if not isinstance(img, Tensor):
        center_p = [width * 0.5, height * 0.5] if center is None else center
        matrix = F_t.inverse_affine_matrix(center_p, angle, translate, scale, shear)
        return F_pil.affine(img, matrix, _PIL_MODES[interpolation], fill)
    center_f = [0.0, 0.0]
    if center is not None:
        center_f = [1.0 * (c - s * 0.5) for c, s in zip(center, [width, height])]
    matrix = F_t.inverse_affine_matrix(center_f, angle, [float(t) for t in translate],
                                       scale, shear)
    return F_t.affine(img, matrix, interpolation.value, fill)


def five_crop(img, size):
    if isinstance(size, numbers.Number):
        size = (int(size), int(size))
    elif isinstance(size, (tuple, list)) and len(size) == 1:
        size = (size[0], size[0])
    if len(size) != 2:
        raise ValueError("Please provide only two dimensions (h, w) for size.")
    _, image_height, image_width = get_dimensions(img)
    crop_height, crop_width = size
    if crop_width > image_width or crop_height > image_height:
        raise ValueError(f"Requested crop size {size} is bigger than input size "
                         f"{(image_height, image_width)}")
    tl = crop(img, 0, 0, crop_height, crop_width)
    tr = crop(img, 0, image_width - crop_width, crop_height, crop_width)
    bl = crop(img, image_height - crop_height, 0, crop_height, crop_width)
    br = crop(img, image_height - crop_height, image_width - crop_width, crop_height,
              crop_width)
    return tl, tr, bl, br, center_crop(img, [crop_height, crop_width])


def ten_crop(img, size, vertical_flip=False):
    first = five_crop(img, size)
    second = five_crop(vflip(img) if vertical_flip else hflip(img), size)
    return first + second


# ---- color --------------------------------------------------------------------------
def rgb_to_grayscale(img, num_output_channels=1):
    if isinstance(img, Tensor):
        return F_t.rgb_to_grayscale(img, num_output_channels)
    return F_pil.to_grayscale(img, num_output_channels)


to_grayscale = rgb_to_grayscale


def _check_factor(name, value):
    if value < 0:
        raise ValueError(f"{name} ({value}) is not non-negative.")


def adjust_brightness(img, brightness_factor):
    _check_img(img)
    _check_factor("brightness_factor", brightness_factor)
    if isinstance(img, Tensor):
        return F_t.adjust_brightness(img, brightness_factor)
    return F_pil.adjust_brightness(img, brightness_factor)


def adjust_contrast(img, contrast_factor):
    _check_img(img)
    _check_factor("contrast_factor", contrast_factor)
    if isinstance(img, Tensor):
        return F_t.adjust_contrast(img, contrast_factor)
    return F_pil.adjust_contrast(img, contrast_factor)


def adjust_saturation(img, saturation_factor):
    _check_img(img)
    _check_factor("saturation_factor", saturation_factor)
    if isinstance(img, Tensor):
        return F_t.adjust_saturation(img, saturation_factor)
    return F_pil.adjust_saturation(img, saturation_factor)


def adjust_hue(img, hue_factor):
    _check_img(img)
    if not (-0.5 <= hue_factor <= 0.5):
        raise ValueError(f"hue_factor ({hue_factor}) is not in [-0.5, 0.5].")
    if isinstance(img, Tensor):
        return F_t.adjust_hue(img, hue_factor)
    return F_pil.adjust_hue(img, hue_factor)


def gaussian_blur(img, kernel_size, sigma=None):
    if not isinstance(kernel_size, (int, list, tuple)):
        raise TypeError("kernel_size should be int or a sequence of integers. Got "
                        f"{type(kernel_size)}")
    if isinstance(kernel_size, int):
        kernel_size = [kernel_size, kernel_size]
    if len(kernel_size) != 2:
        raise ValueError("If kernel_size is a sequence its length should be 2. Got "
                         f"{len(kernel_size)}")
    for ksize in kernel_size:
        if ksize % 2 == 0 or ksize < 0:
            raise ValueError(f"kernel_size should have odd and positive integers. Got "
                             f"{kernel_size}")
    if sigma is None:
        sigma = [ksize * 0.15 + 0.35 for ksize in kernel_size]
    if not isinstance(sigma, (int, float, list, tuple)):
        raise TypeError(f"sigma should be either float or sequence of floats. Got {type(sigma)}")
    if isinstance(sigma, (int, float)):
        sigma = [float(sigma), float(sigma)]
    if isinstance(sigma, (list, tuple)) and len(sigma) == 1:
        sigma = [sigma[0], sigma[0]]
    if len(sigma) != 2:
        raise ValueError(f"If sigma is a sequence, its length should be 2. Got {len(sigma)}")
    for s in sigma:
        if s <= 0.0:
            raise ValueError(f"sigma should have positive values. Got {sigma}")
    if isinstance(img, Tensor):
        return F_t.gaussian_blur(img, kernel_size, sigma)
    if not _is_pil(img):
        raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")
    # PIL images are blurred as tensors, as torchvision does
    out = F_t.gaussian_blur(pil_to_tensor(img), kernel_size, sigma)
    return to_pil_image(out, mode=img.mode)


def erase(img, i, j, h, w, v, inplace=False):
    if not isinstance(img, Tensor):
        raise TypeError(f"img should be Tensor Image. Got {type(img)}")
    return F_t.erase(img, i, j, h, w, v, inplace)


# ---- photometric (torchvision's AutoAugment operations) -------------------------------
def adjust_gamma(img, gamma, gain=1):
    if isinstance(img, Tensor):
        return F_tp.adjust_gamma(img, gamma, gain)
    return F_pil.adjust_gamma(img, gamma, gain)


def invert(img):
    return F_tp.invert(img) if isinstance(img, Tensor) else F_pil.invert(img)


def posterize(img, bits):
    if not 0 <= bits <= 8:
        raise ValueError(f"The number if bits should be between 0 and 8. Got {bits}")
    return F_tp.posterize(img, bits) if isinstance(img, Tensor) else F_pil.posterize(img, bits)


def solarize(img, threshold):
    if isinstance(img, Tensor):
        return F_tp.solarize(img, threshold)
    return F_pil.solarize(img, threshold)


def adjust_sharpness(img, sharpness_factor):
    if isinstance(img, Tensor):
        return F_tp.adjust_sharpness(img, sharpness_factor)
    return F_pil.adjust_sharpness(img, sharpness_factor)


def autocontrast(img):
    return F_tp.autocontrast(img) if isinstance(img, Tensor) else F_pil.autocontrast(img)


def equalize(img):
    return F_tp.equalize(img) if isinstance(img, Tensor) else F_pil.equalize(img)


def _get_perspective_coeffs(startpoints, endpoints):
    """The 8 coefficients mapping `endpoints` back onto `startpoints` (a float64 solve,
    rounded to float32 as torchvision's)."""
    if len(startpoints) != 4 or len(endpoints) != 4:
        raise ValueError(f"Please provide exactly four corners, got {len(startpoints)} "
                         f"startpoints and {len(endpoints)} endpoints.")
    a = np.zeros((8, 8), np.float64)
    for i, (p1, p2) in enumerate(zip(endpoints, startpoints)):
        a[2 * i] = [p1[0], p1[1], 1, 0, 0, 0, -p2[0] * p1[0], -p2[0] * p1[1]]
        a[2 * i + 1] = [0, 0, 0, p1[0], p1[1], 1, -p2[1] * p1[0], -p2[1] * p1[1]]
    b = np.asarray(startpoints, np.float64).reshape(8)
    solution = np.linalg.lstsq(a, b, rcond=None)[0]
    return solution.astype(np.float32).tolist()


def perspective(img, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR,
                fill=None):
    coeffs = _get_perspective_coeffs(startpoints, endpoints)
    if isinstance(interpolation, int) and not isinstance(interpolation, bool):
        interpolation = _FROM_INT[interpolation]
    elif not isinstance(interpolation, InterpolationMode):
        raise TypeError("Argument interpolation should be a InterpolationMode or a "
                        "corresponding Pillow integer constant")
    if not isinstance(img, Tensor):
        return F_pil.perspective(img, coeffs, _PIL_MODES[interpolation], fill)
    return F_t.perspective(img, coeffs, interpolation.value, fill)


def elastic_transform(img, displacement, interpolation=InterpolationMode.BILINEAR, fill=None):
    import warnings
    if isinstance(interpolation, int) and not isinstance(interpolation, bool):
        warnings.warn("Argument interpolation should be of type InterpolationMode instead of "
                      "int. Please, use InterpolationMode enum.")
        interpolation = _FROM_INT[interpolation]
    if not isinstance(displacement, Tensor):
        raise TypeError("Argument displacement should be a Tensor")
    tensor_img = img
    if not isinstance(img, Tensor):
        if not _is_pil(img):
            raise TypeError(f"img should be PIL Image or Tensor. Got {type(img)}")
        tensor_img = pil_to_tensor(img)
    shape = (1,) + tuple(tensor_img.shape[-2:]) + (2,)
    if shape != tuple(displacement.shape):
        raise ValueError(f"Argument displacement shape should be {shape}, but given "
                         f"{displacement.shape}")
    out = F_t.elastic_transform(tensor_img, displacement, interpolation.value, fill)
    return out if isinstance(img, Tensor) else to_pil_image(out, mode=img.mode)


del sys
