"""LogisticNormal(loc, scale): stick-breaking of a Normal onto the simplex."""
from . import constraints
from ._bases import _Transformed, _from
from .normal import Normal
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(_Transformed):
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True
    # the stick-breaking transform reads a vector, so base_dist is Independent(Normal)
    loc = _from("base_dist.base_dist.loc")
    scale = _from("base_dist.base_dist.scale")

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)
