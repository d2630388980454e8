"""`__torch_function__` dispatch as user code calls it (torch.overrides' has_torch_function,
handle_torch_function, the DisableTorchFunction switches): the ground floor, so that
ember.nn.functional offers these names where PyTorch's does (code that copies PyTorch's
functional source calls them) and ember.overrides re-exports them."""
import functools
import threading
import warnings


class _Switch(threading.local):
    def __init__(self):
        self.disabled = 0        # open DisableTorchFunction(Subclass) blocks in this thread
        self.skip_next = False   # redispatch_function: the next check answers no, once


_switch = _Switch()


class DisableTorchFunctionSubclass:
    """Within the block, arguments' `__torch_function__` is not consulted: functions run
    their own code on Tensor subclasses."""

    def __enter__(self):
        _switch.disabled += 1
        return self

    def __exit__(self, *exc):
        _switch.disabled -= 1
        return False


class DisableTorchFunction(DisableTorchFunctionSubclass):
    """As DisableTorchFunctionSubclass; PyTorch's also silences torch-function modes, which
    ember does not have."""


DisableTorchFunction.__module__ = DisableTorchFunctionSubclass.__module__ = "torch._C"


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
    """Whether any of `relevant_args` has a type that defines `__torch_function__` (never
    inside DisableTorchFunction, nor on the one check redispatch_function skips)."""
    if _switch.disabled:
        return False
    if _switch.skip_next:
        _switch.skip_next = False
        return False
    return any(getattr(type(arg), "__torch_function__", None) is not None
               for arg in relevant_args)


def redispatch_function(func, types, args, kwargs):
    """From inside a `__torch_function__`, call `func` skipping one level of dispatch: its
    own check answers no, the calls it makes dispatch as usual."""
    _switch.skip_next = True
    try:
        return func(*args, **(kwargs or {}))
    finally:
        _switch.skip_next = False


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
