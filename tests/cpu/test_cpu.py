"""`torch.cpu` for device-agnostic code: streams and events that order nothing, as PyTorch's."""
import ember


def test_cpu_module_matches_torch(torch):
    for lib in (ember, torch):
        cpu = lib.cpu
        assert cpu.is_available() and cpu.is_initialized() and cpu.device_count() == 1
        assert cpu.current_device() == "cpu"
        default = cpu.current_stream()
        s = cpu.Stream()
        with cpu.stream(s):
            assert cpu.current_stream() is s
        assert cpu.current_stream() is default
        with cpu.StreamContext(None):
            assert cpu.current_stream() is default
        e = cpu.Event()
        e.record(s)
        assert e.query() is True and s.record_event() is None
        cpu.set_device("cpu")
        cpu.synchronize()
