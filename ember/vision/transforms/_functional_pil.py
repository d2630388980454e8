"""Image transforms on PIL images, as torchvision's PIL path (Pillow does the pixel work).

Pillow is imported inside the functions: ember must import without it.
"""
import numbers

import numpy as np


def is_pil_image(img):
    try:
        from PIL import Image
    except ImportError:
        return False
    return isinstance(img, Image.Image)


def _check(img):
    if not is_pil_image(img):
        raise TypeError(f"img should be PIL Image. Got {type(img)}")


def get_dimensions(img):
    _check(img)
    channels = len(img.getbands())
    width, height = img.size
    return [channels, height, width]


def parse_fill(fill, img, name="fillcolor"):
    """Pillow's fill option: one int per band (a float for mode 'F')."""
    num_channels = len(img.getbands())
    if fill is None:
        fill = 0
    if isinstance(fill, (int, float)) and num_channels > 1:
        fill = tuple([fill] * num_channels)
    if isinstance(fill, (list, tuple)):
        if len(fill) == 1:
            fill = fill * num_channels
        elif len(fill) != num_channels:
            raise ValueError("The number of elements in 'fill' does not match the number of "
                             f"channels of the image ({len(fill)} != {num_channels})")
        fill = tuple(fill)
    if img.mode != "F":
        fill = tuple(int(x) for x in fill) if isinstance(fill, (list, tuple)) else int(fill)
    return {name: fill}


def hflip(img):
    from PIL import Image
    _check(img)
    return img.transpose(Image.FLIP_LEFT_RIGHT)


def vflip(img):
    from PIL import Image
    _check(img)
    return img.transpose(Image.FLIP_TOP_BOTTOM)


def crop(img, top, left, height, width):
    _check(img)
    return img.crop((left, top, left + width, top + height))


def pad(img, padding, fill=0, padding_mode="constant"):
    from PIL import Image, ImageOps
    _check(img)
    if not isinstance(padding, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate padding arg")
    if fill is not None and not isinstance(fill, (numbers.Number, tuple, list)):
        raise TypeError("Got inappropriate fill arg")
    if not isinstance(padding_mode, str):
        raise TypeError("Got inappropriate padding_mode arg")
    if isinstance(padding, list):
        padding = tuple(padding)
    if isinstance(padding, tuple) and len(padding) not in [1, 2, 4]:
        raise ValueError("Padding must be an int or a 1, 2, or 4 element tuple, not a "
                         f"{len(padding)} element tuple")
    if isinstance(padding, tuple) and len(padding) == 1:
        padding = padding[0]
    if padding_mode not in ["constant", "edge", "reflect", "symmetric"]:
        raise ValueError("Padding mode should be either constant, edge, reflect or symmetric")
    if padding_mode == "constant":
        opts = parse_fill(fill, img, name="fill")
        if img.mode == "P":
            palette = img.getpalette()
            image = ImageOps.expand(img, border=padding, **opts)
            image.putpalette(palette)
            return image
        return ImageOps.expand(img, border=padding, **opts)
    if isinstance(padding, int):
        left = right = top = bottom = padding
    elif len(padding) == 2:
        left = right = padding[0]
        top = bottom = padding[1]
    else:
        left, top, right, bottom = padding
    # negative padding crops, as for tensors
    cropping = -np.minimum([left, top, right, bottom], 0)
    if cropping.any():
        l, t, r, b = (int(v) for v in cropping)
        img = img.crop((l, t, img.width - r, img.height - b))
    left, top, right, bottom = (max(v, 0) for v in (left, top, right, bottom))
    if img.mode == "P":
        palette = img.getpalette()
        arr = np.pad(np.asarray(img), ((top, bottom), (left, right)), padding_mode)
        out = Image.fromarray(arr)
        out.putpalette(palette)
        return out
    arr = np.asarray(img)
    widths = ((top, bottom), (left, right)) + (((0, 0),) if arr.ndim == 3 else ())
    return Image.fromarray(np.pad(arr, widths, padding_mode))


def resize(img, size, interpolation):
    """size is the final [h, w]."""
    _check(img)
    return img.resize(tuple(size[::-1]), interpolation)


def rotate(img, angle, interpolation, expand=False, center=None, fill=None):
    _check(img)
    return img.rotate(angle, interpolation, expand, center, **parse_fill(fill, img))


def affine(img, matrix, interpolation, fill=None):
    from PIL import Image
    _check(img)
    return img.transform(img.size, Image.AFFINE, matrix, interpolation, **parse_fill(fill, img))


def to_grayscale(img, num_output_channels):
    from PIL import Image
    _check(img)
    if num_output_channels == 1:
        return img.convert("L")
    if num_output_channels == 3:
        arr = np.array(img.convert("L"), dtype=np.uint8)
        return Image.fromarray(np.dstack([arr, arr, arr]), "RGB")
    raise ValueError("num_output_channels should be either 1 or 3")


def adjust_brightness(img, factor):
    from PIL import ImageEnhance
    _check(img)
    return ImageEnhance.Brightness(img).enhance(factor)


def adjust_contrast(img, factor):
    from PIL import ImageEnhance
    _check(img)
    return ImageEnhance.Contrast(img).enhance(factor)


def adjust_saturation(img, factor):
    from PIL import ImageEnhance
    _check(img)
    return ImageEnhance.Color(img).enhance(factor)


def adjust_hue(img, hue_factor):
    from PIL import Image
    _check(img)
    mode = img.mode
    if mode in {"L", "1", "I", "F"}:
        return img
    h, s, v = img.convert("HSV").split()
    np_h = np.array(h, dtype=np.uint8)
    # hue is an angle: uint8 addition wraps around, as intended
    np_h += np.array(int(hue_factor * 255)).astype(np.uint8)
    h = Image.fromarray(np_h, "L")
    return Image.merge("HSV", (h, s, v)).convert(mode)


def adjust_gamma(img, gamma, gain=1.0):
    _check(img)
    if gamma < 0:
        raise ValueError("Gamma should be a non-negative real number")
    input_mode = img.mode
    img = img.convert("RGB")
    # the same truncating scale as the tensor path's float -> uint8 conversion
    table = [int((255 + 1 - 1e-3) * gain * pow(v / 255.0, gamma)) for v in range(256)] * 3
    return img.point(table).convert(input_mode)


def adjust_sharpness(img, sharpness_factor):
    from PIL import ImageEnhance
    _check(img)
    return ImageEnhance.Sharpness(img).enhance(sharpness_factor)


def _image_ops(name):
    def apply(img, *args):
        from PIL import ImageOps
        _check(img)
        return getattr(ImageOps, name)(img, *args)
    apply.__name__ = name
    return apply


invert = _image_ops("invert")
posterize = _image_ops("posterize")
solarize = _image_ops("solarize")
autocontrast = _image_ops("autocontrast")
equalize = _image_ops("equalize")


def perspective(img, perspective_coeffs, interpolation=3, fill=None):
    from PIL import Image
    _check(img)
    return img.transform(img.size, Image.PERSPECTIVE, perspective_coeffs, interpolation,
                         **parse_fill(fill, img))
