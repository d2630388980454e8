"""`torch.backends.mkl`: whether ember's CPU math runs on Intel's oneMKL: where the NumPy it
runs on was built against MKL (its wheels bundle OpenBLAS instead), or where MKL is
installed beside it (`pip install ember[mkl]`), whose products ember calls itself
(`ember/_gemm.py`). Its on-demand verbose mode needs MKL's own verbose switch, which ember
does not reach: only VERBOSE_OFF can be entered."""

VERBOSE_OFF = 0
VERBOSE_ON = 1

_available = None


def is_available():
    """Whether ember's matrix products run on oneMKL (NumPy's BLAS, or ember's own calls)."""
    global _available
    if _available is None:
        from .. import _gemm
        library = _gemm.library()
        _available = "mkl" in _numpy_blas_name() or (library is not None and
                                                     library.vendor == "mkl")
    return _available


def _numpy_blas_name():
    import numpy
    try:
        config = numpy.show_config(mode="dicts")
        return str(config["Build Dependencies"]["blas"]["name"]).lower()
    except (TypeError, KeyError):  # an older NumPy: no machine-readable configuration
        blas = getattr(getattr(numpy, "__config__", None), "blas_opt_info", None) or {}
        return " ".join(blas.get("libraries", ())).lower()


class verbose:
    """`with verbose(VERBOSE_ON):` dumps oneMKL's verbose messages for the block."""

    def __init__(self, enable):
        self.enable = enable

    def __enter__(self):
        if self.enable == VERBOSE_OFF:
            return
        raise AssertionError("Failed to set MKL into verbose mode. Please consider to disable "
                             "this verbose scope.")

    def __exit__(self, exc_type, exc_val, exc_tb):
        return False
