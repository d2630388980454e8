"""dtypes and type promotion against PyTorch: promote_types and result_type for every pair,
tensor / 0-dim / Python-scalar combinations through real ops, can_cast, finfo/iinfo, the
default dtype, reprs and aliases."""
import itertools
import math

import numpy as np
import pytest

import ember

NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
         "float64", "complex64", "complex128"]
PAIRS = list(itertools.product(NAMES, NAMES))


@pytest.fixture(autouse=True)
def default_dtype_restored():
    yield
    ember.set_default_dtype(ember.float32)


def test_promote_types_every_pair(torch):
    for a, b in PAIRS:
        e = ember.promote_types(getattr(ember, a), getattr(ember, b))
        t = torch.promote_types(getattr(torch, a), getattr(torch, b))
        assert str(e) == str(t), (a, b)


def test_can_cast_every_pair(torch):
    for a, b in PAIRS:
        e = ember.can_cast(getattr(ember, a), getattr(ember, b))
        t = torch.can_cast(getattr(torch, a), getattr(torch, b))
        assert e == t, (a, b)


COMPLEX32 = "torch.complex32"


def _make(T, name, ndim):
    d = getattr(T, name)
    return T.ones(2, dtype=d) if ndim else T.ones((), dtype=d)


def test_result_type_tensor_pairs(torch):
    for (a, b), (na, nb) in itertools.product(PAIRS, [(1, 1), (1, 0), (0, 1), (0, 0)]):
        t = torch.result_type(_make(torch, a, na), _make(torch, b, nb))
        e = ember.result_type(_make(ember, a, na), _make(ember, b, nb))
        assert str(e) == str(t), (a, na, b, nb)


def test_complex32_promotion():
    assert str(ember.result_type(ember.ones(2, dtype=ember.float16), 1j)) == "torch.complex32"


SCALARS = [True, 2, -3, 2.5, 1 + 2j]


@pytest.mark.parametrize("default", ["float32", "float64", "float16"])
def test_result_type_with_scalars(torch, default):
    ember.set_default_dtype(getattr(ember, default))
    torch.set_default_dtype(getattr(torch, default))
    try:
        for name, nd, s in itertools.product(NAMES, (0, 1), SCALARS):
            t = torch.result_type(_make(torch, name, nd), s)
            e = ember.result_type(_make(ember, name, nd), s)
            assert str(e) == str(t), (name, nd, s)
            e = ember.result_type(s, _make(ember, name, nd))
            t = torch.result_type(s, _make(torch, name, nd))
            assert str(e) == str(t), (s, name, nd)
    finally:
        torch.set_default_dtype(torch.float32)


OPS = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "sub": lambda a, b: a - b,
    "div": lambda a, b: a / b,
    "eq": lambda a, b: a == b,
    "lt": lambda a, b: a < b,
}
ARITH_NAMES = ["bool", "uint8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
               "float64", "complex64"]


@pytest.mark.parametrize("op", list(OPS))
def test_op_result_dtypes(torch, op):
    f = OPS[op]
    for a, b in itertools.product(ARITH_NAMES, ARITH_NAMES):
        for na, nb in ((1, 1), (1, 0), (0, 1)):
            if op == "sub" and "bool" in (a, b):
                continue  # PyTorch refuses bool subtraction (an error test below)
            if op == "lt" and "complex64" in (a, b):
                continue
            if COMPLEX32 == str(torch.result_type(_make(torch, a, na), _make(torch, b, nb))):
                continue
            e = f(_make(ember, a, na), _make(ember, b, nb))
            t = f(_make(torch, a, na), _make(torch, b, nb))
            assert str(e.dtype) == str(t.dtype), (op, a, na, b, nb)
            assert e.shape == tuple(t.shape)


@pytest.mark.parametrize("op", list(OPS))
def test_op_with_python_scalars(torch, op):
    f = OPS[op]
    for name, s in itertools.product(ARITH_NAMES, SCALARS):
        if op == "sub" and (name == "bool" or s is True):
            continue
        if op == "lt" and (name == "complex64" or isinstance(s, complex)):
            continue
        for left in (True, False):
            args_e = (_make(ember, name, 1), s) if left else (s, _make(ember, name, 1))
            args_t = (_make(torch, name, 1), s) if left else (s, _make(torch, name, 1))
            if str(torch.result_type(*args_t)) == COMPLEX32:
                continue
            re, rt = f(*args_e), f(*args_t)
            assert str(re.dtype) == str(rt.dtype), (op, name, s, left)
            assert re.tolist() == pytest.approx(rt.tolist(), rel=1e-2), (op, name, s, left)


def test_small_int_tensor_with_out_of_range_int_wraps(torch):
    for T in (ember, torch):
        t = T.tensor([250, 3], dtype=T.uint8)
        assert (t + -3).tolist() == [247, 0]
        assert (t * 300).tolist() == [248, 132]
        assert (-3 + t).tolist() == [247, 0]
        assert (t == -3).tolist() == [False, False]
        assert (T.tensor([1], dtype=T.int8) + 300).tolist() == [45]
        assert (T.tensor([1], dtype=T.int16) - 40000).tolist() == [25537]


def test_the_traps():
    i = ember.tensor([1, 2])
    assert (i + 2.5).dtype == ember.float32
    assert (i / i).dtype == ember.float32
    assert (i / 2).dtype == ember.float32
    assert (ember.tensor(1.0, dtype=ember.float64) + ember.ones(2)).dtype == ember.float32
    assert (ember.ones(2) == ember.ones(2)).dtype == ember.bool
    assert (i < 1.5).dtype == ember.bool
    assert (ember.tensor([1], dtype=ember.uint8) + ember.tensor([1], dtype=ember.int8)).dtype \
        == ember.int16
    assert (ember.tensor(5, dtype=ember.int64) + ember.tensor([1], dtype=ember.uint8)).dtype \
        == ember.uint8
    assert (ember.tensor([True]) + 1).dtype == ember.int64
    assert (ember.tensor([1], dtype=ember.int32) * 2).dtype == ember.int32
    ember.set_default_dtype(ember.float64)
    assert (i + 2.5).dtype == ember.float64
    assert ember.tensor([1.0]).dtype == ember.float64


def test_bool_subtraction_error(torch):
    for T in (ember, torch):
        with pytest.raises(RuntimeError, match="Subtraction, the `-` operator, with two bool "
                                               "tensors is not supported"):
            T.tensor([True]) - T.tensor([False])


def test_inplace_cast_rules(torch):
    def err(T):
        try:
            T.ones(2, dtype=T.int64).add_(1.5)
        except RuntimeError as exc:
            return str(exc)
    assert err(ember) == err(torch) == "result type Float can't be cast to the desired output " \
                                       "type Long"
    x = ember.ones(2)
    x.add_(ember.ones(2, dtype=ember.float64))
    assert x.dtype == ember.float32


def test_default_dtype(torch):
    assert ember.get_default_dtype() is ember.float32
    ember.set_default_dtype(ember.float64)
    assert ember.get_default_dtype() is ember.float64
    assert ember.ones(1).dtype is ember.float64
    assert ember.tensor(1.5).dtype is ember.float64
    assert ember.tensor(1).dtype is ember.int64
    assert ember.tensor(1j).dtype is ember.complex128
    ember.set_default_dtype(ember.float32)
    assert ember.tensor(1j).dtype is ember.complex64
    for bad in ("int64", "bool", "complex64"):
        def s(T, bad=bad):
            try:
                T.set_default_dtype(getattr(T, bad))
            except Exception as exc:  # noqa: BLE001
                return type(exc).__name__, str(exc)
        assert s(ember) == s(torch)
    ember.set_default_dtype(ember.float16)
    assert ember.ones(1).dtype is ember.float16


def test_finfo_values(torch):
    for name in ("float16", "bfloat16", "float32", "float64"):
        e, t = ember.finfo(getattr(ember, name)), torch.finfo(getattr(torch, name))
        for attr in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution"):
            assert getattr(e, attr) == getattr(t, attr), (name, attr)
        assert e.dtype == t.dtype
        assert repr(e) == repr(t)
    assert ember.finfo().eps == torch.finfo().eps
    assert ember.finfo(ember.complex64).eps == torch.finfo(torch.complex64).eps
    assert ember.finfo(ember.complex128).dtype == torch.finfo(torch.complex128).dtype
    assert math.isclose(ember.finfo(ember.float32).eps, float(np.finfo(np.float32).eps))


def test_iinfo_values(torch):
    for name in ("bool", "uint8", "int8", "int16", "int32", "int64"):
        if name == "bool":
            with pytest.raises(TypeError):
                torch.iinfo(torch.bool)
            continue
        e, t = ember.iinfo(getattr(ember, name)), torch.iinfo(getattr(torch, name))
        for attr in ("bits", "max", "min", "dtype"):
            assert getattr(e, attr) == getattr(t, attr), (name, attr)
        assert repr(e) == repr(t)


def test_info_errors(torch):
    for fn in (lambda T: T.finfo(T.int32), lambda T: T.iinfo(T.float32),
               lambda T: T.iinfo(T.bool)):
        def s(T, fn=fn):
            try:
                fn(T)
            except Exception as exc:  # noqa: BLE001
                return type(exc).__name__, str(exc)
        assert s(torch) is not None
        assert s(ember) == s(torch)


def test_dtype_reprs_and_aliases(torch):
    for name in NAMES:
        assert repr(getattr(ember, name)) == repr(getattr(torch, name))
        assert str(getattr(ember, name)) == str(getattr(torch, name))
    for alias, name in [("short", "int16"), ("int", "int32"), ("long", "int64"),
                        ("half", "float16"), ("float", "float32"), ("double", "float64"),
                        ("cfloat", "complex64"), ("cdouble", "complex128")]:
        assert getattr(ember, alias) is getattr(ember, name)
        assert repr(getattr(ember, alias)) == repr(getattr(torch, alias))


def test_dtype_properties(torch):
    for name in NAMES:
        e, t = getattr(ember, name), getattr(torch, name)
        assert e.is_floating_point == t.is_floating_point, name
        assert e.is_complex == t.is_complex, name
        assert e.is_signed == t.is_signed, name
        assert e.itemsize == t.itemsize, name
        assert str(e.to_real()) == str(t.to_real()), name
        if t.is_floating_point:
            assert str(e.to_complex()) == str(t.to_complex()), name


def test_dtypes_pickle_to_themselves():
    import pickle
    for name in NAMES:
        d = getattr(ember, name)
        assert pickle.loads(pickle.dumps(d)) is d


def test_dtypes_are_hashable_and_compare():
    assert ember.float32 == ember.float
    assert ember.float32 != ember.float64
    assert len({ember.float32, ember.float, ember.float64}) == 2


def _through_pickle(obj):
    import pickle
    return pickle.loads(pickle.dumps(obj))


@pytest.mark.parametrize("make", [
    lambda a: _through_pickle(ember.from_numpy(a)),   # a tensor from a worker or queue
    lambda a: ember.from_numpy(_through_pickle(a)),   # an array that did
    lambda a: ember.as_tensor(_through_pickle(a)),
    lambda a: ember.tensor(_through_pickle(a)),
], ids=["tensor", "from_numpy", "as_tensor", "tensor()"])
def test_pickled_data_keeps_ember_dtype_objects(make):
    # NumPy's dtypes unpickle to equal copies; ops compare ember's by identity, so a batch
    # from a DataLoader worker failed nn.Linear with "double != double"
    for name in ["float64", "float32", "int64", "bool", "complex64"]:
        d = getattr(ember, name)
        x = make(np.ones((4, 3), dtype=d.np))
        assert x.dtype is d
        w = ember.ones(2, 3, dtype=d)
        if d.is_floating_point or d.is_complex:
            assert ember.nn.functional.linear(x, w).dtype is d
        assert (x @ w.T).dtype is d
        assert ember.cat([x, w]).dtype is d
    lin = ember.nn.Linear(3, 2).double()
    assert lin(make(np.ones((4, 3)))).shape == (4, 2)


def test_pickled_metadata_objects_compare_as_pytorch(torch):
    for e, t in [(ember.float64, torch.float64), (ember.device("cpu"), torch.device("cpu")),
                 (ember.strided, torch.strided), (ember.channels_last, torch.channels_last),
                 (ember.Size([2, 3]), torch.Size([2, 3]))]:
        e2, t2 = _through_pickle(e), _through_pickle(t)
        if t2 is t:  # singletons (dtypes, layouts, memory formats) stay themselves
            assert e2 is e, e
        assert e2 == e and type(e2) is type(e) and str(e2) == str(t2)


COMPLEX_UNDER_HALF = {
    "tensor(1j)": lambda lib: lib.tensor(1j),
    "tensor([1, 2j])": lambda lib: lib.tensor([1, 2j]),
    "as_tensor": lambda lib: lib.as_tensor([1j]),
    "ones * 1j": lambda lib: lib.ones(2) * 1j,
    "full": lambda lib: lib.full((1,), 1j),
    "complex of halves": lambda lib: lib.complex(lib.ones(2), lib.arange(2.0)),
    "sgn": lambda lib: lib.tensor([3 + 4j, 0j]).sgn(),
}


@pytest.mark.parametrize("call", COMPLEX_UNDER_HALF)
def test_complex_under_a_half_default(torch, call):
    """Under set_default_dtype(float16) a complex number takes complex32, as in PyTorch, but
    full's fill value takes complex64 (its default complex dtype is float's)."""
    ember.set_default_dtype(ember.float16)
    torch.set_default_dtype(torch.float16)
    try:
        mine, theirs = COMPLEX_UNDER_HALF[call](ember), COMPLEX_UNDER_HALF[call](torch)
    finally:
        torch.set_default_dtype(torch.float32)
    assert str(mine.dtype) == str(theirs.dtype)
    np.testing.assert_array_equal(ember.view_as_real(mine.to(ember.complex64)).numpy(),
                                  torch.view_as_real(theirs.to(torch.complex64)).numpy())


def test_polar_of_halves_is_refused_as_in_pytorch(torch):
    half = ember.ones(2, dtype=ember.half)
    with pytest.raises(NotImplementedError, match="polar_cpu"):
        ember.polar(half, half)
