"""Laplace(loc, scale)."""
from .._tensor import Size
from ..dtypes import finfo
from ..ops import abs as _abs, expm1, log, log1p
from ._bases import _LocScale

__all__ = ["Laplace"]


class Laplace(_LocScale):
    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return (2 ** 0.5) * self.scale

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = finfo(self.loc.dtype).eps
        u = self.loc.new_empty(shape).uniform_(eps - 1, 1)
        return self.loc - self.scale * u.sign() * log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -log(2 * self.scale) - _abs(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 - 0.5 * (value - self.loc).sign() * expm1(-(value - self.loc).abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * log1p(-2 * term.abs())

    def entropy(self):
        return 1 + log(2 * self.scale)
