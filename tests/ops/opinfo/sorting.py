"""Op-table entries for `ember/ops/sorting.py`: sort, argsort, msort, topk, kthvalue, median,
nanmedian, mode, unique, unique_consecutive."""
import numpy as np

from . import OpInfo, Sample, integers, randn, register
from .reduction import bools, distinct, fn, method, nans, ties


def distinct_ints(rng, *shape):
    """Distinct integers: where PyTorch breaks ties is unspecified (partial sorts)."""
    return rng.permutation(int(np.prod(shape))).reshape(shape) - 3


def _sort_samples(rng):
    return [
        Sample((distinct(rng, 3, 4),)),
        Sample((distinct(rng, 3, 4), 0)),
        Sample((distinct(rng, 2, 3, 4), -2, True)),
        Sample((distinct(rng, 4, 3), 0), noncontig=(0,)),
        Sample((distinct(rng, 6), 0), noncontig=(0,)),
        Sample((distinct(rng),)),
        Sample((np.zeros((0, 3)), 0)),
        Sample((integers(rng, 3, 6),), {"stable": True}),
        Sample((integers(rng, 3, 6),), {"dim": 0, "descending": True, "stable": True}),
        Sample((bools(rng, 3, 6),), {"stable": True}),
        Sample((randn(rng, 3), 2), raises=IndexError),
    ]


def _sort_ties(rng):
    """Ties and NaN: no derivative there (parity of values, indices and gradients only)."""
    return [Sample((ties(rng, 3, 6),), {"stable": True}),
            Sample((ties(rng, 3, 6),), {"dim": 1, "descending": True, "stable": True}),
            Sample((nans(rng, 3, 6),)), Sample((nans(rng, 3, 6), 1, True))]


def _topk_ties(rng):
    return [Sample((nans(rng, 6), 2)), Sample((np.array([3.0, np.nan, 1.0, 2.0]), 2, 0, False))]


def _kthvalue_ties(rng):
    return [Sample((np.array([3.0, np.nan, 1.0, 2.0]), 4)), Sample((nans(rng, 3, 5), 2))]


def _argsort_samples(rng):
    return [Sample((randn(rng, 3, 4),)), Sample((randn(rng, 3, 4), 0, True)),
            Sample((ties(rng, 3, 6),), {"stable": True}),
            Sample((ties(rng, 3, 6),), {"dim": -1, "descending": True, "stable": True}),
            Sample((integers(rng, 4, 3), 0), noncontig=(0,)), Sample((randn(rng),)),
            Sample((np.zeros((0, 3)), 1))]


def _topk_samples(rng):
    return [
        Sample((distinct(rng, 3, 5), 2)),
        Sample((distinct(rng, 3, 5), 3, 0)),
        Sample((distinct(rng, 2, 3, 4), 2, -1, False)),
        Sample((distinct(rng, 5, 4), 2, 0), noncontig=(0,)),
        Sample((distinct(rng, 3, 5), 0)),
        Sample((distinct(rng, 3, 5), 5)),
        Sample((distinct(rng), 1)),
        Sample((distinct(rng, 3, 5), 2), {"largest": False, "sorted": True}),
        Sample((distinct_ints(rng, 3, 5), 2)),
        Sample((distinct(rng, 3, 5), 6), raises=RuntimeError),
        Sample((bools(rng, 4), 1), raises=RuntimeError),
    ]


def _kthvalue_samples(rng):
    return [
        Sample((distinct(rng, 3, 5), 2)),
        Sample((distinct(rng, 3, 5), 1, 0)),
        Sample((distinct(rng, 2, 3, 4), 4, -1, True)),
        Sample((distinct(rng, 5, 4), 3, 0), noncontig=(0,)),
        Sample((distinct(rng), 1)),
        Sample((distinct_ints(rng, 3, 5), 3)),
        Sample((distinct(rng, 3, 5), 6), raises=RuntimeError),
        Sample((distinct(rng, 3, 5), 0), raises=RuntimeError),
        Sample((bools(rng, 4), 1), raises=NotImplementedError),
    ]


def _median_samples(rng):
    return [
        Sample((distinct(rng, 3, 5),)),
        Sample((distinct(rng, 3, 4),)),
        Sample((distinct(rng, 3, 5), 1)),
        Sample((distinct(rng, 3, 4), 1)),
        Sample((distinct(rng, 2, 3, 4), 0, True)),
        Sample((distinct(rng, 5, 4), -2), noncontig=(0,)),
        Sample((distinct(rng),)),
        Sample((distinct(rng), 0)),
        Sample((np.zeros((0, 3)), 1)),
        Sample((integers(rng, 5),)),
        Sample((np.zeros((0, 3)), 0), raises=IndexError),
        Sample((bools(rng, 4),), raises=NotImplementedError),
    ]


def _median_ties(rng):
    """Ties (the whole-tensor median's gradient is shared among them) and NaN."""
    return [Sample((ties(rng, 3, 5),)), Sample((np.array([1.0, 3.0, 3.0, 2.0, 3.0]),)),
            Sample((np.array([[1.0, np.nan, 3.0, np.nan], [2.0, 0.5, 1.0, 4.0]]), 1)),
            Sample((np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan]]),)),
            Sample((np.array([[np.nan, np.nan], [1.0, np.nan]]), 1)),
            Sample((np.array([1.0, np.nan, 3.0, 2.5]),))]


def _nanmedian_samples(rng):
    return _median_samples(rng)[:9]


def _mode_samples(rng):
    return [
        Sample((integers(rng, 3, 7, low=0, high=3),)),
        Sample((integers(rng, 3, 7, low=0, high=3), 0)),
        Sample((integers(rng, 2, 3, 6, low=0, high=3), 1, True)),
        Sample((np.array([2, 1, 1, 2, 3, 2, 1]),)),
        Sample((ties(rng, 4, 6),)),
        Sample((ties(rng, 6, 4), 0), noncontig=(0,)),
        Sample((bools(rng, 3, 5),)),
        Sample((distinct(rng, 3, 5),)),
        Sample((distinct(rng),)),
        Sample((np.zeros((0, 3)), 1)),
        Sample((np.zeros((0, 3)), 0), raises=IndexError),
    ]


def _unique_samples(rng):
    i = integers(rng, 3, 4, low=0, high=4)
    return [
        Sample((i,)),
        Sample((i,), {"return_inverse": True, "return_counts": True}),
        Sample((i,), {"return_counts": True}),
        Sample((i,), {"sorted": False, "return_inverse": True}),
        Sample((np.array([[1, 2], [1, 2], [0, 5]]),), {"dim": 0, "return_inverse": True,
                                                         "return_counts": True}),
        Sample((i,), {"dim": 1, "return_inverse": True}),
        Sample((ties(rng, 8),), grad=()),
        Sample((np.array([np.nan, 1.0, np.nan]),), grad=()),
        Sample((bools(rng, 6),)),
        Sample((integers(rng),)),
        Sample((np.zeros((0, 3)),), {"dim": 0}, grad=()),
        Sample((np.zeros((0, 3)),), {"dim": 1}, raises=RuntimeError),
    ]


def _unique_consecutive_samples(rng):
    return [
        Sample((np.array([1, 1, 2, 2, 3, 1, 1]),), {"return_inverse": True, "return_counts": True}),
        Sample((integers(rng, 3, 4, low=0, high=2),)),
        Sample((np.array([[1, 1], [1, 1], [2, 3], [1, 1]]),), {"dim": 0, "return_counts": True,
                                                                "return_inverse": True}),
        Sample((np.array([[1, 1, 2], [1, 1, 3]]),), {"dim": 1}),
        Sample((ties(rng, 8),), grad=()),
        Sample((integers(rng),)),
        Sample((np.zeros((0,)),), grad=()),
    ]


register(
    OpInfo("sort", fn("sort"), _sort_samples),
    OpInfo("sort", fn("sort"), _sort_ties, variant="ties", grad=False),
    OpInfo("sort", method("sort"), lambda rng: [Sample((distinct(rng, 3, 4),), {"descending": True})],
           variant="method"),
    OpInfo("argsort", fn("argsort"), _argsort_samples, grad=False),
    OpInfo("argsort", method("argsort"), lambda rng: [Sample((randn(rng, 3, 4), 0))], variant="method",
           grad=False),
    OpInfo("msort", fn("msort"), lambda rng: [Sample((distinct(rng, 4, 3),)), Sample((integers(rng, 5),)),
                                              Sample((distinct(rng, 3, 4),), noncontig=(0,))]),
    OpInfo("msort", method("msort"), lambda rng: [Sample((distinct(rng, 4, 3),))], variant="method"),
    OpInfo("topk", fn("topk"), _topk_samples),
    OpInfo("topk", fn("topk"), _topk_ties, variant="nan", grad=False),
    OpInfo("topk", method("topk"), lambda rng: [Sample((distinct(rng, 3, 4), 2))], variant="method"),
    OpInfo("kthvalue", fn("kthvalue"), _kthvalue_samples),
    OpInfo("kthvalue", fn("kthvalue"), _kthvalue_ties, variant="nan", grad=False),
    OpInfo("kthvalue", method("kthvalue"), lambda rng: [Sample((distinct(rng, 3, 4), 2, 0))],
           variant="method"),
    OpInfo("median", fn("median"), _median_samples),
    OpInfo("median", fn("median"), _median_ties, variant="ties", grad=False),
    OpInfo("median", method("median"), lambda rng: [Sample((distinct(rng, 3, 5), 1))], variant="method"),
    OpInfo("nanmedian", fn("nanmedian"), _nanmedian_samples),
    OpInfo("nanmedian", fn("nanmedian"), _median_ties, variant="ties", grad=False),
    OpInfo("nanmedian", method("nanmedian"), lambda rng: [Sample((nans(rng, 3, 5), 1))],
           variant="method", grad=False),
    # the mode's value is piecewise constant: finite differences over ties mean nothing
    OpInfo("mode", fn("mode"), _mode_samples, grad=False),
    OpInfo("mode", method("mode"), lambda rng: [Sample((integers(rng, 3, 6, low=0, high=3), 0))],
           variant="method"),
    # unique's derivative is not implemented, in PyTorch as here
    OpInfo("unique", fn("unique"), _unique_samples, grad=False),
    OpInfo("unique", method("unique"), lambda rng: [Sample((integers(rng, 5, low=0, high=3),),
                                                           {"return_counts": True})],
           variant="method", grad=False),
    OpInfo("unique_consecutive", fn("unique_consecutive"), _unique_consecutive_samples, grad=False),
    OpInfo("unique_consecutive", method("unique_consecutive"),
           lambda rng: [Sample((np.array([1, 1, 2, 1]),), {"return_counts": True})],
           variant="method", grad=False),
)
