"""Indexing takes what PyTorch's takes (ranges and other sequences, lists, tuples of lists,
bool lists, nested lists, NumPy arrays and scalars, 0-dim tensors, Ellipsis and None mixes,
several ellipses) and refuses the rest alike: a table compared with PyTorch, reading and
writing."""
import collections
import warnings

import numpy as np
import pytest

import ember

CASES = {
    "range": lambda m: range(2),
    "range with step": lambda m: range(0, 3, 2),
    "range in dim 1": lambda m: (slice(None), range(1, 3)),
    "deque": lambda m: collections.deque([0, 1]),
    "list": lambda m: [1, 0],
    "negative list": lambda m: [-1, 0],
    "tuple of lists": lambda m: ([0, 1], [1, 2]),
    "list of lists": lambda m: [[0, 1], [1, 0]],
    "bool list": lambda m: [True, False],
    "bool list in dim 1": lambda m: (slice(None), [True, False, True]),
    "nested list": lambda m: [[[0]]],
    "NumPy array": lambda m: np.array([1, 0]),
    "NumPy bool array": lambda m: np.array([True, False]),
    "NumPy int": lambda m: np.int64(1),
    "list of NumPy ints": lambda m: [np.int64(0), np.int64(1)],
    "0-dim tensor": lambda m: m.tensor(1),
    "0-dim bool tensor": lambda m: m.tensor(True),
    "0-dim tensor in tuple": lambda m: (0, m.tensor(2)),
    "list of 0-dim tensors": lambda m: [m.tensor(0), m.tensor(1)],
    "tensor and int in list": lambda m: [m.tensor(1), 0],
    "one-element tensor": lambda m: m.tensor([1]),
    "2-d long tensor": lambda m: m.tensor([[0, 1]]),
    "uint8 mask": lambda m: m.tensor([1, 0], dtype=m.uint8),
    "bool mask 2-d": lambda m: m.tensor([[True, False, True], [False, False, True]]),
    "ellipsis, None, int": lambda m: (Ellipsis, None, 1),
    "None, ellipsis, None": lambda m: (None, Ellipsis, None),
    "list, ellipsis, list": lambda m: ([0, 1], Ellipsis, [1, 2]),
    "list, slice, list": lambda m: ([0, 1], slice(None), [1, 2]),
    "None, list": lambda m: (None, [0, 1]),
    "two ellipses": lambda m: (Ellipsis, Ellipsis),
    "ellipsis, int, ellipsis": lambda m: (Ellipsis, 0, Ellipsis),
    "ellipsis, None, ellipsis": lambda m: (Ellipsis, None, Ellipsis),
    "list with slice": lambda m: [slice(0, 1), 0],
    "list with None": lambda m: [None, 0],
    "list with ellipsis": lambda m: [Ellipsis, 0],
    "slice of tensors": lambda m: slice(m.tensor(0), m.tensor(2)),
    "empty list": lambda m: [],
    "empty tuple": lambda m: (),
    "None": lambda m: None,
    "float": lambda m: 1.0,
    "float list": lambda m: [1.0],
    "str": lambda m: "a",
    "too many": lambda m: (0, 0, 0, 0),
    "out of range": lambda m: 5,
    "list out of range": lambda m: [0, 5],
}


def _outcome(mod, case, write):
    x = mod.arange(24).reshape(2, 3, 4)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if write:
                x[case(mod)] = -1
                r = x
            else:
                r = x[case(mod)]
    except Exception as exc:  # noqa: BLE001 (compares any error)
        return type(exc).__name__, str(exc)
    return list(r.shape), r.tolist()


@pytest.mark.parametrize("write", [False, True], ids=["read", "write"])
@pytest.mark.parametrize("name", list(CASES))
def test_index_matches_pytorch(torch, name, write):
    if write and name == "uint8 mask":
        pytest.skip("PyTorch refuses a uint8 mask only when writing a scalar (masked_fill_ "
                    "wants bool); ember writes it as it reads it")
    assert _outcome(ember, CASES[name], write) == _outcome(torch, CASES[name], write)
