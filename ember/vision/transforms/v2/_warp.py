"""transforms.v2's RandomPerspective and ElasticTransform: one random warp per call, applied
to the images (bilinear by default), masks (nearest) and bounding boxes (their corners
moved, the enclosing box kept) of the sample."""
import numbers
from collections.abc import Sequence

from .. import _augment, _augment_photometric
from . import Transform, _fill_for, _RandomApplyTransform, query_size
from . import functional as F

__all__ = ["RandomPerspective", "ElasticTransform"]


class RandomPerspective(_RandomApplyTransform):
    def __init__(self, distortion_scale=0.5, p=0.5, interpolation="bilinear", fill=0):
        super().__init__(p=p)
        if not 0 <= distortion_scale <= 1:
            raise ValueError("Argument distortion_scale value should be between 0 and 1")
        self.distortion_scale = distortion_scale
        self.interpolation = interpolation
        self.fill = fill

    def make_params(self, flat_inputs):
        height, width = query_size(flat_inputs)
        dx = int(self.distortion_scale * (width // 2)) + 1
        dy = int(self.distortion_scale * (height // 2)) + 1
        r = _augment._randint
        topleft = [r(0, dx), r(0, dy)]
        topright = [r(width - dx, width), r(0, dy)]
        botright = [r(width - dx, width), r(height - dy, height)]
        botleft = [r(0, dx), r(height - dy, height)]
        startpoints = [[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]]
        endpoints = [topleft, topright, botright, botleft]
        return dict(coefficients=F._perspective_coefficients(startpoints, endpoints, None))

    def transform(self, inpt, params):
        return F.perspective(inpt, None, None, interpolation=self.interpolation,
                             fill=_fill_for(self.fill, inpt),
                             coefficients=params["coefficients"])


def _number_or_pair(value, name):
    if isinstance(value, numbers.Number):
        if value < 0:
            raise ValueError(f"If {name} is a single number, it must be positive.")
        return [float(value), float(value)]
    if isinstance(value, Sequence) and len(value) == 1:
        return [float(value[0])] * 2
    if isinstance(value, Sequence) and len(value) == 2:
        return [float(v) for v in value]
    raise TypeError(f"{name} should be a number or a sequence of numbers. Got {type(value)}")


class ElasticTransform(Transform):
    def __init__(self, alpha=50.0, sigma=5.0, interpolation="bilinear", fill=0):
        super().__init__()
        self.alpha = _number_or_pair(alpha, "alpha")
        self.sigma = _number_or_pair(sigma, "sigma")
        self.interpolation = interpolation
        self.fill = fill

    def make_params(self, flat_inputs):
        size = list(query_size(flat_inputs))
        displacement = _augment_photometric.ElasticTransform.get_params(self.alpha, self.sigma,
                                                                        size)
        return dict(displacement=displacement)

    def transform(self, inpt, params):
        return F.elastic(inpt, params["displacement"], interpolation=self.interpolation,
                         fill=_fill_for(self.fill, inpt))
