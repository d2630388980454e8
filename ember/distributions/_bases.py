"""Private bases that the distribution families share, so that each family states only
what differs from its neighbours:

- `_Params`: parameters are tensors with the batch shape in front, and `expand` expands
  each of them (views, not copies), and any distributions kept inside, and carries the
  family's other attributes along (Uniform, Gamma, Exponential, StudentT, ...);
- `_LocScale`: Normal, Laplace, Cauchy (`loc` real, `scale` positive, mean and mode `loc`);
- `_ProbsOrLogits` / `_ProbsOrLogitsParam`: exactly one of `probs` and `logits` is given,
  the other is computed on first use (Bernoulli, Geometric, Binomial, Categorical, ...);
- `_OverCategorical`: families built on a Categorical over the last dimension
  (OneHotCategorical, ExpRelaxedCategorical, Multinomial);
- `_Transformed`: families written as a TransformedDistribution (Gumbel, LogNormal,
  RelaxedBernoulli, HalfNormal, ...), whose expand is TransformedDistribution's.

None of these appears in PyTorch's class hierarchy; each sits between a public family and
the public base (Distribution, ExponentialFamily, TransformedDistribution) that PyTorch
gives it, so `isinstance` answers as in PyTorch."""
from operator import attrgetter

from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .utils import broadcast_all, lazy_property, logits_to_probs, probs_to_logits


def _is_family(cls):
    """Whether `cls` is built directly on one of ember.distributions' private bases (as
    Normal is on _LocScale; a user's subclass of Normal is not, even through a private
    base of the user's own)."""
    return any(base.__name__.startswith("_") and base.__module__.startswith(__package__ + ".")
               for base in cls.__bases__)


def _family(dist):
    """The family that `dist` belongs to (Normal for a Normal, and for an instance of a
    user's subclass of Normal).

    PyTorch's families each name themselves in `expand`, so a user's subclass that defines
    its own __init__ must also define expand, and the error names the family; the shared
    `expand` below finds that name here."""
    return next(cls for cls in type(dist).__mro__ if _is_family(cls))


def _own_arg_constraints(cls):
    """PyTorch's families each write their own arg_constraints dict: a family that
    inherits one from a private base gets a copy, so that changing it leaves its siblings
    alone."""
    if (_is_family(cls) and "arg_constraints" not in cls.__dict__
            and isinstance(cls.arg_constraints, dict)):
        cls.arg_constraints = dict(cls.arg_constraints)


def _from(path):
    """A read-only property that reads `path` (dotted) off the instance: a parameter read
    through from a wrapped distribution, or a mean and mode that are `loc`."""
    get = attrgetter(path)
    return property(lambda self: get(self))  # a lambda, so the property has no docstring


class _Params(Distribution):
    """`_batch_params` name the tensor parameters, whose shapes are the batch shape
    followed by any event dims; `_inner` names distributions kept inside (a Chi2, a
    Categorical) with the same batch shape; `_carried` names other attributes that an
    expanded copy shares as they are (a temperature, a count of categories)."""
    _batch_params = ()
    _inner = ()
    _carried = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _own_arg_constraints(cls)

    def _broadcast(self, *values):
        """Broadcasts `values` together and stores them under `_batch_params`; returns
        their shape (numbers give 0-d tensors, hence an empty batch shape)."""
        values = broadcast_all(*values)
        for name, value in zip(self._batch_params, values):
            setattr(self, name, value)
        return values[0].size()

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(_family(self), _instance)
        batch_shape = Size(batch_shape)
        for name in self._carried:
            setattr(new, name, getattr(self, name))
        for name in self._batch_params:
            # a lazily computed parameter (probs or logits) is expanded only once computed
            if name in self.__dict__:
                value = self.__dict__[name]
                event = tuple(value.shape[len(self._batch_shape):])
                setattr(new, name, value.expand(tuple(batch_shape) + event))
        for name in self._inner:
            setattr(new, name, getattr(self, name).expand(batch_shape))
        super(_Params, new).__init__(batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new


class _LocScale(_Params):
    """Location-scale families: `loc` real, `scale` positive, broadcast together."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _batch_params = ("loc", "scale")

    mean = mode = _from("loc")

    def __init__(self, loc, scale, validate_args=None):
        batch_shape = self._broadcast(loc, scale)
        super().__init__(batch_shape, validate_args=validate_args)


def _probs_or_logits(probs, logits):
    """The one of the two that was given, by name."""
    if (probs is None) == (logits is None):
        raise ValueError("Either `probs` or `logits` must be specified, but not both.")
    return ("probs", probs) if probs is not None else ("logits", logits)


class _ProbsOrLogits(_Params):
    """Exactly one of `probs` and `logits` is given, broadcast with any other tensor
    parameters named before them in `_batch_params` (and cast to their dtype); the other
    one is a lazy property. `_binary`: logits are log-odds (else log-probabilities over
    the last dim)."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    _batch_params = ("probs", "logits")
    _binary = True

    def _take_probs_or_logits(self, probs, logits, *others):
        """Stores `others` (each as the dtype of the probs or logits) and the given one of
        probs and logits; returns the batch shape."""
        name, value = _probs_or_logits(probs, logits)
        *others, value = broadcast_all(*others, value)
        for other_name, other in zip(self._batch_params, others):
            setattr(self, other_name, other.type_as(value))
        setattr(self, name, value)
        return value.size()

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=self._binary)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=self._binary)


class _ProbsOrLogitsParam(_ProbsOrLogits):
    """_ProbsOrLogits that also keeps the tensor given as `_param` (after expand: the
    logits if they were computed, else the probs), whose shape is `param_shape`. Every
    such family of PyTorch's but Geometric keeps it."""

    def _take_probs_or_logits(self, probs, logits, *others):
        batch_shape = super()._take_probs_or_logits(probs, logits, *others)
        self._param = self.probs if probs is not None else self.logits
        return batch_shape

    def expand(self, batch_shape, _instance=None):
        new = super().expand(batch_shape, _instance)
        new._param = new.logits if "logits" in new.__dict__ else new.probs
        return new

    @property
    def param_shape(self):
        return self._param.size()

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)


class _Transformed(TransformedDistribution):
    """A family written as a TransformedDistribution; `_batch_params` name parameters it
    keeps itself besides those of its base distribution (expanded along with it)."""
    _batch_params = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        _own_arg_constraints(cls)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(_family(self), _instance)
        for name in self._batch_params:
            setattr(new, name, getattr(self, name).expand(batch_shape))
        return super().expand(batch_shape, _instance=new)
