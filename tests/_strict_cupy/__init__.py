"""A strict stand-in for CuPy, for the tests on machines without a GPU (DESIGN.md, "Devices in
the tests"). `strict_cupy()` puts it in `cupy`'s place and ember's own CUDA backend behind
'cuda', so the code that runs is the code a GPU runs: every branch that asks "is this NumPy?"
takes its CuPy side. Its array (`array.ndarray`) is not a NumPy array, has exactly CuPy 14's
names, refuses implicit host conversion as CuPy does, and counts device-to-host transfers
(`TRANSFERS.count`). The API it copies is listed in `_cupy_api.py` (see list_cupy_names.py)."""
import contextlib
import os
import sys

from .array import TRANSFERS, ndarray  # noqa: F401 (the stand-in's public pieces)
from .module import build

__all__ = ["strict_cupy", "TRANSFERS", "ndarray", "REAL_CUDA"]

# benchmarks/gpu_check.py sets it on a GPU machine: the same tests then run on the real CuPy
# (and those that count the stand-in's transfers skip).
REAL_CUDA = os.environ.get("EMBER_TEST_REAL_CUDA") == "1"


@contextlib.contextmanager
def strict_cupy():
    """The stand-in behind 'cuda' while the block runs (yields its `cupy` module); after it,
    the modules, backend, memory hook and 'cuda' generators as they were. With REAL_CUDA it
    steps aside: 'cuda' is the GPU."""
    if REAL_CUDA:
        import cupy
        yield cupy
        return
    import ember.device  # noqa: F401 (the module; `ember.device` the attribute is the class)
    from ember import _allocator
    device_module = sys.modules["ember.device"]
    generators = sys.modules["ember.random"]._cuda_generators
    saved_generators = dict(generators)
    modules = build()
    saved_modules = {name: sys.modules.get(name) for name in modules}
    saved_hook = _allocator.cuda_memory_stats
    _allocator.cuda_memory_stats = None
    sys.modules.update(modules)
    backend = device_module.CudaBackend()  # ember's own: it imports the stand-in
    previous = device_module.register_backend("cuda", backend)
    backend.xp  # loads the stand-in now, entering ember's memory hook, as loading CuPy does
    try:
        yield modules["cupy"]
    finally:
        device_module.register_backend("cuda", previous)
        _allocator.cuda_memory_stats = saved_hook
        for name, module in saved_modules.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
        generators.clear()
        generators.update(saved_generators)
