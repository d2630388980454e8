"""Private bases that the distribution families share, so that each family states only
what differs from its neighbours:

- `_Params`: parameters are tensors with the batch shape in front, and `expand` expands
  each of them (views, not copies) and carries the family's other attributes along;
- `_LocScale`: Normal, Laplace, Cauchy (`loc` real, `scale` positive, mean and mode `loc`).

None of these appears in PyTorch's class hierarchy; each sits between a public family and
the public base (Distribution, ExponentialFamily) that PyTorch gives it, so `isinstance`
answers as in PyTorch."""
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all


def _family(dist):
    """The public family that `dist` belongs to: the class just above the first private
    base in its MRO (Normal for a Normal, and for a user's subclass of Normal).

    PyTorch's families each name themselves in `expand`, so a user's subclass that defines
    its own __init__ must also define expand, and the error names the family; the shared
    `expand` below finds that name here."""
    mro = type(dist).__mro__
    for cls, above in zip(mro[1:], mro):
        if cls.__name__.startswith("_"):
            return above
    raise TypeError(f"{type(dist).__name__} has no private base")  # not reachable from ember


class _Params(Distribution):
    """`_batch_params` name the tensor parameters, whose shapes are the batch shape
    followed by any event dims; `_carried` names other attributes that an expanded copy
    shares as they are (a temperature, a count of categories)."""
    _batch_params = ()
    _carried = ()

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
        super(_Params, new).__init__(batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new


class _LocScale(_Params):
    """Location-scale families: `loc` real, `scale` positive, broadcast together."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True
    _batch_params = ("loc", "scale")

    def __init__(self, loc, scale, validate_args=None):
        batch_shape = self._broadcast(loc, scale)
        super().__init__(batch_shape, validate_args=validate_args)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc
