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


MISMATCHES = [
    lambda t: (t.tensor([1., 2., 3.]), t.tensor([1., 2.5, 3.])),  # float32 differences
    lambda t: (t.tensor([1, 2]), t.tensor([1, 3])),  # "not equal!", no tolerances shown
    lambda t: (t.tensor(1.5), t.tensor(1.)),  # 0-dim: "Scalars", both values
    lambda t: (t.tensor([1.5]), t.tensor([1.])),  # one element, still "Tensor-likes"
    lambda t: (t.tensor([[1., 2.], [3., 4.]]), t.tensor([[1., 2.1], [3.3, 4.]])),
    lambda t: (t.tensor([1., float("nan")]), t.tensor([1., 2.])),
    lambda t: (t.tensor([1., 2.]), t.tensor([1., 0.])),
    lambda t: (t.tensor([True, False]), t.tensor([True, True])),
    lambda t: (t.tensor([1., 2.], dtype=t.bfloat16), t.tensor([1., 2.5], dtype=t.bfloat16)),
    lambda t: (t.tensor([1 + 1j, 2j]), t.tensor([1 + 1j, 3j])),
    lambda t: (1.0, 1.5),  # Python floats: double precision's tolerances
    lambda t: (1, 2),
    lambda t: (t.tensor(0.), t.tensor(1.)),
    lambda t: (t.tensor([1, 2], dtype=t.uint8), t.tensor([3, 2], dtype=t.uint8)),
]


@pytest.mark.parametrize("build", MISMATCHES, ids=range(len(MISMATCHES)))
def test_assert_close_message_as_torch(torch, build):
    messages = []
    for lib in (ember, torch):
        with pytest.raises(AssertionError) as info:
            lib.testing.assert_close(*build(lib))
        messages.append(str(info.value))
    assert messages[0] == messages[1]
