"""HalfCauchy(scale) = |Cauchy(0, scale)|."""
import math

from ..ops import full
from .cauchy import Cauchy
from .half_normal import _Folded

__all__ = ["HalfCauchy"]


class HalfCauchy(_Folded):
    _base = Cauchy
    _value_as_tensor = True

    @property
    def mean(self):
        return full(self._extended_shape(), math.inf, dtype=self.scale.dtype,
                    device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance
