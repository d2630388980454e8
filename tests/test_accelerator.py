"""torch.accelerator: without an accelerator, PyTorch's CPU build's errors; on the CuPy-like
stand-in, CUDA's current device, streams and memory figures through the device-agnostic
API."""
import pytest

import ember
from ember import _state

acc = ember.accelerator
_NO_GPU = pytest.mark.skipif(ember.cuda.is_available(), reason="a GPU is present")
_NONE = "Cannot access accelerator device when none is available."


@_NO_GPU
def test_without_an_accelerator_every_device_question_fails_as_pytorchs(torch):
    calls = ["current_device_index", "current_stream", "empty_cache", "empty_host_cache",
             "get_device_capability", "get_memory_info", "max_memory_allocated",
             "max_memory_reserved", "memory_allocated", "memory_reserved", "memory_stats",
             "reset_accumulated_memory_stats", "reset_peak_memory_stats", "synchronize"]
    for name in calls:
        with pytest.raises(RuntimeError, match=_NONE):
            getattr(torch.accelerator, name)()
        with pytest.raises(RuntimeError, match=_NONE):
            getattr(acc, name)()
    for module in (torch.accelerator, acc):
        with pytest.raises(RuntimeError, match=_NONE):
            module.set_device_index(0)
        with pytest.raises(RuntimeError, match=_NONE):
            module.set_stream(module is acc and ember.Stream() or torch.Stream())
        for name in ("current_stream", "get_memory_info", "synchronize"):
            with pytest.raises(RuntimeError, match="Accelerator expected"):
                getattr(module, name)("cpu")
        with pytest.raises(RuntimeError, match=_NONE):
            with module.device_index(0):
                pass
        with module.device_index(None):
            pass
        assert module.current_accelerator() is None and module.device_count() == 0


@_NO_GPU
@pytest.mark.parametrize("old, new", [("current_device_idx", "current_device_index"),
                                      ("set_device_idx", "set_device_index")])
def test_the_deprecated_spellings_warn_as_pytorchs(torch, old, new):
    args = (0,) if old == "set_device_idx" else ()
    for module in (torch.accelerator, acc):
        with pytest.warns(FutureWarning, match=f"Use `{new}` instead."):
            with pytest.raises(RuntimeError, match=_NONE):
                getattr(module, old)(*args)


def test_the_current_device_and_its_index_context(cupy_like, monkeypatch):
    monkeypatch.setattr(_state, "cuda_device", 0)
    assert acc.current_device_index() == 0
    with acc.device_index(1):
        assert acc.current_device_index() == 1
    assert acc.current_device_index() == 0
    acc.set_device_index("cuda:1")
    assert ember.cuda.current_device() == 1
    acc.set_device_index(-1)  # no change
    assert ember.cuda.current_device() == 1
    with pytest.raises(ValueError, match="cpu doesn't match the current accelerator cuda"):
        acc.set_device_index(ember.device("cpu"))


def test_streams_of_the_accelerator(cupy_like):
    stream = acc.current_stream()
    assert isinstance(stream, ember.Stream) and stream.stream_id == 0
    assert stream.device == ember.device("cuda:0") and stream.device_type == 1
    new = ember.Stream("cuda")
    assert new.stream_id != 0 and new.native_handle == new.stream_id
    acc.set_stream(new)
    assert acc.current_stream() == new
    acc.set_stream(stream)
    with pytest.raises(TypeError, match="must be torch.Stream"):
        acc.set_stream(ember.cpu.Stream())


def test_memory_figures_are_cudas(cupy_like):
    pool = cupy_like.get_default_memory_pool()
    block = pool.malloc(4096)
    assert acc.memory_allocated() == acc.max_memory_allocated() == 4096
    assert acc.memory_reserved() == acc.max_memory_reserved() == 4096
    assert acc.memory_stats() == ember.cuda.memory_stats()
    pool.free(block)
    acc.reset_peak_memory_stats()
    assert acc.max_memory_allocated() == 0
    acc.reset_accumulated_memory_stats()
    assert acc.memory_stats()["allocation.all.allocated"] == 0
    acc.empty_cache()
    acc.empty_host_cache()
    assert acc.memory_reserved() == 0
    assert acc.get_memory_info() == (20 << 30, 24 << 30)
    capability = acc.get_device_capability("cuda:0")
    assert {ember.float32, ember.int64, ember.bool} <= capability["supported_dtypes"]
