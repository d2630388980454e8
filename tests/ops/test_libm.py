"""ember.ops._libm: float64 log, log1p, exp, sin, cos, tan and pow with the C library's values
(PyTorch's scalar std:: calls), whichever path this machine's NumPy takes."""
import math

import numpy as np
import pytest

from ember.ops import _libm

_CASES = {
    "log": ([0.0, -1.0, 1.0, np.inf, np.nan, 5e-324, 0.3, 1.7e308],),
    "log1p": ([-1.0, -2.0, 0.0, -0.0, np.inf, np.nan, -0.999999, 1e-300],),
    "tan": ([0.0, -0.0, np.inf, np.nan, 1.5707963267948966, -1e300, 3.0],),
    "exp": ([0.0, -0.0, np.inf, -np.inf, np.nan, 709.8, 710.0, -745.2, -746.0],),
    "sin": ([0.0, -0.0, np.inf, np.nan, 1e300, 3.141592653589793],),
    "cos": ([0.0, -0.0, -np.inf, np.nan, 1e300, 1.5707963267948966],),
    "power": ([10.0, 2.0, 0.0, 0.0, -2.0, -2.0, 1.0, np.nan, 2.5],
              [400.0, -1100.0, -1.0, 0.0, 0.5, 3.0, np.nan, 0.0, 1e-3]),
}


@pytest.fixture(params=["numpy", "per value"])
def path(request, monkeypatch):
    if request.param == "per value":  # the path of a NumPy whose loops are not the C library's
        monkeypatch.setattr(_libm, "_numpy_is_libm", lambda name: False)
    return request.param


@pytest.mark.parametrize("name", list(_CASES))
def test_values_are_the_c_librarys(name, path):
    rng = np.random.default_rng(1)
    low, high = {"log": (0, 3), "log1p": (-1, 2), "tan": (-4, 4), "power": (0.1, 20),
                 "exp": (-40, 40), "sin": (0, 7), "cos": (0, 7)}[name]
    args = [rng.uniform(low, high, 5000)]
    if name == "power":
        args.append(rng.uniform(-40, 40, 5000))
    args = [np.concatenate([a, np.array(edge)]) for a, edge in zip(args, _CASES[name])]
    got = _libm.libm(name, *args)
    math_name = {"power": "pow"}.get(name, name)

    def expected(*values):
        try:
            return getattr(math, math_name)(*values)
        except (OverflowError, ValueError):
            with np.errstate(all="ignore"):
                return float(getattr(np, name)(*values))
    want = np.array([expected(*v) for v in zip(*args)])
    assert got.dtype == np.float64 and got.shape == args[0].shape
    assert np.array_equal(got.view(np.int64), want.view(np.int64)) or \
        np.array_equal(got, want, equal_nan=True)


def test_shapes_broadcast(path):
    got = _libm.libm("power", 2.0, np.arange(6.0).reshape(2, 3))
    assert got.shape == (2, 3) and got.tolist() == [[1, 2, 4], [8, 16, 32]]
    assert _libm.libm("log", np.zeros((0, 4))).shape == (0, 4)
