"""ember's own kernels on a device (CuPy's ElementwiseKernel and ReductionKernel), made once.

On a GPU ember's training step is bound by the host issuing kernels: on an H200 a ResNet-18
step took 68 ms at batch 64 and 67 ms at batch 8 (benchmarks/gpu_check.py). A kernel that does
in one launch what took several array calls saves host time where it matters. Each kernel's
expression is its CPU path's operations in the same order, constants passed as parameters of
the array's type, so every operation rounds as the CPU's ufunc does; the tests' CuPy stand-in
runs the expressions with NumPy and holds them to the CPU's values. `T(v)` rounds v to the
kernel's type and `double(v)` widens it, where the CPU path computes a function in float64.

`device_sum` sums x, or x * w, over axes in one reduction kernel: CuPy's einsum, which the
CPU's sums use, is Python that parses its subscripts at every call (0.3 ms of an H200 host's
time a call, where a launch takes 20 us: batch norm's sums alone were a quarter of a
ResNet-18 step). It accumulates in the input's type, as PyTorch's CUDA kernels do for float32
and float64.
"""
import functools

import numpy as np

KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def usable(xp, *arrays):
    """Whether ember's kernels apply: a device array module with kernels, and float32 or
    float64 arrays of one dtype."""
    if xp is np or not hasattr(xp, "ElementwiseKernel"):
        return False
    dtype = arrays[0].dtype
    return dtype in KERNEL_DTYPES and all(a.dtype == dtype for a in arrays)


@functools.lru_cache(maxsize=64)
def elementwise(xp, in_params, out_params, operation, name):
    """The ElementwiseKernel of these parameters and operation (CuPy compiles it per dtype)."""
    return xp.ElementwiseKernel(in_params, out_params, operation, name)


def device_sum(xp, axes, a, b=None, keepdims=True):
    """sum(a), or sum(a * b) of one shape and dtype, over `axes` (a tuple), in one kernel;
    None where that does not apply (NumPy or meta arrays, other dtypes or shapes)."""
    if xp is np or a.dtype not in KERNEL_DTYPES or (b is not None and (
            b.dtype != a.dtype or b.shape != a.shape)):
        return None
    kernel = _sum_kernel(xp, b is not None)
    if kernel is None:
        return None
    return kernel(a, axis=axes, keepdims=keepdims) if b is None else \
        kernel(a, b, axis=axes, keepdims=keepdims)


@functools.lru_cache(maxsize=8)
def _sum_kernel(xp, product):
    """The reduction kernel summing x, or x * w (`product`); None for a module with no
    kernels (the meta device's)."""
    if not hasattr(xp, "ReductionKernel"):
        return None
    if product:
        return xp.ReductionKernel("T x, T w", "T y", "x * w", "a + b", "y = a", "0",
                                  "ember_sum_of_products")
    return xp.ReductionKernel("T x", "T y", "x", "a + b", "y = a", "0", "ember_sum")
