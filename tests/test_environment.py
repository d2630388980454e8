"""The settings around the ops (threads, constants, torch.version, matmul precision,
determinism, default tensor type, typename ...) against PyTorch's answers."""
import math
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


def _error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001
        return type(e), str(e)
    return None


def test_num_threads_sets_the_intra_op_threads():
    before = ember.get_num_threads()
    try:
        ember.set_num_threads(1)
        assert ember.get_num_threads() == 1
        a = ember.randn(64, 64)
        np.testing.assert_allclose((a @ a).numpy(), a.numpy() @ a.numpy(), rtol=1e-5)
        ember.set_num_threads(2)
        assert ember.get_num_threads() == 2
    finally:
        ember.set_num_threads(before)


def test_num_threads_blas_switch_found():
    # NumPy's wheels bundle OpenBLAS: the switch must be found, or the intra-op pool could not
    # take the cores from the BLAS (ember._parallel)
    from ember._parallel import blas
    blas.get()
    assert blas._set is not None


@pytest.mark.parametrize("bad", [0, -1, 1.5, "2"])
def test_num_threads_errors(bad):
    assert _error(lambda: ember.set_num_threads(bad)) == _error(lambda: torch.set_num_threads(bad))
    assert _error(lambda: ember.set_num_interop_threads(bad)) == \
        _error(lambda: torch.set_num_interop_threads(bad))


def test_interop_threads_set_once():
    env = ember._environment._threads
    saved = dict(env)
    try:
        env.update(interop=None, interop_fixed=False)
        ember.set_num_interop_threads(2)
        assert ember.get_num_interop_threads() == 2
        with pytest.raises(RuntimeError, match="cannot set number of interop threads"):
            ember.set_num_interop_threads(3)
    finally:
        env.update(saved)


def test_constants_and_version():
    assert ember.inf == torch.inf and math.isnan(ember.nan)
    assert (ember.pi, ember.e, ember.newaxis) == (torch.pi, torch.e, torch.newaxis)
    assert ember.version.cuda is None and ember.version.hip is None
    assert ember.version.__version__ == ember.__version__
    assert isinstance(ember.version.git_version, str)


def test_float32_matmul_precision():
    fp32 = ember.backends.cuda.cuBLASModule._flags["fp32_precision"]
    try:
        for p in ("high", "medium", "highest"):
            ember.set_float32_matmul_precision(p)
            assert ember.get_float32_matmul_precision() == p
        with pytest.warns(UserWarning, match="is not one of 'highest', 'high', or 'medium'"):
            ember.set_float32_matmul_precision("foo")
        assert ember.get_float32_matmul_precision() == "highest"
        assert _error(lambda: ember.set_float32_matmul_precision(3)) == \
            _error(lambda: torch.set_float32_matmul_precision(3))
    finally:
        ember.set_float32_matmul_precision("highest")
        ember.backends.cuda.cuBLASModule._flags["fp32_precision"] = fp32  # (which that set)


def test_deterministic_flags_follow_pytorch():
    calls = [lambda m: m.use_deterministic_algorithms(True, warn_only=True),
             lambda m: m.use_deterministic_algorithms(False),
             lambda m: m.set_deterministic_debug_mode("error"),
             lambda m: m.set_deterministic_debug_mode("warn"),
             lambda m: m.set_deterministic_debug_mode(0),
             lambda m: m.set_deterministic_debug_mode(2),
             lambda m: m.set_deterministic_debug_mode("x"),
             lambda m: m.set_deterministic_debug_mode(5),
             lambda m: m.set_deterministic_debug_mode(1.0),
             lambda m: m.use_deterministic_algorithms(1),
             lambda m: m.set_deterministic_debug_mode("default")]
    for call in calls:
        assert _error(lambda: call(ember)) == _error(lambda: call(torch))
        for q in ("are_deterministic_algorithms_enabled",
                  "is_deterministic_algorithms_warn_only_enabled",
                  "get_deterministic_debug_mode"):
            assert getattr(ember, q)() == getattr(torch, q)()


def test_warn_always_and_flush_denormal():
    assert not ember.is_warn_always_enabled()
    ember.set_warn_always(True)
    assert ember.is_warn_always_enabled()
    ember.set_warn_always(False)
    assert _error(lambda: ember.set_warn_always(1)) == _error(lambda: torch.set_warn_always(1))
    assert ember.set_flush_denormal(False) is False


def test_typename_and_default_device():
    for make in (lambda m: m.zeros(2), lambda m: m.zeros(2, dtype=m.float64),
                 lambda m: m.zeros(2, dtype=m.long), lambda m: m.zeros(2, dtype=m.bfloat16),
                 lambda m: m.zeros(2, dtype=m.bool), lambda m: m.nn.Linear(1, 1),
                 lambda m: m.float32, lambda m: 3, lambda m: "s", lambda m: None,
                 lambda m: m.nn.Parameter(m.zeros(2)), lambda m: m.nn.Parameter,
                 lambda m: m.nn.Linear, lambda m: len, lambda m: m.zeros(2).to_sparse(),
                 lambda m: m.nn.functional.softmax, lambda m: m.nn.functional.relu):
        assert ember.typename(make(ember)) == torch.typename(make(torch))
    assert ember.get_default_device() == ember.device("cpu")
    try:  # a device type with no index means its current device, found by making a tensor
        for lib in (ember, torch):
            lib.set_default_device("meta")
            assert str(lib.get_default_device()) == "meta"
            lib.set_default_device("cuda")
            with pytest.raises(AssertionError, match="not compiled with CUDA"):
                lib.get_default_device()
    finally:
        ember.set_default_device(None)
        torch.set_default_device(None)


def test_dim_order_ambiguity():
    def run(lib):
        out = []
        for make, check in [(lambda: lib.empty(2, 3, 5, 7).transpose(1, 2), False),
                            (lambda: lib.empty(2, 3, 5, 7, memory_format=lib.channels_last), True),
                            (lambda: lib.empty(1, 2, 3, 4), True),
                            (lambda: lib.empty(1, 2, 3, 4), [lib.contiguous_format, lib.channels_last]),
                            (lambda: lib.empty(2, 1, 1, 4), [lib.contiguous_format, lib.channels_last]),
                            (lambda: lib.empty(1, 2), "ILLEGAL"),
                            (lambda: lib.ones(2, 2).to_sparse(), False)]:
            try:
                out.append(make().dim_order(ambiguity_check=check))
            except (RuntimeError, TypeError, AttributeError) as error:
                out.append(f"{type(error).__name__}: {error}")
        return out
    assert run(ember) == run(torch)
    assert not ember.is_storage(ember.zeros(2)) and not ember.is_storage(3)


def test_set_default_tensor_type():
    ember._state._warned_once.clear()  # (PyTorch's warning is once a process)
    try:
        with pytest.warns(UserWarning, match="set_default_tensor_type\\(\\) is deprecated"):
            ember.set_default_tensor_type(ember.DoubleTensor)
        assert ember.get_default_dtype() is ember.float64
        assert ember.tensor([1.0]).dtype is ember.float64
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ember.set_default_tensor_type("torch.FloatTensor")
            assert ember.get_default_dtype() is ember.float32
            for bad in (lambda m: m.LongTensor, lambda m: m.float64, lambda m: 3):
                assert _error(lambda: ember.set_default_tensor_type(bad(ember))) == \
                    _error(lambda: torch.set_default_tensor_type(bad(torch)))
    finally:
        ember.set_default_dtype(ember.float32)


def test_new_modules_resolve_through_compat():
    import subprocess
    import sys
    import os
    code = ("import ember.compat; ember.compat.install(); import torch, torch.amp, torch.version, "
            "torch.cpu.amp, torch.cuda.amp; from torch.amp import GradScaler, autocast; "
            "import ember; assert torch.amp is ember.amp and torch.cuda.amp is ember.cuda.amp; "
            "assert torch.version.cuda is None and torch.cpu.is_available(); print('OK')")
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, PYTHONPATH=root), timeout=120)
    assert out.stdout.strip() == "OK", out.stderr[-2000:]


def test_get_device_module_as_pytorchs(torch):
    if ember.cuda.is_available():
        pytest.skip("a GPU is present")
    assert ember.get_device_module() is ember.cpu
    assert ember.get_device_module("cpu") is ember.get_device_module(ember.device("cpu"))
    assert ember.get_device_module("cuda:0") is ember.cuda
    for module in (torch, ember):
        with pytest.raises(RuntimeError, match="Device 'xla' does not have a corresponding "
                                               "module registered as 'torch.xla'."):
            module.get_device_module("xla")
        with pytest.raises(RuntimeError, match="Invalid value of device '3', expect"):
            module.get_device_module(3)


def test_init_num_threads_keeps_the_configured_count():
    before = ember.get_num_threads()
    ember.init_num_threads()
    assert ember.get_num_threads() == before


# Each of PyTorch's answers from a fresh process (its TF32 flags refuse some mixes of the legacy
# and new APIs for good, which must not reach the other tests' torch)
_TF32_SEQUENCES = {
    "precision high": ("set_float32_matmul_precision('high')",
                       "backends.cuda.matmul.allow_tf32"),
    "precision medium": ("set_float32_matmul_precision('medium')",
                         "backends.cuda.matmul.allow_tf32, get_float32_matmul_precision()"),
    "precision back to highest": ("set_float32_matmul_precision('high'); "
                                  "set_float32_matmul_precision('highest')",
                                  "backends.cuda.matmul.allow_tf32"),
    "allow_tf32 on": ("backends.cuda.matmul.allow_tf32 = True",
                      "get_float32_matmul_precision(), backends.cuda.matmul.fp32_precision"),
    "allow_tf32 on and off": ("backends.cuda.matmul.allow_tf32 = True; "
                              "backends.cuda.matmul.allow_tf32 = False",
                              "get_float32_matmul_precision(), backends.cuda.matmul.allow_tf32"),
}


@pytest.mark.parametrize("case", sorted(_TF32_SEQUENCES))
def test_tf32_matmul_flag_and_precision_are_one_setting_as_in_pytorch(case):
    import subprocess
    import sys
    steps, read = _TF32_SEQUENCES[case]
    answers = []
    for lib in ("torch", "ember"):
        script = f"import {lib} as m; " + "; ".join(
            ("m." + step.strip()) for step in steps.split(";")) + \
            f"; print(repr(({', '.join('m.' + r.strip() for r in read.split(','))},)))"
        done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                              timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        answers.append(done.stdout.strip())
    assert answers[0] == answers[1], (case, answers)
