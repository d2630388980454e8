"""ember.profiler: ops and backward nodes recorded with real wall-clock times, nesting under
record_function, PyTorch's table layout, schedules and step(), the chrome trace, and no
trace of the profiler left on the ops afterwards."""
import json
import os
import time
import warnings

import pytest

import ember
from ember.profiler import ProfilerAction, ProfilerActivity, profile, record_function, schedule


def _run():
    x = ember.randn(4, 5, requires_grad=True)
    lin = ember.nn.Linear(5, 3)
    with record_function("model_inference"):
        y = (lin(x).relu() * 2).sum()
    y.backward()


def test_records_ops_backward_nodes_and_regions():
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        _run()
    names = {e.key for e in prof.key_averages()}
    assert {"model_inference", "aten::linear", "aten::relu", "aten::mul", "aten::sum",
            "autograd::engine::evaluate_function: MulBackward0"} <= names
    events = prof.events()
    region = next(e for e in events if e.name == "model_inference")
    linear = next(e for e in events if e.name == "aten::linear")
    assert linear.cpu_parent is region and linear in region.cpu_children
    assert linear.input_shapes == [[4, 5], [3, 5], [3]]
    assert region.self_cpu_time_total == pytest.approx(
        region.cpu_time_total - sum(c.cpu_time_total for c in region.cpu_children))


def test_times_are_wall_clock():
    with profile() as prof:
        with record_function("sleepy"):
            time.sleep(0.05)
    (avg,) = [e for e in prof.key_averages() if e.key == "sleepy"]
    assert 45_000 <= avg.cpu_time_total <= 1_000_000  # microseconds
    assert avg.count == 1 and avg.cpu_time == avg.cpu_time_total


def test_counts_and_record_function_as_decorator():
    @record_function("step_fn")
    def step(t):
        return t.exp().sum()
    with profile() as prof:
        for _ in range(3):
            step(ember.ones(3))
    averages = {e.key: e for e in prof.key_averages()}
    assert averages["step_fn"].count == 3 and averages["aten::exp"].count == 3


def test_record_function_operators_open_and_close_regions():
    """torch.ops.profiler's record-function operators (what fx tracers write for
    record_function): both handle forms, nesting, and handles that close nothing."""
    ops = ember.ops.profiler
    with profile() as prof:
        outer = ops._record_function_enter("outer")
        inner = ops._record_function_enter_new("inner", None)
        ember.ones(2).exp()
        ops._record_function_exit(inner)
        ops._record_function_exit._RecordFunction(outer)  # (either overload takes either)
    events = {e.name: e for e in prof.events()}
    assert events["aten::exp"].cpu_parent is events["inner"]
    assert events["inner"].cpu_parent is events["outer"]
    assert outer.dtype == ember.uint8 and outer.shape == (8,)
    with pytest.raises(RuntimeError, match="closed already"):
        ops._record_function_exit(outer)
    with pytest.raises(RuntimeError, match="expects the handle"):
        ops._record_function_exit(ember.zeros(3))
    ops._record_function_exit(ops._record_function_enter("no profiler"))  # closes nothing


def test_table_layout_matches_pytorch(torch):
    import torch.profiler

    def table(lib):
        with lib.profiler.profile(record_shapes=True) as prof:
            with lib.profiler.record_function("model_inference"):
                lib.ones(2, 3).exp().sum()
        return prof.key_averages(group_by_input_shape=True).table(sort_by="cpu_time_total",
                                                                  row_limit=2)

    def layout(text):
        """Everything but the names, numbers and the widths of the name/shape columns."""
        lines = text.splitlines()
        seps = [len(cell) for cell in lines[0].split("  ") if cell][1:-1]
        return (len(lines), lines[0] == lines[2] == lines[-2], lines[1].split(), seps,
                lines[3].split()[0], lines[-1].split(": ")[0], text.endswith("\n"))
    assert layout(table(ember)) == layout(table(torch))
    rows = table(ember).splitlines()[3:5]
    for line in rows:
        cells = line.split()
        assert cells[1].endswith("%") and cells[3].endswith("%")
        assert all(c.endswith(("us", "ms", "s")) for c in (cells[2], cells[4], cells[5]))


def test_table_sorting_row_limit_and_truncation():
    with profile() as prof:
        with record_function("x" * 70):
            ember.ones(3).sum()
    text = prof.key_averages().table(sort_by="cpu_time_total", row_limit=1)
    rows = text.splitlines()
    assert len(rows) == 6
    assert rows[3].strip().startswith("x" * 52 + "...")  # the name column's 55 characters
    assert prof.key_averages().table(row_limit=0).count("\n") == 5


def _inplace_flag_names(lib):
    F, x = lib.nn.functional, lib.randn(4)
    with lib.profiler.profile() as prof:
        F.relu(x, inplace=True)
        lib.nn.ReLU(inplace=True)(x)
        F.leaky_relu(x, 0.1, True)  # the flag given by position
        F.elu(x, inplace=False)
        F.relu(x)
    wanted = {"aten::relu", "aten::relu_", "aten::leaky_relu_", "aten::elu"}
    return sorted((e.key, e.count) for e in prof.key_averages() if e.key in wanted)


def test_inplace_functionals_record_their_inplace_op(torch):
    """F.relu(x, inplace=True) is recorded as aten::relu_, as PyTorch's (the profiler
    recipe's ResNet: nn.ReLU(inplace=True))."""
    import torch.profiler
    assert _inplace_flag_names(ember) == _inplace_flag_names(torch) == [
        ("aten::elu", 1), ("aten::leaky_relu_", 1), ("aten::relu", 1), ("aten::relu_", 2)]


def _cycles(lib, acc):
    if lib is ember:  # the warning shows once a process: let this run see it
        import ember.profiler.profiler as module
        module._warnings_shown.clear()
    got = []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        with lib.profiler.profile(
                schedule=lib.profiler.schedule(wait=1, warmup=1, active=1), acc_events=acc,
                on_trace_ready=lambda p: got.append(sorted(
                    (e.key, e.count) for e in p.key_averages()
                    if e.key in ("aten::exp", "ProfilerStep*")))) as prof:
            for _ in range(7):
                lib.ones(2).exp()
                prof.step()
    return got, [str(w.message).split(".")[0] for w in caught]


def test_acc_events_keeps_every_cycle_and_clearing_warns(torch):
    """acc_events=True: each saved cycle's results hold the earlier cycles' events too;
    without it a second cycle clears them, with PyTorch's warning (the profiler recipe)."""
    import torch.profiler
    for acc in (False, True):
        assert _cycles(ember, acc)[0] == _cycles(torch, acc)[0]
    assert _cycles(ember, True)[0][1] == [("ProfilerStep*", 2), ("aten::exp", 2)]
    assert _cycles(ember, False)[1] == ["Warning: Profiler clears events at the end of each "
                                        "cycle"]


def test_schedule_and_step(torch):
    import torch.profiler
    kwargs = dict(wait=1, warmup=1, active=2, repeat=2, skip_first=1)
    mine, theirs = schedule(**kwargs), torch.profiler.schedule(**kwargs)
    assert [mine(i).name for i in range(14)] == [theirs(i).name for i in range(14)]
    saved = []
    with profile(schedule=schedule(wait=1, warmup=1, active=2),
                 on_trace_ready=lambda p: saved.append(
                     sorted({e.key for e in p.key_averages() if "Step" in e.key}))) as prof:
        for _ in range(5):
            ember.ones(2).exp()
            prof.step()
    assert saved == [["ProfilerStep*"]]
    steps = sorted({e.name for e in prof.events() if "Step" in e.name})
    assert steps == ["ProfilerStep#2", "ProfilerStep#3"]
    assert prof.step_num == 5 and prof.current_action == ProfilerAction.WARMUP


def test_cuda_activity_without_gpu_warns_as_pytorch():
    with pytest.warns(UserWarning, match="CUDA is not available, disabling CUDA profiling"):
        p = profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])
    assert p.activities == {ProfilerActivity.CPU}


def test_chrome_trace(tmp_path):
    with profile() as prof:
        _run()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    ops = [e for e in trace["traceEvents"] if e["ph"] == "X"]
    assert any(e["name"] == "aten::linear" and e["cat"] == "cpu_op" for e in ops)
    assert all(e["dur"] >= 0 and isinstance(e["ts"], float) for e in ops)


def test_ops_are_untouched_outside_a_profile():
    add, exp = ember.add, ember.Tensor.exp
    with profile():
        assert ember.add is not add  # recording wrappers while on
        kept = ember.add
    assert ember.add is add and ember.Tensor.exp is exp
    assert kept(ember.ones(1), 1).tolist() == [2.0]  # a kept wrapper still works, unrecorded
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with record_function("nothing to record into"):
            ember.ones(1)


def test_results_before_stopping_raise():
    prof = profile()
    with pytest.raises(AssertionError, match="Expected profiling results"):
        prof.key_averages()


def test_import_torch_profiler_resolves_to_ember():
    import subprocess
    import sys
    code = ("import ember.compat; ember.compat.install(); import torch;"
            " from torch.profiler import profile, record_function, ProfilerActivity;"
            " p = profile(activities=[ProfilerActivity.CPU]); p.__enter__();"
            " torch.ones(2).exp(); p.__exit__(None, None, None);"
            " print(profile.__module__, 'aten::exp' in p.key_averages().table())")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ember.profiler.profiler", "True"]  # as torch.profiler.profiler


def test_tensorboard_trace_handler_writes_a_trace_per_saved_cycle(tmp_path):
    import gzip
    import os
    from ember.profiler.profiler import tensorboard_trace_handler
    handler = tensorboard_trace_handler(str(tmp_path / "log"), worker_name="w0",
                                        use_gzip=True)
    with profile(schedule=schedule(wait=0, warmup=1, active=1, repeat=2),
                 on_trace_ready=handler) as prof:
        for _ in range(4):
            ember.ones(2).exp()
            prof.step()
    files = sorted(os.listdir(tmp_path / "log"))
    assert len(files) == 2
    assert all(f.startswith("w0.") and f.endswith(".pt.trace.json.gz") for f in files)
    with gzip.open(tmp_path / "log" / files[0], "rt") as f:
        names = {e["name"] for e in json.load(f)["traceEvents"]}
    assert {"aten::exp", "ProfilerStep#1"} <= names
    default = tensorboard_trace_handler(str(tmp_path / "plain"))
    with profile(on_trace_ready=default):
        ember.ones(1)
    (only,) = os.listdir(tmp_path / "plain")
    assert only.endswith(".pt.trace.json") and f"_{os.getpid()}." in only


def test_profiler_attribute_is_the_autograd_profile():
    prof = profile()
    assert prof.profiler is None
    with prof:
        ember.ones(2).exp()
    assert isinstance(prof.profiler, ember.autograd.profiler.profile)
    assert prof.profiler.function_events is prof.events()


def test_profiler_module_is_the_home_of_its_names(torch):
    import torch.profiler.profiler
    from ember.profiler import profiler as module
    for name in ("profile", "schedule", "ProfilerAction", "supported_activities",
                 "tensorboard_trace_handler"):
        assert name in torch.profiler.profiler.__all__
        assert getattr(ember.profiler, name) is getattr(module, name)
    assert module.profile.__module__ == "ember.profiler.profiler"


def test_device_types_and_kineto_as_pytorch_names_them(torch):
    ours, theirs = ember.profiler.DeviceType, torch.profiler.DeviceType
    assert [(n, m.value) for n, m in ours.__members__.items()] == \
        [(n, int(m)) for n, m in theirs.__members__.items()]
    assert repr(ours.CUDA) == repr(theirs.CUDA) and ours(1) is ours.CUDA
    assert ember.profiler.kineto_available() is False  # ember's recorder is not Kineto


def test_execution_trace_records_the_ops_and_their_nesting(tmp_path):
    import gzip
    import json
    path = tmp_path / "trace.json"
    et = ember.profiler.ExecutionTraceObserver().register_callback(str(path))
    assert et.is_registered and not et.is_running()
    assert et.get_output_file_path() == str(path)
    et.start()
    assert et.is_running()
    x = ember.ones(2, 3)
    with ember.profiler.record_function("block"):
        (x + 1).sum()
    et.stop()
    nodes = json.loads(path.read_text())["nodes"]
    by_name = {node["name"]: node for node in nodes}
    assert by_name["aten::add"]["ctrl_deps"] == by_name["block"]["id"]
    assert by_name["aten::add"]["inputs"]["shapes"][0] == [2, 3]
    assert by_name["aten::ones"]["ctrl_deps"] == nodes[0]["id"] == 1
    et.unregister_callback()
    assert not et.is_registered

    packed = tmp_path / "trace.json.gz"
    et = ember.profiler.ExecutionTraceObserver().register_callback(str(packed))
    with ember.profiler.profile(execution_trace_observer=et):
        ember.ones(2).mul(3)
    names = [n["name"] for n in json.loads(gzip.open(packed).read())["nodes"]]
    assert "aten::mul" in names
    assert ember.profiler.ExecutionTraceObserver.get_resources_dir_for_et_path(
        str(path), create_dir=True) == str(tmp_path / "trace_resources")


def test_execution_trace_from_the_environment(monkeypatch):
    monkeypatch.delenv("ENABLE_PYTORCH_EXECUTION_TRACE", raising=False)
    assert ember.profiler.ExecutionTraceObserver.build_execution_trace_obs_from_env() is None
    monkeypatch.setenv("ENABLE_PYTORCH_EXECUTION_TRACE", "1")
    et = ember.profiler.ExecutionTraceObserver.build_execution_trace_obs_from_env()
    assert et.is_registered and et.get_output_file_path().endswith(".et.json")
    os.remove(et.get_output_file_path())
    et.cleanup()


def test_a_record_function_handle_moved_to_a_device_still_closes_its_region(fake_cuda):
    handle = ember.ops.profiler._record_function_enter("moved").to(fake_cuda)
    ember.ops.profiler._record_function_exit(handle)
    with pytest.raises(RuntimeError, match="closed already"):
        ember.ops.profiler._record_function_exit(handle)
