"""Shared test fixtures: a stand-in CUDA device backed by NumPy (this machine has no GPU), so
device plumbing (transfers, `.to`, mixing errors, `device='cuda:0'` in reprs) is tested."""
import pytest

import ember
from tests._cuda_stand_in import numpy_cuda_stand_in


@pytest.fixture
def fake_cuda():
    with numpy_cuda_stand_in():
        yield ember.device("cuda:0")


@pytest.fixture
def torch():
    return pytest.importorskip("torch")
