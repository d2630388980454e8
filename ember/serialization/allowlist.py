"""What a weights-only load may name and call: PyTorch 2.x's default allowlist, what the user
adds with `add_safe_globals` / `safe_globals`, and the checks on every call a pickle makes.

A global is looked up by its (module, name) in the file; Python 2's names are mapped first,
and PyTorch's paths of ember's classes are mapped to ember's. Nothing is imported for a
weights-only load: a name not allowed is PyTorch's "Weights only load failed" error.
"""
import _compat_pickle
import codecs
import collections
import pickle

from .. import dtypes as _dt
from .._storage import UntypedStorage
from .._tensor import Tensor
from ._torch_paths import ember_name, torch_name
from .rebuild import (_get_layout, _rebuild_from_type_v2, _rebuild_meta_tensor_no_storage,
                      _rebuild_parameter, _rebuild_sparse_tensor, _rebuild_tensor_v2,
                      _rebuild_tensor_v3)

__all__ = ["add_safe_globals", "get_safe_globals", "clear_safe_globals", "safe_globals"]

_DTYPE_OF_STORAGE = {d._storage_type: d for d in _dt.ALL_DTYPES}
# PyTorch writes the dtypes without a typed storage class (uint16, float8 ...) as bytes in an
# UntypedStorage, naming the dtype in `_rebuild_tensor_v3`.
_DTYPE_OF_STORAGE["UntypedStorage"] = _dt.uint8

# What a weights-only load allows by default: PyTorch 2.x's list (no frozenset, slice, range,
# defaultdict or deque: those need add_safe_globals there too)
_SAFE = {
    ("collections", "OrderedDict"): collections.OrderedDict,
    ("collections", "Counter"): collections.Counter,
    ("torch._utils", "_rebuild_tensor_v2"): _rebuild_tensor_v2,
    ("torch._utils", "_rebuild_tensor_v3"): _rebuild_tensor_v3,
    ("torch.storage", "UntypedStorage"): UntypedStorage,
    ("torch._utils", "_rebuild_parameter"): _rebuild_parameter,
    ("torch._utils", "_rebuild_meta_tensor_no_storage"): _rebuild_meta_tensor_no_storage,
    ("torch._utils", "_rebuild_parameter_with_state"): _rebuild_parameter,
    ("torch._tensor", "_rebuild_from_type_v2"): _rebuild_from_type_v2,
    ("torch._utils", "_rebuild_sparse_tensor"): _rebuild_sparse_tensor,
    ("torch.serialization", "_get_layout"): _get_layout,
    ("torch", "Tensor"): Tensor,
    ("builtins", "set"): set, ("builtins", "complex"): complex,
    ("builtins", "bytearray"): bytearray, ("_codecs", "encode"): codecs.encode,
}
_user_safe = {}


def add_safe_globals(safe_globals):
    """Allow these classes/functions (or (obj, "module.name") pairs) in weights-only loads."""
    for g in safe_globals:
        obj, name = (g if isinstance(g, tuple) else (g, f"{g.__module__}.{g.__qualname__}"))
        module, _, attr = name.rpartition(".")
        _user_safe[(module, attr)] = obj


def get_safe_globals():
    return list(_user_safe.values())


def clear_safe_globals():
    _user_safe.clear()


class safe_globals:
    """Context manager: `add_safe_globals` for the duration of a `with` block."""

    def __init__(self, safe_globals):
        self.globals = safe_globals

    def __enter__(self):
        self._saved = dict(_user_safe)
        add_safe_globals(self.globals)

    def __exit__(self, *exc):
        _user_safe.clear()
        _user_safe.update(self._saved)


def _allowed_global(module, name):
    """The object a weights-only load may take for `module.name` by default, or None."""
    key = (module, name)
    if key in _SAFE:
        return _SAFE[key]
    if module == "torch":
        if name in _DTYPE_OF_STORAGE and name != "UntypedStorage":
            from .._storage import LEGACY_STORAGES  # torch.FloatStorage ...: storage classes
            return LEGACY_STORAGES[name]
        if name in _dt._BY_NAME:
            return _dt._BY_NAME[name]
        if name == "device":
            from ..device import device
            return device
        if name == "Size":
            from .._tensor import Size
            return Size
        from .. import _qscheme  # torch.per_tensor_affine ...: PyTorch allows the schemes
        if name in _qscheme.__all__ and name != "qscheme":
            return getattr(_qscheme, name)
        from ..ops.legacy_constructors import LEGACY_TYPES  # torch.FloatTensor ...: tensor classes
        if name in LEGACY_TYPES:
            return LEGACY_TYPES[name]
    if key == ("torch.nn.parameter", "Parameter"):
        from ..nn.parameter import Parameter
        return Parameter
    return None


def python3_name(module, name):
    """Protocol-2 pickles name Python 2's modules (__builtin__.set, copy_reg ...)."""
    if (module, name) in _compat_pickle.NAME_MAPPING:
        return _compat_pickle.NAME_MAPPING[(module, name)]
    if module in _compat_pickle.IMPORT_MAPPING:
        return _compat_pickle.IMPORT_MAPPING[module], name
    return module, name


def ember_global(module, name, importing=True):
    """ember's object for a torch path: at the same path, or, for a layer of
    torch.nn.modules.<file>, ember.nn's layer of that name (ember files them its own way);
    None if there is none. Imports only ember's own modules, and with importing=False (a
    weights-only load) none: a class the user allowed lives in a module already imported."""
    import importlib
    import sys
    if module != "ember" and not module.startswith("ember."):
        return None
    try:
        obj = importlib.import_module(module) if importing else sys.modules[module]
        for part in name.split("."):
            obj = getattr(obj, part)
        return obj
    except (ImportError, AttributeError, KeyError):
        if module.startswith("ember.nn.modules."):
            from .. import nn
            return getattr(nn, name, None)
        return None


# Modules whose globals a weights-only load refuses even when the user allowed them (PyTorch's
# list): they reach the process and the file system.
_BLOCKED_MODULES = ("sys", "os", "posix", "nt")


def find_allowed(module, name, weights_only=True):
    """The object for a pickle's global `module.name` if allowed (by default or by the
    user), else None, or, for a weights-only load, PyTorch's UnpicklingError."""
    module, name = python3_name(module, name)
    if weights_only and module in _BLOCKED_MODULES:
        raise pickle.UnpicklingError(f"Trying to load unsupported GLOBAL {module}.{name} whose "
                                     f"module {module} is blocked.")
    allowed = _allowed_global(module, name)
    if allowed is not None:
        return allowed
    # a user's add_safe_globals names ember's classes; a file PyTorch wrote names torch's
    ours = ember_name(module, name)
    if (module, name) in _user_safe or ours in _user_safe:
        return _user_safe.get((module, name), _user_safe.get(ours))
    if ours[0] != module and _user_safe:  # ember's class of that path may live elsewhere
        obj = ember_global(*ours, importing=not weights_only)
        if obj is not None and any(obj is g for g in _user_safe.values()):
            return obj
    if not weights_only:
        return None
    shown = torch_name(module, name)  # PyTorch's name, also for an older ember file
    full = name if module == "builtins" else ".".join(shown)
    raise pickle.UnpicklingError(
        f"Unsupported global: GLOBAL {full} was not an allowed global by default. Please use "
        f"`torch.serialization.add_safe_globals([{full}])` or the "
        f"`torch.serialization.safe_globals([{full}])` context manager to allowlist this "
        "global if you trust this class/function.")


_UNSAFE_MESSAGE = (
    "In PyTorch 2.6, we changed the default value of the `weights_only` argument in "
    "`torch.load` from `False` to `True`. Re-running `torch.load` with `weights_only` set to "
    "`False` will likely succeed, but it can result in arbitrary code execution. Do it only "
    "if you got the file from a trusted source.")


def weights_only_message(message):
    """PyTorch's words around the error `message` of a weights-only load: how to load the file
    anyway (and at what risk), then the unpickler's own message."""
    docs = ("\n\nCheck the documentation of torch.load to learn more about types accepted by "
            "default with weights_only https://pytorch.org/docs/stable/generated/torch.load.html.")
    if "was not an allowed global by default" in message:
        return ("Weights only load failed. This file can still be loaded, to do so you have two "
                "options, \033[1mdo those steps only if you trust the source of the checkpoint"
                f"\033[0m. \n\t(1) {_UNSAFE_MESSAGE}\n\t(2) Alternatively, to load with "
                "`weights_only=True` please check the recommended steps in the following error "
                f"message.\n\tWeightsUnpickler error: {message}{docs}")
    head = f"Weights only load failed. {_UNSAFE_MESSAGE}\n"
    if " is blocked." not in message:
        head += ("Please file an issue with the following so that we can make "
                 "`weights_only=True` compatible with your use case: WeightsUnpickler error: ")
    return f"{head}\n\n{message}{docs}"


# ---- the calls a weights-only pickle may make ------------------------------------------------
_TEXT_ENCODINGS = {"latin1", "latin-1", "iso-8859-1", "iso8859-1", "utf-8", "utf8", "ascii"}


def _check_call(func, args, kwargs):
    """Raises unless `func(*args, **kwargs)` is a call a checkpoint makes: the few builtins
    PyTorch allows take text (never a size to allocate), tensor classes take data."""
    from ..ops.legacy_constructors import LEGACY_TYPES
    if func is bytearray or func is codecs.encode:
        # pickle writes bytes and bytearrays as (text, 'latin1') at protocol 2
        ok = (len(args) == 0 if func is bytearray else False) or (
            len(args) == 1 and isinstance(args[0], (bytes, bytearray))) or (
            len(args) == 2 and isinstance(args[0], str) and isinstance(args[1], str)
            and args[1].lower() in _TEXT_ENCODINGS)
        if not ok or kwargs:
            raise pickle.UnpicklingError(f"{func.__qualname__} may only rebuild bytes from "
                                         "text in a weights-only load")
    elif func is UntypedStorage:
        raise pickle.UnpicklingError("torch.storage.UntypedStorage names a storage's type; "
                                     "a weights-only load does not call it")
    elif func is Tensor or any(func is c for c in LEGACY_TYPES.values()):
        if kwargs or len(args) > 1 or (args and not isinstance(args[0], (list, tuple))):
            raise pickle.UnpicklingError(f"a weights-only load calls {func.__name__} only "
                                         "with a list of values")


def make_call(weights_only_user_types):
    """The unpickler's `call(func, args, kwargs=None, new=False)` for REDUCE and NEWOBJ:
    `func` must be an allowed callable, and its errors come out as the unpickler's."""
    from ..device import device
    from .._tensor import Size
    from ..nn.parameter import Parameter
    from ..ops.legacy_constructors import LEGACY_TYPES
    allowed = [*_SAFE.values(), device, Size, Parameter, *LEGACY_TYPES.values(),
               *weights_only_user_types]

    def call(func, args, kwargs=None, new=False):
        if not any(func is a for a in allowed):
            raise pickle.UnpicklingError(f"Trying to call reduce for unrecognized function "
                                         f"{func!r}")
        _check_call(func, args, kwargs)
        try:
            if new and func is not Parameter and isinstance(func, type):
                return func.__new__(func, *args, **(kwargs or {}))
            return func(*args, **(kwargs or {}))
        except (RuntimeError, pickle.UnpicklingError, EOFError):
            raise
        except Exception as exc:  # noqa: BLE001 (any other failure is the file's fault)
            if getattr(exc, "_ember_checked", False):
                raise
            name = getattr(func, "__qualname__", type(func).__name__)
            raise pickle.UnpicklingError(f"Weights only load failed: {name} cannot be called "
                                         f"with the file's arguments: {type(exc).__name__}: "
                                         f"{exc}") from exc
    return call


def user_types():
    """The classes the user allowed (BUILD, SETITEMS and APPENDS may fill their instances)."""
    return tuple(g for g in _user_safe.values() if isinstance(g, type))

