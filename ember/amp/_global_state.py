"""PyTorch's functions that read and set the autocast state directly, without the `autocast`
context manager: `torch.set_autocast_enabled('cpu', True)`, `torch.set_autocast_dtype`, the
deprecated per-device forms (`torch.set_autocast_cpu_enabled` ...), the cast-cache flag and the
nesting counter a hand-written autocast region keeps.

The state is the one `autocast` uses: `_state.autocast.thread.dtypes` (the device types whose
autocast is on, with their dtype) and `autocast_mode._settings.dtypes` (each device type's
dtype, on or off)."""
import warnings

from .. import dtypes as _dt
from .._state import autocast as _state
from ..device import device
from .autocast_mode import _DEFAULT_DTYPES, _settings

__all__ = ["set_autocast_enabled", "set_autocast_dtype", "is_autocast_cache_enabled",
           "set_autocast_cache_enabled", "clear_autocast_cache", "autocast_increment_nesting",
           "autocast_decrement_nesting", "get_autocast_cpu_dtype", "get_autocast_gpu_dtype",
           "set_autocast_cpu_dtype", "set_autocast_gpu_dtype", "is_autocast_cpu_enabled",
           "set_autocast_cpu_enabled", "get_autocast_ipu_dtype", "set_autocast_ipu_dtype",
           "is_autocast_ipu_enabled", "set_autocast_ipu_enabled", "get_autocast_xla_dtype",
           "set_autocast_xla_dtype", "is_autocast_xla_enabled", "set_autocast_xla_enabled"]


class _Counters:
    nesting = 0             # autocast_increment_nesting's count (thread-local in PyTorch too)


def _check_bool(name, value, position):
    if not isinstance(value, bool):
        raise TypeError(f"{name}(): argument 'enabled' (position {position}) must be bool, not "
                        f"{type(value).__name__}")


def _check_device_type(device_type):
    device(device_type)  # PyTorch's RuntimeError for a device type that does not exist


def set_autocast_enabled(device_type, enabled=None):
    """Turn autocast for `device_type` on or off; `set_autocast_enabled(enabled)` is CUDA's."""
    if enabled is None:
        _check_bool("set_autocast_enabled", device_type, 1)
        device_type, enabled = "cuda", device_type
    else:
        _check_bool("set_autocast_enabled", enabled, 2)
        _check_device_type(device_type)
    thread = _state.thread
    if enabled:
        thread.dtypes[device_type] = _settings.dtypes.get(
            device_type, _DEFAULT_DTYPES.get(device_type, _dt.float16))
    else:
        thread.dtypes.pop(device_type, None)
    # The ops look at the per-thread policy only while `active` is nonzero. A region opened
    # by hand has no exit, so this thread holds `active` raised while any device's autocast
    # is on in it, and lowers it when the last is switched off (a raise left standing after
    # an autocast block restores the state costs a dict lookup per covered op, no more).
    on = bool(thread.dtypes)
    if on != thread.raised_by_hand:
        thread.raised_by_hand = on
        _state.active += 1 if on else -1


def set_autocast_dtype(device_type, dtype):
    """The dtype `device_type`'s autocast casts to (now, if it is on, and when next on)."""
    if not isinstance(dtype, _dt.dtype):
        raise TypeError(f"set_autocast_dtype(): argument 'dtype' (position 2) must be "
                        f"torch.dtype, not {type(dtype).__name__}")
    _check_device_type(device_type)
    _settings.dtypes[device_type] = dtype
    if device_type in _state.thread.dtypes:
        _state.thread.dtypes[device_type] = dtype


def is_autocast_cache_enabled():
    return _settings.cache_enabled


def set_autocast_cache_enabled(enabled):
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    _settings.cache_enabled = enabled


def clear_autocast_cache():
    """ember keeps no cache of casts (each op casts afresh), so there is nothing to drop."""


def autocast_increment_nesting():
    _Counters.nesting += 1
    return _Counters.nesting


def autocast_decrement_nesting():
    _Counters.nesting -= 1
    return _Counters.nesting


def _deprecated(old, new):
    warnings.warn(f"torch.{old} is deprecated. Please use torch.{new} instead.",
                  DeprecationWarning, stacklevel=3)


def get_autocast_cpu_dtype():
    _deprecated("get_autocast_cpu_dtype()", "get_autocast_dtype('cpu')")
    return _settings.dtypes["cpu"]


def get_autocast_gpu_dtype():
    _deprecated("get_autocast_gpu_dtype()", "get_autocast_dtype('cuda')")
    return _settings.dtypes["cuda"]


def _check_dtype(dtype):
    if not isinstance(dtype, _dt.dtype):
        raise TypeError(f"dtype must be a torch.dtype (got {type(dtype).__name__})")


def set_autocast_cpu_dtype(dtype):
    _check_dtype(dtype)
    _deprecated("set_autocast_cpu_dtype(dtype)", "set_autocast_dtype('cpu', dtype)")
    set_autocast_dtype("cpu", dtype)


def set_autocast_gpu_dtype(dtype):
    _deprecated("set_autocast_gpu_dtype(dtype)", "set_autocast_dtype('cuda', dtype)")
    set_autocast_dtype("cuda", dtype)


def is_autocast_cpu_enabled():
    _deprecated("is_autocast_cpu_enabled()", "is_autocast_enabled('cpu')")
    return "cpu" in _state.thread.dtypes


def set_autocast_cpu_enabled(enabled):
    if not isinstance(enabled, bool):
        raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
    _deprecated("set_autocast_cpu_enabled(enabled)", "set_autocast_enabled('cpu', enabled)")
    set_autocast_enabled("cpu", enabled)


def _deprecated_forms(device_type):
    """The deprecated per-device functions of `device_type` (ipu, xla): get/set its dtype,
    read/set whether it is on."""
    def get_dtype():
        _deprecated(f"get_autocast_{device_type}_dtype()",
                    f"get_autocast_dtype('{device_type}')")
        return _settings.dtypes.get(device_type, _DEFAULT_DTYPES.get(device_type, _dt.float16))

    def set_dtype(dtype):
        _check_dtype(dtype)
        _deprecated(f"set_autocast_{device_type}_dtype(dtype)",
                    f"set_autocast_dtype('{device_type}', dtype)")
        set_autocast_dtype(device_type, dtype)

    def is_enabled():
        _deprecated(f"is_autocast_{device_type}_enabled()",
                    f"is_autocast_enabled('{device_type}')")
        return device_type in _state.thread.dtypes

    def set_enabled(enabled):
        if not isinstance(enabled, bool):
            raise TypeError(f"enabled must be a bool (got {type(enabled).__name__})")
        _deprecated(f"set_autocast_{device_type}_enabled(enabled)",
                    f"set_autocast_enabled('{device_type}', enabled)")
        set_autocast_enabled(device_type, enabled)

    for function, name in ((get_dtype, "get_autocast_{}_dtype"),
                           (set_dtype, "set_autocast_{}_dtype"),
                           (is_enabled, "is_autocast_{}_enabled"),
                           (set_enabled, "set_autocast_{}_enabled")):
        function.__name__ = function.__qualname__ = name.format(device_type)
    return get_dtype, set_dtype, is_enabled, set_enabled


(get_autocast_ipu_dtype, set_autocast_ipu_dtype, is_autocast_ipu_enabled,
 set_autocast_ipu_enabled) = _deprecated_forms("ipu")
(get_autocast_xla_dtype, set_autocast_xla_dtype, is_autocast_xla_enabled,
 set_autocast_xla_enabled) = _deprecated_forms("xla")
