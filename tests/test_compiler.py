"""ember.compiler: torch.compiler's names with eager semantics: functions run as written
under every marker, settings are checked and remembered, wrap_numpy converts both ways."""
import numpy as np
import pytest

import ember
from ember import compiler


def _add_one(x):
    return x + 1


def test_public_names_match_torch(torch):
    import torch.compiler
    missing = set(torch.compiler.__all__) - set(compiler.__all__)
    assert missing == {"config", "load_compiled_function"}  # documented as absent
    for name in compiler.__all__:
        assert callable(getattr(compiler, name)), name


def test_compile_runs_eagerly():
    model = ember.nn.Linear(2, 2)
    assert compiler.compile(model)._orig_mod is model  # wrapped as PyTorch wraps it
    assert compiler.compile(model, disable=True) is model
    assert compiler.compile(backend="eager")(_add_one) is _add_one
    assert not compiler.is_compiling() and not compiler.is_dynamo_compiling()
    assert not compiler.is_exporting()
    compiler.reset()
    compiler.cudagraph_mark_step_begin()
    assert compiler.save_cache_artifacts() is None
    assert compiler.load_cache_artifacts(b"") is None


def test_markers_keep_behaviour():
    disabled = compiler.disable(_add_one, reason="data-dependent")
    assert disabled(1) == 2 and disabled.__wrapped__ is _add_one
    assert compiler.disable()(_add_one)(1) == 2
    with compiler.disable():
        pass
    assert compiler.allow_in_graph(_add_one) is _add_one
    assert compiler.assume_constant_result(_add_one) is _add_one
    assert compiler.nested_compile_region(_add_one) is _add_one
    assert compiler.nested_compile_region()(_add_one) is _add_one


def test_substitute_in_graph_checks_the_signature():
    def plus_one(x):
        return x + 1.0
    stand_in = compiler.substitute_in_graph(_add_one)(plus_one)
    assert stand_in(1) == 2.0 and stand_in.__name__ == "plus_one"
    with pytest.raises(TypeError, match=r"Signature mismatch .*: \(x\) != \(y, z\)"):
        compiler.substitute_in_graph(_add_one)(lambda y, z: 0)
    assert compiler.substitute_in_graph(_add_one, skip_signature_check=True)(
        lambda y, z=0: y)(5) == 5


def test_backends_and_settings(torch):
    import torch.compiler
    assert set(compiler.list_backends()) <= set(torch.compiler.list_backends())
    assert "eager" in compiler.list_backends(exclude_tags=())
    assert "eager" not in compiler.list_backends()
    assert compiler.get_default_backend() == torch.compiler.get_default_backend() == "inductor"
    compiler.set_default_backend("eager")
    assert compiler.get_default_backend() == "eager"
    compiler.set_default_backend(None)
    assert compiler.get_default_backend() == "inductor"
    assert compiler.set_enable_guard_collectives(True) is False
    assert compiler.set_enable_guard_collectives(False) is True


def test_set_stance_as_call_context_and_decorator():
    with compiler.set_stance("force_eager"):
        assert compiler._get_stance() == "force_eager"
    assert compiler._get_stance() == "default"

    @compiler.set_stance("eager_on_recompile")
    def inside():
        return compiler._get_stance()
    assert compiler._get_stance() == "default"
    assert inside() == "eager_on_recompile"
    compiler.set_stance("fail_on_recompile")
    assert compiler._get_stance() == "fail_on_recompile"
    compiler.set_stance()
    assert compiler._get_stance() == "default"
    with pytest.raises(RuntimeError, match="invalid torch.compile stance 'sideways'"):
        compiler.set_stance("sideways")


def test_wrap_numpy_converts_both_ways(torch):
    def numpy_fn(a, scale=None):
        assert isinstance(a, np.ndarray)
        return {"out": a * scale[0], "n": a.size}
    result = compiler.wrap_numpy(numpy_fn)(ember.arange(3.0), scale=[2])
    assert isinstance(result["out"], ember.Tensor) and result["out"].tolist() == [0.0, 2.0, 4.0]
    assert result["n"] == 3
    theirs = torch.compiler.wrap_numpy(numpy_fn)(torch.arange(3.0), scale=[2])
    assert theirs["out"].dtype.__repr__() == repr(result["out"].dtype).replace("ember", "torch")


def test_guard_filters():
    class Entry:
        def __init__(self, guard_type, is_global, value=None):
            self.guard_type, self.is_global, self.value = guard_type, is_global, value
    entries = [Entry("TENSOR_MATCH", False, ember.ones(1)),
               Entry("TENSOR_MATCH", True, ember.nn.Parameter(ember.ones(1))),
               Entry("GLOBAL_STATE", True), Entry("ID_MATCH", False)]
    assert compiler.keep_portable_guards_unsafe(entries) == [True, False, True, False]
    assert compiler.keep_tensor_guards_unsafe(entries) == [True, False, False, False]
    assert compiler.keep_tensor_guards_unsafe(entries, True) == [True, True, False, False]
    assert compiler.skip_guard_on_globals_unsafe(entries) == [True, False, False, True]
    assert compiler.skip_all_guards_unsafe(entries) == [False] * 4
