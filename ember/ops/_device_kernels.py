"""ember's own kernels on a device (CuPy's ElementwiseKernel and ReductionKernel), made once.

On a GPU ember's training step is bound by the host issuing kernels: on an H200 a ResNet-18
step took 68 ms at batch 64 and 67 ms at batch 8 (benchmarks/gpu_check.py). A kernel that does
in one launch what took several array calls saves host time where it matters. Each kernel's
expression is its CPU path's operations in the same order, constants passed as parameters of
the array's type, so every operation rounds as the CPU's ufunc does; the tests' CuPy stand-in
runs the expressions with NumPy and holds them to the CPU's values. Every kernel is compiled
before the first is used (`usable`), and none is used where one fails to. `T(v)` rounds v to the
kernel's type and `double(v)` widens it, where the CPU path computes a function in float64.

`device_sum` sums x, or x * w, over axes in one reduction kernel: CuPy's einsum, which the
CPU's sums use, is Python that parses its subscripts at every call (0.3 ms of an H200 host's
time a call, where a launch takes 20 us: batch norm's sums alone were a quarter of a
ResNet-18 step). It accumulates in the input's type, as PyTorch's CUDA kernels do for float32
and float64.
"""
import functools
import warnings

import numpy as np

from ..device import assert_on_device, device

KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_KERNELS = []  # every Kernel made (at import): what `usable` compiles first
_COMPILED = {}  # (array module, dtype) -> whether every kernel compiled there


class Kernel:
    """One of ember's elementwise kernels: `kernel(xp, *args, size=None)` runs it (CuPy's
    ElementwiseKernel, made once per array module and compiled per dtype; `size`: the loop's,
    for a kernel whose arrays are all raw). `trial(xp, dtype)`, where given, is its first
    run: a small case whose values the device checks against the CPU's (an index kernel's
    check); otherwise its first run is on one-element arrays."""

    def __init__(self, name, in_params, out_params, operation, trial=None):
        self.name, self.in_params = name, in_params
        self.out_params, self.operation, self.trial = out_params, operation, trial
        _KERNELS.append(self)

    def __call__(self, xp, *args, size=None):
        if size is None:
            return _compiled(xp, self)(*args)
        return _compiled(xp, self)(*args, size=size)


@functools.lru_cache(maxsize=64)
def _compiled(xp, kernel):
    return xp.ElementwiseKernel(kernel.in_params, kernel.out_params, kernel.operation,
                                kernel.name)


def usable(xp, *arrays):
    """Whether ember's kernels apply: a device array module with kernels, float32 or float64
    arrays of one dtype, and every kernel compiled there (`_all_compile`, once a dtype)."""
    if xp is np or not hasattr(xp, "ElementwiseKernel"):
        return False
    dtype = arrays[0].dtype
    if dtype not in KERNEL_DTYPES or any(a.dtype != dtype for a in arrays):
        return False
    ok = _COMPILED.get((xp, dtype))
    if ok is None:
        ok = _COMPILED[(xp, dtype)] = _all_compile(xp, dtype)
    return ok


def _all_compile(xp, dtype):
    """Run every kernel once on one-element arrays of `dtype`, so that all compile before any
    is relied on. If one does not (a CuPy or CUDA that ember was not run on), ember's kernels
    stay off for that dtype, with a warning, and every caller takes its general path: a
    kernel that fails must not fail a training step that ran without it. (An index kernel's
    trial also has the device compare its values with the CPU's: a difference fails the next
    read, as a device-side assert.)"""
    try:
        for kernel in _KERNELS:
            if kernel.trial is not None:
                kernel.trial(xp, dtype)
            else:
                _compiled(xp, kernel)(*(xp.ones(1, dtype) for _ in kernel.in_params.split(",")))
    except Exception as e:  # NVRTC's CompileException, or any other refusal
        warnings.warn(f"ember's CuPy kernels are off for {dtype}: {kernel.name} did not run "
                      f"({type(e).__name__}: {e}); the general paths run instead",
                      RuntimeWarning, stacklevel=3)
        return False
    return True


def trial_verdict(xp, bad, kernel, reference):
    """An index kernel's trial (see `Kernel`): where any of `bad` (booleans on the current
    device, its values against NumPy's) holds, the next read fails as a device-side assert
    naming `kernel`. The comparison stays on the device: a program makes no read it did not
    ask for."""
    assert_on_device(device(f"cuda:{xp.cuda.Device().id}"), bad,
                     f"Assertion `{kernel} == {reference}` (ember's kernel against NumPy, on a "
                     f"small case before its first use)")


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


def device_norm2(xp, axes, a, keepdims=True):
    """sqrt(sum(a * a)) over `axes` in one reduction kernel (the sum of squares and the sqrt
    took two calls: a gradient clipping's per-tensor norms, one a parameter every step); None
    where `device_sum` does not apply."""
    if xp is np or a.dtype not in KERNEL_DTYPES or not hasattr(xp, "ReductionKernel"):
        return None
    return _norm2_kernel(xp)(a, axis=axes, keepdims=keepdims)


@functools.lru_cache(maxsize=8)
def _norm2_kernel(xp):
    return xp.ReductionKernel("T x", "T y", "x * x", "a + b", "y = sqrt(a)", "0", "ember_norm2")


def device_mean(xp, axes, a, count, keepdims=True):
    """sum(a) / count over `axes` in one reduction kernel (the sum and the division took two
    calls; the division rounds as the CPU's sum / count does); None where `device_sum` does
    not apply."""
    if xp is np or a.dtype not in KERNEL_DTYPES:
        return None
    kernel = _mean_kernel(xp)
    if kernel is None:
        return None
    return kernel(a, a.dtype.type(count), axis=axes, keepdims=keepdims)


@functools.lru_cache(maxsize=8)
def _mean_kernel(xp):
    if not hasattr(xp, "ReductionKernel"):
        return None
    return xp.ReductionKernel("T x, T n", "T y", "x", "a + b", "y = a / n", "0", "ember_mean")


def device_centred_sum(xp, axes, x, m, g=None, keepdims=True):
    """sum((x - m) * (x - m)), or sum(g * (x - m)), over `axes` in one reduction kernel (m
    broadcast, kept-dims statistics): the centred input is never stored. For float32 and
    float64 device arrays of one dtype (callers ask `usable` first)."""
    kernel = _centred_kernel(xp, g is not None)
    if g is None:
        return kernel(x, m, axis=axes, keepdims=keepdims)
    return kernel(g, x, m, axis=axes, keepdims=keepdims)


@functools.lru_cache(maxsize=8)
def _centred_kernel(xp, weighted):
    if weighted:
        return xp.ReductionKernel("T g, T x, T m", "T y", "g * (x - m)", "a + b", "y = a", "0",
                                  "ember_centred_dot")
    return xp.ReductionKernel("T x, T m", "T y", "(x - m) * (x - m)", "a + b", "y = a", "0",
                              "ember_centred_squares")


def device_normalized_dot(xp, axes, g, x, m, k, w=None, keepdims=True):
    """sum(g * xhat), or with `w` sum((g * w) * xhat), over `axes` in one reduction kernel,
    xhat = (x - m) * k computed on the way (m and k broadcast): neither xhat nor g * w is
    stored. Each factor rounds as the CPU's stored arrays did."""
    kernel = _normalized_dot_kernel(xp, w is not None)
    if w is None:
        return kernel(g, x, m, k, axis=axes, keepdims=keepdims)
    return kernel(g, w, x, m, k, axis=axes, keepdims=keepdims)


@functools.lru_cache(maxsize=8)
def _normalized_dot_kernel(xp, weighted):
    if weighted:
        return xp.ReductionKernel("T g, T w, T x, T m, T k", "T y", "T(g * w) * T((x - m) * k)",
                                  "a + b", "y = a", "0", "ember_weighted_normalized_dot")
    return xp.ReductionKernel("T g, T x, T m, T k", "T y", "g * T((x - m) * k)", "a + b",
                              "y = a", "0", "ember_normalized_dot")


def device_product_sum(xp, axes, g, w, keepdims=True):
    """sum(g * w) over `axes` in one reduction kernel, the products rounded first and summed
    as the CPU sums the array of them (w broadcast)."""
    return _product_sum_kernel(xp)(g, w, axis=axes, keepdims=keepdims)


@functools.lru_cache(maxsize=8)
def _product_sum_kernel(xp):
    return xp.ReductionKernel("T g, T w", "T y", "T(g * w)", "a + b", "y = a", "0",
                              "ember_product_sum")


def device_exp_sum(xp, axis, z, m, hidden, zero):
    """sum(exp(z - m)) over `axis` (kept as 1) in one reduction kernel, m read as `zero` where
    it equals `hidden` (a masked softmax's all-hidden row: NaN to turn that off)."""
    return _exp_sum_kernel(xp)(z, m, z.dtype.type(hidden), z.dtype.type(zero), axis=axis,
                               keepdims=True)


@functools.lru_cache(maxsize=8)
def _exp_sum_kernel(xp):
    return xp.ReductionKernel("T z, T m, T hidden, T zero", "T y",
                              "exp(z - (m == hidden ? zero : m))", "a + b", "y = a", "0",
                              "ember_exp_sum")
