"""`transforms.v2.functional`: the v2 kernels, dispatched on the input's type.

Images (tv_tensors.Image, plain tensors, PIL images) go through the v1 functional code, and
an Image comes back as an Image; BoundingBoxes have their own kernels (their coordinates
move with the image, their canvas_size follows it); other tv_tensors pass through unchanged.
"""
import numpy as np

from ...._tensor import Tensor
from ... import tv_tensors
from .. import functional as _F1
from ..functional import InterpolationMode, pil_to_tensor, to_pil_image  # noqa: F401

__all__ = ["to_image", "to_dtype", "to_pure_tensor", "resize", "crop", "center_crop",
           "resized_crop", "horizontal_flip", "hflip", "pad", "normalize", "erase",
           "adjust_brightness", "adjust_contrast", "adjust_saturation", "adjust_hue",
           "get_size", "convert_bounding_box_format", "clamp_bounding_boxes",
           "InterpolationMode"]


def _is_pil(x):
    from .._functional_pil import is_pil_image
    return is_pil_image(x)


def is_pure_tensor(x):
    return isinstance(x, Tensor) and not isinstance(x, tv_tensors.TVTensor)


def _plain(t):
    return t.as_subclass(Tensor) if isinstance(t, tv_tensors.TVTensor) else t


def _image_kernel(fn, name, pil=True):
    """A dispatcher: images through `fn`, Images rewrapped, other tv_tensors unchanged."""
    def apply(inpt, *args, **kwargs):
        if isinstance(inpt, tv_tensors.Image):
            return tv_tensors.wrap(fn(_plain(inpt), *args, **kwargs), like=inpt)
        if isinstance(inpt, tv_tensors.TVTensor):
            return inpt
        if is_pure_tensor(inpt) or (pil and _is_pil(inpt)):
            return fn(inpt, *args, **kwargs)
        raise TypeError(f"{name}() supports inputs of type torch.Tensor, tv_tensors.Image"
                        f"{', PIL.Image.Image' if pil else ''}, but got {type(inpt)} instead.")
    apply.__name__ = name
    return apply


# ---- bounding boxes --------------------------------------------------------------------
def convert_bounding_box_format(inpt, old_format=None, new_format=None, inplace=False):
    F = tv_tensors.BoundingBoxFormat
    if new_format is None:
        raise TypeError("convert_bounding_box_format() missing 1 required argument: "
                        "'new_format'")
    if isinstance(new_format, str):
        new_format = F[new_format.upper()]
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        if old_format is not None:
            raise ValueError("For bounding box tv_tensor inputs, `old_format` must not be "
                             "passed.")
        out = _convert_format(_plain(inpt), inpt.format, new_format)
        return tv_tensors.wrap(out, like=inpt, format=new_format)
    if old_format is None:
        raise ValueError("For pure tensor inputs, `old_format` has to be passed.")
    if isinstance(old_format, str):
        old_format = F[old_format.upper()]
    return _convert_format(inpt, old_format, new_format)


def _convert_format(boxes, old, new):
    from ...ops import box_convert
    if old == new:
        return boxes.clone()
    dtype = boxes.dtype
    out = box_convert(boxes if boxes.is_floating_point() else boxes.float(),
                      old.value.lower(), new.value.lower())
    return out.to(dtype)


def _clamp_plain(boxes, format, canvas_size, clamping_mode):
    if clamping_mode is None:
        return boxes.clone()
    F = tv_tensors.BoundingBoxFormat
    dtype = boxes.dtype
    xyxy = _convert_format(boxes if boxes.is_floating_point() else boxes.float(), format, F.XYXY)
    from .... import stack
    x = xyxy[..., 0::2].clamp(min=0, max=canvas_size[1])
    y = xyxy[..., 1::2].clamp(min=0, max=canvas_size[0])
    xyxy = stack((x, y), dim=-1).reshape(xyxy.shape)
    return _convert_format(xyxy, F.XYXY, format).to(dtype)


def clamp_bounding_boxes(inpt, format=None, canvas_size=None, clamping_mode="auto"):
    if clamping_mode is not None and clamping_mode not in ("soft", "hard", "auto"):
        raise ValueError(f"clamping_mode must be soft, hard, auto or None, got {clamping_mode}")
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        if format is not None or canvas_size is not None:
            raise ValueError("For bounding box tv_tensor inputs, `format` and `canvas_size` "
                             "must not be passed.")
        mode = inpt.clamping_mode if clamping_mode == "auto" else clamping_mode
        return tv_tensors.wrap(_clamp_plain(_plain(inpt), inpt.format, inpt.canvas_size, mode),
                               like=inpt)
    if format is None or canvas_size is None or clamping_mode == "auto":
        raise ValueError("For pure tensor inputs, `format`, `canvas_size` and `clamping_mode` "
                         "have to be passed.")
    if isinstance(format, str):
        format = tv_tensors.BoundingBoxFormat[format.upper()]
    return _clamp_plain(inpt, format, canvas_size, clamping_mode)


def _shift(boxes, dx, dy):
    """Translate boxes by (dx, dy); sizes are unchanged."""
    from .... import tensor
    xyxy = boxes.format == tv_tensors.BoundingBoxFormat.XYXY
    d = tensor([dx, dy, dx, dy] if xyxy else [dx, dy, 0, 0], device=boxes.device)
    return _plain(boxes) + d.to(boxes.dtype)


def _crop_boxes(boxes, top, left, height, width):
    out = tv_tensors.wrap(_shift(boxes, -left, -top), like=boxes, canvas_size=(height, width))
    return clamp_bounding_boxes(out)


def _hflip_boxes(boxes):
    F = tv_tensors.BoundingBoxFormat
    b = _plain(boxes).clone().reshape(-1, 4)
    w = boxes.canvas_size[1]
    if boxes.format == F.XYXY:
        out = b[:, [2, 1, 0, 3]]
        out[:, 0] = w - out[:, 0]
        out[:, 2] = w - out[:, 2]
    elif boxes.format == F.XYWH:
        out = b.clone()
        out[:, 0] = w - b[:, 0] - b[:, 2]
    else:
        out = b.clone()
        out[:, 0] = w - b[:, 0]
    return tv_tensors.wrap(out.reshape(boxes.shape), like=boxes)


def _resize_boxes(boxes, size, max_size=None):
    from .... import tensor
    old_h, old_w = boxes.canvas_size
    size = [size] if isinstance(size, int) else size
    new_h, new_w = _F1._resized_output_size((old_h, old_w), size, max_size)
    if (new_h, new_w) == (old_h, old_w):
        return boxes
    w_ratio, h_ratio = new_w / old_w, new_h / old_h
    ratios = tensor([w_ratio, h_ratio, w_ratio, h_ratio], device=boxes.device)
    out = _plain(boxes).mul(ratios).to(boxes.dtype)
    return tv_tensors.wrap(out, like=boxes, canvas_size=(new_h, new_w))


def _parse_pad_padding(padding):
    if isinstance(padding, int):
        return [padding] * 4
    padding = list(padding)
    if len(padding) == 1:
        return padding * 4
    if len(padding) == 2:
        return [padding[0], padding[0], padding[1], padding[1]]
    if len(padding) == 4:
        return [padding[0], padding[2], padding[1], padding[3]]
    raise ValueError(f"Padding must be an int or a 1, 2, or 4 element of tuple or list, got "
                     f"{len(padding)} elements")


def _pad_boxes(boxes, padding, padding_mode="constant"):
    if padding_mode not in ["constant"]:
        raise ValueError(f"Padding mode '{padding_mode}' is not supported with bounding boxes")
    left, right, top, bottom = _parse_pad_padding(padding)
    h, w = boxes.canvas_size
    out = tv_tensors.wrap(_shift(boxes, left, top), like=boxes,
                          canvas_size=(h + top + bottom, w + left + right))
    return clamp_bounding_boxes(out)


# ---- the dispatchers -------------------------------------------------------------------
def get_size(inpt):
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        return list(inpt.canvas_size)
    if isinstance(inpt, tv_tensors.Mask):
        return list(inpt.shape[-2:])
    _, h, w = _F1.get_dimensions(inpt)
    return [h, w]


def to_image(inpt):
    if isinstance(inpt, np.ndarray):
        from .... import from_numpy
        output = from_numpy(np.atleast_3d(inpt)).permute((2, 0, 1)).contiguous()
    elif _is_pil(inpt):
        output = pil_to_tensor(inpt)
    elif isinstance(inpt, Tensor):
        output = inpt
    else:
        raise TypeError(f"Input can either be a pure Tensor, a numpy array, or a PIL image, but "
                        f"got {type(inpt)} instead.")
    return tv_tensors.Image(output)


def to_pure_tensor(inpt):
    return _plain(inpt)


def _max_value(dtype):
    from .... import bool as _bool, iinfo
    if dtype.is_floating_point:
        return 1.0
    return 1 if dtype == _bool else iinfo(dtype).max


def _num_value_bits(dtype):
    from .... import int8, int16, int32, int64, uint8
    return {uint8: 8, int8: 7, int16: 15, int32: 31, int64: 63}.get(dtype, 0)


def _to_dtype_image(image, dtype, scale=False):
    from .... import float32, float64, int32, int64
    if image.dtype == dtype:
        return image
    if not scale:
        return image.to(dtype)
    if image.is_floating_point():
        if dtype.is_floating_point:
            return image.to(dtype)
        if (image.dtype == float32 and dtype in (int32, int64)) or (
                image.dtype == float64 and dtype == int64):
            raise RuntimeError(f"The conversion from {image.dtype} to {dtype} cannot be "
                               "performed safely.")
        eps = 1e-3
        return image.mul(float(_max_value(dtype)) + 1.0 - eps).to(dtype)
    if dtype.is_floating_point:
        return image.to(dtype).mul_(1.0 / _max_value(image.dtype))
    bits_in, bits_out = _num_value_bits(image.dtype), _num_value_bits(dtype)
    if bits_in > bits_out:
        return image.bitwise_right_shift(bits_in - bits_out).to(dtype)
    return image.to(dtype).bitwise_left_shift_(bits_out - bits_in)


def to_dtype(inpt, dtype, scale=False):
    if isinstance(inpt, tv_tensors.Image):
        return tv_tensors.wrap(_to_dtype_image(_plain(inpt), dtype, scale), like=inpt)
    if isinstance(inpt, tv_tensors.TVTensor):
        return inpt.to(dtype)
    if is_pure_tensor(inpt):
        return _to_dtype_image(inpt, dtype, scale)
    raise TypeError(f"to_dtype() supports inputs of type torch.Tensor and tv_tensors, but got "
                    f"{type(inpt)} instead.")


def _normalize(image, mean, std, inplace=False):
    if not image.is_floating_point():
        raise TypeError(f"Input tensor should be a float tensor. Got {image.dtype}.")
    if image.ndim < 3:
        raise ValueError("Expected tensor to be a tensor image of size (..., C, H, W). Got "
                         f"{tuple(image.shape)}.")
    return _F1.normalize(image, mean, std, inplace)


normalize = _image_kernel(_normalize, "normalize", pil=False)
erase = _image_kernel(_F1.erase, "erase", pil=False)
adjust_brightness = _image_kernel(_F1.adjust_brightness, "adjust_brightness")
adjust_contrast = _image_kernel(_F1.adjust_contrast, "adjust_contrast")
adjust_saturation = _image_kernel(_F1.adjust_saturation, "adjust_saturation")
adjust_hue = _image_kernel(_F1.adjust_hue, "adjust_hue")
_resize_image = _image_kernel(_F1.resize, "resize")
_crop_image = _image_kernel(_F1.crop, "crop")
_center_crop_image = _image_kernel(_F1.center_crop, "center_crop")
_hflip_image = _image_kernel(_F1.hflip, "horizontal_flip")
_pad_image = _image_kernel(_F1.pad, "pad")


def _on_mask(fn, mask, *args):
    """An image kernel applied to a Mask: a 2-D mask gets a channel for the call."""
    plain = _plain(mask)
    out = fn(plain[None] if plain.ndim == 2 else plain, *args)
    return tv_tensors.wrap(out[0] if plain.ndim == 2 else out, like=mask)


def resize(inpt, size, interpolation=InterpolationMode.BILINEAR, max_size=None, antialias=True):
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        return _resize_boxes(inpt, size, max_size)
    if isinstance(inpt, tv_tensors.Mask):  # labels are not interpolated
        return _on_mask(_F1.resize, inpt, size, InterpolationMode.NEAREST, max_size)
    return _resize_image(inpt, size, interpolation, max_size, antialias)


def crop(inpt, top, left, height, width):
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        return _crop_boxes(inpt, top, left, height, width)
    if isinstance(inpt, tv_tensors.Mask):
        return _on_mask(_F1.crop, inpt, top, left, height, width)
    return _crop_image(inpt, top, left, height, width)


def center_crop(inpt, output_size):
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        if isinstance(output_size, int):
            output_size = (output_size, output_size)
        elif len(output_size) == 1:
            output_size = (output_size[0], output_size[0])
        ch, cw = output_size
        h, w = inpt.canvas_size
        top, left = int(round((h - ch) / 2.0)), int(round((w - cw) / 2.0))
        return _crop_boxes(inpt, top, left, ch, cw)
    if isinstance(inpt, tv_tensors.Mask):
        return _on_mask(_F1.center_crop, inpt, output_size)
    return _center_crop_image(inpt, output_size)


def resized_crop(inpt, top, left, height, width, size, interpolation=InterpolationMode.BILINEAR,
                 antialias=True):
    out = crop(inpt, top, left, height, width)
    return resize(out, size, interpolation, antialias=antialias)


def horizontal_flip(inpt):
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        return _hflip_boxes(inpt)
    if isinstance(inpt, tv_tensors.Mask):
        return _on_mask(_F1.hflip, inpt)
    return _hflip_image(inpt)


hflip = horizontal_flip


def pad(inpt, padding, fill=0, padding_mode="constant"):
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        return _pad_boxes(inpt, padding, padding_mode)
    if isinstance(inpt, tv_tensors.Mask):
        return _on_mask(_F1.pad, inpt, padding, fill, padding_mode)
    return _pad_image(inpt, padding, fill, padding_mode)


# ---- photometric (the AutoAugment operations) ------------------------------------------
adjust_gamma = _image_kernel(_F1.adjust_gamma, "adjust_gamma")
adjust_sharpness = _image_kernel(_F1.adjust_sharpness, "adjust_sharpness")
autocontrast = _image_kernel(_F1.autocontrast, "autocontrast")
equalize = _image_kernel(_F1.equalize, "equalize")
invert = _image_kernel(_F1.invert, "invert")
posterize = _image_kernel(_F1.posterize, "posterize")
solarize = _image_kernel(_F1.solarize, "solarize")
__all__ += ["adjust_gamma", "adjust_sharpness", "autocontrast", "equalize", "invert",
            "posterize", "solarize"]


# ---- perspective and elastic warps -----------------------------------------------------
def _perspective_coefficients(startpoints, endpoints, coefficients):
    if coefficients is not None:
        if startpoints is not None and endpoints is not None:
            raise ValueError("The startpoints/endpoints and the coefficients shouldn't be "
                             "defined concurrently.")
        if len(coefficients) != 8:
            raise ValueError("Argument coefficients should have 8 float values")
        return list(coefficients)
    if startpoints is not None and endpoints is not None:
        return _F1._get_perspective_coeffs(startpoints, endpoints)
    raise ValueError("Either the startpoints/endpoints or the coefficients must have non "
                     "`None` values.")


def _box_corners_xyxy(boxes):
    """(N, 4) XYXY boxes (any format in) and their four corners (N, 4, 2) as float."""
    F = tv_tensors.BoundingBoxFormat
    plain = _plain(boxes)
    dtype = plain.dtype if plain.is_floating_point() else None
    xyxy = _convert_format(plain if dtype else plain.float(), boxes.format, F.XYXY)
    xyxy = xyxy.reshape(-1, 4)
    return xyxy[:, [[0, 1], [2, 1], [2, 3], [0, 3]]]


def _boxes_from_corners(points, boxes):
    """Corner points (N, 4, 2) -> the enclosing boxes, clamped, back in the input's format."""
    from .... import cat
    F = tv_tensors.BoundingBoxFormat
    out = cat([points.amin(dim=1), points.amax(dim=1)], dim=1)
    out = _clamp_plain(out, F.XYXY, boxes.canvas_size, boxes.clamping_mode)
    out = _convert_format(out, F.XYXY, boxes.format).reshape(boxes.shape).to(boxes.dtype)
    return tv_tensors.wrap(out, like=boxes)


def _perspective_boxes(boxes, coeffs):
    from .... import stack, tensor
    if boxes.numel() == 0:
        return boxes
    a, b, c, d, e, f, g, h = coeffs
    denom = a * e - b * d
    if denom == 0:
        raise RuntimeError(f"Provided perspective_coeffs {coeffs} can not be inverted to "
                           f"transform bounding boxes. Denominator is zero, denom={denom}")
    # the inverse mapping (output <- input) moves the corners forward
    inv = [(e - f * h) / denom, (-b + c * h) / denom, (b * f - c * e) / denom,
           (-d + f * g) / denom, (a - c * g) / denom, (-a * f + c * d) / denom,
           (-e * g + d * h) / denom, (-a * h + b * g) / denom]
    corners = _box_corners_xyxy(boxes)
    pts = corners.reshape(-1, 2)
    dtype = pts.dtype
    x, y = pts[:, 0], pts[:, 1]
    coef = tensor(inv, dtype=dtype, device=pts.device)
    den = x * coef[6] + y * coef[7] + 1.0
    nx = (x * coef[0] + y * coef[1] + coef[2]) / den
    ny = (x * coef[3] + y * coef[4] + coef[5]) / den
    return _boxes_from_corners(stack([nx, ny], dim=-1).reshape(-1, 4, 2), boxes)


def perspective(inpt, startpoints, endpoints, interpolation=InterpolationMode.BILINEAR,
                fill=None, coefficients=None):
    coeffs = _perspective_coefficients(startpoints, endpoints, coefficients)
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        return _perspective_boxes(inpt, coeffs)
    interpolation = _F1._interp(interpolation) if not isinstance(interpolation, str) \
        else InterpolationMode(interpolation)

    def warp(img, interp, fill_value):
        if _is_pil(img):
            return _F1.F_pil.perspective(img, coeffs, _F1._PIL_MODES[interp], fill_value)
        return _F1.F_t.perspective(img, coeffs, interp.value, fill_value)
    if isinstance(inpt, tv_tensors.Mask):
        return _on_mask(warp, inpt, InterpolationMode.NEAREST, fill)
    return _image_kernel(warp, "perspective")(inpt, interpolation, fill)


def _elastic_boxes(boxes, displacement):
    from .... import linspace, long, stack, tensor
    h, w = boxes.canvas_size
    expected = (1, h, w, 2)
    if tuple(displacement.shape) != expected:
        raise ValueError(f"Argument displacement shape should be {expected}, but given "
                         f"{displacement.shape}")
    if boxes.numel() == 0:
        return boxes
    corners = _box_corners_xyxy(boxes).reshape(-1, 2)
    dtype = corners.dtype
    disp = displacement.to(dtype=dtype, device=corners.device)
    # an approximate inverse of grid = identity + displacement: identity - displacement
    gx = linspace((-w + 1) / w, (w - 1) / w, w, dtype=dtype, device=corners.device)
    gy = linspace((-h + 1) / h, (h - 1) / h, h, dtype=dtype, device=corners.device)
    ix = corners[:, 0].ceil().to(long).clamp(0, w - 1)
    iy = corners[:, 1].ceil().to(long).clamp(0, h - 1)
    inv_x = gx[ix] - disp[0, iy, ix, 0]
    inv_y = gy[iy] - disp[0, iy, ix, 1]
    size = tensor([w, h], dtype=dtype, device=corners.device)
    points = (stack([inv_x, inv_y], dim=-1) + 1) * (0.5 * size) - 0.5
    return _boxes_from_corners(points.reshape(-1, 4, 2), boxes)


def elastic(inpt, displacement, interpolation=InterpolationMode.BILINEAR, fill=None):
    if isinstance(inpt, tv_tensors.BoundingBoxes):
        return _elastic_boxes(inpt, displacement)
    if isinstance(interpolation, str):
        interpolation = InterpolationMode(interpolation)
    if isinstance(inpt, tv_tensors.Mask):
        return _on_mask(_F1.elastic_transform, inpt, displacement, InterpolationMode.NEAREST,
                        fill)
    return _image_kernel(_F1.elastic_transform, "elastic")(inpt, displacement, interpolation,
                                                           fill)


elastic_transform = elastic
__all__ += ["perspective", "elastic", "elastic_transform"]
