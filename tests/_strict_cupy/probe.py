"""What CuPy does where the stand-in models a guess: each probe runs on the real CuPy (on a
GPU machine) and on the stand-in, and the two answers are printed side by side, so that a
difference shows where the stand-in is wrong (or CuPy changed).

    python -m tests._strict_cupy.probe            # a GPU machine: real CuPy and the stand-in
    python -m tests._strict_cupy.probe --stand-in # the stand-in alone (a rehearsal)
"""
import sys

import ml_dtypes
import numpy as np

SINGULAR = [[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]]


def _inv_singular(cp):
    return cp.linalg.inv(cp.asarray(np.array(SINGULAR))).get().round(3).tolist()


def _inv_singular_raise(cp):
    import cupyx
    with cupyx.errstate(linalg="raise"):
        return cp.linalg.inv(cp.asarray(np.array(SINGULAR))).get().round(3).tolist()


def _solve_zero(cp):
    return cp.linalg.solve(cp.zeros((3, 3)), cp.ones((3, 1))).get().ravel().tolist()


def _solve_broadcast(cp):
    return cp.linalg.solve(cp.asarray(np.eye(3)[None].repeat(2, 0)), cp.ones((3, 2))).shape


def _lu_diag(cp):
    import cupyx.scipy.linalg as cl
    lu, piv = cl.lu_factor(cp.asarray(np.array(SINGULAR)))
    return cp.diagonal(lu).get().tolist(), piv.get().tolist()


# index_reduce amax/amin: the input's gradient came out NaN on an H100 and an H200 (issue 11)
# while the CPU and the stand-in agree. These run its backward's pieces where it runs them.
_REDUCE_SELF = [[0.5, -1.0, 2.0, -0.25], [1.5, 0.75, -2.0, 3.0], [-0.5, 0.25, 1.0, -3.0]]
_REDUCE_SOURCE = [[1.0, -2.0, 0.5, 0.25], [-1.5, 0.5, 2.5, -1.0], [0.25, -0.5, 3.0, 1.0]]


def _index_reduce_grads(cp, reduce="amax", include_self=True):
    import ember
    x = ember.tensor(_REDUCE_SELF, device="cuda", requires_grad=True)
    src = ember.tensor(_REDUCE_SOURCE, device="cuda", requires_grad=True)
    out = x.index_reduce(0, ember.tensor([0, 2, 0], device="cuda"), src, reduce,
                         include_self=include_self)
    out.sum().backward()
    return x.grad.cpu().tolist(), src.grad.cpu().tolist()


def _index_reduce_count(cp):
    """The backward's divisor: how many of self and the source reach each result (>= 1)."""
    import ember
    x = ember.tensor(_REDUCE_SELF, device="cuda")
    src = ember.tensor(_REDUCE_SOURCE, device="cuda")
    spread = ember.tensor([[0] * 4, [2] * 4, [0] * 4], device="cuda")
    result = x.scatter_reduce(0, spread, src, "amax")
    self_is = (x == result).double()
    src_is = (src == result.gather(0, spread)).double()
    return result.cpu().tolist(), self_is.scatter_add(0, spread, src_is).cpu().tolist()


# embedding_bag's max mode: on an H200 every bag's argmax row came out unset (-1), while its
# maxima were right and minimum.at / maximum.at of these shapes were right alone (issue 11)
_BAG_WEIGHT = [[0.5, -1.0, 2.0], [1.5, 0.75, -2.0], [-0.5, 0.25, 1.0], [0.1, 3.0, -3.0]]


def _bag_inputs(cp):
    w = cp.asarray(np.array(_BAG_WEIGHT, np.float32))
    idx, bag = cp.asarray(np.array([0, 1, 2, 1, 3])), cp.asarray(np.array([0, 0, 2, 2, 2]))
    return cp.take(w, idx, axis=0), idx, bag, cp.ones(5, dtype=bool)


def _bag_maxima(cp):
    from ember.ops.normalization.embedding import _bag_maxima
    rows, idx, bag, valid = _bag_inputs(cp)
    return [a.get().tolist() for a in _bag_maxima(cp, rows, idx, bag, valid, 3)]


def _bag_hits(cp):
    rows, _, bag, valid = _bag_inputs(cp)
    vals = cp.where(valid[:, None], rows, -cp.inf)
    best = cp.full((3, 3), -cp.inf, dtype=vals.dtype)
    cp.maximum.at(best, bag, vals)
    return str(vals.dtype), best.get().tolist(), (vals == best[bag]).get().tolist()


def _bag_op(cp, dtype="float64"):
    """The op table's failing sample (embedding_bag-2) through ember's op, with the arrays
    _bag_maxima was given."""
    import importlib

    import ember
    embedding = importlib.import_module("ember.ops.normalization.embedding")
    seen = []
    inner = embedding._bag_maxima

    def spy(xp, rows, idx, bag, valid, nbags):
        seen.append([a.get().tolist() for a in (rows, idx, bag, valid)] + [nbags])
        return inner(xp, rows, idx, bag, valid, nbags)
    embedding._bag_maxima = spy
    try:
        w = ember.tensor(_BAG_WEIGHT, dtype=getattr(ember, dtype), device="cuda")
        out = ember.embedding_bag(w, ember.tensor([0, 1, 2, 1, 3], device="cuda"),
                                  ember.tensor([0, 2, 2], device="cuda"), False, 2)
    finally:
        embedding._bag_maxima = inner
    return out[3].cpu().tolist(), seen


def _tf32_product(cp):
    """A float32 product in TF32 (a convolution's, by default): how cuBLAS reads the operands
    (the stand-in rounds them to 10 mantissa bits, to nearest even). x @ identity, 64 x 64,
    large enough for the tensor cores."""
    from cupy._core import _routines_linalg as linalg
    before = linalg.get_compute_type(np.float32)
    linalg.set_compute_type(np.float32, linalg.COMPUTE_TYPE_TF32)
    try:
        x = np.ones((64, 64), np.float32)
        x[0, :4] = [1 + 2 ** -11, 1 + 3 * 2 ** -11, 1 + 2 ** -10 + 2 ** -12, -3.9995]
        y = cp.matmul(cp.asarray(x), cp.asarray(np.eye(64, dtype=np.float32)))
        return y.get()[0, :4].tolist()
    finally:
        linalg.set_compute_type(np.float32, before)


def _empty_after_free(cp):
    a = cp.full(1024, 7.0)
    del a
    return float(cp.empty(1024)[0].get())


PROBES = {
    "asarray(-0.0) sign": lambda cp: float(np.copysign(1, cp.asarray(-0.0).get())),
    "full(2, -0.0) sign": lambda cp: np.copysign(1, cp.full(2, -0.0).get()).tolist(),
    "fill(-0.0) sign": lambda cp: (lambda a: (a.fill(-0.0), np.copysign(1, a.get()).tolist())[1])(
        cp.ones(2)),
    "argmin with NaNs": lambda cp: int(cp.asarray(np.array([0.6, np.nan, np.nan, 1.1])).argmin()),
    "argmax with NaNs": lambda cp: int(cp.asarray(np.array([0.6, np.nan, np.nan, 1.1])).argmax()),
    "argmax of bool ties": lambda cp: int(cp.asarray(np.array([False, True, True])).argmax()),
    "float -2.5 to uint8": lambda cp: cp.asarray(np.array([-2.5, 300.7])).astype(np.uint8).get()
    .tolist(),
    "nan/inf to int32": lambda cp: cp.asarray(np.array([np.nan, np.inf, -np.inf]))
    .astype(np.int32).get().tolist(),
    **{f"nan/inf/1e10 to {t.__name__}": (lambda t: lambda cp: cp.asarray(np.array(
        [np.nan, np.inf, -np.inf, 1e10, -1e10])).astype(t).get().tolist())(t)
       for t in (np.int64, np.int16, np.int8)},
    "getitem out of range": lambda cp: cp.arange(4.0)[cp.asarray(np.array([5, -6]))].get().tolist(),
    "setitem out of range": lambda cp: (lambda a: (a.__setitem__(cp.asarray(np.array([5])), 9.0),
                                                   a.get().tolist())[1])(cp.zeros(4)),
    "add.at out of range": lambda cp: (lambda a: (cp.add.at(a, cp.asarray(np.array([5])), 1.0),
                                                  a.get().tolist())[1])(cp.zeros(4)),
    "take_along_axis out of range": lambda cp: cp.take_along_axis(
        cp.arange(3.0), cp.asarray(np.array([4])), 0).get().tolist(),
    "float8 asarray": lambda cp: str(cp.asarray(np.zeros(2, ml_dtypes.float8_e4m3fn)).dtype),
    "float8 zeros": lambda cp: str(cp.zeros(2, ml_dtypes.float8_e4m3fn).dtype),
    "float8 view": lambda cp: str(cp.zeros(2, np.uint8).view(ml_dtypes.float8_e4m3fn).dtype),
    "float8 get": lambda cp: cp.zeros(2, np.uint8).view(ml_dtypes.float8_e4m3fn).get().dtype.name,
    "float8 copy": lambda cp: str(cp.zeros(2, np.uint8).view(ml_dtypes.float8_e4m3fn).copy().dtype),
    "bfloat16 where with a scalar": lambda cp: str(cp.where(
        cp.ones(2, bool), cp.zeros(2, ml_dtypes.bfloat16), ml_dtypes.bfloat16(1)).dtype),
    "bfloat16 isnan": lambda cp: cp.isnan(cp.zeros(2, ml_dtypes.bfloat16)).get().tolist(),
    "record asarray": lambda cp: str(cp.asarray(np.zeros(2, [("real", "<f2"), ("imag", "<f2")]))
                                     .dtype),
    "record where": lambda cp: str(cp.where(cp.ones(2, bool), *[cp.asarray(
        np.zeros(2, [("real", "<f2"), ("imag", "<f2")]))] * 2).dtype),
    "record view uint32": lambda cp: str(cp.asarray(np.zeros(2, [("real", "<f2"), ("imag", "<f2")]))
                                         .view(np.uint32).dtype),
    "inv of a singular matrix": _inv_singular,
    "inv of a singular matrix, errstate raise": _inv_singular_raise,
    "solve with a zero matrix": _solve_zero,
    "solve broadcasting batch dims": _solve_broadcast,
    "lu_factor of a singular matrix": _lu_diag,
    "copysign(x, asarray(-0.0))": lambda cp: cp.copysign(cp.ones(1), cp.asarray(-0.0)).get()
    .tolist(),
    "maximum.at with repeats": lambda cp: (lambda a: (cp.maximum.at(
        a, cp.asarray(np.array([0, 2, 0, 0])), cp.asarray(np.array([1.5, -1.0, 2.5, -4.0]))),
        a.get().tolist())[1])(cp.asarray(np.array([-3.0, 0.0, -2.0]))),
    # embedding_bag's max mode: a minimum.at of int64 rows came out unset on an H200 (issue 11)
    **{f"{u}.at {t} rows": (lambda u, t: lambda cp: (lambda a: (getattr(cp, u).at(
        a, cp.asarray(np.array([0, 0, 2, 2, 2])), cp.asarray(np.array(
            [[4, 1], [2, 5], [3, 3], [1, 4], [2, 0]], t))), a.get().tolist())[1])(
        cp.full((3, 2), 5 if u == "minimum" else 0, t)))(u, t)
       for u in ("minimum", "maximum") for t in ("int64", "int32", "float64")},
    "embedding_bag max: _bag_maxima": _bag_maxima,
    "embedding_bag max: vals == best[bag]": _bag_hits,
    # what the op-table failures pointed to (the stand-in models it): float64 scatter-max of
    # random values within float32's rounding, not exact
    "maximum.at float64 random: exact?": lambda cp: (lambda v, i: (lambda a: (
        cp.maximum.at(a, cp.asarray(i), cp.asarray(v)),
        (a.get() == np.array([v[i == k].max(0) for k in (0, 1)])).tolist())[1])(
        cp.full((2, 2), -np.inf)))(np.random.default_rng(0).standard_normal((6, 2)),
                                   np.array([0, 0, 1, 1, 1, 0])),
    "embedding_bag max: the op, float64": _bag_op,
    "embedding_bag max: the op, float32": lambda cp: _bag_op(cp, "float32"),
    # TF32 for a convolution's products (PyTorch's cudnn.allow_tf32 is on by default): the API
    "matmul compute-type API": lambda cp: [n for n in dir(__import__(
        "cupy._core._routines_linalg", fromlist=["_"])) if "compute" in n.lower()],
    "matmul in TF32: the operands' bits": _tf32_product,
    "argsort of repeated int64": lambda cp: cp.argsort(
        cp.asarray(np.array([8, 0, 1, 0, 8, 1]))).get().tolist(),
    "ascontiguousarray of a broadcast": lambda cp: cp.ascontiguousarray(
        cp.broadcast_to(cp.arange(3).reshape(3, 1), (3, 4))).strides,
    "empty after a freed block": _empty_after_free,
    "index_reduce amax grads": _index_reduce_grads,
    "index_reduce amin grads, no self": lambda cp: _index_reduce_grads(cp, "amin", False),
    "index_reduce amax count": _index_reduce_count,
}


def _answer(probe, cp):
    try:
        return repr(probe(cp))
    except Exception as e:
        return f"{type(e).__name__}: {str(e)[:70]}"


def main():
    from tests._strict_cupy import strict_cupy
    real = None
    if "--stand-in" not in sys.argv:
        import cupy as real
    answers = {}
    if real is not None:
        answers = {name: _answer(p, real) for name, p in PROBES.items()}
    import os
    os.environ.pop("EMBER_TEST_REAL_CUDA", None)
    import tests._strict_cupy as package
    package.REAL_CUDA = False
    with strict_cupy() as stand_in:
        mine = {name: _answer(p, stand_in) for name, p in PROBES.items()}
    for name in PROBES:
        theirs = answers.get(name, "-")
        flag = "  " if theirs in ("-", mine[name]) else "!!"
        print(f"{flag} {name:42} cupy: {theirs:40} stand-in: {mine[name]}")


if __name__ == "__main__":
    main()
