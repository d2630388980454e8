"""`torch.overrides`: the `__torch_function__` protocol for functions written in Python.

A type that defines `__torch_function__(cls, func, types, args, kwargs)` can take over a
function that checks `has_torch_function(args)` and hands off to `handle_torch_function`
(or is wrapped by `wrap_torch_function`): library code written against PyTorch's protocol
runs unchanged. ember's own operators do not consult `__torch_function__` yet, so a subclass
overriding it takes over only functions that use these helpers."""
import functools
import warnings

from ._tensor import Tensor

__all__ = ["get_overridable_functions", "handle_torch_function", "has_torch_function",
           "is_tensor_like", "is_tensor_method_or_property", "resolve_name",
           "wrap_torch_function"]


def _overloaded_args(relevant_args):
    """The arguments whose types define `__torch_function__`, one per type, subclasses
    before their superclasses, otherwise in argument order (NEP 18's precedence)."""
    seen, ordered = set(), []
    for arg in relevant_args:
        kind = type(arg)
        if kind in seen or getattr(kind, "__torch_function__", None) is None:
            continue
        seen.add(kind)
        index = next((i for i, old in enumerate(ordered) if issubclass(kind, type(old))),
                     len(ordered))
        ordered.insert(index, arg)
    return ordered


def has_torch_function(relevant_args):
    """Whether any of `relevant_args` has a type that defines `__torch_function__`."""
    return any(getattr(type(arg), "__torch_function__", None) is not None
               for arg in relevant_args)


def has_torch_function_unary(arg):
    return has_torch_function((arg,))


def has_torch_function_variadic(*args):
    return has_torch_function(args)


def handle_torch_function(public_api, relevant_args, *args, **kwargs):
    """Call the `__torch_function__` of the overloaded arguments in precedence order; the
    first result that is not NotImplemented is returned, else TypeError."""
    overloaded = _overloaded_args(relevant_args)
    types = tuple(type(arg) for arg in overloaded)
    for arg in overloaded:
        method = arg.__torch_function__
        if getattr(method, "__self__", None) is arg:
            warnings.warn("Defining your `__torch_function__ as a plain method is deprecated and "
                          "will be an error in future, please define it as a classmethod.",
                          DeprecationWarning)
        result = method(public_api, types, args, kwargs)
        if result is not NotImplemented:
            return result
    name = f"{public_api.__module__}.{public_api.__name__}"
    raise TypeError(f"no implementation found for '{name}' on types that implement "
                    f"__torch_function__: {[type(arg) for arg in overloaded]}")


def wrap_torch_function(dispatcher):
    """Decorator: the function becomes overridable by `__torch_function__` on the arguments
    `dispatcher(*args, **kwargs)` returns."""
    def inner(func):
        @functools.wraps(func)
        def wrapped(*args, **kwargs):
            relevant = dispatcher(*args, **kwargs)
            if has_torch_function(relevant):
                return handle_torch_function(wrapped, relevant, *args, **kwargs)
            return func(*args, **kwargs)
        return wrapped
    return inner


def is_tensor_like(inp):
    """A Tensor, or an object whose type defines `__torch_function__`."""
    return type(inp) is Tensor or hasattr(inp, "__torch_function__")


# The namespaces whose public functions PyTorch lists as overridable, by their torch names.
_NAMESPACES = ("", "functional", "nn.functional", "linalg", "fft", "special")


# object machinery, not operations on a tensor
_NOT_OVERRIDABLE_DUNDERS = {"__init__", "__new__", "__init_subclass__", "__class_getitem__",
                            "__reduce__", "__reduce_ex__", "__getattribute__", "__setattr__",
                            "__delattr__", "__slots__", "__dict__", "__weakref__", "__module__",
                            "__doc__", "__hash__"}


@functools.lru_cache(maxsize=None)
def _overridable():
    import importlib
    table, names = {}, {}
    for suffix in _NAMESPACES:
        module = importlib.import_module("ember" + (f".{suffix}" if suffix else ""))
        torch_name = "torch" + (f".{suffix}" if suffix else "")
        functions = []
        for name in getattr(module, "__all__", dir(module)):
            value = getattr(module, name, None)
            if name.startswith("_") or isinstance(value, type) or not callable(value) \
                    or type(value).__name__ == "module":
                continue
            functions.append(value)
            names.setdefault(value, f"{torch_name}.{name}")
        table[module] = functions
    methods = []
    for name, value in vars(Tensor).items():
        dunder = name.startswith("__") and name.endswith("__")
        if (name.startswith("_") and not dunder) or name in _NOT_OVERRIDABLE_DUNDERS:
            continue
        if isinstance(value, property):
            value = value.__get__
        elif not callable(value):
            continue
        methods.append(value)
        names.setdefault(value, f"torch.Tensor.{name}")
    table[Tensor] = methods
    return table, names


def get_overridable_functions():
    """{namespace: [its functions that `__torch_function__` may override]}, for the torch
    namespace, torch.functional, torch.nn.functional, torch.linalg, torch.fft,
    torch.special and torch.Tensor (properties by their `__get__`)."""
    return {space: list(functions) for space, functions in _overridable()[0].items()}


def resolve_name(f):
    """The torch name of a function `__torch_function__` receives ("torch.add",
    "torch.Tensor.add"), or None."""
    return _overridable()[1].get(f)


def is_tensor_method_or_property(func):
    """Whether `func` is a method of Tensor or a property's `__get__`, as
    `__torch_function__` receives them. ember binds one function object both as `ember.add`
    and as `Tensor.add`, so unlike PyTorch this is True for `ember.add` as well."""
    return func in _overridable()[0][Tensor] or getattr(func, "__name__", "") == "__get__"
