"""`ember.backends`, as `torch.backends`: the switches PyTorch scripts set and read (cuDNN,
CUDA matmul and attention kernels, MKL-DNN, MPS, OpenMP). ember runs on NumPy and CuPy and
has none of these libraries of its own, so the flags are kept for scripts to set and read,
and `is_available()` answers for ember. Each is a real module, so
`import torch.backends.cudnn` works under ember.compat."""
from . import cuda, cudnn, mkldnn, mps, openmp  # noqa: F401

__all__ = ["cuda", "cudnn", "mkldnn", "mps", "openmp"]
