"""`torch.backends.mkldnn`: whether ember's float32 CPU convolutions run on oneDNN (MKL-DNN),
as PyTorch's do: where it is installed (`pip install ember[onednn]`, `ember/_dnnl.py`).
`enabled = False` (or `flags(enabled=False)`) sends them to ember's NumPy routines; the other
flags are kept with PyTorch's defaults, and the verbose mode (oneDNN's own logging) cannot be
switched on."""
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
    """Whether ember's convolutions can run on oneDNN here."""
    from .. import _dnnl
    return _dnnl.library() is not None


def is_acl_available():
    """Whether oneDNN was built with Arm's Compute Library: the x86 wheel ember uses is not."""
    return False


class verbose:
    """`with verbose(VERBOSE_ON):` logs oneDNN's primitives in the block. ember does not
    reach oneDNN's logging switch, so only VERBOSE_OFF can be entered."""

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
