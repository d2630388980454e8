"""RelaxedBernoulli(temperature, probs=None, logits=None): a reparameterisable
(Concrete / Gumbel-sigmoid) relaxation of Bernoulli on (0, 1), the sigmoid of
LogitRelaxedBernoulli."""
from .._tensor import Size
from ..ops import rand
from . import constraints
from ._bases import _ProbsOrLogitsParam, _Transformed, _from
from .transforms import SigmoidTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(_ProbsOrLogitsParam):
    support = constraints.real
    _carried = ("temperature",)

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        batch_shape = self._take_probs_or_logits(probs, logits)
        super().__init__(batch_shape, validate_args=validate_args)

    def rsample(self, sample_shape=Size()):
        # logistic noise plus the logits, sharpened by the temperature
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(rand(shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(_Transformed):
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True
    temperature = _from("base_dist.temperature")
    logits = _from("base_dist.logits")
    probs = _from("base_dist.probs")

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = LogitRelaxedBernoulli(temperature, probs, logits)
        super().__init__(base_dist, SigmoidTransform(), validate_args=validate_args)
