"""LogNormal(loc, scale): exp of a Normal."""
from . import constraints
from ._bases import _Transformed, _from
from .normal import Normal
from .transforms import ExpTransform

__all__ = ["LogNormal"]


class LogNormal(_Transformed):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True
    loc = _from("base_dist.loc")
    scale = _from("base_dist.scale")

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)

    @property
    def mean(self):
        return (self.loc + self.scale.pow(2) / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale.square()).exp()

    @property
    def variance(self):
        scale2 = self.scale.pow(2)
        return scale2.expm1() * (2 * self.loc + scale2).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc
