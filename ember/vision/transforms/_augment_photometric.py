"""torchvision.transforms' random photometric and warping augmentations: RandomInvert,
RandomPosterize, RandomSolarize, RandomAdjustSharpness, RandomAutocontrast, RandomEqualize,
RandomPerspective and ElasticTransform. Random draws come from ember's default generator, in
torchvision's order."""
import numbers
from collections.abc import Sequence

from ..._tensor import Tensor
from ...nn import Module
from . import functional as F
from ._arguments import _interpolation
from ._augment import _rand, _randint
from .functional import InterpolationMode

__all__ = ["RandomInvert", "RandomPosterize", "RandomSolarize", "RandomAdjustSharpness",
           "RandomAutocontrast", "RandomEqualize", "RandomPerspective", "ElasticTransform"]


class _RandomApplied(Module):
    """Applies `_apply` with probability p; the repr lists `_repr_fields` then p."""
    _repr_fields = ()

    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, img):
        return self._apply(img) if _rand() < self.p else img

    def __repr__(self):
        fields = "".join(f"{name}={getattr(self, name)}," for name in self._repr_fields)
        return f"{type(self).__name__}({fields}p={self.p})"


class RandomInvert(_RandomApplied):
    def _apply(self, img):
        return F.invert(img)


class RandomAutocontrast(_RandomApplied):
    def _apply(self, img):
        return F.autocontrast(img)


class RandomEqualize(_RandomApplied):
    def _apply(self, img):
        return F.equalize(img)


class RandomPosterize(_RandomApplied):
    _repr_fields = ("bits",)

    def __init__(self, bits, p=0.5):
        super().__init__(p)
        self.bits = bits

    def _apply(self, img):
        return F.posterize(img, self.bits)


class RandomSolarize(_RandomApplied):
    _repr_fields = ("threshold",)

    def __init__(self, threshold, p=0.5):
        super().__init__(p)
        self.threshold = threshold

    def _apply(self, img):
        return F.solarize(img, self.threshold)


class RandomAdjustSharpness(_RandomApplied):
    _repr_fields = ("sharpness_factor",)

    def __init__(self, sharpness_factor, p=0.5):
        super().__init__(p)
        self.sharpness_factor = sharpness_factor

    def _apply(self, img):
        return F.adjust_sharpness(img, self.sharpness_factor)


def _channel_fill(fill, img):
    """A number becomes one float per channel for tensors; PIL images take it as it is."""
    if not isinstance(img, Tensor):
        return fill
    if isinstance(fill, (int, float)):
        return [float(fill)] * F.get_dimensions(img)[0]
    return [float(f) for f in fill]


class RandomPerspective(Module):
    def __init__(self, distortion_scale=0.5, p=0.5, interpolation=InterpolationMode.BILINEAR,
                 fill=0):
        super().__init__()
        self.p = p
        self.interpolation = _interpolation(interpolation)
        self.distortion_scale = distortion_scale
        if fill is None:
            fill = 0
        elif not isinstance(fill, (Sequence, numbers.Number)):
            raise TypeError("Fill should be either a sequence or a number.")
        self.fill = fill

    def forward(self, img):
        fill = _channel_fill(self.fill, img)
        _, height, width = F.get_dimensions(img)
        if _rand() < self.p:
            startpoints, endpoints = self.get_params(width, height, self.distortion_scale)
            return F.perspective(img, startpoints, endpoints, self.interpolation, fill)
        return img

    @staticmethod
    def get_params(width, height, distortion_scale):
        """Each corner moves inwards by up to distortion_scale of half the side."""
        dx = int(distortion_scale * (width // 2))
        dy = int(distortion_scale * (height // 2))
        topleft = [_randint(0, dx + 1), _randint(0, dy + 1)]
        topright = [_randint(width - dx - 1, width), _randint(0, dy + 1)]
        botright = [_randint(width - dx - 1, width), _randint(height - dy - 1, height)]
        botleft = [_randint(0, dx + 1), _randint(height - dy - 1, height)]
        startpoints = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        return startpoints, [topleft, topright, botright, botleft]

    def __repr__(self):
        return f"{type(self).__name__}(p={self.p})"


def _pair_of_floats(value, name):
    if not isinstance(value, (float, Sequence)):
        raise TypeError(f"{name} should be float or a sequence of floats. Got {type(value)}")
    if isinstance(value, Sequence):
        if len(value) != 2:
            raise ValueError(f"If {name} is a sequence its length should be 2. Got {len(value)}")
        for element in value:
            if not isinstance(element, float):
                raise TypeError(f"{name} should be a sequence of floats. Got {type(element)}")
        return value
    return [float(value), float(value)]


class ElasticTransform(Module):
    def __init__(self, alpha=50.0, sigma=5.0, interpolation=InterpolationMode.BILINEAR, fill=0):
        super().__init__()
        self.alpha = _pair_of_floats(alpha, "alpha")
        self.sigma = _pair_of_floats(sigma, "sigma")
        self.interpolation = _interpolation(interpolation)
        if isinstance(fill, (int, float)):
            fill = [float(fill)]
        elif isinstance(fill, (list, tuple)):
            fill = [float(f) for f in fill]
        else:
            raise TypeError(f"fill should be int or float or a list or tuple of them. Got "
                            f"{type(fill)}")
        self.fill = fill

    @staticmethod
    def get_params(alpha, sigma, size):
        """A smooth random displacement field, 1 x H x W x 2, in normalized units."""
        from ...ops import cat
        from ...ops.random_ops import rand
        fields = []
        for axis in (0, 1):  # x (scaled by the width), then y (by the height)
            d = rand([1, 1] + list(size)) * 2 - 1
            if sigma[axis] > 0.0:
                k = int(8 * sigma[axis] + 1)
                k += 1 - k % 2  # an odd kernel
                d = F.gaussian_blur(d, [k, k], sigma)
            fields.append(d * alpha[axis] / size[1 - axis])
        return cat(fields, 1).permute([0, 2, 3, 1])

    def forward(self, tensor):
        _, height, width = F.get_dimensions(tensor)
        displacement = self.get_params(self.alpha, self.sigma, [height, width])
        return F.elastic_transform(tensor, displacement, self.interpolation, self.fill)

    def __repr__(self):
        return (f"{type(self).__name__}(alpha={self.alpha}, sigma={self.sigma}, "
                f"interpolation={self.interpolation}, fill={self.fill})")
