"""`torch.backends.cudnn`: ember computes with CuPy, not cuDNN, so cuDNN is never available;
the flags scripts set (`benchmark`, `deterministic` ...) are kept with PyTorch's defaults."""
import sys

from ._flags import set_flags

enabled = True
benchmark = False
benchmark_limit = None  # PyTorch reads it from cuDNN; None where cuDNN is absent
deterministic = False
allow_tf32 = True
fp32_precision = "none"


def is_available():
    return False


def version():
    return None


def is_acceptable(tensor):
    return False


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True, fp32_precision="none"):
    return set_flags(sys.modules[__name__], enabled=enabled, benchmark=benchmark,
                     benchmark_limit=benchmark_limit, deterministic=deterministic,
                     allow_tf32=allow_tf32, fp32_precision=fp32_precision)
