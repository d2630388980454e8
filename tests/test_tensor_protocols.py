"""Python's and NumPy's protocols on a tensor, against PyTorch: NumPy ufuncs answer with a
tensor (`np.exp(t)`, 0-dim and bool results included), `np.asarray`/`np.array` give arrays,
a tensor that requires grad refuses; `in`, `len`, iteration, `reversed`, `bool`, `hash` and
`__index__` with their errors."""
import operator
import warnings

import numpy as np
import pytest

import ember


def _outcome(mod, case):
    """What `case` gives under `mod`: the result's type, dtype and values, or the error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DeprecationWarning)  # PyTorch's old __array_wrap__
            r = case(mod)
    except Exception as exc:  # noqa: BLE001 (compares any error)
        return "error", type(exc).__name__, str(exc)
    if isinstance(r, mod.Tensor):
        return "Tensor", str(r.dtype), r.detach().tolist(), r.shape == ()
    if isinstance(r, np.ndarray):
        return "ndarray", str(r.dtype), r.tolist()
    if isinstance(r, (np.generic, int, float, bool, range)):
        return type(r).__name__, r
    return type(r).__name__


def _t(mod):
    return mod.tensor([1.0, 2.0, 3.0])


CASES = {
    "exp": lambda m: np.exp(_t(m)),
    "add scalar": lambda m: np.add(_t(m), 1),
    "add int tensor": lambda m: np.add(m.tensor([1, 2]), 1),
    "int + float": lambda m: np.add(m.tensor([1, 2]), 1.5),
    "maximum": lambda m: np.maximum(_t(m), 2),
    "0-dim sqrt": lambda m: np.sqrt(m.tensor(4.0)),
    "negative": lambda m: np.negative(_t(m)),
    "matmul": lambda m: np.matmul(_t(m), _t(m)),
    "bool result": lambda m: np.isnan(_t(m)),
    "comparison": lambda m: np.greater(_t(m), 1.5),
    "out array": lambda m: np.exp(_t(m), out=np.empty(3)),
    "sum": lambda m: np.sum(_t(m)),
    "dot": lambda m: np.dot(_t(m), _t(m)),
    "concatenate": lambda m: np.concatenate([_t(m), _t(m)]),
    "where": lambda m: np.where(_t(m) > 1, _t(m), 0),
    "asarray": lambda m: np.asarray(_t(m)),
    "array": lambda m: np.array(_t(m)),
    "array float64": lambda m: np.array(_t(m), dtype=np.float64),
    "tensor + array": lambda m: _t(m) + np.ones(3),
    "exp of grad": lambda m: np.exp(m.ones(2, requires_grad=True)),
    "asarray of grad": lambda m: np.asarray(m.ones(2, requires_grad=True)),
    "in float": lambda m: 2.0 in _t(m),
    "in absent": lambda m: 5 in _t(m),
    "in tensor": lambda m: m.tensor(2.0) in _t(m),
    "in str": lambda m: "a" in _t(m),
    "in None": lambda m: None in _t(m),
    "len": lambda m: len(_t(m)),
    "len 0-dim": lambda m: len(m.tensor(1.0)),
    "iter 0-dim": lambda m: list(m.tensor(1.0)),
    "iter": lambda m: [x.item() for x in _t(m)],
    "reversed": lambda m: reversed(_t(m)),
    "reversed 2-d": lambda m: reversed(m.arange(6).view(3, 2)),
    "reversed 0-dim": lambda m: reversed(m.tensor(1.0)),
    "bool many": lambda m: bool(_t(m)),
    "bool one": lambda m: bool(m.tensor([0.0])),
    "bool empty": lambda m: bool(m.tensor([])),
    "index": lambda m: [1, 2, 3][m.tensor(1)],
    "index float": lambda m: [1, 2, 3][m.tensor(1.0)],
    "index one-element": lambda m: [1, 2, 3][m.tensor([1])],
    "index two": lambda m: [1, 2, 3][m.tensor([1, 2])],
    "index bool": lambda m: [1, 2, 3][m.tensor(True)],
    "operator.index": lambda m: operator.index(m.tensor(3)),
    "range": lambda m: range(m.tensor(3)),
    "int one-element": lambda m: int(m.tensor([2.5])),
    "float two": lambda m: float(m.tensor([1, 2])),
}


@pytest.mark.parametrize("name", list(CASES))
def test_protocol_matches_pytorch(torch, name):
    assert _outcome(ember, CASES[name]) == _outcome(torch, CASES[name])


def test_hash_is_identity():
    t = ember.ones(2)
    assert hash(t) == id(t) and len({t, t, ember.ones(2)}) == 2
