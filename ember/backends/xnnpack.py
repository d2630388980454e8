"""`torch.backends.xnnpack`: whether XNNPACK's mobile CPU kernels are in use. ember has no
XNNPACK, so `enabled` is False, read-only as in PyTorch."""
import sys
import types


class _Enabled:
    def __get__(self, obj, objtype):
        return False

    def __set__(self, obj, value):
        raise RuntimeError("Assignment not supported")


class XNNPACKEngine(types.ModuleType):
    """The module's type, as PyTorch's `torch.backends.xnnpack`: its `enabled` is a
    read-only property."""

    enabled = _Enabled()


sys.modules[__name__].__class__ = XNNPACKEngine
