"""Gumbel(loc, scale): loc - scale * log(-log U) for U uniform on (0, 1)."""
import math
from numbers import Number

from ..dtypes import finfo
from ..ops import full_like, ones_like
from . import constraints
from ._bases import _Transformed
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Gumbel"]


class Gumbel(_Transformed):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    _batch_params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc.dtype)
        if isinstance(loc, Number) and isinstance(scale, Number):
            base_dist = Uniform(info.tiny, 1 - info.eps, validate_args=validate_args)
        else:
            base_dist = Uniform(full_like(self.loc, info.tiny),
                                full_like(self.loc, 1 - info.eps), validate_args=validate_args)
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base_dist, transforms, validate_args=validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return y - y.exp() - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return math.pi / math.sqrt(6) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)
