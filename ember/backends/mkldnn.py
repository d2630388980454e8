"""`torch.backends.mkldnn`: ember has no oneDNN (MKL-DNN) kernels, so it is not available;
its flags are kept with PyTorch's defaults."""
import sys

from ._flags import set_flags

enabled = True
deterministic = False
allow_tf32 = None  # TF32 on oneDNN needs an Intel GPU: None, as PyTorch without one
fp32_precision = "none"


def is_available():
    return False


def flags(enabled=False, deterministic=False, allow_tf32=True, fp32_precision="none"):
    return set_flags(sys.modules[__name__], enabled=enabled, deterministic=deterministic,
                     allow_tf32=allow_tf32, fp32_precision=fp32_precision)
