"""Op-table entries for `ember/ops/reduction.py`, `statistics.py` and `cumulative.py`: sums,
means, products, extremes, logic, statistics, norms, scans and diff."""
import numpy as np

from . import OpInfo, Sample, integers, method, randn, register, top as fn


# ---- value generators ----------------------------------------------------------------------------
def distinct(rng, *shape):
    """Values 0.5 apart in random order: no ties, and finite differences never reorder them."""
    n = int(np.prod(shape, dtype=np.int64))
    return ((rng.permutation(n) - n / 2 + 0.25) * 0.5).reshape(shape)


def ties(rng, *shape):
    """Small whole numbers as floats: many ties (parity only: ties have no derivative)."""
    return rng.integers(-2, 3, shape).astype(np.float64)


def bools(rng, *shape):
    return np.asarray(rng.random(shape) < 0.5)


def with_zeros(rng, *shape):
    """Normal values with exact zeros: one in some slices, two in others."""
    x = rng.standard_normal(shape)
    flat = x.reshape(-1)
    flat[rng.choice(flat.size, size=max(1, flat.size // 4), replace=False)] = 0.0
    return x


def nans(rng, *shape):
    x = rng.standard_normal(shape)
    x.reshape(-1)[rng.choice(x.size, size=max(1, x.size // 4), replace=False)] = np.nan
    return x


# ---- sample sets ------------------------------------------------------------------------------
def full_and_dims(gen=randn, tuple_dims=True):
    """Whole tensor, one dim, dims with keepdim, negative dim, non-contiguous, 0-dim, empty."""
    def samples(rng):
        out = [
            Sample((gen(rng, 3, 4),)),
            Sample((gen(rng, 3, 4), 1)),
            Sample((gen(rng, 2, 3, 4), -1), {"keepdim": True}),
            Sample((gen(rng, 4, 3), 0), noncontig=(0,)),
            Sample((gen(rng, 5),), noncontig=(0,)),
            Sample((gen(rng),)),
            Sample((gen(rng), 0)),
            Sample((gen(rng, 0, 3), 1)),
        ]
        if tuple_dims:
            out += [Sample((gen(rng, 2, 3, 4), (0, 2))),
                    Sample((gen(rng, 2, 3, 4), (-1, 0)), {"keepdim": True})]
        return out
    return samples


def int_full_and_dims(rng):
    return [Sample((integers(rng, 3, 4),)), Sample((integers(rng, 3, 4), 1)),
            Sample((integers(rng, 2, 3).astype(np.int32), 0), {"keepdim": True}),
            Sample((bools(rng, 3, 4),)), Sample((bools(rng, 3, 4), -1)),
            Sample((integers(rng, 0, 2), 0))]


def pick_dim(gen=distinct):
    """A dim (one pick per slice): with keepdim, negative, non-contiguous, 0-dim, empty."""
    def samples(rng):
        return [
            Sample((gen(rng, 3, 4), 1)),
            Sample((gen(rng, 2, 3, 4), -2, True)),
            Sample((gen(rng, 4, 3), 0), noncontig=(0,)),
            Sample((gen(rng, 5), 0), noncontig=(0,)),
            Sample((gen(rng), 0)),
            Sample((gen(rng, 0, 3), 1)),
        ]
    return samples


def _max_samples(rng):
    return [
        Sample((distinct(rng, 3, 4),)),
        Sample((distinct(rng, 4, 3),), noncontig=(0,)),
        Sample((distinct(rng),)),
        Sample((randn(rng, 3, 4), randn(rng, 3, 4))),  # the binary form
        Sample((np.zeros((0, 3)),), raises=RuntimeError),
        Sample((np.zeros((0, 3)), 0), raises=IndexError),
        Sample((randn(rng, 2, 3), 2), raises=IndexError),
    ] + pick_dim()(rng)


def _max_other(rng):
    return [Sample((integers(rng, 3, 4),)), Sample((integers(rng, 3, 4), 1)),
            Sample((bools(rng, 3, 4),)), Sample((bools(rng, 3, 4), 0)),
            Sample((ties(rng, 3, 4),)), Sample((ties(rng, 3, 4), 1)), Sample((nans(rng, 3, 4), 1)),
            Sample((nans(rng, 3, 4),))]


def _argmax_samples(rng):
    return [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 3, 4), 1)),
            Sample((randn(rng, 3, 4),), {"keepdim": True}),
            Sample((randn(rng, 2, 3, 4), -1, True)), Sample((randn(rng, 4, 3), 0), noncontig=(0,)),
            Sample((ties(rng, 3, 4), 1)), Sample((integers(rng, 3, 4),)), Sample((randn(rng),)),
            Sample((randn(rng), 0)), Sample((randn(rng, 0, 3), 1)), Sample((nans(rng, 6),)),
            Sample((np.zeros((0, 3)),), raises=IndexError),
            Sample((np.zeros((0, 3)), 0), raises=IndexError),
            Sample((bools(rng, 3),), raises=RuntimeError)]


def _amax_samples(rng):
    return [
        Sample((distinct(rng, 3, 4),)),
        Sample((distinct(rng, 3, 4), 1)),
        Sample((distinct(rng, 2, 3, 4), (0, 2))),
        Sample((distinct(rng, 2, 3, 4), (-1,), True)),
        Sample((distinct(rng, 4, 3), 0), noncontig=(0,)),
        Sample((distinct(rng),)),
        Sample((np.zeros((0, 3)), 1)),
        Sample((integers(rng, 3, 4), 0)),
        Sample((bools(rng, 3, 4), 1)),
        Sample((np.zeros((0, 3)),), raises=RuntimeError),
        Sample((np.zeros((0, 3)), 0), raises=IndexError),
    ]


def _amax_ties(rng):
    """Ties: the gradient is shared evenly among them (no finite differences there)."""
    return [Sample((np.array([[1.0, 3.0, 3.0, 2.0], [0.5, 0.5, 0.5, 0.5]]), 1)),
            Sample((ties(rng, 3, 4),)), Sample((ties(rng, 2, 3, 4), (0, 2), True))]


def _logic_samples(rng):
    x = randn(rng, 3, 4)
    x[0] = 0.0
    return [Sample((x,)), Sample((x, 1)), Sample((bools(rng, 3, 4), 0)),
            Sample((bools(rng, 2, 3, 4), (0, 2)), {"keepdim": True}),
            Sample((integers(rng, 3, 4, low=0, high=2),)), Sample((integers(rng, 3, 4).astype(np.uint8), 1)),
            Sample((nans(rng, 3, 4), 1)), Sample((np.zeros((0, 3)), 0)), Sample((np.zeros((0, 3)),)),
            Sample((bools(rng),)), Sample((bools(rng, 4, 3), 0), noncontig=(0,))]


def _allclose_samples(rng):
    x = randn(rng, 3, 4)
    return [Sample((x, x + 1e-9)), Sample((x, x + 1e-3)), Sample((x, x + 1e-3), {"atol": 1e-2}),
            Sample((x, x[0])), Sample((nans(rng, 3), nans(rng, 3))),
            Sample((np.array([np.nan, 1.0]), np.array([np.nan, 1.0])), {"equal_nan": True}),
            Sample((integers(rng, 3), integers(rng, 3))),
            Sample((x, x.astype(np.float32)), raises=RuntimeError)]


def _equal_samples(rng):
    x = randn(rng, 3, 4)
    i = integers(rng, 3, 4)
    return [Sample((x, x.copy())), Sample((x, x + 1)), Sample((x, x[:, :2])), Sample((i, i.copy())),
            Sample((i, i.astype(np.float64))), Sample((bools(rng, 3), bools(rng, 3))),
            Sample((np.zeros((0, 3)), np.zeros((0, 3)))), Sample((nans(rng, 3), nans(rng, 3)))]


def _prod_samples(rng):
    return full_and_dims(randn, tuple_dims=False)(rng)[:-1] + [
        Sample((with_zeros(rng, 4, 5), 1)),
        Sample((np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 1.5], [1.0, 2.0, 0.5]]), 1)),
        Sample((np.array([0.0, 2.0, 3.0]),)),
        Sample((np.array([0.0, 2.0, 0.0]),)),
        Sample((integers(rng, 3, 4),)), Sample((integers(rng, 3, 4), 1)),
        Sample((bools(rng, 3, 4),)), Sample((integers(rng, 2, 3).astype(np.uint8),)),
    ]


def _nan_samples(rng):
    return [Sample((nans(rng, 3, 4),)), Sample((nans(rng, 3, 4), 1)),
            Sample((nans(rng, 2, 3, 4), (0, 2), True)), Sample((nans(rng, 4, 3), 0), noncontig=(0,)),
            Sample((randn(rng, 3, 4),)), Sample((np.zeros((0, 3)), 1)), Sample((randn(rng),))]


def _all_nan(rng):
    """Every element NaN: NaN gradients (parity only; finite differences cannot compare)."""
    return [Sample((np.full((2, 3), np.nan), 1)), Sample((np.full((2, 3), np.nan),))]


def _count_samples(rng):
    x = randn(rng, 3, 4)
    x[x < 0] = 0
    return [Sample((x,)), Sample((x, 1)), Sample((x, (0, 1))), Sample((integers(rng, 2, 3, 4), -1)),
            Sample((bools(rng, 3, 4), 0)), Sample((np.zeros((0, 3)), 0))]


register(
    OpInfo("sum", fn("sum"), full_and_dims()),
    OpInfo("sum", fn("sum"), int_full_and_dims, variant="int", grad=False),
    OpInfo("sum", method("sum"), lambda rng: [Sample((randn(rng, 3, 4), 1), {"keepdim": True}),
                                              Sample((randn(rng, 3, 4),))],
           variant="method"),
    OpInfo("mean", fn("mean"), full_and_dims()),
    OpInfo("mean", fn("mean"), lambda rng: [Sample((integers(rng, 3, 4),), raises=RuntimeError)],
           variant="int", grad=False),
    OpInfo("sum_to_size", lambda lib, x, *s: x.sum_to_size(*s),
           lambda rng: [Sample((randn(rng, 3, 4), 1, 4)), Sample((randn(rng, 2, 3, 4), (3, 1))),
                        Sample((randn(rng, 3, 4), 3, 4))]),
    OpInfo("max", fn("max"), _max_samples, covers=("return_types",)),
    OpInfo("max", fn("max"), _max_other, variant="other", grad=False),
    OpInfo("max", method("max"), lambda rng: [Sample((distinct(rng, 3, 4),)), Sample((distinct(rng, 3, 4), 1)),
                                              Sample((randn(rng, 3, 4), randn(rng, 4)))],
           variant="method"),
    OpInfo("min", fn("min"), _max_samples),
    OpInfo("min", fn("min"), _max_other, variant="other", grad=False),
    OpInfo("min", method("min"), lambda rng: [Sample((distinct(rng, 3, 4), 0, True))], variant="method"),
    OpInfo("argmax", fn("argmax"), _argmax_samples, grad=False),
    OpInfo("argmax", method("argmax"), lambda rng: [Sample((randn(rng, 3, 4), 1))], variant="method",
           grad=False),
    OpInfo("argmin", fn("argmin"), _argmax_samples, grad=False),
    OpInfo("amax", fn("amax"), _amax_samples),
    OpInfo("amax", fn("amax"), _amax_ties, variant="ties", grad=False),
    OpInfo("amin", fn("amin"), _amax_samples),
    OpInfo("amin", fn("amin"), _amax_ties, variant="ties", grad=False),
    OpInfo("all", fn("all"), _logic_samples, grad=False),
    OpInfo("any", fn("any"), _logic_samples, grad=False),
    OpInfo("any", method("any"), lambda rng: [Sample((bools(rng, 3, 4), 1))], variant="method", grad=False),
    OpInfo("allclose", fn("allclose"), _allclose_samples, grad=False),
    OpInfo("equal", fn("equal"), _equal_samples, grad=False),
    OpInfo("equal", method("equal"), lambda rng: [Sample((randn(rng, 2), randn(rng, 2)))],
           variant="method", grad=False),
    OpInfo("prod", fn("prod"), _prod_samples),
    OpInfo("prod", lambda lib, x, *a: lib.prod(x, *a, dtype=lib.float64),
           lambda rng: [Sample((randn(rng, 3, 4), 1)), Sample((integers(rng, 3, 4),))],
           variant="dtype"),
    OpInfo("count_nonzero", fn("count_nonzero"), _count_samples, grad=False),
    OpInfo("nansum", fn("nansum"), _nan_samples),
    OpInfo("nansum", fn("nansum"), int_full_and_dims, variant="int", grad=False),
    OpInfo("nansum", fn("nansum"), _all_nan, variant="all_nan", grad=False),
    OpInfo("nanmean", fn("nanmean"), _all_nan, variant="all_nan", grad=False),
    OpInfo("nanmean", fn("nanmean"), _nan_samples),
    OpInfo("nanmean", fn("nanmean"), lambda rng: [Sample((integers(rng, 3),), raises=RuntimeError)],
           variant="int", grad=False),
)


# ---- statistics.py ---------------------------------------------------------------------------------
def _var_samples(rng):
    return [
        Sample((randn(rng, 3, 4),)),
        Sample((randn(rng, 3, 4), 1)),
        Sample((randn(rng, 3, 4), 0, False)),          # var(x, dim, unbiased)
        Sample((randn(rng, 2, 3, 4), (0, 2), True, True)),
        Sample((randn(rng, 3, 4), True)),              # var(x, unbiased)
        Sample((randn(rng, 3, 4), False)),
        Sample((randn(rng, 3, 4), -1), {"correction": 0, "keepdim": True}),
        Sample((randn(rng, 3, 4),), {"correction": 2}),
        Sample((randn(rng, 4, 3), 0), noncontig=(0,)),
        Sample((randn(rng, 5),), noncontig=(0,)),
        Sample((randn(rng),), {"correction": 0}),
        Sample((np.zeros((0, 3)), 1)),
        Sample((integers(rng, 3, 4),), raises=RuntimeError),
    ]


def _norm_samples(rng):
    x = randn(rng, 3, 4)
    return [
        Sample((x,)), Sample((x, 1)), Sample((x, 2)), Sample((x, 3)), Sample((x, 0.5)),
        Sample((x, 1.5)), Sample((distinct(rng, 3, 4), float("inf"))),
        Sample((distinct(rng, 3, 4), float("-inf"), 1)), Sample((x, 0)),
        Sample((x, "fro", (0, 1))), Sample((x,), {"dim": 1}), Sample((x, 2, 0, True)),
        Sample((randn(rng, 2, 3, 4), 2, (0, 2))), Sample((randn(rng, 4, 3), 2, 1), noncontig=(0,)),
        Sample((randn(rng),)), Sample((np.zeros((0, 3)),)),
        Sample((integers(rng, 3),), raises=RuntimeError),
        Sample((np.zeros((0, 3)), float("inf")), raises=RuntimeError),
        Sample((np.zeros((0, 3)), float("inf"), 0), raises=RuntimeError),
        Sample((x, "abc"), raises=RuntimeError),
        Sample((x, "fro", (0, 1, 1)), raises=RuntimeError),
    ]


def _zero_norm_samples(rng):
    """Slices of zeros: the p-norm's kink (first derivatives only: the second is unbounded)."""
    x = randn(rng, 3, 4)
    x[1] = 0.0
    return [Sample((x, 2, 1)), Sample((x, 3, 1)), Sample((x, 1.5, 1)), Sample((np.zeros(3),))]


def _nuc_samples(rng):
    return [Sample((randn(rng, 3, 4), "nuc")), Sample((randn(rng, 2, 3, 4), "nuc", (0, 2))),
            Sample((randn(rng, 3, 4), "nuc"), {"keepdim": True}),
            Sample((randn(rng, 2, 3, 4), "nuc"), raises=RuntimeError)]


def _logsumexp_samples(rng):
    return [Sample((randn(rng, 3, 4), 1)), Sample((randn(rng, 2, 3, 4), (0, 2), True)),
            Sample((randn(rng, 4, 3) * 300, 0), noncontig=(0,)), Sample((randn(rng), 0)),
            Sample((np.zeros((0, 3)), 0)), Sample((np.zeros((0, 3)), 1)),
            Sample((integers(rng, 3, 4), 1))]


register(
    OpInfo("var", fn("var"), _var_samples),
    OpInfo("var", method("var"), lambda rng: [Sample((randn(rng, 3, 4), 1))], variant="method"),
    OpInfo("std", fn("std"), _var_samples),
    OpInfo("std", method("std"), lambda rng: [Sample((randn(rng, 3, 4), 1), {"keepdim": True})],
           variant="method"),
    OpInfo("var_mean", fn("var_mean"), _var_samples),
    OpInfo("std_mean", fn("std_mean"), _var_samples),
    OpInfo("norm", fn("norm"), _norm_samples),
    OpInfo("norm", fn("norm"), _zero_norm_samples, variant="zero", gradgrad=False),
    OpInfo("norm", method("norm"), lambda rng: [Sample((randn(rng, 3, 4), 1, 1))], variant="method"),
    # the nuclear norm's derivative holds U and V constant: first order only
    OpInfo("norm", fn("norm"), _nuc_samples, variant="nuc", gradgrad=False),
    OpInfo("logsumexp", fn("logsumexp"), _logsumexp_samples),
    OpInfo("logsumexp", fn("logsumexp"),
           lambda rng: [Sample((np.array([[-np.inf, -np.inf], [np.inf, 1.0], [-np.inf, 2.0]]), 1))],
           variant="inf", grad=False),
    OpInfo("logsumexp", method("logsumexp"), lambda rng: [Sample((randn(rng, 3, 4), -1))],
           variant="method"),
)


# ---- cumulative.py ------------------------------------------------------------------------------------
def scan_samples(gen=randn):
    def samples(rng):
        return [Sample((gen(rng, 3, 4), 1)), Sample((gen(rng, 2, 3, 4), -3)),
                Sample((gen(rng, 4, 3), 0), noncontig=(0,)), Sample((gen(rng, 5), 0), noncontig=(0,)),
                Sample((gen(rng), 0)), Sample((gen(rng, 0, 3), 1)),
                Sample((gen(rng, 3), 1), raises=IndexError)]
    return samples


def _scan_int(rng):
    return [Sample((integers(rng, 3, 4), 1)), Sample((bools(rng, 3, 4), 0)),
            Sample((integers(rng, 3, 4).astype(np.int32), 1))]


def _cumprod_samples(rng):
    return scan_samples(randn)(rng) + [
        Sample((with_zeros(rng, 4, 5), 1)),
        Sample((np.array([[0.0, 2.0, 3.0, 0.5], [1.5, 0.0, 0.0, 2.0], [0.5, 2.0, 3.0, 0.0]]), 1)),
    ]


def _cummax_samples(rng):
    return scan_samples(distinct)(rng) + [Sample((integers(rng, 3, 4), 0)),
                                          Sample((bools(rng, 3, 4), 1))]


def _cummax_ties(rng):
    return [Sample((ties(rng, 3, 6), 1)), Sample((nans(rng, 3, 6), 1))]


def _diff_samples(rng):
    return [
        Sample((randn(rng, 3, 4),)), Sample((randn(rng, 3, 4), 2, 0)),
        Sample((randn(rng, 3, 4), 1, 1), {"prepend": randn(rng, 3, 2), "append": randn(rng, 3, 1)}),
        Sample((randn(rng, 4, 3), 1, 0), noncontig=(0,)), Sample((randn(rng, 2, 3), 3, 0)),
        Sample((randn(rng, 3, 4), 0)), Sample((integers(rng, 3, 4),)), Sample((bools(rng, 5),)),
        Sample((randn(rng),), raises=RuntimeError),
        Sample((randn(rng, 3), -1), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 1, 1), {"prepend": randn(rng, 2, 1)}, raises=RuntimeError),
        Sample((randn(rng, 3, 4), 1, 1), {"prepend": randn(rng, 3)}, raises=RuntimeError),
    ]


register(
    OpInfo("cumsum", fn("cumsum"), scan_samples()),
    OpInfo("cumsum", fn("cumsum"), _scan_int, variant="int", grad=False),
    OpInfo("cumsum", lambda lib, x, d: x.cumsum(d, dtype=lib.float64),
           lambda rng: [Sample((randn(rng, 3, 4), 1)), Sample((integers(rng, 3, 4), 0))],
           variant="method_dtype"),
    OpInfo("cumsum_", lambda lib, x, d: x.clone().cumsum_(d), lambda rng: [Sample((randn(rng, 3, 4), 1))]),
    OpInfo("cumprod", fn("cumprod"), _cumprod_samples),
    OpInfo("cumprod", fn("cumprod"), _scan_int, variant="int", grad=False),
    OpInfo("cumprod_", lambda lib, x, d: x.clone().cumprod_(d),
           lambda rng: [Sample((with_zeros(rng, 3, 4), 1))]),
    OpInfo("cummax", fn("cummax"), _cummax_samples),
    OpInfo("cummax", fn("cummax"), _cummax_ties, variant="ties", grad=False),
    OpInfo("cummin", fn("cummin"), _cummax_samples),
    OpInfo("cummin", fn("cummin"), _cummax_ties, variant="ties", grad=False),
    OpInfo("cummin", method("cummin"), lambda rng: [Sample((distinct(rng, 3, 4), 1))], variant="method"),
    OpInfo("logcumsumexp", fn("logcumsumexp"), lambda rng: scan_samples()(rng) + [
        Sample((randn(rng, 3, 4) * 300, 1)),
        Sample((integers(rng, 3), 0), raises=NotImplementedError)]),
    OpInfo("diff", fn("diff"), _diff_samples),
    OpInfo("diff", method("diff"), lambda rng: [Sample((randn(rng, 3, 4),), {"dim": 0})],
           variant="method"),
)
