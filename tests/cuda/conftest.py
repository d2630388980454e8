"""The CuPy-like stand-in behind 'cuda' (tests/cuda/_cupy_stand_in.py)."""
import sys

import pytest

import ember.device  # noqa: F401  (the module)
from ember import _allocator
from tests.cuda._cupy_stand_in import CupyLikeBackend

_device_mod = sys.modules["ember.device"]


@pytest.fixture
def cupy_like(monkeypatch):
    """The stand-in's CuPy module, behind 'cuda', with ember's statistics hook entered into it
    (as loading CuPy enters it)."""
    backend = CupyLikeBackend()
    monkeypatch.setattr(_allocator, "cuda_memory_stats", None)
    previous = _device_mod.register_backend("cuda", backend)
    _allocator.track_cuda_memory(backend.xp)
    try:
        yield backend.xp
    finally:
        _device_mod.register_backend("cuda", previous)
