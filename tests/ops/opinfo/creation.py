"""Op-table entries for ember/ops/creation.py and ranges.py: tensors from data, filled
tensors, ranges, `*_like` and `new_*` forms, in-place fills. Creation has no derivative, so
the entries run parity only (values, dtypes, shapes, errors); `empty*` compare shape and
dtype."""
import numpy as np

from . import OpInfo, Sample, register


def _const(*samples):
    """samples(rng) giving fixed samples: creation inputs are Python data, not arrays."""
    return lambda rng: list(samples)


def _kw(lib, k):
    """Samples name dtypes as strings ("float64") so one sample serves both libraries."""
    return {key: getattr(lib, v) if key == "dtype" else v for key, v in k.items()}


def _fn(name):
    return lambda lib, *a, **k: getattr(lib, name)(*a, **_kw(lib, k))


def _method(name):
    return lambda lib, x, *a, **k: getattr(x, name)(*a, **_kw(lib, k))


def _inplace(name):
    return lambda lib, x, *a, **k: getattr(x.clone(), name)(*a, **_kw(lib, k))


S = Sample
# NumPy inputs the call itself must see (a Sample's arrays become tensors)
_ARRAYS = {"f64": lambda: np.array([1.5, 2.0]), "i32": lambda: np.arange(6, dtype=np.int32).reshape(2, 3),
           "bool": lambda: np.array([True, False]), "negative_strides": lambda: np.arange(4)[::-1],
           "list": lambda: [1, 2]}
F64 = np.array([1.5, -2.0, 3.25])
I64 = np.array([1, 2, 3])

register(
    OpInfo("tensor", _fn("tensor"), _const(
        S(([1, 2, 3],)), S(([1.0, 2],)), S(([True, False],)), S(([True, 1],)), S(([1, 2.5j],)),
        S((3,)), S((3.5,)), S((True,)), S(([],)), S(([[], []],)), S(((1, 2),)),
        S(([np.float32(1.5), 2],)), S(([np.int32(1), np.int32(2)],)), S(([1, np.float64(2.5)],)),
        S(([np.int8(1), np.uint8(2)],)), S((np.float32(2.5),)), S((range(4),)),
        S(([[1, 2], [3, 4]],), {"dtype": "float64"}),
        S(([1.7, -2.7],), {"dtype": "int32"}), S(([-1],), {"dtype": "uint8"}),
        S(([1.5],), {"requires_grad": True}),
        S(([[1, 2], [3]],), raises=ValueError), S(([[1, 2], 3],), raises=TypeError),
        S(("abc",), raises=TypeError), S((["a"],), raises=ValueError),
        S(([1, "a"],), raises=TypeError), S((None,), raises=RuntimeError),
        S(([1],), {"requires_grad": True}, raises=RuntimeError),
        S(([2 ** 63],), raises=ValueError), S(([300],), {"dtype": "uint8"}, raises=RuntimeError),
        S(([[[1]], [[2, 3]]],), raises=ValueError)),
        grad=False),
    OpInfo("tensor", lambda lib, x, **k: lib.tensor([x[0], x[1], 2.5], **_kw(lib, k)), _const(
        S((F64,), grad=()), S((I64,)), S((np.array([True, False]),))), grad=False,
        variant="of_0dim"),
    OpInfo("tensor", lambda lib, x, **k: lib.tensor(x, **_kw(lib, k)), _const(
        S((F64,)), S((I64,), {"dtype": "float32"}), S((np.array([[1, 2], [3, 4]], np.int32),))),
        grad=False, variant="of_tensor"),
    OpInfo("from_numpy", lambda lib, key: lib.from_numpy(_ARRAYS[key]()), _const(
        S(("f64",)), S(("i32",)), S(("bool",)), S(("negative_strides",), raises=ValueError),
        S(("list",), raises=TypeError)), grad=False),
    OpInfo("from_dlpack", lambda lib, key: lib.from_dlpack(_ARRAYS[key]()), _const(
        S(("f64",)), S(("i32",))), grad=False),
    # a tensor lent as a DLPack capsule and taken back: the same values, dtype and shape
    OpInfo("to_dlpack", lambda lib, x: lib.from_dlpack(lib.to_dlpack(x)), _const(
        S((F64,)), S((I64,)), S((np.array([True, False]),))), grad=False),
    OpInfo("as_tensor", _fn("as_tensor"), _const(
        S(([1, 2],)), S(([1, 2],), {"dtype": "float64"}), S((F64,)), S((I64,), {"dtype": "float32"})),
        grad=False),
    OpInfo("asarray", _fn("asarray"), _const(
        S(([1, 2.5],)), S((F64,), {"dtype": "float32"}, grad=()), S((I64,), {"copy": True}),
        S((F64,), {"requires_grad": False})), grad=False),
    OpInfo("scalar_tensor", _fn("scalar_tensor"), _const(
        S((3,)), S((2.5,), {"dtype": "float64"}), S((True,))), grad=False),
    OpInfo("frombuffer", lambda lib, *a, **k: lib.frombuffer(bytearray(b"\x01\x02\x03\x04"), **_kw(lib, k)),
           _const(S((), {"dtype": "uint8"}), S((), {"dtype": "int16"}),
                  S((), {"dtype": "uint8", "count": 2, "offset": 1})), grad=False),
)

for _name in ("zeros", "ones"):
    register(OpInfo(_name, _fn(_name), _const(
        S((2, 3)), S(((2, 3),)), S(([2, 3],)), S(((),)), S((0,)), S((2,), {"dtype": "int32"}),
        S((3,), {"dtype": "bool"}), S((2,), {"requires_grad": True}),
        S((-1,), raises=RuntimeError), S((2, -1), raises=RuntimeError),
        S((2.5,), raises=TypeError), S(((2, 2.5),), raises=TypeError),
        S((2, 2.5), raises=TypeError), S(("a",), raises=TypeError),
        S((2,), {"dtype": "int64", "requires_grad": True}, raises=RuntimeError)), grad=False))

register(
    OpInfo("empty", _fn("empty"), _const(S((2, 3)), S(((2, 3),)), S((2,), {"dtype": "int64"}),
                                         S((-1,), raises=RuntimeError)),
           covers=("empty_strided",), parity="meta", grad=False),
    OpInfo("empty_strided", _fn("empty_strided"), _const(S(((2, 3), (3, 1)))), parity="meta",
           grad=False),
    OpInfo("full", _fn("full"), _const(
        S(((2,), 3)), S(((2,), 3.0)), S(((2,), True)), S(((2,), 1j)), S(([2, 2], 3)),
        S(((2,), 3), {"dtype": "float32"}), S(((2,), np.float32(3))), S(((2,), np.int32(3))),
        S(((2,), 2.5), {"dtype": "int64"}), S(((2,), -1), {"dtype": "uint8"}),
        S(((2,), 2.5), {"dtype": "bool"}), S(((2,), float("inf"))),
        S(((2,), 300), {"dtype": "uint8"}, raises=RuntimeError),
        S(((2,), float("nan")), {"dtype": "int64"}, raises=RuntimeError),
        S(((2,), 1e40), {"dtype": "float32"}, raises=RuntimeError),
        S((2, 3), raises=TypeError), S(((2.5,), 1), raises=TypeError)), grad=False),
    OpInfo("zeros_like", _fn("zeros_like"), _const(S((I64,)), S((F64,), {"dtype": "float16"}),
                                                   S(([1, 2],), raises=TypeError)), grad=False),
    OpInfo("ones_like", _fn("ones_like"), _const(S((I64,)), S((F64,), {"dtype": "int32"})),
           grad=False),
    OpInfo("full_like", _fn("full_like"), _const(S((I64, 2.7)), S((F64, 2)),
                                                 S((F64, 2), {"dtype": "int64"})), grad=False),
    OpInfo("empty_like", _fn("empty_like"), _const(S((I64,)), S((F64,))), parity="meta",
           grad=False),
    OpInfo("new_zeros", _method("new_zeros"), _const(S((I64, 3)), S((F64, (3, 2))), S((F64, 3, 2)),
                                                     S((F64, ()), {"dtype": "int32"})), grad=False),
    OpInfo("new_ones", _method("new_ones"), _const(S((I64, 3)), S((F64, [2, 2]))), grad=False),
    OpInfo("new_full", _method("new_full"), _const(S((I64, (3,), 2.5)), S((F64, (3,), 2)),
                                                   S((F64, 3, 2), raises=TypeError)), grad=False),
    OpInfo("new_empty", _method("new_empty"), _const(S((I64, 3)), S((F64, (2, 2)))),
           parity="meta", grad=False),
    OpInfo("new_tensor", _method("new_tensor"), _const(
        S((I64, [1.5, 2])), S((F64, [1, 2])), S((F64, [1, 2]), {"dtype": "int32"}),
        S((F64, [1.0]), {"requires_grad": True})), grad=False),
    OpInfo("fill_", _inplace("fill_"), _const(
        S((I64, 3)), S((I64, 3.7)), S((F64, True)), S((np.array([True, False]), 2)),
        S((np.array([1, 2], np.uint8), -1)), S((np.array([1, 2], np.uint8), 300), raises=RuntimeError),
        S((I64, float("nan")), raises=RuntimeError)), grad=False),
    OpInfo("fill_", lambda lib, x, v: x.clone().fill_(v), _const(
        S((F64, np.array(3.0))), S((I64, np.array(2.7)), grad=()), S((F64, np.array([3.0])), raises=RuntimeError),
        # a tensor value is copied in, cast as copy_ casts (no overflow check): 300 wraps to 44
        S((np.array([1, 2], np.uint8), np.array(300)), grad=()),
        S((np.array([1, 2], np.uint8), np.array(-2.5)), grad=()),
        S((np.array([1.0, 2.0], np.float16), np.array(1e6)), grad=())),
        grad=False, variant="tensor"),
    OpInfo("zero_", _inplace("zero_"), _const(S((I64,)), S((F64,))), grad=False),
)

_RANGE_SAMPLES = (
    S((5,)), S((5.0,)), S((1, 5)), S((1, 5, 2)), S((0, 1, 0.1)), S((0, 1, 0.3)), S((1, 2.5, 0.5)),
    S((0, -3, -1)), S((5,), {"dtype": "float64"}), S((0.5, 5), {"dtype": "int64"}),
    S((0, 5, 1.5), {"dtype": "int64"}), S((-1.5, 5, 1.5), {"dtype": "int32"}),
    S((np.int64(5),)), S((np.float32(2.5),)), S((0, 10, 3), {"dtype": "uint8"}),
    S((1.0, 4), {"requires_grad": True}), S((10, 0, -3)), S((2 ** 40, 2 ** 40 + 3)),
    S((0, 3, -1), raises=RuntimeError), S((0, 3, 0), raises=RuntimeError),
    S((10,), {"dtype": "bool"}, raises=NotImplementedError),
    S((float("inf"),), raises=RuntimeError), S((0.5, float("nan")), raises=RuntimeError),
    S((1, 4), {"requires_grad": True}, raises=RuntimeError))

register(
    OpInfo("arange", _fn("arange"), _const(*_RANGE_SAMPLES), grad=False),
    OpInfo("range", _fn("range"), _const(S((0, 3)), S((0, 1, 0.25)), S((1, 4, 0.5)),
                                         S((0, 3), {"dtype": "float64"})), grad=False),
    OpInfo("linspace", _fn("linspace"), _const(
        S((0, 1, 5)), S((0, 1, 1)), S((0, 1, 0)), S((0, 10, 7)), S((-3, 7, 11)),
        S((0, 1, 5), {"dtype": "float64"}), S((0, 10, 5), {"dtype": "int64"}),
        S((0, 10.5, 4), {"dtype": "int32"}), S((0.1, 0.7, 9)), S((1, 2j, 3)),
        S((0, 1, 3), {"requires_grad": True}), S((-1.3, 2.9, 17)),
        S((0, 1, -1), raises=RuntimeError), S((0, 1, 5), {"dtype": "bool"}, raises=NotImplementedError)),
        grad=False, atol=1e-6),
    OpInfo("logspace", _fn("logspace"), _const(
        S((0, 2, 3)), S((0, 2, 3), {"base": 2}), S((0, 2, 3), {"dtype": "int64"}), S((0, 2, 1)),
        S((0, 2, 0)), S((-1, 1, 5), {"dtype": "float64"}), S((0, 3, 4, 2)), S((-2, 2, 21))),
        grad=False),
    OpInfo("eye", _fn("eye"), _const(
        S((3,)), S((2, 3)), S((3,), {"dtype": "int64"}), S((3,), {"dtype": "bool"}), S((0,)),
        S((3,), {"requires_grad": True}), S((2, 3), {"dtype": "complex64"}),
        S((-1,), raises=RuntimeError), S((2, -1), raises=RuntimeError),
        S((2.5,), raises=TypeError)), grad=False),
)

