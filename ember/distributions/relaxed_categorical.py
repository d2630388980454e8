"""RelaxedOneHotCategorical(temperature, probs=None, logits=None): the Concrete /
Gumbel-softmax relaxation of OneHotCategorical on the simplex, the exp of
ExpRelaxedCategorical (whose draws are log-points of the simplex)."""
from .._tensor import Size
from ..ops import full_like, rand
from . import constraints
from ._bases import _Transformed, _from
from .categorical import _OverCategorical
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(_OverCategorical):
    support = constraints.real_vector  # really a submanifold of it
    has_rsample = True
    _carried = ("temperature",)

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        batch_shape, event_shape = self._take_categorical(probs, logits)
        self.temperature = temperature
        super().__init__(batch_shape, event_shape, validate_args=validate_args)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(u.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        K = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        log_scale = (full_like(self.temperature, float(K)).lgamma()
                     - self.temperature.log().mul(-(K - 1)))
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(_Transformed):
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True
    temperature = _from("base_dist.temperature")
    logits = _from("base_dist.logits")
    probs = _from("base_dist.probs")

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base_dist = ExpRelaxedCategorical(temperature, probs, logits,
                                          validate_args=validate_args)
        super().__init__(base_dist, ExpTransform(), validate_args=validate_args)
