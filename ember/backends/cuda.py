"""`torch.backends.cuda`: the CUDA switches scripts set. ember's CUDA backend is CuPy, so it
is built when CuPy is installed. Its matrix products are cuBLAS's and its linear algebra
cuSOLVER's (through CuPy); its FFTs keep their plans in CuPy's plan cache, which
`cufft_plan_cache` reads and sizes. Matmul precision, the attention-kernel toggles and the
library preferences are kept as flags with PyTorch's defaults: ember has one attention
implementation (the math one), and the flags do not change its numbers. TF32 matmuls
(`matmul.allow_tf32`, `set_float32_matmul_precision("high")`) set CuPy's float32 products to
TF32 on GPUs that have it (compute capability 8.0 and up)."""
import contextlib
import enum
import importlib.util
import os
import warnings

from .. import _state
from ..device import backend_of, cuda_float32_products, device as _device
from ._sdpa import (SDPAParams, can_use_cudnn_attention, can_use_efficient_attention,
                    can_use_flash_attention)

__all__ = ["is_built", "cuFFTPlanCacheAttrContextProp", "cuFFTPlanCache",
           "cuFFTPlanCacheManager", "cuBLASModule", "preferred_linalg_library",
           "preferred_blas_library", "cublas_workspace_size", "cublaslt_workspace_size",
           "blas_workspace_size", "preferred_rocm_fa_library", "is_ck_sdpa_available",
           "cufft_plan_cache", "matmul", "SDPAParams", "enable_cudnn_sdp", "cudnn_sdp_enabled",
           "enable_flash_sdp", "flash_sdp_enabled", "enable_mem_efficient_sdp",
           "mem_efficient_sdp_enabled", "math_sdp_enabled", "enable_math_sdp",
           "allow_fp16_bf16_reduction_math_sdp", "fp16_bf16_reduction_math_sdp_allowed",
           "is_flash_attention_available", "can_use_flash_attention",
           "can_use_efficient_attention", "can_use_cudnn_attention", "sdp_kernel"]


def is_built():
    return importlib.util.find_spec("cupy") is not None


def _cuda():
    return backend_of(_device("cuda"))


# ---- cuBLAS: matmul precision ---------------------------------------------------------------

class cuBLASModule:
    """`torch.backends.cuda.matmul`: how much precision cuBLAS may trade for speed."""

    _flags = {"allow_fp16_reduced_precision_reduction": (True, True),
              "allow_bf16_reduced_precision_reduction": (True, True),
              "allow_fp16_accumulation": False, "fp32_precision": "none"}

    @staticmethod
    def _reduction_setting(value, name):
        """A bool, or (allow_reduced_precision[, allow_splitk]) as bools."""
        def as_bool(item, which):
            if isinstance(item, bool):
                return item
            raise TypeError(f"{name} expects a bool for {which}, but got {type(item)!r}")
        if isinstance(value, bool):
            return value, True
        if isinstance(value, (list, tuple)):
            if not value:
                raise TypeError(f"{name} expects at least one boolean argument")
            if len(value) > 2:
                raise TypeError(f"{name} expects at most two boolean arguments")
            reduced = as_bool(value[0], "allow_reduced_precision")
            return reduced, as_bool(value[1], "allow_splitk") if len(value) == 2 else True
        raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got "
                        f"{type(value)!r}")

    def __getattr__(self, name):
        flags = cuBLASModule._flags
        for kind in ("fp16", "bf16"):
            key = f"allow_{kind}_reduced_precision_reduction"
            if name == key:
                return flags[key][0]
            if name == key + "_split_k":
                return flags[key][1]
        if name == "allow_tf32":
            return matmul_tf32()
        if name in ("allow_fp16_accumulation", "fp32_precision"):
            return flags[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name, value):
        flags = cuBLASModule._flags
        if name in ("allow_fp16_reduced_precision_reduction",
                    "allow_bf16_reduced_precision_reduction"):
            flags[name] = self._reduction_setting(value, name)
        elif name == "allow_tf32":  # the float32 matmul precision, as in PyTorch
            set_matmul_precision("high" if value else "highest")
        elif name == "allow_fp16_accumulation":
            flags[name] = bool(value)
        elif name == "fp32_precision":
            if value not in ("none", "ieee", "tf32"):
                raise RuntimeError(f"Invalid precision {value} for cuda matmul: expected one of "
                                   "none, ieee, tf32")
            flags[name] = value
            apply_matmul_precision()
        else:
            raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()


def matmul_tf32():
    """Whether float32 matrix products on a GPU may compute in TF32: `matmul.fp32_precision`
    "tf32", or (where it is "none") a float32 matmul precision other than "highest"."""
    precision = cuBLASModule._flags["fp32_precision"]
    if precision != "none":
        return precision == "tf32"
    return _state.matmul_precision.float32 != "highest"


def set_matmul_precision(precision):
    """torch.set_float32_matmul_precision, and `matmul.allow_tf32` (True is "high", False
    "highest"): the precision, and with it `matmul.fp32_precision` ("tf32", or "ieee" for
    "highest"), as PyTorch keeps the two."""
    _state.matmul_precision.float32 = precision
    cuBLASModule._flags["fp32_precision"] = "ieee" if precision == "highest" else "tf32"
    apply_matmul_precision()


def apply_matmul_precision():
    """Give CuPy's float32 products (cuBLAS) the TF32 setting, where CuPy is loaded already
    (loading it applies the setting then)."""
    cupy = getattr(backend_of(_device("cuda")), "_cupy", None)
    if cupy is not None:
        cuda_float32_products(cupy, matmul_tf32())


# ---- the libraries behind BLAS, linear algebra and ROCm's flash attention --------------------

class _BlasBackend(enum.Enum):
    Default = 0
    Cublas = 1
    Cublaslt = 2
    Ck = 3


class _LinalgBackend(enum.Enum):
    Default = 0
    Cusolver = 1
    Magma = 2


class _ROCmFABackend(enum.Enum):
    Default = 0
    AOTriton = 1
    Ck = 2


_BLAS = {"default": _BlasBackend.Default, "cublas": _BlasBackend.Cublas,
         "hipblas": _BlasBackend.Cublas, "cublaslt": _BlasBackend.Cublaslt,
         "hipblaslt": _BlasBackend.Cublaslt, "ck": _BlasBackend.Ck}
_LINALG = {"default": _LinalgBackend.Default, "cusolver": _LinalgBackend.Cusolver,
           "magma": _LinalgBackend.Magma}
_ROCM_FA = {"default": _ROCmFABackend.Default, "aotriton": _ROCmFABackend.AOTriton,
            "ck": _ROCmFABackend.Ck}
_preferred = {"blas": _BlasBackend.Cublas, "linalg": _LinalgBackend.Default,
              "rocm_fa": _ROCmFABackend.Default}


def _choose(backend, table, enum_type):
    if isinstance(backend, str):
        if backend not in table:
            raise RuntimeError(f"Unknown input value. Choose from: {', '.join(table)}.")
        return table[backend]
    if isinstance(backend, enum_type):
        return backend
    raise RuntimeError("Unknown input value type.")


def preferred_blas_library(backend=None):
    """The BLAS library matmuls prefer: cuBLAS (CuPy's). ember's matmuls do not call
    cuBLASLt, so it cannot be chosen."""
    if backend is not None:
        chosen = _choose(backend, _BLAS, _BlasBackend)
        if chosen is _BlasBackend.Cublaslt:
            raise RuntimeError("Cannot set preferred backend to cuBLASLt if PyTorch has not "
                               "been compiled with cuBLASLt.")
        _preferred["blas"] = _BlasBackend.Cublas if chosen is _BlasBackend.Default else chosen
    return _preferred["blas"]


def preferred_linalg_library(backend=None):
    """The library linear algebra on CUDA prefers: cuSOLVER (CuPy's); ember has no MAGMA."""
    if backend is not None:
        chosen = _choose(backend, _LINALG, _LinalgBackend)
        if chosen is _LinalgBackend.Magma:
            raise RuntimeError("Cannot set preferred backend to MAGMA if PyTorch has not been "
                               "compiled with MAGMA.")
        _preferred["linalg"] = chosen
    return _preferred["linalg"]


def preferred_rocm_fa_library(backend=None):
    """ROCm's flash-attention library preference (kept; ember runs on CUDA, not ROCm)."""
    if backend is not None:
        try:
            _preferred["rocm_fa"] = _choose(backend, _ROCM_FA, _ROCmFABackend)
        except RuntimeError:
            raise ValueError(f"Unknown input value. Choose from: {', '.join(_ROCM_FA)}.") \
                from None
    return _preferred["rocm_fa"]


def _default_workspace():
    """cuBLAS's workspace in bytes, as CUBLAS_WORKSPACE_CONFIG (":SIZE_KiB:COUNT"...) gives
    it, else PyTorch's default of 4096 KiB x 2 + 16 KiB x 8."""
    config = os.environ.get("CUBLAS_WORKSPACE_CONFIG", ":4096:2:16:8")
    numbers = [int(n) for n in config.split(":") if n.strip().isdigit()]
    return sum(size * count for size, count in zip(numbers[::2], numbers[1::2])) * 1024


_workspace = {}


def _workspace_size(kind, size, missing):
    if not _cuda().is_available():
        raise AttributeError(f"module 'torch._C' has no attribute '{missing}'")
    if size is not None:
        _workspace[kind] = int(size)
    return _workspace.get(kind, _default_workspace())


def cublas_workspace_size(size=None):
    """The workspace size cuBLAS calls are given (set: the size to give them)."""
    return _workspace_size("cublas", size, "_cuda_getCublasWorkspaceSize")


def cublaslt_workspace_size(size=None):
    return _workspace_size("cublaslt", size, "_cuda_getCublasLtWorkspaceSize")


def blas_workspace_size(size=None, backend=None):
    """The workspace size of `backend`'s BLAS library (the preferred one by default)."""
    if backend is None:
        resolved = preferred_blas_library()
    elif isinstance(backend, str):
        if backend not in _BLAS:
            raise RuntimeError(f"Unknown backend string. Choose from: {', '.join(_BLAS)}.")
        resolved = _BLAS[backend]
    elif isinstance(backend, _BlasBackend):
        resolved = backend
    else:
        raise RuntimeError("Unknown backend type.")
    if resolved is _BlasBackend.Ck:
        raise RuntimeError("CK backend does not use a workspace.")
    if resolved is _BlasBackend.Cublaslt:
        return cublaslt_workspace_size(size)
    return cublas_workspace_size(size)


# ---- cuFFT plans: CuPy's plan cache, per device ----------------------------------------------

class cuFFTPlanCacheAttrContextProp:
    """A property of one device's plan cache: read by `getter(index)`, set by
    `setter(index, value)` (a string setter: the error for a read-only property)."""

    def __init__(self, getter, setter):
        self.getter, self.setter = getter, setter

    def __get__(self, obj, objtype):
        return self.getter(obj.device_index)

    def __set__(self, obj, value):
        if isinstance(self.setter, str):
            raise RuntimeError(self.setter)
        self.setter(obj.device_index, value)


def _plan_cache(index):
    try:
        cp = _cuda().xp
    except AssertionError:
        raise RuntimeError("Cannot access cuFFT plan cache without CUDA: ember's cuFFT plans "
                           "are CuPy's, and CuPy is not installed") from None
    with cp.cuda.Device(index):
        return cp.fft.config.get_plan_cache()


class cuFFTPlanCache:
    """One device's cache of cuFFT plans: `size` plans held now, at most `max_size`."""

    def __init__(self, device_index):
        self.device_index = device_index

    size = cuFFTPlanCacheAttrContextProp(
        lambda index: _plan_cache(index).get_curr_size(),
        ".size is a read-only property showing the number of plans currently in the cache. "
        "To change the cache capacity, set cufft_plan_cache.max_size.")
    max_size = cuFFTPlanCacheAttrContextProp(
        lambda index: _plan_cache(index).get_size(),
        lambda index, value: _plan_cache(index).set_size(value))

    def clear(self):
        _plan_cache(self.device_index).clear()


class cuFFTPlanCacheManager:
    """`cufft_plan_cache[device]`: a device's plan cache; its attributes alone: the current
    device's."""

    _ready = False

    def __init__(self):
        self.caches = []
        self._ready = True

    def __getitem__(self, device):
        index = device if isinstance(device, int) else _device(device).index
        index = _state.cuda_device if index is None else index
        count = _cuda().device_count()
        if index < 0 or index >= count:
            raise RuntimeError(f"cufft_plan_cache: expected 0 <= device index < {count}, but "
                               f"got device with index {index}")
        if not self.caches:
            self.caches.extend(cuFFTPlanCache(i) for i in range(count))
        return self.caches[index]

    def _current(self):
        _cuda().xp  # PyTorch's AssertionError without CUDA
        return self[_state.cuda_device]

    def __getattr__(self, name):
        return getattr(self._current(), name)

    def __setattr__(self, name, value):
        if self._ready:
            return setattr(self._current(), name, value)
        return super().__setattr__(name, value)


cufft_plan_cache = cuFFTPlanCacheManager()


# ---- scaled dot-product attention: which kernels may run -------------------------------------

_sdp = {"flash": True, "mem_efficient": True, "math": True, "cudnn": True, "overrideable": True}
# The order in which PyTorch tries the attention kernels, as SDPBackend values (flash, efficient,
# math, cudnn, overrideable); `torch.nn.attention.sdpa_kernel(..., set_priority=True)` sets it.
_sdp_priority = [1, 2, 0, 3, 4]
_math_fp16_bf16_reduction = [False]


def _toggle(kind):
    def enabled():
        return _sdp[kind]

    def enable(flag):
        _sdp[kind] = bool(flag)
    enabled.__name__, enable.__name__ = f"{kind}_sdp_enabled", f"enable_{kind}_sdp"
    return enabled, enable


flash_sdp_enabled, enable_flash_sdp = _toggle("flash")
mem_efficient_sdp_enabled, enable_mem_efficient_sdp = _toggle("mem_efficient")
math_sdp_enabled, enable_math_sdp = _toggle("math")
cudnn_sdp_enabled, enable_cudnn_sdp = _toggle("cudnn")


def allow_fp16_bf16_reduction_math_sdp(enabled):
    """Whether the math kernel may reduce in float16/bfloat16 (rather than float32)."""
    _math_fp16_bf16_reduction[0] = bool(enabled)


def fp16_bf16_reduction_math_sdp_allowed():
    return _math_fp16_bf16_reduction[0]


def is_flash_attention_available():
    """ember has no flash-attention kernel (its attention is the math one)."""
    return False


def is_ck_sdpa_available():
    """Composable Kernel attention is ROCm's; ember has none."""
    return False


@contextlib.contextmanager
def _sdp_kernel(enable_flash, enable_math, enable_mem_efficient, enable_cudnn):
    previous = dict(_sdp)
    _sdp.update(flash=enable_flash, math=enable_math, mem_efficient=enable_mem_efficient,
                cudnn=enable_cudnn, overrideable=False)
    try:
        yield {}
    finally:
        _sdp.update(previous)


def sdp_kernel(enable_flash=True, enable_math=True, enable_mem_efficient=True,
               enable_cudnn=True):
    """Deprecated: `torch.nn.attention.sdpa_kernel` with the backends given as flags."""
    warnings.warn("`torch.backends.cuda.sdp_kernel()` is deprecated. In the future, this "
                  "context manager will be removed. Please see "
                  "`torch.nn.attention.sdpa_kernel()` for the new context manager, with "
                  "updated signature.", FutureWarning, stacklevel=2)
    return _sdp_kernel(bool(enable_flash), bool(enable_math), bool(enable_mem_efficient),
                       bool(enable_cudnn))
