"""`torch.cuda.tunable`: PyTorch's TunableOp, which times the GEMM algorithms the BLAS
libraries offer and keeps the fastest per shape, in a CSV file of results. ember's matrix
products are CuPy's, which picks cuBLAS's algorithm itself; ember tunes nothing. The
settings are kept (from the PYTORCH_TUNABLEOP_* variables, as PyTorch reads them), tuning
finds no results, and reading a results file validates and loads its rows. Without CUDA,
PyTorch's errors for a build without it."""
import os


__all__ = ["enable", "is_enabled", "tuning_enable", "tuning_is_enabled",
           "record_untuned_enable", "record_untuned_is_enabled", "set_max_tuning_duration",
           "get_max_tuning_duration", "set_max_tuning_iterations", "get_max_tuning_iterations",
           "set_filename", "get_filename", "get_results", "get_validators", "read_file",
           "tune_gemm_in_file", "mgpu_tune_gemm_in_file", "set_rotating_buffer_size",
           "get_rotating_buffer_size", "set_numerical_check_tolerances"]


def _env_int(name, default):
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


_settings = {
    "enabled": _env_int("PYTORCH_TUNABLEOP_ENABLED", 0) == 1,
    "tuning": _env_int("PYTORCH_TUNABLEOP_TUNING", 1) == 1,
    "record_untuned": _env_int("PYTORCH_TUNABLEOP_RECORD_UNTUNED", 0) == 1,
    "max_tuning_duration": _env_int("PYTORCH_TUNABLEOP_MAX_TUNING_DURATION_MS", 30),
    "max_tuning_iterations": _env_int("PYTORCH_TUNABLEOP_MAX_TUNING_ITERATIONS", 100),
    "filename": os.environ.get("PYTORCH_TUNABLEOP_FILENAME", "tunableop_results.csv"),
    "insert_device_ordinal": True,
    "rotating_buffer_size": _env_int("PYTORCH_TUNABLEOP_ROTATING_BUFFER_SIZE", -1),
    "numerical_check": (False, 1e-5, 1e-5),
}
_results = []      # (op signature, parameters, algorithm, time in ms), as read from a file
_validators = []   # (name, value) rows of a results file


def _require_cuda(function):
    """PyTorch's error for `function` in a build without CUDA."""
    from . import is_available
    if not is_available():
        raise AttributeError(f"module 'torch._C' has no attribute '_cuda_tunableop_{function}'")


def _setter(key, function, check=None):
    def set_value(value=True):
        _require_cuda(function)
        if check is not None:
            check(value)
        _settings[key] = value
    return set_value


def _getter(key, function):
    def get_value():
        _require_cuda(function)
        return _settings[key]
    return get_value


def _check_bool(value):
    if not isinstance(value, bool):
        raise TypeError(f"expected a bool, got {type(value).__name__}")


def _check_int(value):
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"expected an int, got {type(value).__name__}")


enable = _setter("enabled", "enable", _check_bool)
is_enabled = _getter("enabled", "is_enabled")
tuning_enable = _setter("tuning", "tuning_enable", _check_bool)
tuning_is_enabled = _getter("tuning", "tuning_is_enabled")
record_untuned_enable = _setter("record_untuned", "record_untuned_enable", _check_bool)
record_untuned_is_enabled = _getter("record_untuned", "record_untuned_is_enabled")
set_max_tuning_duration = _setter("max_tuning_duration", "set_max_tuning_duration", _check_int)
get_max_tuning_duration = _getter("max_tuning_duration", "get_max_tuning_duration")
set_max_tuning_iterations = _setter("max_tuning_iterations", "set_max_tuning_iterations",
                                    _check_int)
get_max_tuning_iterations = _getter("max_tuning_iterations", "get_max_tuning_iterations")
set_rotating_buffer_size = _setter("rotating_buffer_size", "set_rotating_buffer_size",
                                   _check_int)
get_rotating_buffer_size = _getter("rotating_buffer_size", "get_rotating_buffer_size")


def set_filename(filename, insert_device_ordinal=False):
    _require_cuda("set_filename")
    _settings["filename"], _settings["insert_device_ordinal"] = filename, insert_device_ordinal


def get_filename():
    """The results file; with the device ordinal inserted before its extension where asked."""
    _require_cuda("get_filename")
    filename = _settings["filename"]
    if _settings["insert_device_ordinal"]:
        from . import current_device
        root, extension = os.path.splitext(filename)
        filename = f"{root}{current_device()}{extension}"
    return filename


def set_numerical_check_tolerances(enable, atol=1e-5, rtol=1e-5):
    _require_cuda("set_numerical_check_tolerances")
    _settings["numerical_check"] = (enable, atol, rtol)


def get_results():
    """The tuned results: those read from a file (ember tunes none itself)."""
    _require_cuda("get_results")
    return tuple(_results)


def get_validators():
    _require_cuda("get_validators")
    return tuple(_validators)


def read_file(filename=None):
    """Load a TunableOp results file: "Validator,name,value" rows and result rows
    (op,params,algorithm,time). False where it cannot be read."""
    _require_cuda("read_file")
    filename = get_filename() if filename is None else filename
    try:
        with open(filename, newline="") as f:
            import csv  # here: only reading a results file needs it
            rows = list(csv.reader(f))
    except OSError:
        return False
    validators, results = [], []
    for row in rows:
        if not row:
            continue
        if row[0] == "Validator" and len(row) >= 3:
            validators.append((row[1], row[2]))
        elif len(row) >= 4:
            results.append((row[0], row[1], row[2], float(row[3])))
        else:
            return False
    _validators[:], _results[:] = validators, results
    return True


def tune_gemm_in_file(filename):
    _require_cuda("tune_gemm_in_file")
    raise RuntimeError("tune_gemm_in_file: ember's GEMMs run through CuPy, which chooses the "
                       "cuBLAS algorithm itself; there is nothing to tune")


def mgpu_tune_gemm_in_file(filename_pattern, num_gpus):
    _require_cuda("mgpu_tune_gemm_in_file")
    raise RuntimeError("mgpu_tune_gemm_in_file: ember's GEMMs run through CuPy, which chooses "
                       "the cuBLAS algorithm itself; there is nothing to tune")
