"""`ember.backends`, as `torch.backends`: the switches PyTorch scripts set and read (cuDNN,
CUDA matmul and attention kernels, MKL-DNN, MKL, MPS, OpenMP, NNPACK, XNNPACK, the quantized
engine, opt_einsum, the CPU's capability, the attention fast path). ember runs on NumPy and
CuPy and has none of these libraries of its own, so the flags are kept for scripts to set
and read, and `is_available()` answers for ember. Each is a real module, so
`import torch.backends.cudnn` works under ember.compat; as in PyTorch, `xnnpack` is
imported only when asked for."""
from . import (cpu, cuda, cudnn, mha, mkl, mkldnn, mps, nnpack, openmp,  # noqa: F401
               opt_einsum, quantized)

__all__ = ["cpu", "cuda", "cudnn", "mha", "mkl", "mkldnn", "mps", "nnpack", "openmp",
           "opt_einsum", "quantized"]
