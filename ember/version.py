"""`torch.version`: ember's version, and no CUDA/ROCm build (ember reaches GPUs through
CuPy at run time, not through a compiled toolkit)."""
__all__ = ["__version__", "debug", "cuda", "git_version", "hip", "rocm", "xpu"]

__version__ = "0.1.0"
debug = False
cuda = None
git_version = "Unknown"  # PyTorch's value for a build outside a git checkout
hip = None
rocm = None
xpu = None
