"""InverseGamma(concentration, rate) = 1 / Gamma(concentration, rate)."""
import math

from ..ops import digamma, lgamma, where
from . import constraints
from ._bases import _Transformed, _from
from .gamma import Gamma
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(_Transformed):
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True
    concentration = _from("base_dist.concentration")
    rate = _from("base_dist.rate")

    def __init__(self, concentration, rate, validate_args=None):
        base_dist = Gamma(concentration, rate, validate_args=validate_args)
        neg_one = -base_dist.rate.new_ones(())
        super().__init__(base_dist, PowerTransform(neg_one), validate_args=validate_args)

    @property
    def mean(self):
        c = self.concentration
        return where(c > 1, self.rate / (c - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        c = self.concentration
        return where(c > 2, self.rate.pow(2) / ((c - 1).pow(2) * (c - 2)), math.inf)

    def entropy(self):
        c = self.concentration
        return c + self.rate.log() + lgamma(c) - (1 + c) * digamma(c)
