"""The BLAS library NumPy links: its thread count, read and set (`set_num_threads` sets it),
and its warm-up (`warm_up`). OpenBLAS (NumPy's wheels bundle it) is asked through its own
`openblas_set_num_threads` / `openblas_get_num_threads`, called through ctypes on the library
NumPy has loaded: its count is process-wide, and the call works from any thread. Only a BLAS
without those (MKL, BLIS) goes through `threadpoolctl`, when it is installed: for OpenBLAS,
threadpoolctl 3.8 lets only the first thread that set a count set it again, and ignores the
others without a word, and the intra-op pool gives the BLAS its threads back from whichever
thread notices (`_parallel`): a release from a pool thread was lost, and every product after
it ran on one thread (a GPT step after a CIFAR ResNet's, at 2 threads, 1.3x its time)."""
import ctypes
import os

from ._state import ThreadLocal


class _Blas:
    """The thread-count switch of the BLAS NumPy uses, found once, on first use."""

    def __init__(self):
        self._found = False
        self._set = self._get = None

    def _find(self):
        self._found = True
        for lib in self._openblas_libraries():
            for prefix in ("scipy_openblas", "openblas"):
                for suffix in ("64_", ""):
                    setter = getattr(lib, f"{prefix}_set_num_threads{suffix}", None)
                    getter = getattr(lib, f"{prefix}_get_num_threads{suffix}", None)
                    if setter is not None and getter is not None:
                        setter.argtypes, setter.restype = [ctypes.c_int], None
                        getter.argtypes, getter.restype = [], ctypes.c_int
                        self._set, self._get = setter, getter
                        return
        try:
            import threadpoolctl
        except ImportError:
            return
        blas = threadpoolctl.ThreadpoolController().select(user_api="blas")
        if blas.lib_controllers:
            self._set = lambda n: blas.limit(limits=n)
            self._get = lambda: min(m.num_threads for m in blas.lib_controllers)

    @staticmethod
    def _openblas_libraries():
        """The OpenBLAS shared objects already mapped into this process (NumPy's)."""
        import glob  # here, not at `import ember`: only a thread-count call needs it

        import numpy
        paths = []
        try:
            with open("/proc/self/maps") as maps:
                for line in maps:
                    path = line.rstrip("\n").split(" ")[-1]
                    if "openblas" in os.path.basename(path).lower() and path not in paths:
                        paths.append(path)
        except OSError:
            pass
        libs_dir = os.path.join(os.path.dirname(os.path.dirname(numpy.__file__)), "numpy.libs")
        paths += [p for p in glob.glob(os.path.join(libs_dir, "*openblas*")) if p not in paths]
        for path in paths:
            try:
                yield ctypes.CDLL(path)
            except OSError:
                continue

    def set(self, n):
        if not self._found:
            self._find()
        if self._set is not None:
            self._set(n)

    def get(self):
        if not self._found:
            self._find()
        return self._get() if self._get is not None else None


blas = _Blas()


# NumPy's OpenBLAS (0.3.31, its Haswell kernels on this machine's AMD EPYC, 1 thread) runs
# mid-sized float32 products at a third of its speed until the calling thread has run one
# product of about 384^3 or more: a convolution's (2048, 288) @ (288, 64) 13-17 GFLOPS
# before, 33 after; (288, 2048) @ (2048, 64) 13 -> 34; ResNet-18's (6272, 576) @ (576, 128)
# 12 -> 34 (a 256^3 product does not do it; 384^3 and larger ones, float32 or float64, do).
# A model whose products are all smaller (CIFAR ResNet) never got there. The warm-up is one
# 512^3 product per thread (about 5 ms, once), taken by the CPU convolutions.
_warm = ThreadLocal()
WARM_UP_SIZE = 512


def warm_up():
    """Run the one product that takes the BLAS to its full speed, once per thread."""
    if getattr(_warm, "done", False):
        return
    _warm.done = True
    import numpy
    a = numpy.ones((WARM_UP_SIZE, WARM_UP_SIZE), numpy.float32)
    numpy.matmul(a, a)
