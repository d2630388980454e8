"""Tests of ember._printing: tensor repr parity with PyTorch, plus literal expectations.

The parity tests use PyTorch as the oracle (skipped when it is not installed); tensors are
stand-ins carrying only the attributes `tensor_repr` reads, so these tests do not depend
on the rest of ember.
"""
import os
import sys
from types import SimpleNamespace

import ml_dtypes
import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from ember import _printing  # noqa: E402


class FakeDtype:
    def __init__(self, name):
        self.name = name
        self.is_floating_point = name in ("float16", "bfloat16", "float32", "float64")
        self.is_complex = name.startswith("complex")

    def __str__(self):
        return "torch." + self.name


class FakeDevice:
    def __init__(self, spec="cpu"):
        self.spec = spec
        self.type = spec.split(":")[0]

    def __str__(self):
        return self.spec


class AddBackward0:
    pass


class MulBackward0:
    pass


def dtype_name(a):
    return "bfloat16" if a.dtype == ml_dtypes.bfloat16 else a.dtype.name


def fake(a, device="cpu", requires_grad=False, grad_fn=None):
    return SimpleNamespace(_array=a, dtype=FakeDtype(dtype_name(a)), device=FakeDevice(device),
                           requires_grad=requires_grad or grad_fn is not None,
                           grad_fn=grad_fn, is_leaf=grad_fn is None)


@pytest.fixture(autouse=True)
def default_options(monkeypatch):
    """Every test starts from default print options and a float32 default dtype."""
    monkeypatch.setattr(_printing, "_default_dtype_name", lambda: "torch.float32")
    _printing.set_printoptions(profile="default")
    yield
    _printing.set_printoptions(profile="default")


# ---------------------------------------------------------------------------------------
# Literal expectations (no PyTorch needed)
# ---------------------------------------------------------------------------------------

LITERALS = [
    (np.ones(3), {}, "tensor([1., 1., 1.], dtype=torch.float64)"),
    (np.array([9., 2., 2.], np.float32), {"grad_fn": AddBackward0()},
     "tensor([9., 2., 2.], grad_fn=<AddBackward0>)"),
    (np.zeros((0, 3), np.float32), {}, "tensor([], size=(0, 3))"),
    (np.zeros(0, np.int64), {}, "tensor([], dtype=torch.int64)"),
    (np.zeros(0, np.float32), {}, "tensor([])"),
    (np.array(3., np.float32), {}, "tensor(3.)"),
    (np.array([True, False]), {}, "tensor([ True, False])"),  # bools are padded too
    (np.array([1.5, -2.25], np.float32), {"requires_grad": True},
     "tensor([ 1.5000, -2.2500], requires_grad=True)"),
    (np.array([1., 2.], np.float32), {"device": "cuda:0"},
     "tensor([1., 2.], device='cuda:0')"),
    (np.array([1, 2], np.int32), {"device": "cuda:1"},
     "tensor([1, 2], device='cuda:1', dtype=torch.int32)"),
    (np.array([1e-5, 1.0], np.float32), {}, "tensor([1.0000e-05, 1.0000e+00])"),
    (np.array([np.nan, -np.inf, 0.], np.float32), {}, "tensor([nan, -inf, 0.])"),
    (np.array([1 + 2j, -0.5 - 1j], np.complex64), {}, "tensor([ 1.0000+2.j, -0.5000-1.j])"),
    (np.arange(6, dtype=np.int64).reshape(2, 3), {}, "tensor([[0, 1, 2],\n        [3, 4, 5]])"),
    (np.array([1.5, 2], ml_dtypes.bfloat16), {}, "tensor([1.5000, 2.0000], dtype=torch.bfloat16)"),
]


@pytest.mark.parametrize("array, kw, expected", LITERALS)
def test_literal(array, kw, expected):
    assert _printing.tensor_repr(fake(array, **kw)) == expected


def test_literal_summarised():
    _printing.set_printoptions(threshold=5)
    assert _printing.tensor_repr(fake(np.arange(10))) == "tensor([0, 1, 2,  ..., 7, 8, 9])"


def test_literal_three_dims_blank_line():
    expected = "tensor([[[0, 1]],\n\n        [[2, 3]]])"
    assert _printing.tensor_repr(fake(np.arange(4).reshape(2, 1, 2))) == expected


def test_default_dtype_float64(monkeypatch):
    monkeypatch.setattr(_printing, "_default_dtype_name", lambda: "torch.float64")
    assert _printing.tensor_repr(fake(np.ones(2))) == "tensor([1., 1.])"
    assert (_printing.tensor_repr(fake(np.ones(2, np.float32)))
            == "tensor([1., 1.], dtype=torch.float32)")
    assert _printing.tensor_repr(fake(np.ones(1, np.complex128))) == "tensor([1.+0.j])"


def test_printoptions_state():
    assert _printing.get_printoptions() == {"precision": 4, "threshold": 1000, "edgeitems": 3,
                                            "linewidth": 80, "sci_mode": None}
    _printing.set_printoptions(precision=2, sci_mode=True)
    assert _printing.get_printoptions()["precision"] == 2
    assert _printing.get_printoptions()["sci_mode"] is True
    _printing.set_printoptions(profile="short")
    opts = _printing.get_printoptions()
    assert (opts["precision"], opts["edgeitems"], opts["sci_mode"]) == (2, 2, None)
    _printing.set_printoptions(profile="full")
    assert _printing.get_printoptions()["threshold"] == float("inf")


# ---------------------------------------------------------------------------------------
# Parity with PyTorch
# ---------------------------------------------------------------------------------------

FLOATS = ["float16", "bfloat16", "float32", "float64"]
INTS = ["int8", "uint8", "int16", "int32", "int64"]
SHAPES = [(), (0,), (0, 3), (5,), (3, 4), (2, 3, 4), (2000,), (40, 40), (3, 1000),
          (2, 2, 2, 2), (1, 30)]
SCALES = [1e-5, 1e-3, 1.0, 100.0, 1e4, 1e6]


def np_dtype(name):
    return ml_dtypes.bfloat16 if name == "bfloat16" else np.dtype(name)


def float_cases():
    # float16 overflows to inf at the largest scales; that is a case worth printing too.
    with np.errstate(over="ignore"):
        yield from _float_cases()


def _float_cases():
    rng = np.random.default_rng(0)
    for name in FLOATS:
        for shape in SHAPES:
            for scale in SCALES:
                yield name, (rng.standard_normal(shape) * scale).astype(np_dtype(name))
            yield name, np.round(rng.standard_normal(shape) * 50).astype(np_dtype(name))
        specials = np.array([np.nan, np.inf, -np.inf, -0.0, 0.0, 1.0, 2.5e-3, 123.0])
        for pick in ([0, 1, 2], [3, 4], [3, 5], [0, 5, 7], [0, 6, 7], [1, 6], [4], [0]):
            yield name, specials[pick].astype(np_dtype(name))
        yield name, np.array([1e9, 3.0]).astype(np_dtype(name))         # whole but huge
        yield name, np.array([1.0, 1500.0, 7.0]).astype(np_dtype(name))  # whole, ratio>1000
        yield name, np.array([-1e-4, 0.5]).astype(np_dtype(name))


def int_cases():
    rng = np.random.default_rng(1)
    for name in INTS:
        info = np.iinfo(name)
        for shape in SHAPES:
            yield name, rng.integers(max(info.min, -1000), min(info.max, 1000), shape,
                                     dtype=name)
        yield name, np.array([info.min, info.max], dtype=name)
    for shape in SHAPES:
        yield "bool", rng.integers(0, 2, shape).astype(bool)


def complex_cases():
    rng = np.random.default_rng(2)
    for name in ("complex64", "complex128"):
        for shape in [(), (0,), (5,), (3, 4), (2000,), (2, 3, 4)]:
            for scale in (1e-5, 1.0, 1e6):
                yield name, ((rng.standard_normal(shape) + 1j * rng.standard_normal(shape))
                             * scale).astype(name)
        yield name, np.array([1 + 0j, -0.0 - 2j, complex(np.nan, np.inf), 3j]).astype(name)


# np.asarray: NumPy hands back scalars, not 0-dim arrays, for shape ().
ALL_CASES = [(name, np.asarray(a)) for cases in (float_cases(), int_cases(), complex_cases())
             for name, a in cases]


def to_torch(torch, a):
    if a.dtype == ml_dtypes.bfloat16:
        return torch.from_numpy(a.astype(np.float32)).to(torch.bfloat16)
    return torch.from_numpy(np.array(a, copy=True))


@pytest.fixture
def torch():
    torch = pytest.importorskip("torch")
    torch.set_printoptions(profile="default")
    yield torch
    torch.set_printoptions(profile="default")
    torch.set_default_dtype(torch.float32)


def both_set_printoptions(torch, **kw):
    torch.set_printoptions(**kw)
    _printing.set_printoptions(**kw)


def assert_parity(torch, a, **kw):
    expected = repr(to_torch(torch, a))
    assert _printing.tensor_repr(fake(a, **kw)) == expected


@pytest.mark.parametrize("name, array", ALL_CASES,
                         ids=[f"{n}-{a.shape}-{i}" for i, (n, a) in enumerate(ALL_CASES)])
def test_parity_values(torch, name, array):
    assert_parity(torch, array)


OPTION_SETS = [
    dict(precision=2), dict(precision=7), dict(sci_mode=True), dict(sci_mode=False),
    dict(linewidth=40), dict(linewidth=120), dict(threshold=5), dict(threshold=5, edgeitems=1),
    dict(threshold=5, edgeitems=0), dict(profile="short"), dict(profile="full"),
    dict(precision=1, linewidth=30, threshold=20, edgeitems=2),
]
OPTION_ARRAYS = [
    np.random.default_rng(3).standard_normal((3, 1000)).astype(np.float32),
    np.random.default_rng(4).standard_normal((4, 5, 6)) * 1e-3,
    np.arange(-50, 50, dtype=np.int64).reshape(10, 10),
    np.array([1e-8, 2.0, 0.0], np.float32),
    np.array([0.0, 0.0], np.float32),
    np.array([1.0, 2.0], np.float32),
    np.array(3.5, np.float32),
    (np.random.default_rng(5).standard_normal(12) * (1 + 1j)).astype(np.complex64),
    np.zeros((0, 4), np.float32),
]


@pytest.mark.parametrize("options", OPTION_SETS, ids=[str(o) for o in OPTION_SETS])
@pytest.mark.parametrize("array", OPTION_ARRAYS, ids=range(len(OPTION_ARRAYS)))
def test_parity_printoptions(torch, options, array):
    both_set_printoptions(torch, **options)
    assert _printing.get_printoptions() == torch._tensor_str.get_printoptions()
    assert_parity(torch, array)


SUFFIX_ARRAYS = [np.linspace(-1, 1, n).astype(dt) for n in (4, 5, 6, 7, 8, 9, 12)
                 for dt in (np.float32, np.float64)] + [
    np.linspace(0, 1, 24).reshape(2, 12).astype(np.float64),
    np.zeros((0, 2, 3), np.float64), np.linspace(0, 3, 11).astype(np.float16),
]


@pytest.mark.parametrize("array", SUFFIX_ARRAYS, ids=range(len(SUFFIX_ARRAYS)))
def test_parity_autograd_suffixes(torch, array):
    # Leaf requiring grad, and a non-leaf whose grad_fn is named: both push lines near
    # the 80-column limit so the suffix wrapping rule is exercised.
    leaf = to_torch(torch, array).requires_grad_()
    assert _printing.tensor_repr(fake(array, requires_grad=True)) == repr(leaf)
    expected = repr(leaf * 1)
    assert "grad_fn=<MulBackward0>" in expected
    assert _printing.tensor_repr(fake(array, grad_fn=MulBackward0())) == expected


@pytest.mark.parametrize("n, tail", [(5, ",\n       requires_grad=True)"),
                                     (6, ",\n       dtype=torch.float64, requires_grad=True)")])
def test_suffix_wraps_to_new_line(torch, n, tail):
    # n=5: only the second suffix overflows; n=6: the first one already does.
    a = np.linspace(-1, 1, n)
    expected = repr(to_torch(torch, a).requires_grad_())
    assert expected.endswith(tail)
    assert _printing.tensor_repr(fake(a, requires_grad=True)) == expected


@pytest.mark.parametrize("array", [np.ones(3), np.ones(3, np.float32), np.ones(2, np.complex128),
                                   np.ones(2, np.complex64), np.zeros(0, np.float32),
                                   np.zeros(0, np.float64)], ids=range(6))
def test_parity_default_dtype_float64(torch, monkeypatch, array):
    monkeypatch.setattr(_printing, "_default_dtype_name", lambda: "torch.float64")
    torch.set_default_dtype(torch.float64)
    assert_parity(torch, array)
