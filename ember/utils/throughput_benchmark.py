"""`torch.utils.throughput_benchmark`: how many calls per second a module (or function) serves
when several threads call it at once, the way a server would, over inputs added beforehand.
`torch.ThroughputBenchmark`, `torch.BenchmarkConfig` and `torch.BenchmarkExecutionStats` are
the engine below the Python `ThroughputBenchmark`."""
import itertools
import threading
import time

__all__ = ["BenchmarkConfig", "BenchmarkExecutionStats", "ExecutionStats",
           "ThroughputBenchmark", "format_time"]


def format_time(time_us=None, time_ms=None, time_s=None):
    """A duration given in one unit, written in the largest unit it reaches (us, ms or s)."""
    if [time_us, time_ms, time_s].count(None) != 2:
        raise AssertionError("Expected exactly one of time_us, time_ms, time_s")
    us = time_us if time_us is not None else (time_ms * 1e3 if time_ms is not None
                                              else time_s * 1e6)
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"


class BenchmarkConfig:
    """How to run: threads calling at once, warm-up calls per thread, measured calls in all,
    and (unused by ember, kept as PyTorch's) worker threads and a profiler output path."""

    def __init__(self):
        self.num_calling_threads = 1
        self.num_warmup_iters = 1
        self.num_iters = 100
        self.num_worker_threads = 1
        self.profiler_output_path = ""


class BenchmarkExecutionStats:
    """The measured average latency of one call, and how many calls were measured."""

    def __init__(self, latency_avg_ms, num_iters):
        self.latency_avg_ms = latency_avg_ms
        self.num_iters = num_iters


class _Engine:
    """`torch.ThroughputBenchmark`: calls `module(*args, **kwargs)` over the added inputs
    from several threads (each thread goes round the inputs)."""

    def __init__(self, module):
        self._module = module
        self._inputs = []

    def add_input(self, *args, **kwargs):
        self._inputs.append((args, kwargs))

    def run_once(self, *args, **kwargs):
        return self._module(*args, **kwargs)

    def benchmark(self, config):
        if not self._inputs:
            raise RuntimeError("Please provide benchmark inputs.Did you forget to call "
                               "add_input()? ")
        threads = max(1, config.num_calling_threads)
        remaining = itertools.count()   # one shared ticket counter: num_iters calls in all
        start_line = threading.Barrier(threads + 1)

        def serve(index):
            for k in range(config.num_warmup_iters):
                args, kwargs = self._inputs[(index + k) % len(self._inputs)]
                self._module(*args, **kwargs)
            start_line.wait()
            while (ticket := next(remaining)) < config.num_iters:
                args, kwargs = self._inputs[ticket % len(self._inputs)]
                self._module(*args, **kwargs)
        workers = [threading.Thread(target=serve, args=(i,)) for i in range(threads)]
        for worker in workers:
            worker.start()
        start_line.wait()
        began = time.perf_counter()
        for worker in workers:
            worker.join()
        wall_ms = (time.perf_counter() - began) * 1e3
        # each thread serves num_iters / threads calls in the wall time
        latency = wall_ms * threads / config.num_iters if config.num_iters else 0.0
        return BenchmarkExecutionStats(latency, config.num_iters)


_Engine.__name__ = _Engine.__qualname__ = "ThroughputBenchmark"  # torch.ThroughputBenchmark


class ExecutionStats:
    """A benchmark's figures: average latency, calls, calls per second, total time."""

    def __init__(self, c_stats, benchmark_config):
        self._c_stats = c_stats
        self.benchmark_config = benchmark_config

    @property
    def latency_avg_ms(self):
        return self._c_stats.latency_avg_ms

    @property
    def num_iters(self):
        return self._c_stats.num_iters

    @property
    def iters_per_second(self):
        """Calls per second across all calling threads."""
        return self.num_iters / self.total_time_seconds

    @property
    def total_time_seconds(self):
        return (self.num_iters * (self.latency_avg_ms / 1000.0)
                / self.benchmark_config.num_calling_threads)

    def __str__(self):
        return "\n".join([
            "Average latency per example: " + format_time(time_ms=self.latency_avg_ms),
            f"Total number of iterations: {self.num_iters}",
            f"Total number of iterations per second (across all threads): "
            f"{self.iters_per_second:.2f}",
            "Total time: " + format_time(time_s=self.total_time_seconds)])


class ThroughputBenchmark:
    """Benchmark `module` (an nn.Module or any callable) as a multi-threaded server would
    run it: add inputs with `add_input`, then `benchmark(...)` returns ExecutionStats."""

    def __init__(self, module):
        self._benchmark = _Engine(module)

    def run_once(self, *args, **kwargs):
        return self._benchmark.run_once(*args, **kwargs)

    def add_input(self, *args, **kwargs):
        self._benchmark.add_input(*args, **kwargs)

    def benchmark(self, num_calling_threads=1, num_warmup_iters=10, num_iters=100,
                  profiler_output_path=""):
        config = BenchmarkConfig()
        config.num_calling_threads = num_calling_threads
        config.num_warmup_iters = num_warmup_iters
        config.num_iters = num_iters
        config.profiler_output_path = profiler_output_path
        return ExecutionStats(self._benchmark.benchmark(config), config)
