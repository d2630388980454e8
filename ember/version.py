"""`torch.version`: ember's version, and no CUDA/ROCm build (ember reaches GPUs through
CuPy at run time, not through a compiled toolkit).

`__version__` is ember's own release. Under `ember.compat` the running program is PyTorch
code, so `ember.compat.install()` makes it `pytorch_api_version()`: the PyTorch release whose
API ember implements, with ember's release as its local label ("2.13.0+ember.0.1.0"), so
`torch.__version__ >= "2.0"` answers as PyTorch's would."""
from .torch_version import TorchVersion

__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

EMBER_RELEASE = "0.1.0"
PYTORCH_API = "2.13.0"  # the PyTorch release ember's API follows

__version__ = TorchVersion(EMBER_RELEASE)
debug = False
cuda = None
git_version = "Unknown"  # PyTorch's value for a build outside a git checkout
hip = None
rocm = None
xpu = None


def pytorch_api_version():
    """`torch.__version__` as a PyTorch program sees it under ember.compat."""
    return TorchVersion(f"{PYTORCH_API}+ember.{EMBER_RELEASE}")
