"""ember: PyTorch's user API on NumPy (CPU) and CuPy (CUDA). `import ember as torch`.

This file is the public face: it re-exports; it defines nothing of its own.
"""
from . import _allocator  # noqa: F401  (keeps large freed blocks in glibc's heap)
from . import dtypes as _dtypes
from .dtypes import (bfloat16, bool, cdouble, cfloat, complex64, complex128, double, dtype,
                     finfo, float, float16, float32, float64, get_default_dtype, half, iinfo,
                     int, int8, int16, int32, int64, long, promote_types, result_type,
                     set_default_dtype, short, uint8, can_cast)
from .device import device
from ._state import set_default_device
from ._tensor import Size, Tensor
from ._memory_format import (channels_last, channels_last_3d, contiguous_format, memory_format,
                             preserve_format)
from .random import (Generator, default_generator, get_rng_state, initial_seed, manual_seed,
                     seed, set_rng_state)
# before the op families' names: the reduction family names return_types among them, and is
# loaded on first use
from . import return_types
from . import ops as _ops
_ops.export(__import__("sys").modules[__name__], _ops.__all__)  # every op family's functions
from .ops.legacy_constructors import LEGACY_TYPES as _LEGACY
from . import autograd, utils
from . import amp
from .dtypes import qint8, qint32, quint8
from .dtypes import (uint16, uint32, uint64, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2,
                     float8_e5m2fnuz, float8_e8m0fnu, float4_e2m1fn_x2, complex32, chalf,
                     bits1x8, bits2x4, bits4x2, bits8, bits16, int1, int2, int3, int4, int5,
                     int6, int7, uint1, uint2, uint3, uint4, uint5, uint6, uint7, bit)
from ._qscheme import (qscheme, per_channel_affine, per_channel_affine_float_qparams,
                       per_channel_symmetric, per_tensor_affine, per_tensor_symmetric)
from .amp import autocast, get_autocast_dtype, is_autocast_enabled
from .amp._global_state import *  # noqa: F401,F403  (set_autocast_enabled ... without autocast)
from ._errors import AcceleratorError, FatalError, OutOfMemoryError, _assert
from ._symbolic import *  # noqa: F401,F403  (sym_int ... and cond, on concrete values)
from .random import thread_safe_generator
from .autograd.anomaly_mode import (is_anomaly_check_nan_enabled, is_anomaly_enabled,
                                    set_anomaly_enabled)
from .autograd import (enable_grad, inference_mode, is_grad_enabled,
                       is_inference_mode_enabled, no_grad, set_grad_enabled)
from ._environment import *  # noqa: F401,F403  (threads, constants, global settings)

globals().update(_LEGACY)  # FloatTensor, LongTensor, ...

from ._layout import layout, sparse_coo, strided
from ._layout import sparse_bsc, sparse_bsr, sparse_csc, sparse_csr
from .version import __version__
from . import version
from ._tensor import (is_tensor, is_floating_point, is_complex, numel, get_device, is_inference,
                      is_distributed)
# as PyTorch's parser binds them, with NumPy's spellings (`torch.numel(a=t)`): the functions
# ember's own modules give this namespace; export() above bound the op families' the same way
from .ops._numpy_names import accept_in as _accept_in
_accept_in(globals(), [n for n, v in list(globals().items()) if not n.startswith("_")], "torch")
from . import torch_version

# Loaded on first use (ember/_lazy.py): the packages and modules a script may never need,
# whose import cost `import ember` more than the rest (urllib and ssl for hub, multiprocessing
# for utils.data, the storages, streams, GradScaler ...). tests/test_lazy_import.py checks that
# a bare `import ember` leaves them out.
from ._lazy import lazy_attributes as _lazy_attributes  # noqa: E402

_LAZY_MODULES = ("distributed", "distributions", "jit", "testing", "func", "hub",
                 "multiprocessing", "profiler", "compiler", "library", "ao", "masked", "nested",
                 "quantization", "overrides", "futures", "signal", "optim", "serialization", "nn",
                 "cuda", "types", "fx", "export", "onnx", "_dynamo", "_inductor", "_C",
                 "accelerator", "backends", "cpu", "sparse", "storage", "quasirandom",
                 "__future__", "_utils", "_tensor_str")
# the namespaces that re-export op families loaded on first use (ember/ops/__init__.py)
_LAZY_MODULES += ("fft", "linalg", "special", "functional")
_lazy_attributes(__import__("sys").modules[__name__], {
    **{name: (f".{name}", None) for name in _LAZY_MODULES},
    "vmap": (".func", "vmap"), "compile": (".jit", "compile"), "fork": (".jit", "fork"),
    "wait": (".jit", "wait"), "JITException": (".jit", "Error"), "Tag": (".library", "Tag"),
    "Future": (".futures", "Future"), "GradScaler": (".amp", "GradScaler"),
    "Stream": ("._streams", "Stream"), "Event": ("._streams", "Event"),
    **{name: ("._storage", name) for name in ("TypedStorage", "UntypedStorage")},
    # FloatStorage, LongStorage, ... (TypedStorage makers)
    **{d._storage_type: ("._storage", d._storage_type) for d in _dtypes.ALL_DTYPES},
    **{name: ("._printing", name) for name in ("get_printoptions", "set_printoptions")},
    **{name: (".serialization", name) for name in (
        "load", "save", "DeserializationStorageContext", "PyTorchFileReader",
        "PyTorchFileWriter", "SerializationStorageContext")},
    "DisableTorchFunction": (".overrides", "DisableTorchFunction"),
    "DisableTorchFunctionSubclass": (".overrides", "DisableTorchFunctionSubclass"),
    "BenchmarkConfig": (".utils.throughput_benchmark", "BenchmarkConfig"),
    "BenchmarkExecutionStats": (".utils.throughput_benchmark", "BenchmarkExecutionStats"),
    "ThroughputBenchmark": (".utils.throughput_benchmark", "_Engine"),
})
# `import ember` has always made these ember.utils modules reachable
_lazy_attributes(utils, {name: (f"ember.utils.{name}", None)
                        for name in ("data", "checkpoint", "dlpack", "deterministic", "weak")})
