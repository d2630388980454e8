"""Elementwise functions through oneMKL's vector math (VML), where MKL is installed (the
library `_gemm` loads): one pass in compiled AVX-512 code where ember's NumPy kernels take
many. The normal CDF of GELU's exact form is VML's vmsCdfNorm: 0.33 ms for 512K float32
values against 3.0 ms for `_gelu_cpu._normal_cdf_single`'s 17 passes (PyTorch's whole GELU:
0.30 ms), within 0.76 ulp of the exact value for x > 0 (that kernel: 2.3 ulp; 1 thread,
`/work/notes/s30/vml.py`). Calls run in VML's high-accuracy mode (under 1 ulp), sequentially
like MKL's products. `function(name, x)` answers None where VML cannot serve: no MKL, another
dtype, a non-contiguous array. Tests hand `use` a stand-in library to check the calls in CI,
where MKL is not installed."""
import ctypes

import numpy as np

from . import _gemm

# VML_HA (under 1 ulp) | VML_ERRMODE_IGNORE: no errno or callback on a domain error or
# overflow, whose values (NaN, inf) are IEEE's, as NumPy's with ember's seterr(all="ignore")
MODE = 0x2 | 0x100
_PREFIX = {np.dtype(np.float32): "vms", np.dtype(np.float64): "vmd"}
_CHUNK = 1 << 30  # VML's counts are C ints


class _State:
    lib = None
    chosen = False
    functions = {}


_state = _State()


def library():
    """The library VML's functions come from (MKL's), or None."""
    if not _state.chosen:
        cblas = _gemm.library()
        _state.lib = cblas.lib if cblas is not None and cblas.vendor == "mkl" else None
        _state.chosen = True
    return _state.lib


def use(lib):
    """Make `lib` (an object with VML's vms*/vmd* entry points, or None) the one functions
    come from; returns the one before."""
    before = library()
    _state.lib, _state.functions = lib, {}
    return before


def _entry(lib, symbol):
    f = _state.functions.get(symbol)
    if f is None:
        f = getattr(lib, symbol)
        if isinstance(f, ctypes._CFuncPtr):
            f.restype = None
            f.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_longlong]
        _state.functions[symbol] = f
    return f


def function(name, x, out=None):
    """VML's `name` (e.g. "CdfNorm") of every element of `x`, a C-contiguous float32 or
    float64 NumPy array, into `out` (a C-contiguous array of x's dtype and shape, x itself
    among them) or a new array; None where VML cannot serve."""
    lib = library()
    if lib is None or type(x) is not np.ndarray or x.dtype not in _PREFIX or \
            not x.flags.c_contiguous or not x.flags.aligned:
        return None
    if out is None:
        out = np.empty_like(x)
    elif type(out) is not np.ndarray or out.dtype != x.dtype or out.shape != x.shape or \
            not out.flags.c_contiguous or not out.flags.aligned or not out.flags.writeable or \
            (out.ctypes.data != x.ctypes.data and np.may_share_memory(out, x)):
        return None  # (VML writes in place, or into memory apart from its input)
    f = _entry(lib, _PREFIX[x.dtype] + name)
    flat_in, flat_out = x.reshape(-1), out.reshape(-1)
    for start in range(0, x.size, _CHUNK):
        part = flat_in[start:start + _CHUNK]
        f(part.size, part.ctypes.data, flat_out[start:].ctypes.data, MODE)
    return out


# NumPy's one-operand ufuncs VML serves, float32 and float64. PyTorch's CPU kernels of these
# are VML's (tanh, sin, cos, tan, atan, log2, log10, sqrt: the same bits on 1M values, where
# NumPy's differ in 2-46% of them) or within an ulp or two of it, with the same values at the
# edges (infinities, NaN, signed zeros, overflow, poles); VML takes 0.3-1.2 ms per 1M values,
# about half NumPy's time, and float64 sin and cos 0.85 ms against NumPy's 15-16
# (`/work/notes/s30/vml_cmp.py`, `vml_edges2.py`). Softmax keeps NumPy's exp: masked scores
# hold -inf, where VML's exp leaves its fast path (a causal mask's 262K scores: 0.60 ms
# against NumPy's 0.13; `expcase.py`).
_UFUNCS = {np.exp: "Exp", np.log: "Ln", np.log2: "Log2", np.log10: "Log10",
           np.log1p: "Log1p", np.expm1: "Expm1", np.sqrt: "Sqrt", np.sin: "Sin", np.cos: "Cos",
           np.tan: "Tan", np.arcsin: "Asin", np.arccos: "Acos", np.arctan: "Atan",
           np.sinh: "Sinh", np.cosh: "Cosh", np.tanh: "Tanh"}


# Below this many elements NumPy's ufunc is the faster: the ctypes call and its checks cost
# ~3 us, and VML saves ~0.4 ns an element on exp or tanh.
UFUNC_MIN_SIZE = 8192


def ufunc(f, x, out=None):
    """f(x, out=out) for a one-operand NumPy ufunc (or a device module's): VML's where it
    serves."""
    name = _UFUNCS.get(f)
    if name is not None and x.size >= UFUNC_MIN_SIZE:
        y = function(name, x, out)
        if y is not None:
            return y
    return f(x) if out is None else f(x, out=out)

