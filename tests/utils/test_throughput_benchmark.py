"""torch.utils.throughput_benchmark: calls a module from several threads over the added
inputs, and reports as PyTorch's does (figures are not asserted: the machine is shared)."""
import threading

import pytest

import ember
import ember.utils.throughput_benchmark as tb


def test_benchmark_calls_exactly_warmup_plus_iters_over_the_inputs():
    seen, lock = [], threading.Lock()

    def model(x, *, scale=1):
        with lock:
            seen.append((x.shape[0], scale))
        return x * scale
    bench = tb.ThroughputBenchmark(model)
    bench.add_input(ember.ones(3, 4))
    bench.add_input(ember.ones(2, 4), scale=2)
    assert bench.run_once(ember.ones(1, 4), scale=3).tolist() == [[3.0] * 4]
    seen.clear()
    stats = bench.benchmark(num_calling_threads=2, num_warmup_iters=3, num_iters=20)
    assert len(seen) == 2 * 3 + 20 and {s for s in seen} == {(3, 1), (2, 2)}
    assert stats.num_iters == 20 and stats.latency_avg_ms > 0
    assert stats.total_time_seconds == pytest.approx(20 * stats.latency_avg_ms / 1000 / 2)
    assert stats.iters_per_second == pytest.approx(20 / stats.total_time_seconds)
    lines = str(stats).splitlines()
    assert lines[0].startswith("Average latency per example: ")
    assert lines[1] == "Total number of iterations: 20"
    assert lines[2].startswith("Total number of iterations per second (across all threads): ")


def test_benchmark_needs_inputs_and_the_engine_is_at_the_top_level(torch):
    with pytest.raises(RuntimeError, match="Please provide benchmark inputs"):
        tb.ThroughputBenchmark(ember.nn.Linear(2, 2)).benchmark(num_iters=3)
    engine = ember.ThroughputBenchmark(ember.nn.Linear(2, 2))
    engine.add_input(ember.ones(1, 2))
    config = ember.BenchmarkConfig()
    theirs = torch.BenchmarkConfig()
    for field in ("num_calling_threads", "num_warmup_iters", "num_iters",
                  "num_worker_threads", "profiler_output_path"):
        assert getattr(config, field) == getattr(theirs, field)
    config.num_iters = 5
    stats = engine.benchmark(config)
    assert isinstance(stats, ember.BenchmarkExecutionStats) and stats.num_iters == 5


@pytest.mark.parametrize("kwargs", [dict(time_us=1500), dict(time_ms=1500), dict(time_s=0.5),
                                    dict(time_us=12.5), dict(time_s=3)])
def test_format_time_matches_pytorch(torch, kwargs):
    import torch.utils.throughput_benchmark as theirs
    assert tb.format_time(**kwargs) == theirs.format_time(**kwargs)
