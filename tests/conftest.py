"""Shared test fixtures: a stand-in CUDA device backed by NumPy (this machine has no GPU), so
device plumbing (transfers, `.to`, mixing errors, `device='cuda:0'` in reprs) is tested."""
import sys

import numpy as np
import pytest

import ember
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


@pytest.fixture
def fake_cuda():
    generators = dict(_cuda_generators)
    previous = _device_mod.register_backend("cuda", NumpyCudaStandIn())
    try:
        yield ember.device("cuda:0")
    finally:
        _device_mod.register_backend("cuda", previous)
        # the 'cuda' generators made on the stand-in go with it: left behind, a later test's
        # manual_seed resets them, and reading their state then asks for CuPy
        _cuda_generators.clear()
        _cuda_generators.update(generators)


@pytest.fixture
def torch():
    return pytest.importorskip("torch")
