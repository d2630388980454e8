"""`torch.ops.profiler`: the record-function operators that code without a `with` block calls
to mark a profiler region, as torch.fx tracers write `record_function` into a graph:
`_record_function_enter(name, args=None)` opens a region and returns its handle (a uint8
tensor, as PyTorch's legacy form), `_record_function_enter_new` returns it as an object (PyTorch's
ScriptObject), and `_record_function_exit(handle)` closes it. A region opened while no
profiler records is a handle that closes nothing, as `record_function` is then."""
import itertools

import numpy as np

from .. import _state
from .._tensor import Tensor, make_tensor
from ..device import backend_of, device
from . import _custom
from ._aten import OpOverload, OpOverloadPacket

_OPEN = {}  # key -> (recorder, event or None) of each region not yet closed
_KEYS = itertools.count(1)


class _RecordFunction:
    """A region's handle as `_record_function_enter_new` gives it."""

    def __init__(self, key):
        self._key = key

    def __repr__(self):
        return "<torch.ScriptObject object>"


def _enter(name, args=None):
    if not isinstance(name, str):
        raise TypeError(f"profiler::_record_function_enter() Expected a value of type 'str' "
                        f"for argument 'name' but instead found type '{type(name).__name__}'.")
    recorder = _state.profiler.active
    key = next(_KEYS)
    _OPEN[key] = (recorder, None if recorder is None else recorder.open(name, annotation=True))
    return key


def record_function_enter(name, args=None):
    """Opens a region; its handle is a uint8 tensor (the region's key, as PyTorch's holds the
    address of its RecordFunction)."""
    key = _enter(name, args)
    return make_tensor(np.frombuffer(np.int64(key).tobytes(), np.uint8).copy(), device("cpu"))


def record_function_enter_new(name, args=None):
    return _RecordFunction(_enter(name, args))


def record_function_exit(handle):
    """Closes the region `handle` opened (each closes once)."""
    if isinstance(handle, _RecordFunction):
        key = handle._key
    elif isinstance(handle, Tensor) and handle.dtype.itemsize == 1 and handle.numel() == 8:
        # the handle's own bytes (not .cpu(), which the profiler would record as an op); a
        # handle moved to a device is read from it as a copy of .cpu() would be
        arr = handle._array if handle._device.type == "cpu" else \
            backend_of(handle._device).to_host(handle._array)
        key = int(np.frombuffer(arr.tobytes(), np.int64)[0])
    else:
        raise RuntimeError("profiler::_record_function_exit() expects the handle "
                           "_record_function_enter or _record_function_enter_new returned, not "
                           f"{type(handle).__name__}")
    found = _OPEN.pop(key, None)
    if found is None:
        raise RuntimeError("profiler::_record_function_exit(): this region was closed already, "
                           "or its handle was not made by _record_function_enter")
    recorder, event = found
    if event is not None:
        recorder.close(event)


def _register():
    namespace = _custom.namespace("profiler")
    for op_name, overloads in (
            ("_record_function_enter", {"default": record_function_enter}),
            ("_record_function_enter_new", {"default": record_function_enter_new}),
            ("_record_function_exit", {"default": record_function_exit,
                                       "_RecordFunction": record_function_exit})):
        packet = namespace._ops[op_name] = OpOverloadPacket("profiler", op_name)
        for overload_name, function in overloads.items():
            packet._overloads[overload_name] = OpOverload(packet, overload_name, function)


_register()
