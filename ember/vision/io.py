"""`ember.vision.io` (torchvision.io's image part): read, decode, encode and write images.

Images are uint8 tensors laid out (C, H, W) and encoded files are 1-D uint8 tensors of bytes,
as torchvision returns them. Pillow (the `vision` extra) does the codec work; it is imported
inside the functions, so ember imports without it.
"""
import enum
import io as _io
import os

import numpy as np

from .. import from_numpy, uint8

__all__ = ["ImageReadMode", "read_file", "write_file", "decode_image", "decode_png",
           "decode_jpeg", "encode_png", "encode_jpeg", "write_png", "write_jpeg", "read_image",
           "decode_gif", "decode_webp", "decode_avif", "decode_heic"]


class ImageReadMode(enum.Enum):
    """The channels a decoder returns: as stored, or converted to gray / gray + alpha / RGB /
    RGB + alpha."""
    UNCHANGED = 0
    GRAY = 1
    GRAY_ALPHA = 2
    RGB = 3
    RGB_ALPHA = 4


def _pil():
    try:
        from PIL import Image, ImageOps
    except ImportError as e:  # pragma: no cover - depends on the installation
        raise ImportError("ember.vision.io needs Pillow: pip install 'ember[vision]'") from e
    return Image, ImageOps


def read_file(path):
    """The bytes of a file as a 1-D uint8 tensor."""
    path = os.fspath(path)
    if not os.path.exists(path):
        raise RuntimeError(f"[Errno 2] No such file or directory: '{path}'")
    with open(path, "rb") as f:
        data = f.read()
    return from_numpy(np.frombuffer(data, dtype=np.uint8).copy())


def write_file(filename, data):
    """Write a 1-D uint8 tensor of bytes to `filename`."""
    _check_bytes(data, "write_file")
    with open(os.fspath(filename), "wb") as f:
        f.write(data.cpu().numpy().tobytes())


def _check_bytes(data, name):
    if not hasattr(data, "dtype") or data.dtype != uint8:
        raise RuntimeError("Expected a torch.uint8 tensor")
    if data.dim() != 1:
        raise RuntimeError("Expected a single dimension tensor, got "
                           f"{data.dim()} dims")


def _mode(mode):
    if isinstance(mode, str):
        mode = ImageReadMode[mode.upper()]
    if not isinstance(mode, ImageReadMode):
        raise TypeError(f"mode should be an ImageReadMode or a str, got {type(mode)}")
    return mode


def _rgb_to_gray(rgb):
    """libpng's rgb_to_gray (the decoders torchvision uses): 15-bit fixed-point weights
    6968 / 23434 / 2366 with rounding; pixels that are already gray stay exactly as they are."""
    r, g, b = (rgb[..., i].astype(np.uint32) for i in range(3))
    mixed = ((6968 * r + 23434 * g + 2366 * b + 16384) >> 15).astype(np.uint8)
    return np.where((r == g) & (r == b), rgb[..., 0], mixed)


def _to_tensor(img, mode, what):
    """A decoded Pillow image -> uint8 (C, H, W) with the channels `mode` asks for."""
    if img.mode in ("I;16", "I;16B", "I;16L", "I", "F"):
        raise RuntimeError(f"{what}: {img.mode} images (more than 8 bits per sample) need a "
                           "uint16 result, which ember.vision.io does not decode")
    # the image's own channels: gray, gray + alpha, RGB or RGB + alpha (palettes expanded,
    # a transparent palette entry or colour key becoming an alpha channel)
    has_alpha = "A" in img.getbands() or "transparency" in img.info
    color = img.mode not in ("1", "L", "LA", "La", "I", "F") and not (
        img.mode == "P" and img.palette is not None and img.palette.mode in ("L", "LA"))
    native = ("RGBA" if has_alpha else "RGB") if color else ("LA" if has_alpha else "L")
    if img.mode != native:
        img = img.convert(native)
    arr = np.asarray(img, dtype=np.uint8)
    if arr.ndim == 2:
        arr = arr[:, :, None]
    alpha = arr[..., -1:] if has_alpha else None
    want_color = {ImageReadMode.UNCHANGED: color, ImageReadMode.GRAY: False,
                  ImageReadMode.GRAY_ALPHA: False, ImageReadMode.RGB: True,
                  ImageReadMode.RGB_ALPHA: True}[mode]
    want_alpha = {ImageReadMode.UNCHANGED: has_alpha, ImageReadMode.GRAY: False,
                  ImageReadMode.GRAY_ALPHA: True, ImageReadMode.RGB: False,
                  ImageReadMode.RGB_ALPHA: True}[mode]
    if color and not want_color:
        base = _rgb_to_gray(arr[..., :3])[..., None]
    elif not color and want_color:
        base = np.repeat(arr[..., :1], 3, axis=2)
    else:
        base = arr[..., :3] if color else arr[..., :1]
    if want_alpha:
        if alpha is None:
            alpha = np.full(base.shape[:2] + (1,), 255, np.uint8)
        base = np.concatenate([base, alpha], axis=2)
    return from_numpy(np.ascontiguousarray(base.transpose(2, 0, 1)))


def _decode(data, mode, apply_exif_orientation, expect, what):
    Image, ImageOps = _pil()
    _check_bytes(data, what)
    mode = _mode(mode)
    raw = data.cpu().numpy().tobytes()
    try:
        img = Image.open(_io.BytesIO(raw))
        if img.format == "JPEG" and mode is ImageReadMode.GRAY and img.mode == "RGB":
            # libjpeg's own grayscale output (the luma plane), as torchvision asks for it
            img.draft("L", img.size)
        img.load()
    except Exception as e:
        raise RuntimeError(f"{what}: could not decode the image ({e})") from None
    if expect is not None and img.format != expect:
        raise RuntimeError(f"{what}: the content is not a {expect} image "
                           f"(found {img.format or 'an unknown format'})")
    if apply_exif_orientation:
        img = ImageOps.exif_transpose(img)
    return _to_tensor(img, mode, what)


def decode_image(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    """Decode a JPEG, PNG, GIF, WEBP ... given as bytes (or a path). GIF and WebP go to
    decode_gif (every frame, RGB) and decode_webp, as torchvision's dispatch does."""
    if isinstance(input, (str, os.PathLike)):
        input = read_file(input)
    _check_bytes(input, "decode_image")
    head = input[:15].cpu().numpy().tobytes()
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return decode_gif(input)
    if head[:4] == b"RIFF" and head[8:15] == b"WEBPVP8":
        return decode_webp(input, mode)
    return _decode(input, mode, apply_exif_orientation, None, "decode_image")


def read_image(path, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    return decode_image(read_file(path), mode, apply_exif_orientation)


def decode_png(input, mode=ImageReadMode.UNCHANGED, apply_exif_orientation=False):
    return _decode(input, mode, apply_exif_orientation, "PNG", "decode_png")


def decode_jpeg(input, mode=ImageReadMode.UNCHANGED, device="cpu", apply_exif_orientation=False):
    if isinstance(input, (list, tuple)):
        return [decode_jpeg(t, mode, device, apply_exif_orientation) for t in input]
    out = _decode(input, mode, apply_exif_orientation, "JPEG", "decode_jpeg")
    return out if str(device) == "cpu" else out.to(device)


def _image_array(input, name):
    if not hasattr(input, "dtype") or input.dtype != uint8:
        raise RuntimeError("Input tensor dtype should be uint8")
    if input.dim() != 3:
        raise RuntimeError(f"Input data should be a 3-dimensional tensor, got {input.dim()} dims")
    channels = input.shape[0]
    if channels not in (1, 3):
        raise RuntimeError(f"The number of channels should be 1 or 3, got: {channels}")
    arr = np.ascontiguousarray(input.detach().cpu().numpy().transpose(1, 2, 0))
    return arr[:, :, 0] if channels == 1 else arr


def encode_png(input, compression_level=6):
    """PNG bytes (1-D uint8 tensor) of a uint8 (C, H, W) image with 1 or 3 channels."""
    Image, _ = _pil()
    if compression_level < 0 or compression_level > 9:
        raise RuntimeError("Compression level should be between 0 and 9")
    buf = _io.BytesIO()
    Image.fromarray(_image_array(input, "encode_png")).save(buf, format="PNG",
                                                            compress_level=compression_level)
    return from_numpy(np.frombuffer(buf.getvalue(), dtype=np.uint8).copy())


def encode_jpeg(input, quality=75):
    """JPEG bytes (1-D uint8 tensor) of a uint8 (C, H, W) image, or a list of them."""
    Image, _ = _pil()
    if quality < 1 or quality > 100:
        raise ValueError("Image quality should be a positive number between 1 and 100")
    if isinstance(input, (list, tuple)):
        if not input:
            raise ValueError("encode_jpeg requires at least one input tensor when a list is "
                             "passed")
        return [encode_jpeg(t, quality) for t in input]
    buf = _io.BytesIO()
    Image.fromarray(_image_array(input, "encode_jpeg")).save(buf, format="JPEG", quality=quality)
    return from_numpy(np.frombuffer(buf.getvalue(), dtype=np.uint8).copy())


def write_png(input, filename, compression_level=6):
    write_file(filename, encode_png(input, compression_level))


def write_jpeg(input, filename, quality=75):
    write_file(filename, encode_jpeg(input, quality))


def _check_encoded(input):
    if not hasattr(input, "dtype") or input.dtype != uint8:
        raise RuntimeError("Input tensor must have uint8 data type, got "
                           f"{getattr(input, 'dtype', type(input))}")
    if input.dim() != 1:
        raise RuntimeError(f"Input tensor must be 1-dimensional, got {input.dim()} dims.")


def decode_gif(input):
    """Every image of a GIF as RGB uint8: (C, H, W) for one image, (N, C, H, W) for more.
    Each frame is its own pixels (not composited onto the previous ones); all frames must
    have the first one's size."""
    from ._gif import GifError, read_gif_frames
    _check_encoded(input)
    try:
        frames = read_gif_frames(input.cpu().numpy().tobytes())
    except GifError as e:
        raise RuntimeError(f"DGifSlurp() failed - {e}") from None
    if any(f.shape != frames[0].shape for f in frames):
        raise RuntimeError("All images in the gif should have the same dimensions.")
    out = from_numpy(np.ascontiguousarray(np.stack(frames).transpose(0, 3, 1, 2)))
    return out[0] if len(frames) == 1 else out


def _decode_rgb(input, mode, fmt, what):
    """An RGB[A] codec through Pillow: UNCHANGED keeps the alpha channel the file has, RGB
    drops it, RGB_ALPHA adds an opaque one; other modes read as UNCHANGED, as torchvision's
    WebP decoder does."""
    Image, _ = _pil()
    mode = _mode(mode)
    try:
        img = Image.open(_io.BytesIO(input.cpu().numpy().tobytes()))
        if img.format != fmt:
            raise ValueError(f"the content is not a {fmt} image")
        if getattr(img, "is_animated", False):
            raise RuntimeError(f"Animated {fmt.lower()} files are not supported.")
        img.load()
    except RuntimeError:
        raise
    except Exception as e:
        raise RuntimeError(f"{what}: could not decode the image ({e})") from None
    has_alpha = "A" in img.getbands() or "transparency" in img.info
    want = {ImageReadMode.RGB: "RGB", ImageReadMode.RGB_ALPHA: "RGBA"}.get(
        mode, "RGBA" if has_alpha else "RGB")
    arr = np.asarray(img.convert(want), dtype=np.uint8)
    return from_numpy(np.ascontiguousarray(arr.transpose(2, 0, 1)))


def decode_webp(input, mode=ImageReadMode.UNCHANGED):
    """A still WebP image as RGB or RGBA uint8 (C, H, W)."""
    _check_encoded(input)
    return _decode_rgb(input, mode, "WEBP", "decode_webp")


def _codec_missing(fmt, remedy):
    return RuntimeError(
        f"In order to enable the {fmt} decoding capabilities of torchvision (ember.vision), you "
        f"need {remedy}. Just install the package, you don't need to update your code.")


def decode_avif(input, mode=ImageReadMode.UNCHANGED):
    """An AVIF image as RGB[A] uint8, through Pillow's AVIF codec (Pillow >= 11.3)."""
    from PIL import features
    if not features.check("avif"):
        raise _codec_missing("AVIF", "a Pillow built with AVIF support (Pillow >= 11.3)")
    if input.dtype != uint8:
        raise RuntimeError(f"Input tensor must have uint8 data type, got {input.dtype}")
    return _decode_rgb(input, mode, "AVIF", "decode_avif")


def decode_heic(input, mode=ImageReadMode.UNCHANGED):
    """A HEIC image as RGB[A] uint8, through the pillow-heif plugin."""
    try:
        import pillow_heif
    except ImportError:
        raise _codec_missing("HEIC", "to `pip install pillow-heif`") from None
    pillow_heif.register_heif_opener()
    if input.dtype != uint8:
        raise RuntimeError(f"Input tensor must have uint8 data type, got {input.dtype}")
    return _decode_rgb(input, mode, "HEIF", "decode_heic")
