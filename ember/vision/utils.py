"""torchvision.utils: `make_grid` tiles a batch into one CxHxW image, `save_image` writes it
through Pillow; `draw_bounding_boxes`, `draw_segmentation_masks` and `draw_keypoints` draw on
an image (through Pillow's ImageDraw, as torchvision, so the pixels are the same), and
`flow_to_image` colours an optical-flow field with the Middlebury colour wheel."""
import math
import warnings

import numpy as np

from .._tensor import Tensor, is_tensor
from ..autograd.grad_mode import no_grad

__all__ = ["make_grid", "save_image", "draw_bounding_boxes", "draw_segmentation_masks",
           "draw_keypoints", "flow_to_image"]


def make_grid(tensor, nrow=8, padding=2, normalize=False, value_range=None, scale_each=False,
              pad_value=0.0):
    from .. import cat, stack
    if not is_tensor(tensor):
        if isinstance(tensor, list):
            for t in tensor:
                if not is_tensor(t):
                    raise TypeError("tensor or list of tensors expected, got a list containing "
                                    f"{type(t)}")
        else:
            raise TypeError(f"tensor or list of tensors expected, got {type(tensor)}")
    if isinstance(tensor, list):
        tensor = stack(tensor, dim=0)
    if tensor.dim() == 2:  # a single image H x W
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 3:  # a single image
        if tensor.size(0) == 1:  # grayscale -> 3 channels
            tensor = cat((tensor, tensor, tensor), 0)
        tensor = tensor.unsqueeze(0)
    if tensor.dim() == 4 and tensor.size(1) == 1:  # a batch of grayscale images
        tensor = cat((tensor, tensor, tensor), 1)
    if normalize is True:
        tensor = tensor.clone()  # the caller's tensor is not changed
        if value_range is not None and not isinstance(value_range, tuple):
            raise TypeError("value_range has to be a tuple (min, max) if specified. min and max "
                            "are numbers")

        def norm_ip(img, low, high):
            img.clamp_(min=low, max=high)
            img.sub_(low).div_(max(high - low, 1e-5))

        def norm_range(t, value_range):
            if value_range is not None:
                norm_ip(t, value_range[0], value_range[1])
            else:
                norm_ip(t, float(t.min()), float(t.max()))

        if scale_each is True:
            for t in tensor:  # each image scaled by its own range
                norm_range(t, value_range)
        else:
            norm_range(tensor, value_range)
    if not isinstance(tensor, Tensor):
        raise TypeError("tensor should be of type torch.Tensor")
    if tensor.size(0) == 1:
        return tensor.squeeze(0)
    nmaps = tensor.size(0)
    xmaps = min(nrow, nmaps)
    ymaps = int(math.ceil(float(nmaps) / xmaps))
    height, width = int(tensor.size(2) + padding), int(tensor.size(3) + padding)
    num_channels = tensor.size(1)
    grid = tensor.new_full((num_channels, height * ymaps + padding, width * xmaps + padding),
                           pad_value)
    k = 0
    for y in range(ymaps):
        for x in range(xmaps):
            if k >= nmaps:
                break
            grid.narrow(1, y * height + padding, height - padding).narrow(
                2, x * width + padding, width - padding).copy_(tensor[k])
            k = k + 1
    return grid


def save_image(tensor, fp, format=None, **kwargs):
    from PIL import Image

    from .. import uint8
    grid = make_grid(tensor, **kwargs)
    # round to nearest: [0, 1] -> [0, 255] with +0.5 before truncation
    ndarr = grid.mul(255).add_(0.5).clamp_(0, 255).permute(1, 2, 0).to("cpu", uint8).numpy()
    im = Image.fromarray(ndarr)
    im.save(fp, format=format)


def _Image_fromarray(obj, mode):
    """Image.fromarray(obj, mode) with the older Pillow meaning: the array's bytes are read
    as `mode` (Pillow 11.3 deprecated that reading and infers the mode instead)."""
    from PIL import Image, __version__ as pillow_version
    try:
        version = tuple(int(x) for x in pillow_version.split("."))
    except ValueError:  # a development version string
        version = None
    if version is None or version < (11, 3):
        return Image.fromarray(obj, mode)
    interface = obj.__array_interface__
    shape = interface["shape"]
    size = (1 if len(shape) == 1 else shape[1], shape[0])
    data = obj
    if interface.get("strides") is not None:  # frombuffer needs contiguous bytes
        if not hasattr(obj, "tobytes"):
            raise ValueError("Unable to convert obj into contiguous format")
        data = obj.tobytes()
    return Image.frombuffer(mode, size, data, "raw", mode, 0, 1)


def _generate_color_palette(num_objects):
    palette = (2 ** 25 - 1, 2 ** 15 - 1, 2 ** 21 - 1)
    return [tuple((i * p) % 255 for p in palette) for i in range(num_objects)]


def _parse_colors(colors, *, num_objects, dtype=None):
    from PIL import ImageColor
    if colors is None:
        colors = _generate_color_palette(num_objects)
    elif isinstance(colors, list):
        if len(colors) < num_objects:
            raise ValueError("Number of colors must be equal or larger than the number of "
                             f"objects, but got {len(colors)} < {num_objects}.")
    elif not isinstance(colors, (tuple, str)):
        raise ValueError("colors must be a tuple or a string, or a list thereof, but got "
                         f"{colors}.")
    elif isinstance(colors, tuple) and len(colors) != 3:
        raise ValueError(f"If passed as tuple, colors should be an RGB triplet, but got "
                         f"{colors}.")
    else:  # one colour for every object
        colors = [colors] * num_objects
    colors = [ImageColor.getrgb(c) if isinstance(c, str) else c for c in colors]
    if dtype is not None and dtype.is_floating_point:  # [0, 255] -> [0, 1]
        colors = [tuple(v / 255 for v in c) for c in colors]
    return colors


def _check_image(image, rgb_only, what="The image must be a tensor"):
    from .. import uint8
    if not isinstance(image, Tensor):
        raise TypeError(f"{what}, got {type(image)}")
    if not (image.dtype == uint8 or image.is_floating_point()):
        raise ValueError(f"The image dtype must be uint8 or float, got {image.dtype}")
    if image.dim() != 3:
        raise ValueError("Pass individual images, not batches")
    if rgb_only and image.size(0) != 3:
        raise ValueError("Pass an RGB image. Other Image formats are not supported")


def _to_uint8(image):
    from .. import uint8
    from .transforms.v2.functional import to_dtype
    return to_dtype(image, dtype=uint8, scale=True)


def _image_draw_class():
    from PIL import ImageDraw

    class _ImageDrawTV(ImageDraw.ImageDraw):
        """ImageDraw with oriented rectangles: the first side dashed, the rest solid."""

        def oriented_rectangle(self, xy, fill=None, outline=None, width=1):
            self.dashed_line(((xy[0], xy[1]), (xy[2], xy[3])), width=width, fill=outline)
            for i in range(2, len(xy), 2):
                self.line(((xy[i], xy[i + 1]), (xy[(i + 2) % len(xy)], xy[(i + 3) % len(xy)])),
                          width=width, fill=outline)
            self.polygon(xy, fill=fill, outline=None, width=0)

        def dashed_line(self, xy, fill=None, width=0, joint=None, dash_length=5,
                        space_length=5):
            dash = True
            for (x1, y1), (x2, y2) in zip(xy[:-1], xy[1:]):
                remaining = math.hypot(x2 - x1, y2 - y1)
                angle = math.atan2(y2 - y1, x2 - x1)
                while remaining > 0:
                    step = min(remaining, dash_length if dash else space_length)
                    end_x = x1 + math.cos(angle) * step
                    end_y = y1 + math.sin(angle) * step
                    if dash:
                        self.line([(x1, y1), (end_x, end_y)], fill, width, joint)
                    remaining -= step
                    x1, y1 = end_x, end_y
                    dash = not dash
    return _ImageDrawTV


@no_grad()
def draw_bounding_boxes(image, boxes, labels=None, colors=None, fill=False, width=1,
                        font=None, font_size=None, label_colors=None,
                        label_background_colors=None, fill_labels=False):
    """Boxes (xyxy, or 8 numbers for an oriented box) drawn on a uint8/float CxHxW image."""
    from PIL import ImageFont

    from .. import int64, tile
    from .transforms.v2.functional import pil_to_tensor, to_dtype, to_pil_image
    if not isinstance(image, Tensor):
        raise TypeError(f"Tensor expected, got {type(image)}")
    _check_image(image, rgb_only=False)
    if image.size(0) not in {1, 3}:
        raise ValueError("Only grayscale and RGB images are supported")
    if boxes.shape[-1] == 4 and (bool((boxes[:, 0] > boxes[:, 2]).any())
                                 or bool((boxes[:, 1] > boxes[:, 3]).any())):
        raise ValueError("Boxes need to be in (xmin, ymin, xmax, ymax) format. Use "
                         "torchvision.ops.box_convert to convert them")
    num_boxes = boxes.shape[0]
    if num_boxes == 0:
        warnings.warn("boxes doesn't contain any box. No box was drawn")
        return image
    if labels is None:
        labels = [None] * num_boxes
    elif len(labels) != num_boxes:
        raise ValueError(f"Number of boxes ({num_boxes}) and labels ({len(labels)}) mismatch. "
                         "Please specify labels for each box.")
    colors = _parse_colors(colors, num_objects=num_boxes)
    if label_colors or fill_labels:
        label_colors = _parse_colors(label_colors if label_colors else "black",
                                     num_objects=num_boxes)
    else:
        label_colors = list(colors)
    if fill_labels and label_background_colors:
        label_background_colors = _parse_colors(label_background_colors,
                                                num_objects=num_boxes)
    else:
        label_background_colors = list(colors)
    if font is None:
        if font_size is not None:
            warnings.warn("Argument 'font_size' will be ignored since 'font' is not set.")
        txt_font = ImageFont.load_default()
    else:
        txt_font = ImageFont.truetype(font=font, size=font_size or 10)
    if image.size(0) == 1:
        image = tile(image, (3, 1, 1))
    original_dtype = image.dtype
    if original_dtype.is_floating_point:
        image = _to_uint8(image)
    img_to_draw = to_pil_image(image)
    draw = _image_draw_class()(img_to_draw, "RGBA" if fill else None)
    for bbox, color, label, label_color, label_bg in zip(
            boxes.to(int64).tolist(), colors, labels, label_colors, label_background_colors):
        draw_box = draw.oriented_rectangle if len(bbox) > 4 else draw.rectangle
        draw_box(bbox, width=width, outline=color, fill=tuple(color) + (100,) if fill else None)
        if label is not None:
            box_margin = 1
            margin = width + box_margin
            if fill_labels:
                left, top, right, bottom = draw.textbbox((bbox[0] + margin, bbox[1] + margin),
                                                         label, font=txt_font)
                draw.rectangle((left - box_margin, top - box_margin, right + box_margin,
                                bottom + box_margin), fill=label_bg)
            draw.text((bbox[0] + margin, bbox[1] + margin), label, fill=label_color,
                      font=txt_font)
    out = pil_to_tensor(img_to_draw)
    if original_dtype.is_floating_point:
        out = to_dtype(out, dtype=original_dtype, scale=True)
    return out


@no_grad()
def draw_segmentation_masks(image, masks, alpha=0.8, colors=None):
    """Blend each boolean mask's colour into an RGB image; overlaps turn black."""
    from .. import bool as bool_
    from .. import tensor
    _check_image(image, rgb_only=True)
    if masks.ndim == 2:
        masks = masks[None, :, :]
    if masks.ndim != 3:
        raise ValueError("masks must be of shape (H, W) or (batch_size, H, W)")
    if masks.dtype != bool_:
        raise ValueError(f"The masks must be of dtype bool. Got {masks.dtype}")
    if tuple(masks.shape[-2:]) != tuple(image.shape[-2:]):
        raise ValueError("The image and the masks must have the same height and width")
    num_masks = masks.size()[0]
    overlapping = masks.sum(dim=0) > 1
    if num_masks == 0:
        warnings.warn("masks doesn't contain any mask. No mask was drawn")
        return image
    original_dtype = image.dtype
    colors = [tensor(c, dtype=original_dtype, device=image.device)
              for c in _parse_colors(colors, num_objects=num_masks, dtype=original_dtype)]
    img_to_draw = image.detach().clone()
    for mask, color in zip(masks, colors):
        img_to_draw[:, mask] = color[:, None]
    img_to_draw[:, overlapping] = 0
    out = image * (1 - alpha) + img_to_draw * alpha
    return out.to(original_dtype)


@no_grad()
def draw_keypoints(image, keypoints, connectivity=None, colors=None, radius=2, width=3,
                   visibility=None):
    """Keypoints (instances, K, 2) as filled circles, joined by `connectivity` lines."""
    from PIL import Image, ImageDraw

    from .. import bool as bool_
    from .. import from_numpy, int64, ones
    from .transforms.v2.functional import to_dtype
    _check_image(image, rgb_only=True)
    if keypoints.ndim != 3:
        raise ValueError("keypoints must be of shape (num_instances, K, 2)")
    if visibility is None:
        visibility = ones(tuple(keypoints.shape[:-1]), dtype=bool_)
    if visibility.ndim == 3:  # as pred.split([2, 1], dim=-1) gives it
        visibility = visibility.squeeze(-1)
    if visibility.ndim != 2:
        raise ValueError(f"visibility must be of shape (num_instances, K). Got "
                         f"ndim={visibility.ndim}")
    if tuple(visibility.shape) != tuple(keypoints.shape[:-1]):
        raise ValueError("keypoints and visibility must have the same dimensionality for "
                         f"num_instances and K. Got visibility.shape={visibility.shape} and "
                         f"keypoints.shape={keypoints.shape}")
    original_dtype = image.dtype
    if original_dtype.is_floating_point:
        image = _to_uint8(image)
    img_to_draw = Image.fromarray(image.permute(1, 2, 0).cpu().numpy())
    draw = ImageDraw.Draw(img_to_draw)
    for points, visible in zip(keypoints.to(int64).tolist(), visibility.cpu().bool().tolist()):
        for (x, y), shown in zip(points, visible):
            if shown:
                draw.ellipse([x - radius, y - radius, x + radius, y + radius], fill=colors,
                             outline=None, width=0)
        for start, end in connectivity or ():
            if visible[start] and visible[end]:
                draw.line((tuple(points[start]), tuple(points[end])), width=width)
    out = from_numpy(np.array(img_to_draw)).permute(2, 0, 1)
    if original_dtype.is_floating_point:
        out = to_dtype(out, dtype=original_dtype, scale=True)
    return out


@no_grad()
def flow_to_image(flow):
    """(2, H, W) or (N, 2, H, W) float flow -> uint8 RGB: hue is the direction, saturation
    the magnitude relative to the largest one."""
    from .. import finfo, float32
    if flow.dtype != float32:
        raise ValueError(f"Flow should be of dtype torch.float, got {flow.dtype}.")
    orig_shape = flow.shape
    if flow.ndim == 3:
        flow = flow[None]
    if flow.ndim != 4 or flow.shape[1] != 2:
        raise ValueError("Input flow should have shape (2, H, W) or (N, 2, H, W), got "
                         f"{orig_shape}.")
    max_norm = flow.pow(2).sum(dim=1).sqrt().max()
    normalized = flow / (max_norm + finfo(flow.dtype).eps)
    img = _normalized_flow_to_image(normalized)
    return img[0] if len(orig_shape) == 3 else img


@no_grad()
def _normalized_flow_to_image(normalized_flow):
    from .. import atan2, floor, long, uint8, zeros
    N, _, H, W = normalized_flow.shape
    flow_image = zeros((N, 3, H, W), dtype=uint8, device=normalized_flow.device)
    colorwheel = _make_colorwheel().to(normalized_flow.device)
    num_cols = colorwheel.shape[0]
    norm = normalized_flow.pow(2).sum(dim=1).sqrt()
    a = atan2(-normalized_flow[:, 1, :, :], -normalized_flow[:, 0, :, :]) / math.pi
    fk = (a + 1) / 2 * (num_cols - 1)
    k0 = floor(fk).to(long)
    k1 = k0 + 1
    k1[k1 == num_cols] = 0
    f = fk - k0
    for c in range(colorwheel.shape[1]):
        column = colorwheel[:, c]
        col0 = column[k0] / 255.0
        col1 = column[k1] / 255.0
        col = (1 - f) * col0 + f * col1
        col = 1 - norm * (1 - col)
        flow_image[:, c, :, :] = floor(255 * col)
    return flow_image


def _make_colorwheel():
    """The 55 colours of the Middlebury flow wheel: red, yellow, green, cyan, blue, magenta,
    with linear ramps of 15, 6, 4, 11, 13 and 6 steps between them."""
    from .. import arange, floor, zeros
    ramps = [(15, 0, 1, True), (6, 1, 0, False), (4, 1, 2, True), (11, 2, 1, False),
             (13, 2, 0, True), (6, 0, 2, False)]  # (steps, full channel, ramped, rising)
    wheel = zeros((sum(r[0] for r in ramps), 3))
    col = 0
    for steps, full, ramped, rising in ramps:
        ramp = floor(255 * arange(0, steps) / steps)
        wheel[col:col + steps, full] = 255
        wheel[col:col + steps, ramped] = ramp if rising else 255 - ramp
        col += steps
    return wheel
