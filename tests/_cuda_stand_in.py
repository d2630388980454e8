"""The NumPy stand-in for CUDA, for tests on machines without a GPU: one 'cuda' device whose
arrays stay NumPy arrays (copied on transfer). The `fake_cuda` fixture (tests/conftest.py) and
the op table's `cuda` entry (tests/ops/opinfo/conversion.py) put it behind 'cuda'."""
import contextlib
import sys

import numpy as np

import ember.device  # noqa: F401  (the module: `ember.device` the attribute is the class)

_device_mod = sys.modules["ember.device"]
_cuda_generators = sys.modules["ember.random"]._cuda_generators


class NumpyCudaStandIn:
    """Pretends to be CUDA with one device; arrays stay NumPy arrays (copied on transfer)."""

    xp = np
    name = "cuda"

    def is_available(self):
        return True

    def device_count(self):
        return 1

    def from_host(self, array, index):
        return np.array(array, copy=True)

    def to_host(self, array):
        return np.array(array, copy=True)

    def synchronize(self, index):
        pass


@contextlib.contextmanager
def numpy_cuda_stand_in():
    """The stand-in behind 'cuda' while the block runs; after it, the backend it replaced, and
    the 'cuda' generators as they were: those made on the stand-in go with it (left behind, a
    later test's manual_seed resets them, and reading their state then asks for CuPy)."""
    generators = dict(_cuda_generators)
    previous = _device_mod.register_backend("cuda", NumpyCudaStandIn())
    try:
        yield
    finally:
        _device_mod.register_backend("cuda", previous)
        _cuda_generators.clear()
        _cuda_generators.update(generators)
