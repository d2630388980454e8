"""`torch.backends.mkldnn`: ember has no oneDNN (MKL-DNN) kernels, so it is not available;
its flags are kept with PyTorch's defaults, and its verbose mode (oneDNN's own logging)
cannot be switched on."""
import sys
import types

from ._flags import set_flags

enabled = True
deterministic = False
allow_tf32 = None  # TF32 on oneDNN needs an Intel GPU: None, as PyTorch without one
fp32_precision = "none"

VERBOSE_OFF = 0
VERBOSE_ON = 1
VERBOSE_ON_CREATION = 2


def is_available():
    return False


def is_acl_available():
    """Whether oneDNN was built with Arm's Compute Library: ember has no oneDNN."""
    return False


class verbose:
    """`with verbose(VERBOSE_ON):` logs oneDNN's primitives in the block. ember has no
    oneDNN, so only VERBOSE_OFF can be entered."""

    def __init__(self, level):
        self.level = level

    def __enter__(self):
        if self.level == VERBOSE_OFF:
            return
        raise AssertionError("Failed to set MKLDNN into verbose mode. Please consider to "
                             "disable this verbose scope.")

    def __exit__(self, *exc):
        return False


def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    return set_flags(sys.modules[__name__], enabled=enabled, deterministic=deterministic,
                     allow_tf32=allow_tf32, fp32_precision=fp32_precision)


class MkldnnModule(types.ModuleType):
    """The module's type, as PyTorch's `torch.backends.mkldnn` is an MkldnnModule."""


sys.modules[__name__].__class__ = MkldnnModule
