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


def test_capabilities_are_the_machines_as_pytorch_reads_them(torch):
    ours, theirs = ember.cpu.get_capabilities(), torch.cpu.get_capabilities()
    assert type(ours).__name__ == "mappingproxy"
    assert ours is ember.cpu.get_capabilities()  # read once
    assert set(ours) == set(theirs)
    for name, value in theirs.items():
        if name == "cpu_name":  # PyTorch's cpuinfo may shorten the marketing name
            assert ours[name].startswith(value.split()[0])
        else:
            assert ours[name] == value, name
