"""PyTorch's barebones dtypes (uint16/32/64, float8, float4_e2m1fn_x2, complex32, bits*,
int1..7, uint1..7) against PyTorch: the dtype objects, promotion, finfo/iinfo, creation and
conversion, printing, the ops that take them or refuse them, and checkpoints both ways."""
import io
import itertools
import pickle
import warnings

import numpy as np
import pytest

import ember
from ember import dtypes as _dt

NEW = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
       "float8_e5m2fnuz", "float8_e8m0fnu", "float4_e2m1fn_x2", "complex32", "bits1x8",
       "bits2x4", "bits4x2", "bits8", "bits16"] + [f"int{n}" for n in range(1, 8)] + \
      [f"uint{n}" for n in range(1, 8)]
OLD = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
       "float64", "complex64", "complex128"]
VALUED = ["uint16", "uint32", "uint64", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
          "float8_e5m2fnuz", "float8_e8m0fnu", "complex32"]  # tensors of them hold numbers
OPAQUE = [n for n in NEW if n not in VALUED]


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():  # PyTorch warns that complex32 is experimental
        warnings.simplefilter("ignore")
        yield


def _outcome(f):
    """What f() gives, or its exception's type and message (PyTorch's internal asserts are
    compared by type only: ember words those as an unsupported promotion)."""
    try:
        return ("ok", f())
    except Exception as e:
        msg = str(e)
        return (type(e).__name__, "" if "INTERNAL ASSERT" in msg else msg)


def _same(e, t):
    return e[0] == t[0] and (e[1] == t[1] or "" in (e[1], t[1]) or e[0] == "ok")


@pytest.mark.parametrize("name", NEW + ["chalf"])
def test_dtype_objects(torch, name):
    e, t = getattr(ember, name), getattr(torch, name)
    assert str(e) == str(t) and repr(e) == repr(t)
    for attr in ("itemsize", "is_floating_point", "is_complex", "is_signed"):
        assert _outcome(lambda: getattr(e, attr)) == _outcome(lambda: getattr(t, attr)), attr
    for method in ("to_real", "to_complex"):
        eo, to = _outcome(lambda: str(getattr(e, method)())), \
            _outcome(lambda: str(getattr(t, method)()))
        assert eo == to, method
    assert pickle.loads(pickle.dumps(e)) is e
    assert ember.empty(2, 3, dtype=e).element_size() == t.itemsize


def test_float16_complex_is_complex32(torch):
    assert str(ember.float16.to_complex()) == str(torch.float16.to_complex()) == "torch.complex32"


def test_promote_types_every_pair_with_a_new_dtype(torch):
    for a, b in itertools.product(NEW + OLD, NEW):
        for x, y in ((a, b), (b, a)):
            e = _outcome(lambda: str(ember.promote_types(getattr(ember, x), getattr(ember, y))))
            t = _outcome(lambda: str(torch.promote_types(getattr(torch, x), getattr(torch, y))))
            assert _same(e, t) and (e[0] != "ok" or e == t), (x, y, e, t)


def test_can_cast_every_pair_with_a_new_dtype(torch):
    for a, b in itertools.product(NEW + OLD, NEW):
        for x, y in ((a, b), (b, a)):
            assert ember.can_cast(getattr(ember, x), getattr(ember, y)) == \
                torch.can_cast(getattr(torch, x), getattr(torch, y)), (x, y)


@pytest.mark.parametrize("name", NEW)
def test_finfo_and_iinfo(torch, name):
    e, t = getattr(ember, name), getattr(torch, name)
    for info in ("finfo", "iinfo"):
        eo, to = _outcome(lambda: getattr(ember, info)(e)), _outcome(lambda: getattr(torch, info)(t))
        assert eo[0] == to[0] and (eo[0] == "ok" or eo[1] == to[1]), (info, eo, to)
        if eo[0] != "ok":
            continue
        attrs = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                 "dtype") if info == "finfo" else ("bits", "max", "min", "dtype")
        for attr in attrs:
            assert _outcome(lambda: getattr(eo[1], attr)) == \
                _outcome(lambda: getattr(to[1], attr)), (info, attr)
        assert _outcome(lambda: repr(eo[1])) == _outcome(lambda: repr(to[1]))


def _make(T, name, values):
    return T.tensor(values).to(getattr(T, name))


EDGES = [0.0, 1.5, -2.25, 300.0, 500.0, -1e9, 1e-5, 0.0019, float("inf"), float("nan")]


@pytest.mark.parametrize("name", [n for n in VALUED if n.startswith("float8")])
def test_float8_conversions_round_as_pytorch(torch, name):
    e, t = _make(ember, name, EDGES), _make(torch, name, EDGES)
    assert e.view(ember.uint8).tolist() == t.view(torch.uint8).tolist()
    assert np.allclose(e.float().numpy(), t.float().numpy(), equal_nan=True)
    ints = [500, 3, -7, 1000000]
    assert ember.tensor(ints).to(getattr(ember, name)).view(ember.uint8).tolist() == \
        torch.tensor(ints).to(getattr(torch, name)).view(torch.uint8).tolist()


@pytest.mark.parametrize("name", VALUED)
def test_creation_conversion_and_printing(torch, name):
    values = [[1, 2, 3], [4, 5, 6]]
    for T_call in (lambda T: T.tensor(values, dtype=getattr(T, name)),
                   lambda T: T.zeros(2, 3, dtype=getattr(T, name)),
                   lambda T: T.ones(2, dtype=getattr(T, name)),
                   lambda T: T.full((2,), 2.5, dtype=getattr(T, name)),
                   lambda T: T.tensor([[1.5, 2.0], [0.25, 7.0]]).to(getattr(T, name)),
                   lambda T: T.tensor(values).to(getattr(T, name)).to(T.float32),
                   lambda T: T.tensor(values).to(getattr(T, name)).to(T.int64),
                   lambda T: T.tensor(values).to(getattr(T, name)).clone().t().contiguous(),
                   lambda T: T.cat([T.tensor(values).to(getattr(T, name))] * 2)):
        e, t = _outcome(lambda: T_call(ember)), _outcome(lambda: T_call(torch))
        assert e[0] == t[0], (e, t)
        if e[0] == "ok":
            assert repr(e[1]) == repr(t[1])
            assert e[1].tolist() == t[1].tolist()
            assert str(e[1].dtype) == str(t[1].dtype)
        else:
            assert e[1] == t[1]
    e, t = ember.tensor(values).to(getattr(ember, name)), torch.tensor(values).to(getattr(torch, name))
    assert e[1, 2].item() == t[1, 2].item()
    assert _outcome(lambda: e.numpy().tolist()) == _outcome(lambda: t.numpy().tolist())
    assert e.type() == t.type()


@pytest.mark.parametrize("name", OPAQUE)
def test_opaque_dtypes_hold_bytes_only(torch, name):
    def made(T):
        d = getattr(T, name)
        return T.tensor([[1, 2], [3, 4]], dtype=T.uint8 if d.itemsize == 1 else T.int16).view(d)
    for f in (lambda T: made(T).view(T.uint8 if getattr(T, name).itemsize == 1 else T.int16),
              lambda T: made(T).t().contiguous().view(T.uint8 if getattr(T, name).itemsize == 1
                                                      else T.int16),
              lambda T: repr(made(T)), lambda T: made(T).tolist(), lambda T: made(T)[0, 0].item(),
              lambda T: made(T).to(T.float32), lambda T: made(T).to(T.int64),
              lambda T: T.tensor([1, 2], dtype=getattr(T, name)),
              lambda T: T.ones(2, dtype=getattr(T, name)),
              lambda T: T.zeros(2, dtype=getattr(T, name)).shape,
              lambda T: made(T).numpy(), lambda T: made(T) + made(T), lambda T: made(T) * 2,
              lambda T: made(T) == made(T)):
        e, t = _outcome(lambda: f(ember)), _outcome(lambda: f(torch))
        assert e[0] == t[0], (e, t)
        if e[0] == "ok" and hasattr(e[1], "tolist"):
            assert e[1].tolist() == t[1].tolist()
        elif e[0] != "ok":
            assert e[1] == t[1]


BINARY = {"add": lambda a, b: a + b, "sub": lambda a, b: a - b, "mul": lambda a, b: a * b,
          "div": lambda a, b: a / b, "floordiv": lambda a, b: a // b,
          "rem": lambda a, b: a % b, "pow": lambda a, b: a ** b, "eq": lambda a, b: a == b,
          "ne": lambda a, b: a != b, "lt": lambda a, b: a < b, "ge": lambda a, b: a >= b,
          "and": lambda a, b: a & b, "xor": lambda a, b: a ^ b}


@pytest.mark.parametrize("name", VALUED + ["float4_e2m1fn_x2", "bits8"])
def test_binary_ops_take_or_refuse_as_pytorch(torch, name):
    def made(T, values):
        d = getattr(T, name)
        if name in OPAQUE:
            return T.tensor(values, dtype=T.uint8).view(d)
        return T.tensor(values).to(d)
    for op, f in BINARY.items():
        for other in ("tensor",) if op == "pow" else ("tensor", 2, 0.5):
            def run(T):
                a = made(T, [[1, 2, 3], [4, 5, 6]])
                b = made(T, [[2, 2, 1], [4, 1, 3]]) if other == "tensor" else other
                r = f(a, b)
                return str(r.dtype), r.to(T.float64).tolist() if not r.is_complex() else \
                    r.to(T.complex128).tolist()
            e, t = _outcome(lambda: run(ember)), _outcome(lambda: run(torch))
            assert _same(e, t) and (e[0] != "ok" or e == t), (op, other, e, t)


def test_uint_promotion_through_ops(torch):
    for T_call in (lambda T: T.ones(2, dtype=T.uint16) * T.ones(2, dtype=T.int64),
                   lambda T: T.ones(2, dtype=T.uint16) * T.tensor(3),
                   lambda T: T.tensor([3], dtype=T.uint16) * -1,
                   lambda T: T.tensor([3], dtype=T.uint16) * 70000,
                   lambda T: T.ones(2, dtype=T.uint32) * T.ones(2, dtype=T.float32),
                   lambda T: T.ones(2, dtype=T.float16) * 1j,
                   lambda T: T.ones(2, dtype=T.float16) + T.ones(2, dtype=T.complex32),
                   lambda T: T.ones(2, dtype=T.complex32) * T.ones(2, dtype=T.float32)):
        e, t = _outcome(lambda: repr(T_call(ember))), _outcome(lambda: repr(T_call(torch)))
        assert e == t


def test_numpy_unsigned_arrays_become_tensors(torch):
    for kind in (np.uint16, np.uint32, np.uint64):
        a = np.array([1, 2, np.iinfo(kind).max], dtype=kind)
        for f in (lambda T: T.tensor(a), lambda T: T.from_numpy(a), lambda T: T.as_tensor(a)):
            assert repr(f(ember)) == repr(f(torch))
        shared = ember.from_numpy(a)
        assert np.shares_memory(shared.numpy(), a) and shared.numpy().dtype == kind
    import ml_dtypes
    f8 = np.array([1, 2], dtype=ml_dtypes.float8_e4m3fn)
    assert _outcome(lambda: ember.from_numpy(f8)) == _outcome(lambda: torch.from_numpy(f8))
    assert _outcome(lambda: ember.tensor(f8)) == _outcome(lambda: torch.tensor(f8))
    big = [2 ** 64 - 1, 3]
    assert repr(ember.tensor(big, dtype=ember.uint64)) == repr(torch.tensor(big, dtype=torch.uint64))


def test_chalf(torch):
    e, t = ember.tensor([1.5, -2.0]).chalf(), torch.tensor([1.5, -2.0]).chalf()
    assert repr(e) == repr(t) and e.tolist() == t.tolist()


def _as_bytes(T, t):
    return t.view(T.uint8).tolist() if t.dtype.itemsize == 1 else \
        t.contiguous().view(T.uint8).tolist()


@pytest.mark.parametrize("name", [n for n in NEW if not n[:-1] in ("int", "uint")])
def test_checkpoints_both_ways(torch, name):
    def made(T):
        d = getattr(T, name)
        if name in ("uint16", "uint32", "uint64", "complex32"):
            return T.tensor([[1, 2, 3], [200, 7, 9]]).to(d)
        return T.tensor([[1, 2], [200, 7]], dtype=T.uint8 if d.itemsize == 1 else T.int16).view(d)
    for writer, reader in ((torch, ember), (ember, torch), (ember, ember)):
        buf = io.BytesIO()
        x = made(writer)
        writer.save({"x": x, "row": x[1:]}, buf)
        back = reader.load(io.BytesIO(buf.getvalue()))
        assert str(back["x"].dtype) == "torch." + name
        assert _as_bytes(reader, back["x"]) == _as_bytes(writer, x)
        assert tuple(back["row"].shape) == tuple(x[1:].shape)


@pytest.mark.parametrize("name", ["int4", "uint2"])
def test_sub_byte_integers_cannot_be_saved(torch, name):
    outcomes = [_outcome(lambda: T.save(T.empty(2, dtype=getattr(T, name)), io.BytesIO()))
                for T in (ember, torch)]
    assert outcomes[0] == outcomes[1] and outcomes[0][0] == "KeyError"


def test_every_dtype_is_reachable_by_name():
    for d in _dt.EVERY_DTYPE:
        assert _dt.to_dtype(d.name) is d and _dt.to_dtype("torch." + d.name) is d
