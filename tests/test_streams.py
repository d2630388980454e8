"""torch.Stream and torch.Event: on the CPU (and meta), PyTorch's answers: one stream with
nothing to order and no events to record; on CUDA (the CuPy-like stand-in), CuPy's streams."""
import pytest

import ember

_NO_GPU = pytest.mark.skipif(ember.cuda.is_available(), reason="a GPU is present")


def _both(torch):
    return ((torch, torch.Stream, torch.Event), (ember, ember.Stream, ember.Event))


@_NO_GPU
def test_the_cpu_stream_as_pytorchs(torch):
    for module, Stream, Event in _both(torch):
        s = Stream()
        assert repr(s) == "torch.Stream device_type=cpu, device_index=-1, stream_id=0"
        assert (s.device_type, s.device_index, s.stream_id) == (0, -1, 0)
        assert s.device == module.device("cpu")
        assert s.query() is True and s.is_capturing() is False
        s.synchronize()
        assert s == Stream(device=module.device("cpu"), priority=-1)
        assert hash(s) == hash(Stream("cpu")) and s != 1
        with pytest.raises(RuntimeError, match="Backend doesn't support getting stream native"):
            s.native_handle
        for call in (s.record_event, lambda: s.wait_stream(Stream())):
            with pytest.raises(RuntimeError, match="cpu backend doesn't support events."):
                call()
        s.wait_event(Event())
        assert repr(Stream("meta")) == \
            "torch.Stream device_type=meta, device_index=-1, stream_id=0"
        with pytest.raises(RuntimeError, match="Cannot access accelerator device when none"):
            Stream(device=0)
        with pytest.raises(RuntimeError, match="not linked with support for cuda devices"):
            Stream(device="cuda")


@_NO_GPU
def test_the_cpu_event_as_pytorchs(torch):
    for module, Stream, Event in _both(torch):
        e = Event()
        assert repr(e) == "torch.Event device_type=cpu, device_index=-1, event_flag=0, " \
                          "event_id=0"
        assert repr(Event(enable_timing=True)).endswith("event_flag=1, event_id=0")
        assert e.query() is True and e.event_id == 0 and e.device == module.device("cpu")
        e.synchronize()
        e.wait()
        with pytest.raises(RuntimeError, match="cpu backend doesn't support events."):
            e.record()
        with pytest.raises(ValueError, match="Both events must be recorded"):
            Event(enable_timing=True).elapsed_time(Event(enable_timing=True))
        with pytest.raises(NotImplementedError, match="torch.Event ipc is not supported"):
            e.ipc_handle()
        with pytest.raises(RuntimeError, match="not linked with support for cuda devices"):
            Event(device="cuda")


def test_streams_on_cuda(cupy_like):
    s = ember.Stream()  # the accelerator's, when there is one
    assert s.device == ember.device("cuda:0") and s.device_index == 0
    assert s.stream_id == s.native_handle != 0
    assert s.query() is True and s.is_capturing() is False
    assert s != ember.Stream("cuda:0")
    assert repr(s).startswith("torch.Stream device_type=cuda, device_index=0, stream_id=")
