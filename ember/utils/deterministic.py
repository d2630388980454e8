"""`torch.utils.deterministic`: the module attribute `fill_uninitialized_memory` (default
True): whether, under `use_deterministic_algorithms(True)`, memory left uninitialised by
`empty`, `empty_like`, `empty_strided` and a growing `resize_` is filled with NaN (floating
and complex) or the largest value (integers, True for bool), so reading it is noticed."""
import sys
import types

from .. import _state


class _Deterministic(types.ModuleType):
    @property
    def fill_uninitialized_memory(self):
        return _state.deterministic.fill_uninitialized_memory

    @fill_uninitialized_memory.setter
    def fill_uninitialized_memory(self, mode):
        if not isinstance(mode, bool):
            raise RuntimeError(f"expected a bool, but got {type(mode).__name__}")
        _state.deterministic.fill_uninitialized_memory = mode


sys.modules[__name__].__class__ = _Deterministic
