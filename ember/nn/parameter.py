"""`nn.Parameter`: a tensor that a Module registers as a parameter (requires grad by default),
and `nn.Buffer`, a tensor a Module registers as a buffer."""
from .._tensor import Tensor, _make

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer",
           "UninitializedTensorMixin", "is_lazy"]


class Parameter(Tensor):
    """Shares `data`'s memory and version counter; prints as `Parameter containing:`."""

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        t = _make(cls, data._array, data._device, version=data._vc)
        if requires_grad:
            from ..ops.creation import check_factory_grad
            check_factory_grad(t.dtype, True)  # (a factory's words, as PyTorch's Parameter)
            t.requires_grad = True
        return t

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        from .._printing import tensor_repr
        return "Parameter containing:\n" + tensor_repr(self)

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


class _BufferMeta(type):
    """`isinstance(t, nn.Buffer)` for the marked tensors `Buffer(...)` returns (plain Tensors,
    as in PyTorch), so a Module registers them when they are assigned."""

    def __instancecheck__(cls, instance):
        if cls is Buffer:
            return isinstance(instance, Tensor) and \
                getattr(instance, "_is_buffer_marker", None) is not None
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """Marks a tensor to be registered as a buffer when assigned to a Module attribute."""

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            from ..ops.creation import empty
            data = empty(0)
        t = _make(Tensor, data._array, data._device, version=data._vc)
        t._is_buffer_marker = persistent
        return t


class UninitializedTensorMixin:
    """Lazy modules' placeholders: no shape until `materialize` gives them one (and turns them
    into `cls_to_become`); until then they hold an empty array that only carries the
    device and dtype, which `.to()` on the module may change."""

    def materialize(self, shape, device=None, dtype=None):
        from ..ops.creation import empty
        self.data = empty(shape, device=device if device is not None else self._device,
                          dtype=dtype if dtype is not None else self.dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
            "initialized one. Call `forward` to initialize the parameters before accessing their "
            "attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call "
                           "`forward` to initialize the parameters before calling "
                           "`module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    __str__ = __repr__

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))

    def __deepcopy__(self, memo):
        if id(self) not in memo:
            memo[id(self)] = type(self)(self.requires_grad, self._device, self.dtype)
        return memo[id(self)]


def is_lazy(param):
    """Whether `param` is an uninitialized parameter or buffer of a lazy module."""
    return isinstance(param, UninitializedTensorMixin)


def _empty_placeholder(device, dtype):
    from ..ops.creation import empty
    return empty(0, device=device, dtype=dtype)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter whose shape is set on first use (lazy modules)."""

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        data = _empty_placeholder(device, dtype)
        t = _make(cls, data._array, data._device, version=data._vc)
        if requires_grad:
            Tensor.requires_grad_(t, True)
        return t

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer whose shape is set on first use (lazy modules)."""

    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        data = _empty_placeholder(device, dtype)
        t = _make(cls, data._array, data._device, version=data._vc)
        if requires_grad:
            Tensor.requires_grad_(t, True)
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass


# ---- an uninitialized placeholder refuses to be used as a tensor ------------------------------
# Its empty array would otherwise answer `numel()` with 0 and `sum()` with 0: silently wrong.
# PyTorch refuses every tensor function on it but the few that only read its kind (dtype,
# device) or move it; the same methods and operators are refused here, named as PyTorch names
# them. Python finds operators on the type, so the refusals are methods of the mixin, which
# comes before Tensor in the placeholders' MRO; `materialize` swaps the class and they go.
_USABLE_UNINITIALIZED = frozenset([
    "size", "copy_", "is_complex", "is_floating_point", "half", "float", "double", "char",
    "short", "int", "long", "cuda", "cpu", "to", "get_device", "materialize", "share_memory_"])
_OPERATORS = (
    "__abs__", "__add__", "__and__", "__array__", "__bool__", "__complex__", "__contains__",
    "__dlpack__", "__eq__", "__float__", "__floordiv__", "__ge__", "__getitem__", "__gt__",
    "__iadd__", "__iand__", "__ifloordiv__", "__imod__", "__imul__", "__index__", "__int__",
    "__invert__", "__ior__", "__ipow__", "__isub__", "__iter__", "__itruediv__", "__ixor__",
    "__le__", "__len__", "__lshift__", "__lt__", "__matmul__", "__mod__", "__mul__", "__ne__",
    "__neg__", "__or__", "__pos__", "__pow__", "__radd__", "__rand__", "__reversed__",
    "__rfloordiv__", "__rlshift__", "__rmatmul__", "__rmod__", "__rmul__", "__ror__",
    "__rpow__", "__rrshift__", "__rshift__", "__rsub__", "__rtruediv__", "__rxor__",
    "__setitem__", "__sub__", "__truediv__", "__xor__")


def _refusal(name):
    def refused(self, *args, **kwargs):
        raise ValueError(
            f"Attempted to use an uninitialized parameter in <method '{name}' of "
            "'torch._C.TensorBase' objects>. This error happens when you are using a "
            "`LazyModule` or explicitly manipulating `torch.nn.parameter.UninitializedParameter` "
            "objects. When using LazyModules Call `forward` with a dummy batch to initialize the "
            "parameters before calling torch functions")
    refused.__name__ = refused.__qualname__ = name
    return refused


def _refuse_tensor_use():
    for name, value in vars(Tensor).items():
        if name.startswith("_") or name in _USABLE_UNINITIALIZED or \
                name in vars(UninitializedTensorMixin) or not callable(value):
            continue
        setattr(UninitializedTensorMixin, name, _refusal(name))
    for name in _OPERATORS:
        if hasattr(Tensor, name):
            setattr(UninitializedTensorMixin, name, _refusal(name))


_refuse_tensor_use()
