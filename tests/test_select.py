"""`_select.select` gives exactly what np.where gives (dtype, shape, strides, every bit: NaN
payloads, signed zeros, infinities), on its bit-blending path and off it."""
import numpy as np
import pytest

from ember._select import BLOCK, SELECT_MIN, select

RNG = np.random.default_rng(0)
N = 2 * SELECT_MIN + 3  # whole-array blend
LONG = 2 * BLOCK + 5  # block by block, the last block short
SPECIAL = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-45, 3.4e38]


def _same(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.strides == want.strides
    np.testing.assert_array_equal(np.ascontiguousarray(got).view(np.uint8),
                                  np.ascontiguousarray(want).view(np.uint8))


def _operands(dtype, n=N):
    if dtype == np.bool_:
        return RNG.random(n) < 0.5, RNG.random(n) < 0.5
    a = (RNG.standard_normal(n) * 100).astype(dtype)
    b = (RNG.standard_normal(n) * 100).astype(dtype)
    if np.dtype(dtype).kind == "f":
        with np.errstate(over="ignore"):
            a[:8] = np.array(SPECIAL).astype(dtype)
            b[8:16] = np.array(SPECIAL).astype(dtype)
        a[20] = np.frombuffer(np.array([0x7FC00123], np.uint32).tobytes(), np.float32)[0] \
            if dtype == np.float32 else a[20]  # a NaN with a payload
    return a, b


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64,
                                   np.int16, np.uint8, np.uint32, np.complex64, np.bool_])
@pytest.mark.parametrize("form", ["arrays", "array-number", "number-array", "numbers",
                                  "array-nan", "array-wide-scalar", "array-own-scalar",
                                  "array-huge"])
@pytest.mark.parametrize("n", [N, LONG])
def test_select_is_where(dtype, form, n):
    a, b = _operands(dtype, n)
    cond = RNG.random(n) < 0.5
    x, y = {"arrays": (a, b), "array-number": (a, 3), "number-array": (0.5, b),
            "numbers": (2, -1.5), "array-nan": (a, np.nan),
            "array-wide-scalar": (a, np.float64(0.1)), "array-own-scalar": (a, a[5]),
            "array-huge": (a, 1e40)}[form]
    with np.errstate(all="ignore"):
        try:
            want = np.where(cond, x, y)
        except (TypeError, ValueError, OverflowError) as e:
            with pytest.raises(type(e)):
                select(cond, x, y)
            return
        _same(select(cond, x, y), want)


@pytest.mark.parametrize("case", range(9))
@pytest.mark.parametrize("rows", [64, 256])
def test_select_broadcasts_and_keeps_layout(case, rows):
    a = RNG.standard_normal((rows, 300)).astype(np.float32)
    m = RNG.random((rows, 300)) < 0.5
    f = np.asfortranarray(a)
    x, y, cond = [(a, a[:1], m), (a[:1], a, m), (a.T, a.T * 2, m.T),
                  (a[:, ::2], a[:, 1::2], m[:, ::2]), (a, 0.0, m[:1]), (a[:1], 1.0, m),
                  (f, f + 1, np.asfortranarray(m)), (a, a[:, :1], m[:, :1]),
                  (a[::-1], a, m)][case]
    _same(select(cond, x, y), np.where(cond, x, y))


def test_select_below_the_threshold_and_other_conditions():
    a, b = _operands(np.float32)
    small = slice(0, SELECT_MIN - 1)
    cond = RNG.random(N) < 0.5
    _same(select(cond[small], a[small], b[small]), np.where(cond[small], a[small], b[small]))
    ints = cond.astype(np.int8)  # not a bool condition: where's own truth test
    _same(select(ints, a, b), np.where(ints, a, b))
    _same(select(True, a, b), np.where(True, a, b))
