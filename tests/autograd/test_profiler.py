"""ember.autograd.profiler (and profiler_util): the recording profile with its results, its
nesting rules, the shared record_function, and the NVTX/ITT annotators, as PyTorch's."""
import types

import pytest

import ember
from ember.autograd import profiler, profiler_util
from ember.device import CudaBackend


def _work():
    x = ember.randn(3, 4, requires_grad=True)
    with profiler.record_function("forward"):
        y = (x * 2).relu().sum()
    y.backward()


def test_profile_records_ops_regions_and_backward():
    with profiler.profile(record_shapes=True) as prof:
        _work()
    assert isinstance(prof.function_events, profiler_util.EventList)
    names = [e.name for e in prof.function_events]
    assert {"forward", "aten::mul", "aten::relu", "aten::sum",
            "autograd::engine::evaluate_function: SumBackward0"} <= set(names)
    mul = next(e for e in prof.function_events if e.name == "aten::mul")
    assert mul.cpu_parent.name == "forward" and mul.input_shapes == [[3, 4], []]
    assert prof.self_cpu_time_total == pytest.approx(
        sum(e.self_cpu_time_total for e in prof.function_events))
    table = prof.table(sort_by="cpu_time_total", row_limit=3)
    assert table.splitlines()[1].split()[:3] == ["Name", "Self", "CPU"]
    assert len(table.splitlines()) == 3 + 3 + 2  # header, three rows, footer
    assert prof.key_averages().table() == str(prof.key_averages())
    assert prof.total_average().key == "Total"


def test_profile_rules(tmp_path):
    prof = profiler.profile()
    assert repr(prof) == "<unfinished torch.autograd.profile>"
    with pytest.raises(AssertionError, match="Expected profiling results"):
        prof.key_averages()
    with prof:
        with pytest.raises(RuntimeError, match="not reentrant"):
            prof.__enter__()
        ember.ones(2).exp()
    assert "aten::exp" in str(prof)
    with profiler.profile(enabled=False) as off:
        ember.ones(2).exp()
    assert off is None  # a disabled profiler hands back nothing, as PyTorch's
    accumulating = profiler.profile(acc_events=True)
    for _ in range(2):
        with accumulating:
            ember.ones(2).neg()
    assert [e.name for e in accumulating.function_events].count("aten::neg") == 2


def test_chrome_trace_plain_and_gzip(tmp_path):
    import gzip
    import json
    with profiler.profile() as prof:
        ember.ones(2).exp()
    prof.export_chrome_trace(str(tmp_path / "t.json"))
    prof.export_chrome_trace(str(tmp_path / "t.json.gz"))
    plain = json.loads((tmp_path / "t.json").read_text())
    with gzip.open(tmp_path / "t.json.gz", "rt") as f:
        assert json.load(f) == plain
    assert any(e["name"] == "aten::exp" for e in plain["traceEvents"])


def test_record_function_without_a_profiler_and_as_decorator():
    @profiler.record_function("decorated")
    def f():
        return ember.ones(1) + 1
    assert f().tolist() == [2.0]  # nothing records: no effect
    with profiler.profile() as prof:
        f()
    assert "decorated" in [e.name for e in prof.function_events]
    assert ember.profiler.record_function is profiler.record_function


def test_emit_nvtx_needs_cuda(monkeypatch):
    monkeypatch.setattr(CudaBackend, "_cupy", None)
    monkeypatch.setitem(__import__("sys").modules, "cupy", None)
    with pytest.raises(AssertionError, match="Torch not compiled with CUDA enabled"):
        with profiler.emit_nvtx():
            pass
    with profiler.emit_nvtx(enabled=False):  # disabled: nothing asked of CUDA
        pass


def test_emit_nvtx_opens_a_range_per_op(monkeypatch):
    ranges = []
    nvtx = types.SimpleNamespace(RangePush=ranges.append,
                                 RangePop=lambda: ranges.append("pop"))
    runtime = types.SimpleNamespace(deviceSynchronize=lambda: None)
    fake = types.SimpleNamespace(cuda=types.SimpleNamespace(nvtx=nvtx, runtime=runtime))
    monkeypatch.setattr(CudaBackend, "_cupy", fake)
    annotator = profiler.emit_nvtx(record_shapes=True)
    with annotator:
        with profiler.record_function("block"):
            ember.ones(2, 3).exp()
        with pytest.raises(RuntimeError, match="NVTX annotation context manager is not "
                                               "reentrant"):
            annotator.__enter__()
    assert ranges[:4] == ["block", "aten::ones, sizes = [[], []]", "pop",
                          "aten::exp, sizes = [[2, 3]]"]
    assert ranges.count("pop") == 3
    assert ember.ones(1).exp().tolist() == [pytest.approx(2.718281828)]  # unwrapped again
    assert ranges.count("pop") == 3


def test_emit_itt_runs_its_block():
    with profiler.emit_itt() as annotator:
        assert ember.ones(1).add(1).tolist() == [2.0]
        with pytest.raises(RuntimeError, match="ITT annotation context manager is not "
                                               "reentrant"):
            annotator.__enter__()


def test_names_match_torch(torch):
    import torch.autograd.profiler
    import torch.autograd.profiler_util
    for name in ("profile", "record_function", "emit_itt", "emit_nvtx", "EventList",
                 "FunctionEvent"):
        assert hasattr(profiler, name) and name in torch.autograd.profiler.__all__
    for name in profiler_util.__all__:
        assert name in torch.autograd.profiler_util.__all__


def test_enforce_unique_and_the_step_tracker():
    from ember.autograd.profiler import EnforceUnique, KinetoStepTracker
    unique = EnforceUnique()
    unique.see(1, 2)
    with pytest.raises(RuntimeError, match=r"duplicate key: \(1, 2\)"):
        unique.see(1, 2)
    start = KinetoStepTracker.current_step()
    KinetoStepTracker.init_step_count("a")
    KinetoStepTracker.init_step_count("b")
    assert KinetoStepTracker.increment_step("a") == start + 1
    assert KinetoStepTracker.increment_step("b") == start + 1  # both at one step
    with pytest.warns(UserWarning, match="Profiler step count has increased more than 1"):
        KinetoStepTracker._step_dict["a"] += 1
        KinetoStepTracker.increment_step("a")
    assert KinetoStepTracker.erase_step_count("a") and KinetoStepTracker.erase_step_count("b")
    assert not KinetoStepTracker.erase_step_count("a")


def test_mem_records_in_an_interval():
    from ember.autograd.profiler import MemRecordsAcc

    class Record:
        def __init__(self, ns):
            self.ns = ns

        def start_ns(self):
            return self.ns
    records = [(Record(30), "c"), (Record(10), "a"), (Record(20), "b"), (Record(40), "d")]
    acc = MemRecordsAcc(records)
    assert [r[1] for r in acc.in_interval(10, 30)] == ["a", "b", "c"]
    assert list(MemRecordsAcc([]).in_interval(0, 100)) == []


def test_an_nvprof_database_becomes_events_with_their_kernels(tmp_path):
    import sqlite3
    from ember.autograd.profiler import load_nvprof
    path = tmp_path / "trace.prof"
    db = sqlite3.connect(path)
    db.executescript("""
        CREATE TABLE StringTable (_id_ INTEGER, value TEXT);
        CREATE TABLE CUPTI_ACTIVITY_KIND_MARKER (id INTEGER, name INTEGER, timestamp INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (_id_ INTEGER, cbid INTEGER,
            start INTEGER, "end" INTEGER, correlationId INTEGER);
        CREATE TABLE CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL (name INTEGER, start INTEGER,
            "end" INTEGER, correlationId INTEGER);
        INSERT INTO StringTable VALUES (1, 'aten::mm'), (2, 'aten::relu'),
            (3, '_Z6kernelv');
        INSERT INTO CUPTI_ACTIVITY_KIND_MARKER VALUES (7, 1, 100), (7, 0, 200),
            (8, 2, 50), (8, 0, 90);
        INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME VALUES (1, 211, 120, 130, 5);
        INSERT INTO CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL VALUES (3, 140, 165, 5);
    """)
    db.commit()
    db.close()
    events = load_nvprof(str(path))
    assert [e.name for e in events] == ["aten::relu", "aten::mm"]
    mm = events[1]
    assert (mm.time_range.start, mm.time_range.end) == (100, 200)
    assert [(k.name, k.duration) for k in mm.kernels] in ([("kernel()", 25)],
                                                          [("_Z6kernelv", 25)])
