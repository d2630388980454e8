"""Poisson(rate): counts."""
from .._tensor import Size
from ..autograd import no_grad
from ..ops import exp, log, poisson as _poisson
from . import constraints
from ._bases import _Params
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(_Params, ExponentialFamily):
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer
    _batch_params = ("rate",)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def __init__(self, rate, validate_args=None):
        batch_shape = self._broadcast(rate)
        super().__init__(batch_shape, validate_args=validate_args)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return _poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (log(self.rate),)

    def _log_normalizer(self, x):
        return exp(x)
