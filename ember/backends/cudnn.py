"""`torch.backends.cudnn`: ember computes with CuPy, not cuDNN, so cuDNN is never available;
the flags scripts set (`benchmark`, `deterministic` ...) are kept with PyTorch's defaults.
`allow_tf32` (on by default, as PyTorch's) has ember's float32 convolutions on a GPU compute
their products in TF32, as cuDNN's would (`conv_tf32`)."""
import sys
import types

from .. import dtypes as _dt
from ._flags import set_flags

enabled = True
benchmark = False
benchmark_limit = None  # PyTorch reads it from cuDNN; None where cuDNN is absent
deterministic = False
allow_tf32 = True
fp32_precision = "none"
depthwise_kernel = "auto"  # which kernel depthwise convolutions use: "auto", "cudnn", "native"

# the dtypes cuDNN computes in
CUDNN_TENSOR_DTYPES = {_dt.float16, _dt.float32, _dt.float64}


def conv_tf32():
    """Whether float32 convolutions on a GPU may compute in TF32, as cuDNN's do by default:
    `fp32_precision` "tf32", or (where it is "none") `allow_tf32`. ember's convolutions
    are products of cuBLAS (through CuPy), which this sets for them."""
    if fp32_precision != "none":
        return fp32_precision == "tf32"
    return bool(allow_tf32)


def is_available():
    return False


def version():
    return None


def is_acceptable(tensor):
    return False


def flags(enabled=False, benchmark=False, benchmark_limit=10, deterministic=False,
          allow_tf32=True, fp32_precision="none", depthwise_kernel="auto"):
    return set_flags(sys.modules[__name__], enabled=enabled, benchmark=benchmark,
                     benchmark_limit=benchmark_limit, deterministic=deterministic,
                     allow_tf32=allow_tf32, fp32_precision=fp32_precision,
                     depthwise_kernel=depthwise_kernel)


class CudnnModule(types.ModuleType):
    """The module's type, as PyTorch's `torch.backends.cudnn` is a CudnnModule; setting
    `depthwise_kernel` checks the value."""

    def __setattr__(self, name, value):
        if name == "depthwise_kernel" and value not in ("auto", "cudnn", "native"):
            raise RuntimeError(f"Unknown cuDNN depthwise kernel mode: {value}. Expected one "
                               f"of: auto, cudnn, native")
        super().__setattr__(name, value)


sys.modules[__name__].__class__ = CudnnModule
