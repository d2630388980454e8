"""Shared test fixtures. `fake_cuda`: 'cuda' on the strict CuPy stand-in (tests/_strict_cupy;
this machine has no GPU), so the code a GPU runs is what runs. `numpy_kernels`: ember's
own NumPy routines, where oneDNN would otherwise take float32 convolutions, LSTMs and layer
norms. `full_float32`: convolutions on 'cuda' without TF32, for tests that hold them to the
CPU's values (as PyTorch's own tests compare devices with TF32 off)."""
import pytest

import ember
from ember import _dnnl
from tests._strict_cupy import strict_cupy


@pytest.fixture
def fake_cuda():
    with strict_cupy():
        yield ember.device("cuda:0")


@pytest.fixture
def cupy_like():
    """'cuda' on the strict CuPy stand-in, yielding its `cupy` module (its runtime queries and
    memory pool)."""
    with strict_cupy() as cupy_module:
        yield cupy_module


@pytest.fixture
def torch():
    return pytest.importorskip("torch")


@pytest.fixture
def numpy_kernels():
    before = _dnnl.use(None)
    yield
    _dnnl.use(before)


@pytest.fixture
def full_float32(monkeypatch):
    """Float32 convolutions on 'cuda' in full float32: by default they compute in TF32, as
    cuDNN's do (`torch.backends.cudnn.allow_tf32`), which moves their values in the fourth
    digit."""
    monkeypatch.setattr(ember.backends.cudnn, "allow_tf32", False)
