"""Categorical(probs=None, logits=None): an index in [0, K) drawn with the given weights."""
import math

from .._tensor import Size
from ..dtypes import finfo, long as _long
from ..ops import arange, broadcast_tensors, clamp, full, multinomial
from . import constraints
from ._bases import _from, _Params, _ProbsOrLogitsParam, _probs_or_logits

__all__ = ["Categorical"]


class Categorical(_ProbsOrLogitsParam):
    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True
    _carried = ("_num_events",)
    _binary = False  # logits are log-probabilities along the last dim

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, value = _probs_or_logits(probs, logits)
        if value.dim() < 1:
            raise ValueError(f"`{name}` parameter must be at least one-dimensional.")
        if probs is not None:
            self.probs = probs / probs.sum(-1, keepdim=True)
        else:
            # normalised so that logits.exp() sums to 1
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
        self._param = self.probs if probs is not None else self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.ndimension() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @property
    def mean(self):
        return full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                    device=self.probs.device)

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return full(self._extended_shape(), math.nan, dtype=self.probs.dtype,
                    device=self.probs.device)

    def sample(self, sample_shape=Size()):
        if not isinstance(sample_shape, Size):
            sample_shape = Size(sample_shape)
        probs_2d = self.probs.reshape(-1, self._num_events)
        samples_2d = multinomial(probs_2d, sample_shape.numel(), True).T
        return samples_2d.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long().unsqueeze(-1)
        value, log_pmf = broadcast_tensors(value, self.logits)
        value = value[..., :1]
        return log_pmf.gather(-1, value).squeeze(-1)

    def entropy(self):
        # -inf logits (zero probabilities) would give 0 * -inf = nan
        logits = clamp(self.logits, min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = arange(self._num_events, dtype=_long, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        if expand:
            values = values.expand((-1,) + tuple(self._batch_shape))
        return values


class _OverCategorical(_Params):
    """A distribution over vectors along the last dim, made from a Categorical(probs,
    logits) that it keeps as `_categorical`."""
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    _inner = ("_categorical",)
    probs = _from("_categorical.probs")
    logits = _from("_categorical.logits")
    param_shape = _from("_categorical.param_shape")

    def _take_categorical(self, probs, logits):
        """Builds the Categorical; returns the batch and event shapes."""
        self._categorical = Categorical(probs=probs, logits=logits)
        return self._categorical.batch_shape, self._categorical.param_shape[-1:]

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)
