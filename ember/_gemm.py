"""float32 and float64 matrix products through Intel's oneMKL, where it is installed (`pip
install ember[mkl]`): NumPy's wheels bundle OpenBLAS, whose products of a network's thin
shapes run at 0.55-0.8x MKL's speed on an AVX-512 machine (Sapphire Rapids, 1 thread, float32:
(32768, 144) @ (144, 16) 79 against 117 GFLOPS, (20, 512) @ (512, 2048) 58 against 103,
(128, 784) @ (784, 512) 128 against 162; PyTorch, built on MKL, runs at MKL's speed;
`/work/notes/s30/mklmm.py`). `product(a, b, out)` calls MKL's CBLAS through ctypes on NumPy's
buffers, and answers None where NumPy should compute instead (another dtype, a vector, an
empty or int32-overflowing dimension, a layout BLAS cannot read, an output that overlaps an
operand).

MKL runs on GNU OpenMP's threads where libgomp is there (the runtime oneDNN's wheel and
PyTorch's run on: one pool of OpenMP threads for every kernel, as in PyTorch), else
sequentially. `_parallel.one_product` gives each product its thread count: the intra-op
threads for a product of PARALLEL_MIN_MULTIPLY_ADDS or more, one thread otherwise and inside
the intra-op pool's parts. While MKL has OpenMP threads, NumPy's OpenBLAS keeps one
(`threaded()`): OpenMP's workers busy-wait for milliseconds after each parallel region, and
two threading runtimes on 2 cores took each other's cores (an LSTM LM's step at 2 threads,
oneDNN's LSTM beside OpenBLAS's threads: 2.2x PyTorch's time; on OpenMP alone: 1.16x). MKL on
Intel's OpenMP, beside PyTorch's libgomp, ran a 1024^3 product on 2 threads no faster than
on one, so that runtime is never asked for.

`EMBER_MKL=0` in the environment leaves every product to NumPy, as does a NumPy built on MKL
(its own products are MKL's then, on MKL's threads). The module holds one `Cblas` (the
library's entry points); tests give it another CBLAS (NumPy's own OpenBLAS) to check every
layout against `numpy.matmul` in CI, where MKL is not installed."""
import ctypes
import math
import os
import sys

import numpy as np

_ROW_MAJOR, _NO_TRANS, _TRANS = 101, 111, 112
_INT_MAX = 2 ** 31 - 1
_TYPES = {np.dtype(np.float32): ("s", ctypes.c_float),
          np.dtype(np.float64): ("d", ctypes.c_double)}


class Cblas:
    """A CBLAS library's ?gemm (and, where it has them, ?gemm_batch_strided) entry points.
    `name(routine)` gives a routine's symbol; `index` is the library's integer type."""

    def __init__(self, lib, name, vendor, index=ctypes.c_int, batched=False, threads=None):
        self.lib, self.vendor = lib, vendor
        self.threads = threads  # sets the calling thread's count, where the library has threads
        self.gemm, self.batched = {}, {}
        pointer = ctypes.c_void_p
        for kind, scalar in _TYPES.values():
            f = getattr(lib, name(f"{kind}gemm"))
            f.restype = None
            f.argtypes = [ctypes.c_int] * 3 + [index] * 3 + [scalar, pointer, index, pointer,
                                                             index, scalar, pointer, index]
            self.gemm[kind] = f
            if batched:
                g = getattr(lib, name(f"{kind}gemm_batch_strided"))
                g.restype = None
                g.argtypes = [ctypes.c_int] * 3 + [index] * 3 + [
                    scalar, pointer, index, index, pointer, index, index, scalar, pointer,
                    index, index, index]
                self.batched[kind] = g


def _mkl_paths():
    """Where pip (and conda) put libmkl_rt: the environment's lib directory, then the
    loader's own search."""
    import glob  # (only once products run: not at `import ember`)
    for prefix in dict.fromkeys((sys.prefix, os.environ.get("CONDA_PREFIX", sys.prefix))):
        yield from sorted(glob.glob(os.path.join(prefix, "lib", "libmkl_rt.so*")))
    yield "libmkl_rt.so.3"
    yield "libmkl_rt.so.2"


def _load_mkl():
    from .backends.mkl import _numpy_blas_name
    if os.environ.get("EMBER_MKL", "1") == "0" or "mkl" in _numpy_blas_name():
        return None
    for path in _mkl_paths():
        try:
            lib = ctypes.CDLL(path)
            layer = lib.MKL_Set_Threading_Layer
        except (OSError, AttributeError):
            continue
        layer.argtypes, layer.restype = [ctypes.c_int], ctypes.c_int
        threads = getattr(lib, "MKL_Set_Num_Threads_Local", None)
        gnu = threads is not None and _gnu_openmp()
        layer(_GNU_THREADS if gnu else _SEQUENTIAL)
        if gnu:
            threads.argtypes, threads.restype = [ctypes.c_int], ctypes.c_int
        try:
            return Cblas(lib, lambda r: f"cblas_{r}", "mkl", batched=True,
                         threads=threads if gnu else None)
        except AttributeError:  # an MKL before 2021: no strided batches
            continue
    return None


_SEQUENTIAL, _GNU_THREADS = 1, 3  # MKL_THREADING_SEQUENTIAL, MKL_THREADING_GNU


def _gnu_openmp():
    """Whether GNU OpenMP's libgomp loads (MKL's GNU threading layer needs it; without it MKL
    would stop the process at its first product)."""
    try:
        ctypes.CDLL("libgomp.so.1")
    except OSError:
        return False
    return True


class _State:
    cblas = None
    loaded = False
    forked = False


_state = _State()


def _forget():
    """In a forked child: GNU OpenMP's threads do not survive a fork (a parallel region there
    can hang), so its products run on one thread."""
    _state.forked = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget)


def threaded():
    """Whether products run on MKL's OpenMP threads (then NumPy's BLAS keeps one)."""
    cblas = library()
    return cblas is not None and cblas.threads is not None and not _state.forked


def library():
    """The Cblas products go through (MKL's), or None; looked for on the first product."""
    if not _state.loaded:
        _state.loaded = True
        _state.cblas = _load_mkl()
        if _state.cblas is not None and _state.cblas.threads is not None:
            from ._blas import blas
            blas.set(1)  # OpenMP's threads are the products' now (see the module docstring)
    return _state.cblas


def use(cblas):
    """Make `cblas` (a Cblas, or None for NumPy's own products) the one products go through;
    returns the one before."""
    before = library()
    _state.cblas = cblas
    return before


def _operand(x, rows, cols):
    """(transposed, leading dimension) of the matrices (rows, cols) of `x` with its last two
    strides, or None where BLAS cannot read them as stored."""
    size = x.itemsize
    s0, s1 = x.strides[-2], x.strides[-1]
    if s0 % size or s1 % size:
        return None
    s0, s1 = s0 // size, s1 // size
    if cols == 1:  # a column: any stride between its (single) elements of a row
        s1 = 1
    if rows == 1:  # a row: read as a row, or as a column-major matrix with one row
        s0 = cols if s1 == 1 else 1
    if s1 == 1 and s0 >= cols:
        return False, s0
    if s0 == 1 and s1 >= rows:
        return True, s1
    return None


def _readable(x, rows, cols):
    """(x, its layout) where BLAS can read x's matrices as stored, else (a C-ordered copy, its
    layout), as NumPy's matmul copies such an operand (a weight's strided view, say)."""
    layout = _operand(x, rows, cols) if x.flags.aligned else None
    if layout is None:
        x = np.ascontiguousarray(x)
        layout = _operand(x, rows, cols)
    return x, layout


def _batch_stride(x, batch):
    """The item stride that steps `x` through the flattened `batch` (its leading dims,
    broadcast to `batch`), or None where they do not collapse into one stride."""
    lead = x.ndim - 2
    if any(s % x.itemsize for s in x.strides[:lead]):
        return None
    strides = [0] * (len(batch) - lead) + [0 if x.shape[i] == 1 else s // x.itemsize
                                           for i, s in enumerate(x.strides[:lead])]
    dims = [(stride, size) for stride, size in zip(strides, batch) if size != 1]
    step = dims[-1][0] if dims else 0
    expected = step
    for stride, size in reversed(dims):
        if stride != expected:
            return None
        expected *= size
    return step


# Below this many multiply-adds a matrix, NumPy's call is the faster: the ctypes call and
# its checks cost ~8 us, and MKL's small and batched-small products are no faster than
# OpenBLAS's (1 thread, the products of the benchmark models' steps, `/work/notes/s30/
# shapes.py`: (32, 512) @ (512, 64) 33 us under NumPy, 46 through here; 16 products (512,
# 32) @ (32, 32) in one batched call 150 against 212 us; from ~1M up MKL is as fast or up to
# 1.45x faster: (32, 256) @ (256, 144) x32 1276 -> 870 us, (48, 5511) @ (5511, 48) 355 ->
# 269, (20, 512) @ (512, 2048) 1.8x).
MIN_MULTIPLY_ADDS = 1_100_000
# A product takes the OpenMP threads from this many multiply-adds in all: a parallel region
# costs ~10-20 us to start and end (oneDNN's convolutions draw the line at the same size).
PARALLEL_MIN_MULTIPLY_ADDS = 1 << 24


def product(a, b, out=None, threads=1, accumulate=False):
    """np.matmul(a, b, out=out) through the CBLAS library, on up to `threads` threads where
    it has them, or None where NumPy should compute it (see the module's docstring and
    MIN_MULTIPLY_ADDS). `accumulate`: out += a @ b instead (?gemm's beta = 1), `out` given."""
    cblas = _state.cblas if _state.loaded else library()
    if cblas is None or not isinstance(a, np.ndarray) or not isinstance(b, np.ndarray) or \
            a.ndim < 2 or b.ndim < 2:
        return None
    m, k, n = a.shape[-2], a.shape[-1], b.shape[-1]
    if not (m and n and k) or m * n * k < MIN_MULTIPLY_ADDS or b.shape[-2] != k or \
            a.dtype != b.dtype or a.dtype not in _TYPES or max(m, n, k) > _INT_MAX:
        return None
    if a.ndim == 2 and b.ndim == 2:
        batch, count = (), 1
    else:
        try:
            batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
        except ValueError:
            return None
        count = math.prod(batch)
    if out is None:
        if accumulate:
            raise ValueError("product(accumulate=True) adds into `out`: it must be given")
        out = np.empty(batch + (m, n), a.dtype)
    elif not isinstance(out, np.ndarray) or out.dtype != a.dtype or \
            out.shape != batch + (m, n) or not out.flags.writeable or \
            np.may_share_memory(out, a) or np.may_share_memory(out, b):
        return None
    if count == 0:
        return out
    layout_c = _operand(out, m, n)
    if layout_c is None or layout_c[0] or not out.flags.aligned:
        return None
    a, layout_a = _readable(a, m, k)
    b, layout_b = _readable(b, k, n)
    (ta, lda), (tb, ldb), ldc = layout_a, layout_b, layout_c[1]
    if max(lda, ldb, ldc) > _INT_MAX:
        return None
    kind, scalar = _TYPES[a.dtype]
    if cblas.threads is not None:  # (MKL's count is the calling thread's own)
        cblas.threads(1 if _state.forked or m * n * k * count < PARALLEL_MIN_MULTIPLY_ADDS
                      else threads)
    args = (_ROW_MAJOR, _TRANS if ta else _NO_TRANS, _TRANS if tb else _NO_TRANS, m, n, k,
            scalar(1.0))
    beta = scalar(1.0 if accumulate else 0.0)
    if count == 1:
        cblas.gemm[kind](*args, a.ctypes.data, lda, b.ctypes.data, ldb, beta, out.ctypes.data,
                         ldc)
        return out
    steps = [_batch_stride(x, batch) for x in (a, b, out)]
    if None in steps:
        return None
    if kind in cblas.batched:
        sa, sb, sc = steps
        cblas.batched[kind](*args, a.ctypes.data, lda, sa, b.ctypes.data, ldb, sb, beta,
                            out.ctypes.data, ldc, sc, count)
    else:
        size = a.itemsize
        sa, sb, sc = (s * size for s in steps)
        pa, pb, pc = a.ctypes.data, b.ctypes.data, out.ctypes.data
        for i in range(count):
            cblas.gemm[kind](*args, pa + i * sa, lda, pb + i * sb, ldb, beta, pc + i * sc,
                             ldc)
    return out
