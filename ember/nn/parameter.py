"""`nn.Parameter`: a tensor that a Module registers as a parameter (requires grad by default),
and `nn.Buffer`, a tensor a Module registers as a buffer."""
from .._tensor import Tensor, _make

__all__ = ["Parameter", "Buffer", "UninitializedParameter"]


class Parameter(Tensor):
    """Shares `data`'s memory and version counter; prints as `Parameter containing:`."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        t = _make(cls, data._array, data._device, version=data._vc)
        if requires_grad:
            t.requires_grad_(True)
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__  # Tensor binds __str__ to its own __repr__; print shows this one

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (self.detach(), self._requires_grad))

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = Parameter(self.detach().clone(), self._requires_grad)
        memo[id(self)] = result
        return result


def _rebuild_parameter(data, requires_grad):
    return Parameter(data, requires_grad)


class Buffer(Tensor):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        t = _make(Tensor, data._array, data._device, version=data._vc)
        t._is_buffer_marker = persistent
        return t


class UninitializedParameter(Parameter):
    """A parameter whose shape is set on first use (lazy modules)."""

    def materialize(self, shape, device=None, dtype=None):
        from ..ops.creation import empty
        data = empty(shape, device=device or self._device, dtype=dtype or self.dtype)
        self._array, self._device = data._array, data._device
        self.__class__ = Parameter
