"""Cauchy(loc, scale): no mean or variance (nan and inf, as PyTorch reports them)."""
import math

from .._tensor import Size
from ..ops import atan, full, tan
from ._bases import _LocScale

__all__ = ["Cauchy"]


class Cauchy(_LocScale):
    @property
    def mean(self):
        return full(self._extended_shape(), math.nan, dtype=self.loc.dtype,
                    device=self.loc.device)

    @property
    def variance(self):
        return full(self._extended_shape(), math.inf, dtype=self.loc.dtype,
                    device=self.loc.device)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = self.loc.new_empty(shape).cauchy_()
        return self.loc + eps * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-math.log(math.pi) - self.scale.log()
                - (((value - self.loc) / self.scale) ** 2).log1p())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
