"""torch.cuda's submodules (random, memory, streams, graphs, nvtx, profiler) as modules, and
what they do on a machine without a GPU (the stand-in device plays one for the generators)."""
import importlib

import pytest

import ember


@pytest.mark.parametrize("name", ["random", "memory", "streams", "graphs", "nvtx", "profiler",
                                  "amp.autocast_mode", "amp.grad_scaler", "amp.common"])
def test_every_public_name_of_a_submodule_is_on_the_package_where_torch_has_it(torch, name):
    ours = importlib.import_module(f"ember.cuda.{name}")
    theirs = importlib.import_module(f"torch.cuda.{name}")
    for public in ours.__all__:
        assert hasattr(theirs, public), public
        if hasattr(torch.cuda, public) and callable(getattr(ours, public)):
            assert getattr(ember.cuda, public) is getattr(ours, public), public


def test_generator_state_round_trips_and_seeds(fake_cuda):
    cuda = ember.cuda
    cuda.manual_seed(7)
    assert cuda.initial_seed() == 7
    state = cuda.get_rng_state()
    a = ember.rand(4, device="cuda")
    cuda.set_rng_state(state, "cuda:0")
    assert ember.equal(ember.rand(4, device="cuda").cpu(), a.cpu())
    assert len(cuda.get_rng_state_all()) == cuda.device_count() == 1
    cuda.set_rng_state_all([state])
    assert ember.equal(ember.rand(4, device="cuda").cpu(), a.cpu())
    cuda.manual_seed_all(11)
    assert cuda.initial_seed() == 11
    cuda.seed()
    first = cuda.initial_seed()
    cuda.seed_all()
    assert cuda.initial_seed() != first or cuda.initial_seed() != 11


def test_without_a_gpu_nothing_is_allocated_and_devices_raise_pytorchs_errors(torch):
    if ember.cuda.is_available():
        pytest.skip("a GPU is present")
    assert ember.cuda.memory_allocated() == torch.cuda.memory_allocated() == 0
    assert ember.cuda.memory_reserved() == torch.cuda.memory_reserved() == 0
    assert ember.cuda.is_current_stream_capturing() is False
    ember.cuda.empty_cache()
    with pytest.raises(RuntimeError, match="NVTX functions not installed"):
        ember.cuda.nvtx.range_push("step")
    with pytest.raises(RuntimeError, match="NVTX functions not installed"):
        with ember.cuda.nvtx.range("step {}", 1):
            pass
    for name in ("Stream", "Event", "mem_get_info", "profiler.start", "current_device",
                 "initial_seed"):
        errors = []
        for lib in (ember, torch):
            call = lib.cuda
            for part in name.split("."):
                call = getattr(call, part)
            with pytest.raises(Exception) as caught:
                call()
            errors.append((type(caught.value), str(caught.value)))
        assert errors[0] == errors[1], name
    with pytest.raises(ValueError, match="Expected a cuda device, but got: cpu"):
        ember.cuda.set_device("cpu")
    ember.cuda.set_rng_state(ember.zeros(16, dtype=ember.uint8))  # queued, as PyTorch's
    with pytest.raises(TypeError, match="must be `float`"):
        ember.cuda.set_per_process_memory_fraction(1)
    with pytest.raises(ValueError, match="Allowed range: 0~1"):
        ember.cuda.set_per_process_memory_fraction(1.5)


def test_stream_context_with_none_changes_nothing():
    with ember.cuda.stream(None) as s:
        assert s is None


def test_cuda_graph_names_exist_and_refuse_capture(torch):
    """ember captures no CUDA graphs: CUDAGraph and graph are there for code that names them
    (transformers annotates with them), and making one fails as PyTorch's CPU build does."""
    assert ember.cuda.CUDAGraph is ember.cuda.graphs.CUDAGraph
    assert ember.cuda.graph is ember.cuda.graphs.graph
    cases = [lambda lib: lib.cuda.CUDAGraph(), lambda lib: lib.cuda.graph(None)]
    for make in cases:
        with pytest.raises(RuntimeError) as ours:
            make(ember)
        if not ember.cuda.is_available():
            with pytest.raises(RuntimeError) as theirs:
                make(torch)
            assert str(ours.value) == str(theirs.value)
        else:
            assert "not supported by ember" in str(ours.value)
