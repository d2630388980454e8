"""`torch.compile(module)` wraps the module in an OptimizedModule as PyTorch does (state_dict
keys `_orig_mod.`, attributes read and written through, `training` shared), and the parts of
`torch._dynamo` that programs use around it behave as PyTorch's with an eager backend."""
import pickle

import pytest

import ember


@pytest.fixture(autouse=True)
def _keep_torch_distribution_checks():
    # PyTorch's first torch.compile turns its distributions' argument checks off for the
    # whole process (Distribution.set_default_validate_args(False)): put them back for the
    # tests that compare distributions' errors with PyTorch's
    yield
    torch = __import__("sys").modules.get("torch")
    if torch is not None and hasattr(torch, "distributions"):
        torch.distributions.Distribution.set_default_validate_args(True)


def _pair(lib):
    lib.manual_seed(0)
    model = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Dropout(0.5), lib.nn.Linear(4, 2))
    return model, lib.compile(model)


def test_compiled_module_wraps_the_module_as_pytorchs(torch):
    for lib in (ember, torch):
        model, compiled = _pair(lib)
        assert type(compiled).__name__ == "OptimizedModule" and compiled._orig_mod is model
        assert isinstance(compiled, lib._dynamo.eval_frame.OptimizedModule)
        assert list(compiled.state_dict()) == [f"_orig_mod.{k}" for k in model.state_dict()]
        assert [n for n, _ in compiled.named_parameters()][0] == "_orig_mod.0.weight"
        compiled.eval()
        assert not model.training and not compiled.training
        model.train()
        assert compiled.training
        compiled.note = "kept"  # an attribute set on the wrapper lands on the module
        assert model.note == "kept" and "note" not in compiled.__dict__
        assert len(compiled) == 3
    ours, theirs = _pair(ember)[1], _pair(torch)[1]
    assert repr(ours) == repr(theirs)
    x = ember.randn(5, 3)
    ours.eval()
    assert ember.equal(ours(x), ours._orig_mod(x))


def test_compiled_state_loads_where_pytorchs_does(torch):
    # a checkpoint of a compiled PyTorch model has `_orig_mod.` keys: it loads into ember's
    # compiled model, and (keys stripped, as nanoGPT does) into the plain one
    _, theirs = _pair(torch)
    state = {k: ember.tensor(v.numpy()) for k, v in theirs.state_dict().items()}
    model, compiled = _pair(ember)
    compiled.load_state_dict(state)
    model.load_state_dict({k.removeprefix("_orig_mod."): v for k, v in state.items()})
    with pytest.raises(RuntimeError, match="Missing key"):
        model.load_state_dict(state)


def test_hooks_on_either_side_run():
    model, compiled = _pair(ember)
    seen = []
    model.register_forward_hook(lambda m, i, o: seen.append("model"))
    compiled.register_forward_hook(lambda m, i, o: seen.append("wrapper"))
    compiled(ember.randn(2, 3))
    assert seen == ["model", "wrapper"]


def test_a_compiled_model_pickles_as_its_module(torch, tmp_path):
    model, compiled = _pair(ember)
    back = pickle.loads(pickle.dumps(compiled))
    assert type(back) is type(model) and list(back.state_dict()) == list(model.state_dict())
    ember.save(compiled, tmp_path / "whole.pt")  # PyTorch loads it (as the plain module)
    theirs = torch.load(tmp_path / "whole.pt", weights_only=False)
    assert [k for k in theirs.state_dict()] == list(model.state_dict())


def test_config_takes_known_settings_and_refuses_others(torch):
    config = ember._dynamo.config
    for name in ("suppress_errors", "cache_size_limit", "capture_scalar_outputs",
                 "optimize_ddp", "automatic_dynamic_shapes"):
        assert getattr(config, name) == getattr(torch._dynamo.config, name), name
    config.cache_size_limit = 64
    assert config.cache_size_limit == 64
    config.cache_size_limit = 8
    with pytest.raises(AttributeError, match="torch._dynamo.config.no_such does not exist"):
        config.no_such = 1
    with config.patch(suppress_errors=True):
        assert config.suppress_errors
    assert not config.suppress_errors

    @config.patch("verbose", True)
    def inside():
        return config.verbose
    assert inside() and not config.verbose


def test_inductor_config_as_pytorch_has_it(torch):
    """torch._inductor.config: PyTorch's defaults, groups of settings (`triton.cudagraphs`),
    unknown names refused, patch with dotted names; `import torch._inductor.config` through
    compat (llm.c's train_gpt2.py does it)."""
    import ember._inductor.config as config
    theirs = torch._inductor.config
    for name in config._defaults:
        ours = getattr(config, name)
        if isinstance(config._defaults[name], dict):
            for sub in config._defaults[name]:
                assert getattr(ours, sub) == getattr(getattr(theirs, name), sub), (name, sub)
        else:
            assert ours == getattr(theirs, name), name
    config.coordinate_descent_tuning = True
    config.triton.unique_kernel_names = False
    try:
        for bad in (lambda: setattr(config, "no_such", 1),
                    lambda: setattr(config.triton, "no_such", 1),
                    lambda: config.patch("triton.no_such", 1)):
            with pytest.raises(AttributeError, match="does not exist"):
                bad()
        with config.patch({"triton.cudagraphs": True, "max_autotune": True}):
            assert config.triton.cudagraphs and config.max_autotune
        assert not config.triton.cudagraphs and not config.max_autotune
        copy = config.get_config_copy()
        assert copy["coordinate_descent_tuning"] and not copy["triton"]["unique_kernel_names"]
    finally:
        config.coordinate_descent_tuning = False
        config.triton.unique_kernel_names = True


def test_the_functions_programs_call(torch):
    x = ember.ones(2, 3)
    ember._dynamo.reset()
    ember._dynamo.mark_dynamic(x, 0)
    ember._dynamo.mark_dynamic(x, [0, 1])
    ember._dynamo.mark_static(x, 1)
    with pytest.raises(AssertionError, match="Expected index to be int"):
        ember._dynamo.mark_dynamic(x, "a")
    assert not ember._dynamo.is_compiling()
    assert ember._dynamo.optimize("eager")(lambda a: a + 1)(x).tolist() == [[2.0] * 3] * 2
    assert ember._dynamo.disable(lambda: 3)() == 3
    ember._dynamo.graph_break()
    assert set(ember._dynamo.__all__) <= set(dir(torch._dynamo)) | {"OptimizedModule"}
