"""ember.utils.benchmark: Timer runs the statement with its setup and globals and returns
Measurements; Measurement and Compare print as PyTorch's do for the same times (never a
timing value is asserted: the times given to the printers are made up)."""
import re

import numpy as np
import pytest

import ember
from ember.utils import benchmark

# Made-up per-block times (seconds): steady, noisy, and a single block
STEADY = [1.00e-5, 1.01e-5, 0.99e-5, 1.02e-5, 1.00e-5, 0.98e-5]
NOISY = [2.0e-3, 2.9e-3, 1.5e-3, 3.5e-3, 2.2e-3]


def _measurements(lib):
    spec = lib.utils.benchmark.utils.common.TaskSpec
    m = lib.utils.benchmark.Measurement
    rng = np.random.default_rng(1)
    out = []
    for threads in (1, 4):
        for size in ("small", "large"):
            for description, scale in (("add", 1.0), ("mul", 3.3), ("matmul", 120.0)):
                times = [t * scale * (1 + threads) for t in STEADY]
                if size == "large":
                    times = [t * rng.uniform(0.9, 1.6) * 7 for t in times]
                out.append(m(100, times, spec(stmt="x + y", setup="pass", label="binary ops",
                                              sub_label=size, description=description,
                                              num_threads=threads)))
    out.append(m(10, NOISY, spec(stmt="f(x)\ng(x)", setup="import math\nx = 1",
                                 label=None, description="two lines")))
    out.append(m(1, [0.5], spec(stmt="sleep()", setup="x = 1", label="slow", description="nap",
                                num_threads=2)))
    return out


def _without_address(text):
    return re.sub(r"object at 0x[0-9a-f]+", "object at ADDRESS", text)


def test_measurement_printing_matches_torch(torch):
    import torch.utils.benchmark  # noqa: F401
    for ours, theirs in zip(_measurements(ember), _measurements(torch), strict=True):
        assert _without_address(repr(ours)).replace("ember.", "torch.") == \
            _without_address(repr(theirs))
        for name in ("median", "mean", "iqr"):
            assert getattr(ours, name) == pytest.approx(getattr(theirs, name), rel=1e-12)
        assert ours.significant_figures == theirs.significant_figures
        assert ours.has_warnings == theirs.has_warnings
        assert ours.times == theirs.times


def test_env_matches_torch(torch):
    """A measurement without an env has env None (the benchmark recipe prints m.env); a
    Compare mixing it with named envs cannot order its rows, in PyTorch as here."""
    import torch.utils.benchmark  # noqa: F401
    for lib in (ember, torch):
        spec = lib.utils.benchmark.utils.common.TaskSpec
        m = lib.utils.benchmark.Measurement
        plain = m(10, STEADY, spec(stmt="f(x)", setup="pass", label="dot", description="[1]"))
        envs = [m(10, STEADY, spec(stmt="f(x)", setup="pass", label="dot", description="[1]",
                                   env=env)) for env in ("env A", "env B")]
        assert plain.env is None and envs[0].env == "env A"
        assert "(env A)" in str(lib.utils.benchmark.Compare(envs))
        with pytest.raises(TypeError, match="'<' not supported"):
            str(lib.utils.benchmark.Compare([plain] + envs))


@pytest.mark.parametrize("options", [(), ("trim",), ("colorize",), ("rowwise",),
                                     ("trim", "highlight", "colorize")])
def test_compare_table_matches_torch(torch, options):
    import torch.utils.benchmark  # noqa: F401
    tables = []
    for lib in (ember, torch):
        compare = lib.utils.benchmark.Compare(_measurements(lib))
        if "trim" in options:
            compare.trim_significant_figures()
        if "colorize" in options:
            compare.colorize()
        if "rowwise" in options:
            compare.colorize(rowwise=True)
        if "highlight" in options:
            compare.highlight_warnings()
        tables.append(str(compare))
    assert tables[0] == tables[1]


def test_compare_print_and_bad_input(capsys):
    compare = benchmark.Compare(_measurements(ember)[:3])
    compare.print()
    out = capsys.readouterr().out
    assert out.startswith("[") and "binary ops" in out and "Times are in nanoseconds (ns)." in out
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        benchmark.Compare([1.0])


def test_measurement_merge_pools_repeats():
    spec = benchmark.TaskSpec(stmt="a", setup="pass")
    merged = benchmark.Measurement.merge([benchmark.Measurement(2, [4.0, 6.0], spec),
                                          benchmark.Measurement(1, [1.0], spec)])
    assert len(merged) == 1 and merged[0].times == [2.0, 3.0, 1.0]
    assert merged[0].median == 2.0 and merged[0].stmt == "a"


def test_timer_runs_setup_and_globals():
    calls = []
    timer = benchmark.Timer("record(x.sum().item())", setup="x = torch.ones(3)",
                            globals={"record": calls.append}, label="sum",
                            description="ones", num_threads=1)
    m = timer.timeit(7)
    assert isinstance(m, benchmark.Measurement)
    assert m.number_per_run == 7 and len(m.raw_times) == 1
    assert calls[-7:] == [3.0] * 7  # after a warm-up of 2 runs
    assert len(calls) == 9
    assert (m.label, m.description, m.stmt, m.setup) == ("sum", "ones", "record(x.sum().item())",
                                                         "x = torch.ones(3)")
    assert m.median > 0 and m.times == [m.raw_times[0] / 7]


def test_autoranges_return_blocks_and_call_back():
    seen = []
    timer = benchmark.Timer("""
        y = x * 2
        """, setup="x = torch.arange(4.0)", sub_label="mul", num_threads=2)
    before = ember.get_num_threads()
    m = timer.blocked_autorange(callback=lambda n, t: seen.append(n), min_run_time=0.01)
    assert ember.get_num_threads() == before  # the thread count is put back
    assert m.stmt == "y = x * 2" and m.num_threads == 2
    assert len(m.raw_times) == len(seen) >= 1 and set(seen) == {m.number_per_run}
    m = timer.adaptive_autorange(min_run_time=0.001, max_run_time=0.05)
    assert len(m.raw_times) >= 1 and m.number_per_run >= 1
    assert "1 thread" not in repr(m) and "2 threads" in repr(m)


def test_timer_errors():
    with pytest.raises(ValueError, match="only a `str` stmt"):
        benchmark.Timer(lambda: None)
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        benchmark.Timer("pass", global_setup="int x;")
    with pytest.raises(ValueError, match="Invalid language"):
        benchmark.Timer("pass", language="fortran")
    with pytest.raises(NotImplementedError, match="blocked_autorange"):
        benchmark.Timer().autorange()


def test_units_and_sigfigs_match_torch(torch):
    from torch.utils.benchmark.utils import common
    for t in (3e-10, 4.2e-8, 1.5e-5, 0.0123, 2.5, 4000.0):
        assert benchmark.select_unit(t) == common.select_unit(t)
    for x, n in ((123.456, 2), (0.0012345, 3), (98765.4, 1), (1.0, 4)):
        assert benchmark.trim_sigfig(x, n) == common.trim_sigfig(x, n)
