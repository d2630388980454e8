"""torch.testing's deprecated assert_allclose against PyTorch: its FutureWarning, its looser
default tolerances (float32 rtol 1e-4), dtype left unchecked, Python numbers accepted."""
import warnings

import pytest

import ember


def _allclose(lib):
    check = lib.testing.assert_allclose
    out = []
    cases = [(lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.0001])),           # within rtol 1e-4
             (lib.tensor([1.0, 2.0]), lib.tensor([1.0, 2.001])),            # beyond it
             (lib.tensor([1.0, 2.0], dtype=lib.float64), [1.0, 2.0000001]),  # a list, float64
             (lib.tensor([1, 2]), lib.tensor([1.0, 2.0])),                  # dtype not checked
             (3.0, 3.0)]
    for actual, expected in cases:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                check(actual, expected)
                out.append("ok")
            except AssertionError as e:
                out.append(str(e).splitlines()[0])
        out.append([(w.category.__name__, str(w.message)[:60]) for w in caught])
    with pytest.raises(AssertionError, match="custom"):
        check(lib.tensor([1.0]), lib.tensor([2.0]), msg="custom")
    return out


def test_assert_allclose_matches_torch(torch):
    import torch.testing  # noqa: F401
    assert _allclose(ember) == _allclose(torch)
