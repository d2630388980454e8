"""HalfNormal(scale) = |Normal(0, scale)|, and `_Folded`, which it shares with HalfCauchy."""
import math

from ..ops import as_tensor, where, zeros_like
from . import constraints
from ._bases import _Transformed, _from
from .normal import Normal
from .transforms import AbsTransform

__all__ = ["HalfNormal"]


class _Folded(_Transformed):
    """|base(0, scale)|: what HalfNormal and HalfCauchy share (PyTorch writes them out twice)."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base = None              # the distribution folded at zero
    _value_as_tensor = False  # HalfCauchy.log_prob takes numbers too (as_tensor), as in PyTorch
    scale = _from("base_dist.scale")

    def __init__(self, scale, validate_args=None):
        base_dist = self._base(0, scale, validate_args=False)
        super().__init__(base_dist, AbsTransform(), validate_args=validate_args)

    @property
    def mode(self):
        return zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        if self._value_as_tensor:
            value = as_tensor(value, dtype=self.base_dist.scale.dtype,
                              device=self.base_dist.scale.device)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return where(value >= 0, log_prob, -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)


class HalfNormal(_Folded):
    _base = Normal

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
