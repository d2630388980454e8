"""The autocast state set without the context manager (`torch.set_autocast_enabled` ...),
against PyTorch: the values read back, what the ops then compute in, and the errors."""
import warnings

import pytest

import ember


@pytest.fixture(autouse=True)
def restore(torch):
    """Each test leaves both libraries' autocast state as it found it."""
    saved = [(lib, lib.get_autocast_dtype("cpu"), lib.get_autocast_dtype("cuda"),
              lib.is_autocast_enabled("cpu"), lib.is_autocast_enabled("cuda"),
              lib.is_autocast_cache_enabled()) for lib in (torch, ember)]
    yield
    for lib, cpu_dtype, cuda_dtype, cpu_on, cuda_on, cache in saved:
        lib.set_autocast_dtype("cpu", cpu_dtype)
        lib.set_autocast_dtype("cuda", cuda_dtype)
        lib.set_autocast_enabled("cpu", cpu_on)
        lib.set_autocast_enabled("cuda", cuda_on)
        lib.set_autocast_cache_enabled(cache)


def _both(torch, fn):
    with warnings.catch_warnings(record=True) as ours:
        warnings.simplefilter("always")
        mine = fn(ember)
    with warnings.catch_warnings(record=True) as theirs:
        warnings.simplefilter("always")
        reference = fn(torch)
    assert [w.category for w in ours] == [w.category for w in theirs]
    for a, b in zip(ours, theirs):
        assert str(b.message).startswith(str(a.message))
    return mine, reference


def test_enable_cpu_autocast_by_hand_changes_what_matmul_computes_in(torch):
    def run(lib):
        a = lib.ones(2, 2)
        lib.set_autocast_enabled("cpu", True)
        on = (lib.is_autocast_enabled("cpu"), str((a @ a).dtype))
        lib.set_autocast_dtype("cpu", lib.float16)
        half = str((a @ a).dtype)
        lib.set_autocast_enabled("cpu", False)
        return on, half, lib.is_autocast_enabled("cpu"), str((a @ a).dtype)
    mine, reference = _both(torch, run)
    assert mine == reference == ((True, "torch.bfloat16"), "torch.float16", False,
                                 "torch.float32")


def test_legacy_forms_warn_and_act_on_their_device(torch):
    def run(lib):
        lib.set_autocast_cpu_dtype(lib.float16)
        lib.set_autocast_gpu_dtype(lib.bfloat16)
        lib.set_autocast_cpu_enabled(True)
        out = (str(lib.get_autocast_cpu_dtype()), str(lib.get_autocast_gpu_dtype()),
               lib.is_autocast_cpu_enabled(), str(lib.get_autocast_dtype("cpu")))
        lib.set_autocast_enabled(True)  # one argument: CUDA's
        return out + (lib.is_autocast_enabled(), lib.is_autocast_enabled("cuda"))
    mine, reference = _both(torch, run)
    assert mine == reference


def test_autocast_restores_the_hand_set_dtype_and_cache_flag(torch):
    def run(lib):
        lib.set_autocast_dtype("cpu", lib.float16)
        lib.set_autocast_cache_enabled(False)
        with lib.autocast("cpu", dtype=lib.bfloat16, cache_enabled=True):
            inside = (str(lib.get_autocast_dtype("cpu")), lib.is_autocast_cache_enabled())
        with lib.autocast("cpu"):
            inherited = lib.is_autocast_cache_enabled()
        return inside, inherited, str(lib.get_autocast_dtype("cpu")), \
            lib.is_autocast_cache_enabled(), lib.clear_autocast_cache()
    mine, reference = _both(torch, run)
    assert mine == reference


def test_nesting_counter(torch):
    def run(lib):
        return [lib.autocast_increment_nesting(), lib.autocast_increment_nesting(),
                lib.autocast_decrement_nesting(), lib.autocast_decrement_nesting()]
    mine, reference = _both(torch, run)
    assert mine == reference == [1, 2, 1, 0]


@pytest.mark.parametrize("call", [
    lambda lib: lib.set_autocast_enabled("cpu", 1),
    lambda lib: lib.set_autocast_enabled(1),
    lambda lib: lib.set_autocast_enabled("cpu"),
    lambda lib: lib.set_autocast_enabled("foo", True),
    lambda lib: lib.set_autocast_dtype("cpu", 3),
    lambda lib: lib.set_autocast_dtype("foo", lib.float16),
    lambda lib: lib.set_autocast_cache_enabled(1),
    lambda lib: lib.set_autocast_cpu_enabled(1),
    lambda lib: lib.is_autocast_enabled("foo"),
    lambda lib: lib.get_autocast_dtype("foo"),
])
def test_errors(torch, call):
    with pytest.raises(Exception) as theirs:
        call(torch)
    with pytest.raises(theirs.type) as ours:
        call(ember)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("device_type", ["ipu", "xla"])
def test_ipu_and_xla_legacy_forms_warn_and_keep_their_device_state(torch, device_type):
    def run(lib):
        get_dtype = getattr(lib, f"get_autocast_{device_type}_dtype")
        set_dtype = getattr(lib, f"set_autocast_{device_type}_dtype")
        is_enabled = getattr(lib, f"is_autocast_{device_type}_enabled")
        set_enabled = getattr(lib, f"set_autocast_{device_type}_enabled")
        default, was_on = get_dtype(), is_enabled()
        set_dtype(lib.float32)
        set_enabled(True)
        out = (str(default), was_on, str(get_dtype()), is_enabled(),
               str(lib.get_autocast_dtype(device_type)), lib.is_autocast_enabled(device_type))
        set_enabled(False)
        set_dtype(default)
        errors = []
        for call, arg in ((set_enabled, 1), (set_dtype, 1)):
            with pytest.raises(TypeError) as error:
                call(arg)
            errors.append(str(error.value))
        return out + (is_enabled(), tuple(errors))
    mine, reference = _both(torch, run)
    assert mine == reference


def test_switching_autocast_off_by_hand_lowers_the_ops_flag():
    """The ops (and the fused RNN layer) read `_state.autocast.active` to know whether
    autocast may be on: once every device's autocast is off again it must be back down."""
    from ember import _state
    before = _state.autocast.active
    ember.set_autocast_enabled("cpu", True)
    ember.set_autocast_enabled("cuda", True)
    assert _state.autocast.active == before + 1
    ember.set_autocast_enabled("cpu", False)
    assert _state.autocast.active == before + 1
    ember.set_autocast_enabled("cuda", False)
    assert _state.autocast.active == before
    ember.set_autocast_enabled("cpu", True)
    with ember.autocast("cpu", enabled=False):  # restores 'cpu' on: the hand raise stands
        pass
    assert _state.autocast.active == before + 1
    ember.set_autocast_enabled("cpu", False)
    with ember.autocast("cpu"):
        ember.set_autocast_enabled("cpu", True)
    assert _state.autocast.active == before  # the block's exit switched it off again
