"""`tensor` and `as_tensor` take every input PyTorch takes (sequences of any kind, 0-dim and
one-element tensors, NumPy scalars and arrays, nested mixtures) and refuse the rest with
PyTorch's exception type and message: a table compared with PyTorch."""
import collections
import warnings

import numpy as np
import pytest

import ember


class ArrayOnly:  # __array__ but not a sequence: PyTorch cannot infer its dtype
    def __array__(self, dtype=None, copy=None):
        return np.arange(3.0)


class Pair:  # the sequence protocol alone
    def __len__(self):
        return 2

    def __getitem__(self, i):
        if i >= 2:
            raise IndexError(i)
        return [1.0, 2.0][i]


CASES = {
    "deque": lambda m: collections.deque([1, 2]),
    "range": lambda m: range(3),
    "tuple of 0-dim": lambda m: (m.tensor(1.0), m.tensor(2.0)),
    "list of 0-dim int": lambda m: [m.tensor(1), m.tensor(2)],
    "list of 1-element": lambda m: [m.tensor([1.0]), m.tensor([2.0])],
    "list of 2-element": lambda m: [m.tensor([1.0, 2.0]), m.tensor([3.0, 4.0])],
    "nested 0-dim": lambda m: [[m.tensor(1.0)], [m.tensor(2.0)]],
    "NumPy float32": lambda m: np.float32(1.5),
    "NumPy int16": lambda m: np.int16(3),
    "0-d array": lambda m: np.array(2.5),
    "list of 0-d arrays": lambda m: [np.array(1.0), np.array(2)],
    "list of arrays": lambda m: [np.ones(2, np.float32), np.zeros(2, np.float32)],
    "list of NumPy scalars": lambda m: [np.float32(1), np.float64(2)],
    "0-d array after a number": lambda m: [1.0, np.ones(())],
    "0-d int32 array after an int": lambda m: [1, np.ones((), np.int32)],
    "0-d float32 array in rows": lambda m: [[1.0, 2.0], [3.0, np.ones((), np.float32)]],
    "0-d bool array after a bool": lambda m: [True, np.ones((), bool)],
    "0-d array first": lambda m: [np.ones(()), 1.0],
    "1-element array after a number": lambda m: [1.0, np.ones(1)],
    "array after a number": lambda m: [1.0, np.ones(2)],
    "array beside a list": lambda m: [[1.0], np.ones(1)],
    "NumPy scalar and tensor": lambda m: [np.float32(1), m.tensor(2.0)],
    "nested mixture": lambda m: [[1, 2.5], (np.int64(3), m.tensor(4))],
    "__array__ only": lambda m: ArrayOnly(),
    "sequence protocol": lambda m: Pair(),
    "list of sequences": lambda m: [Pair(), Pair()],
    "bool and complex": lambda m: [True, 1j],
    "bool and int": lambda m: [True, 2],
    "bool and float": lambda m: [False, 2.5],
    "memoryview": lambda m: memoryview(b"ab"),
    "bytearray": lambda m: bytearray(b"ab"),
    "bytes": lambda m: b"ab",
    "str": lambda m: "ab",
    "list of str": lambda m: ["a"],
    "None": lambda m: None,
    "list of None": lambda m: [None],
    "dict": lambda m: {1: 2},
    "set": lambda m: {1, 2},
    "object": lambda m: object(),
    "generator": lambda m: (i for i in range(2)),
    "ragged": lambda m: [[1, 2], [3]],
    "empty nested": lambda m: [[], []],
    "str array": lambda m: np.array(["a"]),
    "object array": lambda m: np.array([1, "a"], dtype=object),
    "too big": lambda m: [2 ** 63],
    "grad tensor inside": lambda m: [m.tensor(1.0, requires_grad=True)],
}


def _outcome(mod, fn, case):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = getattr(mod, fn)(case(mod))
    except Exception as exc:  # noqa: BLE001 (compares any error)
        return type(exc).__name__, str(exc)
    return str(r.dtype), r.tolist()


@pytest.mark.parametrize("fn", ["tensor", "as_tensor"])
@pytest.mark.parametrize("name", list(CASES))
def test_input_matches_pytorch(torch, fn, name):
    assert _outcome(ember, fn, CASES[name]) == _outcome(torch, fn, CASES[name])
