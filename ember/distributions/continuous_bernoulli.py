"""ContinuousBernoulli(probs | logits): the density proportional to p^x (1-p)^(1-x) on
[0, 1]. Near p = 1/2 (inside `lims`) the closed forms lose precision, and Taylor
expansions around 1/2 are used instead."""
import math

from .._tensor import Size
from ..autograd import no_grad
from ..ops import abs as _abs, expm1, ge, gt, le, log, log1p, maximum, ones_like, pow as _pow
from ..ops import rand, sqrt, where, zeros_like
from ..nn.functional import binary_cross_entropy_with_logits
from . import constraints
from ._bases import _ProbsOrLogitsParam
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(_ProbsOrLogitsParam, ExponentialFamily):
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True
    _carried = ("_lims",)

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        batch_shape = self._take_probs_or_logits(probs, logits)
        if probs is not None:
            # validate here: clamping below would hide invalid values from the check
            if validate_args is not None:
                if not bool(self.arg_constraints["probs"].check(self.probs).all()):
                    raise ValueError("The parameter probs has invalid values")
            self.probs = self._param = clamp_probs(self.probs)
        self._lims = lims
        super().__init__(batch_shape, validate_args=validate_args)

    def _outside_unstable_region(self):
        return maximum(le(self.probs, self._lims[0]), gt(self.probs, self._lims[1]))

    def _cut_probs(self):
        return where(self._outside_unstable_region(), self.probs,
                     self._lims[0] * ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """log of the normalising constant, as a function of probs."""
        cut_probs = self._cut_probs()
        below_half = where(le(cut_probs, 0.5), cut_probs, zeros_like(cut_probs))
        above_half = where(ge(cut_probs, 0.5), cut_probs, ones_like(cut_probs))
        log_norm = (log(_abs(log1p(-cut_probs) - log(cut_probs)))
                    - where(le(cut_probs, 0.5), log1p(-2.0 * below_half),
                            log(2.0 * above_half - 1.0)))
        x = _pow(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        cut_probs = self._cut_probs()
        mus = cut_probs / (2.0 * cut_probs - 1.0) + 1.0 / (log1p(-cut_probs) - log(cut_probs))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * _pow(x, 2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return sqrt(self.variance)

    @property
    def variance(self):
        cut_probs = self._cut_probs()
        variances = (cut_probs * (cut_probs - 1.0) / _pow(1.0 - 2.0 * cut_probs, 2)
                     + 1.0 / _pow(log1p(-cut_probs) - log(cut_probs), 2))
        x = _pow(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = rand(shape, dtype=self.probs.dtype, device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        cut_probs = self._cut_probs()
        cdfs = ((_pow(cut_probs, value) * _pow(1.0 - cut_probs, 1.0 - value) + cut_probs - 1.0)
                / (2.0 * cut_probs - 1.0))
        unbounded_cdfs = where(self._outside_unstable_region(), cdfs, value)
        return where(le(value, 0.0), zeros_like(value),
                     where(ge(value, 1.0), ones_like(value), unbounded_cdfs))

    def icdf(self, value):
        cut_probs = self._cut_probs()
        return where(self._outside_unstable_region(),
                     (log1p(-cut_probs + value * (2.0 * cut_probs - 1.0)) - log1p(-cut_probs))
                     / (log(cut_probs) - log1p(-cut_probs)),
                     value)

    def entropy(self):
        log_probs0 = log1p(-self.probs)
        log_probs1 = log(self.probs)
        return self.mean * (log_probs0 - log_probs1) - self._cont_bern_log_norm() - log_probs0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        out_unst_reg = maximum(le(x, self._lims[0] - 0.5), gt(x, self._lims[1] - 0.5))
        cut_nat_params = where(out_unst_reg, x, (self._lims[0] - 0.5) * ones_like(x))
        log_norm = log(_abs(expm1(cut_nat_params))) - log(_abs(cut_nat_params))
        taylor = 0.5 * x + _pow(x, 2) / 24.0 - _pow(x, 4) / 2880.0
        return where(out_unst_reg, log_norm, taylor)
