"""torch.utils.deterministic.fill_uninitialized_memory: under use_deterministic_algorithms,
the memory `empty` and a growing `resize_` leave is filled as PyTorch fills it."""
import numpy as np
import pytest

import ember
import ember.utils.deterministic

_DTYPES = ["float32", "float64", "float16", "bfloat16", "complex64", "int64", "int8", "uint8",
           "bool"]


@pytest.fixture
def deterministic(torch):
    import torch.utils.deterministic  # noqa: F401
    yield
    for lib in (ember, torch):
        lib.use_deterministic_algorithms(False)
        lib.utils.deterministic.fill_uninitialized_memory = True


@pytest.mark.parametrize("dtype", _DTYPES)
def test_empty_is_filled_as_pytorchs(torch, deterministic, dtype):
    for lib in (ember, torch):
        lib.use_deterministic_algorithms(True)
    made = []
    for lib in (ember, torch):
        d = getattr(lib, dtype)
        made.append([lib.empty(3, dtype=d), lib.empty_like(lib.ones(2), dtype=d),
                     lib.empty_strided((2, 2), (1, 2), dtype=d), lib.ones(2).new_empty(3, dtype=d)])
    for ours, theirs in zip(*made):
        np.testing.assert_array_equal(ours.float().numpy() if dtype == "bfloat16" else ours.numpy(),
                                      theirs.float().numpy() if dtype == "bfloat16"
                                      else theirs.numpy())


def test_resize_fills_the_grown_part_and_the_switch_turns_it_off(torch, deterministic):
    for lib in (ember, torch):
        lib.use_deterministic_algorithms(True)
        x = lib.ones(2)
        x.resize_(4)
        assert x[:2].tolist() == [1.0, 1.0] and x[2:].isnan().all()
        lib.utils.deterministic.fill_uninitialized_memory = False
        assert lib.utils.deterministic.fill_uninitialized_memory is False
    with pytest.raises(RuntimeError, match="expected a bool"):
        ember.utils.deterministic.fill_uninitialized_memory = 1
    ember.use_deterministic_algorithms(False)
    assert ember.get_deterministic_debug_mode() == 0


@pytest.mark.parametrize("warn_only", [False, True])
def test_put_without_accumulate_alerts_as_pytorchs(torch, deterministic, warn_only):
    """put_ of repeated indices keeps one of their values: PyTorch has no deterministic
    implementation and says so (an error, or a warning with warn_only); accumulate is fine."""
    import warnings
    messages = []
    for lib in (ember, torch):
        lib.use_deterministic_algorithms(True, warn_only=warn_only)
        x = lib.zeros(4)
        x.put_(lib.tensor([0, 0]), lib.ones(2), accumulate=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                lib.put(x, lib.tensor([1, 2]), lib.ones(2))
                messages.append([str(w.message).split(" (Triggered")[0] for w in caught])
            except RuntimeError as e:
                messages.append(str(e))
        assert x.tolist() == [2.0, 0.0, 0.0, 0.0]
    assert messages[0] == messages[1]
