"""PyTorch's process-wide settings around the ops: compute threads, the float32 matmul
precision, determinism, warn-always, the deprecated default tensor type, plus `typename`,
`is_storage` and the numeric constants (`ember.inf`, `ember.pi` ...).

Threads: `set_num_threads` sets the count of ember's own intra-op threads (`_parallel`, on
the ground floor, where the kernels read it), which split convolutions and large products;
the BLAS NumPy links then runs one thread per caller (`_parallel` says why).
"""
import importlib
import math
import os
import sys
import warnings

from . import _state
from . import _parallel
from . import dtypes as _dt
from .device import backend_of, device as _device

__all__ = ["set_num_threads", "get_num_threads", "set_num_interop_threads",
           "get_num_interop_threads", "inf", "nan", "pi", "e", "newaxis",
           "set_float32_matmul_precision", "get_float32_matmul_precision",
           "use_deterministic_algorithms", "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "get_default_device", "typename",
           "set_default_tensor_type", "set_flush_denormal", "set_warn_always",
           "is_warn_always_enabled", "is_storage", "has_lapack", "has_mkl", "has_openmp",
           "has_spectral", "init_num_threads", "get_device_module"]

inf = math.inf
nan = math.nan
pi = math.pi
e = math.e
newaxis = None

# What the build computes with, as PyTorch's flags say of its own: ember's linear algebra is
# NumPy's LAPACK and its FFTs NumPy's pocketfft; its BLAS is the OpenBLAS NumPy's wheels
# bundle (not MKL), and its threads are that pool's, not OpenMP's (backends.openmp agrees).
has_lapack = True
has_spectral = True
has_mkl = False
has_openmp = False


# ---- compute threads -------------------------------------------------------------------
def _physical_cores():
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


_threads = {"interop": None, "interop_fixed": False}


def _check_threads(n, fname):
    if isinstance(n, bool) or not isinstance(n, int):
        raise RuntimeError(f"{fname} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{fname} expects a positive integer")


def set_num_threads(num):
    """Sets the number of threads ember's CPU kernels use (`_parallel`)."""
    _check_threads(num, "set_num_threads")
    _parallel.set_intra_threads(num)


def get_num_threads():
    return _parallel.intra_threads()


def set_num_interop_threads(num):
    """ember runs independent ops one after another (no inter-op pool): the number is
    validated and remembered, and like PyTorch's it can be set only once."""
    _check_threads(num, "set_num_interop_threads")
    if _threads["interop_fixed"]:
        raise RuntimeError("Error: cannot set number of interop threads after parallel work has "
                           "started or set_num_interop_threads called")
    _threads["interop"], _threads["interop_fixed"] = num, True


def init_num_threads():
    """PyTorch sets up the calling thread's OpenMP threads here; ember's intra-op threads are
    one pool for the process (`_parallel`), ready for every thread, so there is nothing to do."""


def get_device_module(device=None):
    """The module of a device type (`ember.cuda` for "cuda" or device("cuda:1")); without an
    argument, the current accelerator's, else `ember.cpu`."""
    if device is None:
        name = "cuda" if backend_of(_device("cuda")).is_available() else "cpu"
    elif isinstance(device, _device):
        name = device.type
    elif isinstance(device, str):
        name = _device(device).type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or "
                           "None")
    package = __name__.rsplit(".", 1)[0]
    try:
        return sys.modules.get(f"{package}.{name}") or importlib.import_module(
            f"{package}.{name}")
    except ModuleNotFoundError:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered "
                           f"as 'torch.{name}'.") from None


def get_num_interop_threads():
    return _threads["interop"] if _threads["interop"] is not None else _physical_cores()


# ---- matmul precision, determinism, warnings --------------------------------------------
def set_float32_matmul_precision(precision):
    """NumPy's float32 products always compute in full float32 ("highest", which every
    setting permits); on a GPU "high" and "medium" let cuBLAS compute them in TF32, as
    `torch.backends.cuda.matmul.allow_tf32 = True` does."""
    if not isinstance(precision, str):
        raise RuntimeError("set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current"
                      "setFloat32MatmulPrecision call has no effect.", UserWarning, stacklevel=2)
        return
    from .backends import cuda as _cuda_backend
    _cuda_backend.set_matmul_precision(precision)


def get_float32_matmul_precision():
    return _state.matmul_precision.float32


def use_deterministic_algorithms(mode, *, warn_only=False):
    """ember's CPU kernels are deterministic already; the mode makes `empty` and `resize_`
    fill the memory they leave uninitialised (see `torch.utils.deterministic`)."""
    if not isinstance(mode, bool):
        raise TypeError("_set_deterministic_algorithms(): argument 'mode' (position 1) must be "
                        f"bool, not {type(mode).__name__}")
    if not isinstance(warn_only, bool):
        raise TypeError("_set_deterministic_algorithms(): argument 'warn_only' must be bool, "
                        f"not {type(warn_only).__name__}")
    _state.deterministic.enabled = mode
    _state.deterministic.warn_only = mode and warn_only


def are_deterministic_algorithms_enabled():
    return _state.deterministic.enabled


def is_deterministic_algorithms_warn_only_enabled():
    return _state.deterministic.warn_only


def set_deterministic_debug_mode(debug_mode):
    if isinstance(debug_mode, str):
        modes = {"default": 0, "warn": 1, "error": 2}
        if debug_mode not in modes:
            raise RuntimeError("invalid value of debug_mode, expected one of `default`, `warn`, "
                               f"`error`, but got {debug_mode}")
        debug_mode = modes[debug_mode]
    elif isinstance(debug_mode, int) and not isinstance(debug_mode, bool):
        if debug_mode not in (0, 1, 2):
            raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                               f"{debug_mode}")
    else:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if debug_mode == 0:
        use_deterministic_algorithms(False)
    else:
        use_deterministic_algorithms(True, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _state.deterministic.enabled:
        return 0
    return 1 if _state.deterministic.warn_only else 2


def set_warn_always(b):
    if not isinstance(b, bool):
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _state.warn_always = b


def is_warn_always_enabled():
    return _state.warn_always


def set_flush_denormal(mode):
    """PyTorch sets the x86 FTZ/DAZ flags; NumPy gives Python no way to set them, so, as
    PyTorch does on a CPU that cannot flush, this answers False and changes nothing."""
    if not isinstance(mode, bool):
        raise TypeError(f"set_flush_denormal(): argument 'mode' (position 1) must be bool, not "
                        f"{type(mode).__name__}")
    return False


# ---- the default device and tensor type, type names ------------------------------------
def get_default_device():
    from ._state import default_device
    from .device import device
    dev = default_device()
    if dev is None:
        return device("cpu")
    dev = device(dev)
    if dev.index is None and dev.type != "cpu":  # the current one of that type, found as
        from .ops.creation import tensor    # PyTorch finds it: a tensor made there (which
        return tensor([]).device            # raises where the type has no backend)
    return dev


def set_default_tensor_type(t):
    _state.warn_once("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please "
                     "use torch.set_default_dtype() and torch.set_default_device() as "
                     "alternatives.")
    if isinstance(t, str):
        module, _, name = t.rpartition(".")
        if module not in ("torch", "torch.cuda", "ember", "ember.cuda"):
            raise ModuleNotFoundError(f"No module named '{module or t}'")
        from .ops.legacy_constructors import CUDA_LEGACY_TYPES, LEGACY_TYPES
        table = CUDA_LEGACY_TYPES if module.endswith("cuda") else LEGACY_TYPES
        if name not in table:
            raise AttributeError(f"module '{module}' has no attribute '{name}'")
        t = table[name]
    dtype = getattr(t, "_legacy_dtype", None)
    if dtype is None or not isinstance(t, type):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _dt.set_default_dtype(dtype)
    from ._state import set_default_device
    set_default_device("cuda" if t._is_cuda else None)


def typename(obj):
    """'torch.FloatTensor' for a float32 tensor, a class's qualified name otherwise."""
    from ._tensor import Tensor
    if isinstance(obj, Tensor):
        return obj.type()
    if isinstance(obj, _dt.dtype):
        return "torch.dtype"
    # a class or function names itself; any other object, its class
    module, name = getattr(obj, "__module__", "") or "", getattr(obj, "__qualname__", None)
    if name is None:
        name = getattr(obj, "__name__", None)
    if name is None:
        module, name = type(obj).__module__ or "", type(obj).__qualname__
    if module.startswith("ember.ops"):  # an op: the public namespace that holds it
        from .serialization._torch_paths import torch_name
        module, name = torch_name(module, name, obj)
    if module.startswith("ember"):
        module = "torch" + module[len("ember"):]
    if module in ("", "builtins", "__builtin__"):
        return name
    return f"{module}.{name}"


def is_storage(obj):
    """True for a storage object (`Tensor.untyped_storage()`, `ember.FloatStorage(3)` ...)."""
    from ._storage import TypedStorage, UntypedStorage
    return isinstance(obj, (TypedStorage, UntypedStorage))
