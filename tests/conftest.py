"""Shared test fixtures: a stand-in CUDA device backed by NumPy (this machine has no GPU), so
device plumbing (transfers, `.to`, mixing errors, `device='cuda:0'` in reprs) is tested."""
import pytest

import ember
from tests._cuda_stand_in import numpy_cuda_stand_in
from tests._cupy_stand_in import cupy_like_stand_in


@pytest.fixture
def fake_cuda():
    with numpy_cuda_stand_in():
        yield ember.device("cuda:0")


@pytest.fixture
def cupy_like():
    """'cuda' on a stand-in for CuPy's runtime queries and memory pool (no tensor ops)."""
    with cupy_like_stand_in() as cupy_module:
        yield cupy_module


@pytest.fixture
def torch():
    return pytest.importorskip("torch")
