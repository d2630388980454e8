"""torch.cuda.memory's statistics: on the machine without a GPU, PyTorch's CPU build's answers;
on the CuPy-like stand-in, peaks and totals kept by ember's hook as the pool allocates."""
import warnings

import pytest

import ember
from ember import _allocator
from tests._strict_cupy import REAL_CUDA

cuda = ember.cuda
_NO_GPU = pytest.mark.skipif(cuda.is_available(), reason="a GPU is present")


@_NO_GPU
def test_without_a_gpu_the_statistics_answer_as_pytorchs_cpu_build(torch):
    for name in ("memory_stats", "memory_stats_as_nested_dict", "host_memory_stats",
                 "host_memory_stats_as_nested_dict", "max_memory_allocated",
                 "max_memory_reserved", "list_gpu_processes"):
        assert getattr(cuda, name)() == getattr(torch.cuda, name)(), name
        assert getattr(cuda.memory, name) is getattr(cuda, name)
    assert type(cuda.memory_stats()) is type(torch.cuda.memory_stats())
    for name in ("reset_peak_memory_stats", "reset_accumulated_memory_stats",
                 "reset_accumulated_host_memory_stats", "reset_peak_host_memory_stats",
                 "memory_snapshot"):
        with pytest.raises(AttributeError) as theirs:
            getattr(torch.cuda, name)()
        with pytest.raises(AttributeError, match=str(theirs.value)):
            getattr(cuda, name)()
    with pytest.raises(KeyError, match="allocated_bytes.all.current"):
        torch.cuda.memory_summary()
    with pytest.raises(KeyError, match="allocated_bytes.all.current"):
        cuda.memory_summary()
    for name in ("memory_usage", "utilization", "temperature", "power_draw", "clock_rate",
                 "device_memory_used"):
        with pytest.raises(ModuleNotFoundError, match="nvidia-ml-py does not seem"):
            getattr(cuda, name)()


@_NO_GPU
@pytest.mark.parametrize("name, renamed", [("memory_cached", "memory_reserved"),
                                           ("max_memory_cached", "max_memory_reserved")])
def test_renamed_functions_warn_as_pytorchs(torch, name, renamed):
    with pytest.warns(FutureWarning) as theirs:
        expected = getattr(torch.cuda, name)()
    with pytest.warns(FutureWarning, match=str(theirs[0].message)):
        assert getattr(cuda, name)() == expected == 0


@pytest.mark.skipif(REAL_CUDA, reason="the stand-in's own figures and pool")
def test_peaks_and_totals_follow_the_pools_allocations(cupy_like):
    pool = cupy_like.get_default_memory_pool()
    a = pool.malloc(1000)       # 1024 bytes, a new segment
    b = pool.malloc(3 << 20)    # a large block
    assert cuda.memory_allocated() == 1024 + (3 << 20)
    pool.free(b)
    assert cuda.memory_allocated() == 1024
    assert cuda.max_memory_allocated() == 1024 + (3 << 20)
    assert cuda.memory_reserved() == cuda.max_memory_reserved() == 1024 + (3 << 20)
    stats = cuda.memory_stats()
    assert list(stats) == sorted(stats)
    assert stats["allocation.all.allocated"] == 2 and stats["allocation.all.freed"] == 1
    assert stats["allocated_bytes.small_pool.current"] == 1024
    assert stats["allocated_bytes.large_pool.peak"] == 3 << 20
    assert stats["requested_bytes.all.peak"] == 1000 + (3 << 20)
    assert stats["segment.all.current"] == 2 and stats["num_device_alloc"] == 2
    nested = cuda.memory_stats_as_nested_dict()
    assert nested["allocated_bytes"]["all"]["peak"] == stats["allocated_bytes.all.peak"]

    cuda.reset_peak_memory_stats()
    assert cuda.max_memory_allocated() == 1024
    c = pool.malloc(3 << 20)    # the cached block is reused: no new segment
    assert cuda.memory_stats()["num_device_alloc"] == 2
    assert cuda.max_memory_allocated() == 1024 + (3 << 20)
    pool.free(c)
    with pytest.warns(FutureWarning, match="resets /all/ peak memory stats"):
        cuda.reset_max_memory_allocated()
    assert cuda.max_memory_allocated() == 1024

    cuda.empty_cache()          # the cached 3 MiB segment goes back to the driver
    stats = cuda.memory_stats()
    assert stats["reserved_bytes.all.current"] == cuda.memory_reserved() == 1024
    assert stats["reserved_bytes.all.freed"] == 3 << 20
    cuda.reset_accumulated_memory_stats()
    stats = cuda.memory_stats()
    assert stats["allocated_bytes.all.allocated"] == stats["allocated_bytes.all.freed"] == 0
    assert stats["allocated_bytes.all.current"] == 1024
    pool.free(a)


@pytest.mark.skipif(REAL_CUDA, reason="the stand-in's own figures and pool")
def test_a_free_no_hook_saw_does_not_leave_the_figures_high(cupy_like):
    pool = cupy_like.get_default_memory_pool()
    a = pool.malloc(2048)
    hooks = cupy_like.cuda.memory_hook.get_memory_hooks()
    hook = hooks.pop(_allocator.cuda_memory_stats.name)  # as a free on another thread
    pool.free(a)
    hooks[hook.name] = hook
    assert cuda.memory_stats()["allocated_bytes.all.current"] == 0


@pytest.mark.skipif(REAL_CUDA, reason="the stand-in's own figures and pool")
def test_summary_is_pytorchs_table(cupy_like):
    pool = cupy_like.get_default_memory_pool()
    block = pool.malloc(2 << 20)
    summary = cuda.memory_summary()
    lines = summary.splitlines()
    assert "PyTorch CUDA memory summary, device ID 0" in lines[1]
    assert all(len(line) == 77 for line in lines), summary
    assert "| Allocated memory      |   2048 KiB |   2048 KiB |   2048 KiB |      0 B   |" \
        in summary
    assert len(cuda.memory_summary(abbreviated=True).splitlines()) < len(lines)
    pool.free(block)


def test_host_statistics_are_empty_and_snapshots_say_why_not(cupy_like):
    assert cuda.host_memory_stats() == {} and cuda.host_memory_stats_as_nested_dict() == {}
    cuda.reset_peak_host_memory_stats()
    cuda.reset_accumulated_host_memory_stats()
    with pytest.raises(RuntimeError, match="does not expose its segments"):
        cuda.memory_snapshot()


def test_an_out_of_memory_is_counted():
    stats = _allocator.CudaMemoryStats()
    stats.malloc_postprocess(device_id=0, size=10, mem_size=512, mem_ptr=0, pmem_id=0)
    assert stats.device(0).as_flat_dict()["num_ooms"] == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        stats.device(0).reset_accumulated()
    assert stats.device(0).as_flat_dict()["num_ooms"] == 0
