"""`autocast`: a context manager (and decorator) that switches the per-thread autocast policy
of one device type on or off; the ops read it in `ember/ops/_autocast.py`."""
import functools
import warnings

from .. import dtypes as _dt
from .._state import ThreadLocal, autocast as _state
from ..device import backend_of, device

__all__ = ["autocast", "custom_bwd", "custom_fwd", "get_autocast_dtype", "is_autocast_available",
           "is_autocast_enabled"]

_DEFAULT_DTYPES = {"cpu": _dt.bfloat16, "cuda": _dt.float16, "xla": _dt.bfloat16}
_SUPPORTED = {"cpu": (_dt.bfloat16, _dt.float16), "cuda": (_dt.float16, _dt.bfloat16)}


class _Settings(ThreadLocal):
    def __init__(self):
        self.dtypes = dict(_DEFAULT_DTYPES)  # get_autocast_dtype, enabled or not
        self.cache_enabled = True             # is_autocast_cache_enabled


_settings = _Settings()


def is_autocast_available(device_type):
    return device_type in _SUPPORTED


def is_autocast_enabled(device_type=None):
    """Without an argument: CUDA's autocast state, as PyTorch answers."""
    if device_type is not None:
        device(device_type)  # PyTorch's error for a device type that does not exist
    return (device_type or "cuda") in _state.thread.dtypes


def get_autocast_dtype(device_type):
    device(device_type)
    return _settings.dtypes.get(device_type, _DEFAULT_DTYPES.get(device_type, _dt.float16))


class autocast:
    """Inside, the ops autocast covers run in `dtype` (bfloat16 on the CPU, float16 on CUDA
    by default) on tensors of `device_type`; nested `autocast(enabled=False)` turns it off."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        device(device_type)  # PyTorch's error for a device type that does not exist
        self.device = device_type
        self.fast_dtype = get_autocast_dtype(device_type) if dtype is None else dtype
        # ember casts afresh on every op: casting is a cheap `to` and a cache would only
        # save recomputing it; the flag is accepted and kept for the user to read
        self._cache_enabled = _settings.cache_enabled if cache_enabled is None \
            else cache_enabled
        if enabled and device_type == "cuda":
            if not backend_of(device("cuda")).is_available():
                warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                              "autocast.", UserWarning, stacklevel=2)
                enabled = False
        elif enabled and device_type not in _SUPPORTED:
            warnings.warn(f"User specified an unsupported autocast device_type "
                          f"'{device_type}'. Disabling autocast.", UserWarning, stacklevel=2)
            enabled = False
        if enabled and self.fast_dtype not in _SUPPORTED.get(device_type, ()):
            if device_type == "cpu":
                warnings.warn("In CPU autocast, but the target dtype is not supported. Disabling "
                              "autocast.\nCPU Autocast only supports dtypes of torch.bfloat16, "
                              "torch.float16 currently.", UserWarning, stacklevel=2)
            else:
                warnings.warn("In CUDA autocast, but the target dtype is not supported. "
                              "Disabling autocast.\nCUDA Autocast only supports dtypes of "
                              "torch.float16 and torch.bfloat16 currently.", UserWarning,
                              stacklevel=2)
            enabled = False
        self._enabled = bool(enabled)

    def __enter__(self):
        thread = _state.thread
        self._previous = (thread.dtypes.get(self.device), _settings.dtypes.get(self.device),
                          _settings.cache_enabled)
        _settings.dtypes[self.device] = self.fast_dtype
        _settings.cache_enabled = self._cache_enabled
        if self._enabled:
            thread.dtypes[self.device] = self.fast_dtype
        else:
            thread.dtypes.pop(self.device, None)
        _state.active += 1
        return self

    def __exit__(self, exc_type, exc, tb):
        active, setting, _settings.cache_enabled = self._previous
        thread = _state.thread
        if active is None:
            thread.dtypes.pop(self.device, None)
        else:
            thread.dtypes[self.device] = active
        _settings.dtypes[self.device] = setting
        _state.active -= 1
        if thread.raised_by_hand and not thread.dtypes:  # set_autocast_enabled's raise, stale
            thread.raised_by_hand = False
            _state.active -= 1
        return False

    def __call__(self, func):
        return autocast_decorator(self, func)

    def _copy(self):
        # a fresh manager per call: a decorated function may recurse or run in two threads
        new = object.__new__(type(self))
        new.__dict__.update(self.__dict__)
        return new


def _cast(value, device_type, dtype):
    """`value` with its floating tensors on `device_type` (float64 excepted) cast to `dtype`,
    through lists, tuples and dicts."""
    from .._tensor import Tensor
    if isinstance(value, Tensor):
        if value.is_floating_point() and value.device.type == device_type \
                and value.dtype is not _dt.float64:
            return value.to(dtype)
        return value
    if isinstance(value, (str, bytes)):
        return value
    if isinstance(value, dict):
        return {_cast(k, device_type, dtype): _cast(v, device_type, dtype)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(v, device_type, dtype) for v in value)
    return value


def _check_device_type(device_type):
    if not isinstance(device_type, str):
        raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")


def custom_fwd(fwd=None, *, device_type, cast_inputs=None):
    """Decorator for a custom `autograd.Function`'s `forward`: it remembers the autocast state
    for `custom_bwd`; with `cast_inputs`, inside an autocast region, it casts the floating
    inputs to that dtype and runs `forward` with autocast off."""
    _check_device_type(device_type)
    if fwd is None:
        return functools.partial(custom_fwd, device_type=device_type, cast_inputs=cast_inputs)

    @functools.wraps(fwd)
    def decorate_fwd(ctx, *args, **kwargs):
        ctx._dtype = get_autocast_dtype(device_type)
        enabled = is_autocast_enabled(device_type)
        if cast_inputs is None:
            ctx._fwd_used_autocast = enabled
            return fwd(ctx, *args, **kwargs)
        ctx._fwd_used_autocast = False
        if not enabled:
            return fwd(ctx, *args, **kwargs)
        with autocast(device_type=device_type, enabled=False):
            return fwd(ctx, *_cast(args, device_type, cast_inputs),
                       **_cast(kwargs, device_type, cast_inputs))
    return decorate_fwd


def custom_bwd(bwd=None, *, device_type):
    """Decorator for a custom `autograd.Function`'s `backward`: it runs under the autocast
    state its `custom_fwd` forward ran under."""
    _check_device_type(device_type)
    if bwd is None:
        return functools.partial(custom_bwd, device_type=device_type)

    @functools.wraps(bwd)
    def decorate_bwd(ctx, *args, **kwargs):
        with autocast(device_type=device_type, enabled=ctx._fwd_used_autocast,
                      dtype=ctx._dtype):
            return bwd(ctx, *args, **kwargs)
    return decorate_bwd


def autocast_decorator(autocast_instance, func):
    """`func` run under `autocast_instance` each call (`@autocast()` as a decorator)."""
    @functools.wraps(func)
    def decorated(*args, **kwargs):
        with autocast_instance._copy():
            return func(*args, **kwargs)
    return decorated
