"""GeneralizedPareto(loc, scale, concentration): the law of tails over a threshold `loc`.
Concentration 0 is the shifted exponential, a positive one a Pareto, -1 a uniform; the
support ends at loc - scale / concentration when the concentration is negative. Sampling
is by the inverse CDF (differentiable)."""
import math
from numbers import Number

from .._tensor import Size
from ..ops import broadcast_to, expm1, exp, isclose, log1p, ones_like, rand, where, zeros_like
from . import constraints
from ._bases import _Params

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(_Params):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True
    _batch_params = ("loc", "scale", "concentration")

    def __init__(self, loc, scale, concentration, validate_args=None):
        batch_shape = self._broadcast(loc, scale, concentration)
        if all(isinstance(v, Number) for v in (loc, scale, concentration)):
            batch_shape = Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def _at_zero(self):
        """(where the concentration is 0, the concentration with those entries set to 1):
        the formulas divide by it, and take their exponential limit there."""
        zero = isclose(self.concentration, zeros_like(self.concentration))
        return zero, where(zero, ones_like(self.concentration), self.concentration)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.icdf(rand(shape, dtype=self.loc.dtype, device=self.loc.device))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, conc = self._at_zero()
        y = 1 / conc + ones_like(z)
        nonzero = where(y == 0, y, y * log1p(conc * z))
        return -self.scale.log() - where(zero, z, nonzero)

    def log_survival_function(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        zero, conc = self._at_zero()
        return where(zero, -z, -log1p(conc * z) / conc)

    def log_cdf(self, value):
        return log1p(-exp(self.log_survival_function(value)))

    def cdf(self, value):
        return exp(self.log_cdf(value))

    def icdf(self, value):
        zero, conc = self._at_zero()
        log_u = log1p(-value)
        return where(zero, self.loc - self.scale * log_u,
                     self.loc + self.scale / conc * expm1(-conc * log_u))

    @property
    def mean(self):
        finite = self.concentration < 1
        conc = where(finite, self.concentration, 0.5)
        return where(finite, self.loc + self.scale / (1 - conc), math.nan)

    @property
    def variance(self):
        finite = self.concentration < 0.5
        conc = where(finite, self.concentration, 0.25)
        return where(finite, self.scale.pow(2) / ((1 - conc).pow(2) * (1 - 2 * conc)),
                     math.nan)

    @property
    def mode(self):
        return self.loc

    def entropy(self):
        return broadcast_to(self.scale.log() + self.concentration + 1, self._batch_shape)

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        upper = where(self.concentration < 0, self.loc - self.scale / self.concentration,
                      math.inf)
        return constraints.interval(self.loc, upper)
