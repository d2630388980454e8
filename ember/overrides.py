"""`torch.overrides`: the `__torch_function__` protocol for functions written in Python.

A type that defines `__torch_function__(cls, func, types, args, kwargs)` can take over a
function that checks `has_torch_function(args)` and hands off to `handle_torch_function`
(or is wrapped by `wrap_torch_function`): library code written against PyTorch's protocol
runs unchanged. ember's own operators do not consult `__torch_function__` yet, so a subclass
overriding it takes over only functions that use these helpers."""
import functools
import inspect

from ._tensor import Tensor
from ._torch_function import (DisableTorchFunction, DisableTorchFunctionSubclass,  # noqa: F401
                              handle_torch_function, has_torch_function,
                              has_torch_function_unary, has_torch_function_variadic,
                              redispatch_function, wrap_torch_function)

__all__ = ["get_ignored_functions", "get_overridable_functions", "get_testing_overrides",
           "handle_torch_function", "has_torch_function", "is_tensor_like",
           "is_tensor_method_or_property", "redispatch_function", "resolve_name",
           "wrap_torch_function", "DisableTorchFunction", "DisableTorchFunctionSubclass"]


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
    from . import ops
    ops.load_all()  # Tensor's methods of the families loaded on first use, as functions
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
    ignored = get_ignored_functions()
    return {space: [f for f in functions if f not in ignored]
            for space, functions in _overridable()[0].items()}


# Public functions that take no tensor to dispatch on: factories, process settings, queries
# on types. Their names, wherever ember has them.
_IGNORED = (
    "tensor as_tensor asarray from_numpy frombuffer from_file from_dlpack zeros ones empty "
    "full eye arange range linspace logspace rand randn randint randperm empty_strided "
    "empty_permuted scalar_tensor sparse_coo_tensor sparse_csr_tensor sparse_csc_tensor "
    "sparse_bsr_tensor sparse_bsc_tensor sparse_compressed_tensor hann_window hamming_window "
    "blackman_window bartlett_window kaiser_window tril_indices triu_indices "
    "set_default_dtype get_default_dtype set_default_device get_default_device "
    "set_default_tensor_type set_printoptions get_printoptions manual_seed seed initial_seed "
    "get_rng_state set_rng_state is_tensor is_storage typename use_deterministic_algorithms "
    "are_deterministic_algorithms_enabled set_num_threads get_num_threads "
    "set_num_interop_threads get_num_interop_threads is_grad_enabled set_grad_enabled "
    "promote_types can_cast compile vmap cond set_anomaly_enabled is_anomaly_enabled "
    "set_float32_matmul_precision get_float32_matmul_precision fork wait "
    "set_warn_always is_warn_always_enabled").split()


@functools.lru_cache(maxsize=None)
def _ignored():
    import importlib
    found = set()
    for suffix in _NAMESPACES:
        module = importlib.import_module("ember" + (f".{suffix}" if suffix else ""))
        found.update(getattr(module, name) for name in _IGNORED if hasattr(module, name))
    return frozenset(found)


def get_ignored_functions():
    """The public functions `__torch_function__` cannot take over: they take no tensor to
    dispatch on (factories, settings, type queries)."""
    return set(_ignored())


def get_testing_overrides():
    """{overridable function: a stand-in with the same signature that returns -1}, for
    testing a `__torch_function__` implementation against every function it may receive."""
    def stand_in(func):
        def dummy(*args, **kwargs):
            return -1
        try:
            dummy.__signature__ = inspect.signature(func)
        except (TypeError, ValueError):  # a builtin without one: any arguments
            pass
        dummy.__name__ = getattr(func, "__name__", "dummy")
        return dummy
    return {func: stand_in(func) for functions in get_overridable_functions().values()
            for func in functions}


def resolve_name(f):
    """The torch name of a function `__torch_function__` receives ("torch.add",
    "torch.Tensor.add"), or None."""
    return _overridable()[1].get(f)


def is_tensor_method_or_property(func):
    """Whether `func` is a method of Tensor or a property's `__get__`, as
    `__torch_function__` receives them. ember binds one function object both as `ember.add`
    and as `Tensor.add`, so unlike PyTorch this is True for `ember.add` as well."""
    return func in _overridable()[0][Tensor] or getattr(func, "__name__", "") == "__get__"
