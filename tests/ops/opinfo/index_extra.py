"""Op-table entries for `ember/ops/index_extra.py` (unravel_index, narrow_copy, index_reduce,
fill_diagonal_) and `ember/ops/vander.py` (vander, linalg.vander)."""
import warnings

import numpy as np

from . import OpInfo, Sample, away_from, integers, randn, register


def _unravel(rng):
    return [
        Sample((np.array([4, 1, 11]), (3, 4))),
        Sample((np.array(5), (3, 4))),
        Sample((np.array([[4, 1], [0, 2]]), [3, 4])),
        Sample((np.array([12, -1, -13]), (3, 4))),        # out of range wraps, as PyTorch's
        Sample((np.array([1]), ())),
        Sample((np.array([1]), 5)),
        Sample((np.array([1], np.int32), (2, 3))),
        Sample((np.array([1.0]), (3, 4)), raises=TypeError),
        Sample((np.array([True]), (2,)), raises=TypeError),
        Sample((np.array([1]), (3, -4)), raises=ValueError),
        Sample((np.array([1]), (2.0,)), raises=TypeError),
    ]


def _narrow_copy(rng):
    return [
        Sample((randn(rng, 3, 4), 1, 1, 2)),
        Sample((randn(rng, 3, 4), 0, -1, 1)),
        Sample((randn(rng, 4, 3), 1, 0, 2), noncontig=(0,)),
        Sample((randn(rng, 3, 4), 1, 2, 0)),
        Sample((integers(rng, 3, 4), 0, 1, 2)),
        Sample((randn(rng, 3, 4), 0, 2, 2), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 2, 0, 1), raises=RuntimeError),
        Sample((randn(rng, 3, 4), -3, 0, 1), raises=IndexError),
        Sample((randn(rng), 0, 0, 1), raises=RuntimeError),
    ]


# PyTorch's derivative of narrow_copy slices from the start as given: a negative start gives
# an empty slice, so its gradient (under create_graph) is all zeros; ember's is the true one
# (gradcheck and gradgradcheck pass)
_NEGATIVE_START = {(k, 1): "PyTorch's narrow_copy gradient is zero for a negative start"
                   for k in ("parity", "parity_float32")}


def _reduce(rng):
    out = []
    for reduce in ("prod", "mean", "amax", "amin"):
        for include_self in (True, False):
            out.append(Sample((away_from(rng, 3, 4), 0, np.array([0, 2, 0]), away_from(rng, 3, 4),
                               reduce), dict(include_self=include_self)))
    return out + [
        Sample((randn(rng, 3, 4), -1, np.array([3, 0]), randn(rng, 3, 2), "mean")),
        Sample((randn(rng, 4, 3), 1, np.array([1], np.int32), randn(rng, 4, 1), "prod"),
               noncontig=(0,)),
        Sample((randn(rng), 0, np.array([0]), randn(rng), "prod")),
        Sample((integers(rng, 3, 4), 1, np.array([0, 0, 3]), integers(rng, 3, 3), "mean")),
        Sample((randn(rng, 3, 4), 0, np.array([0, 2]), randn(rng, 2, 4), "sum"), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 0, np.array([0.0, 2.0]), randn(rng, 2, 4), "prod"),
               raises=RuntimeError),
        Sample((randn(rng, 3, 4), 0, np.array([0, 5]), randn(rng, 2, 4), "prod"), raises=IndexError),
        Sample((randn(rng, 3, 4), 0, np.array([-1]), randn(rng, 1, 4), "amin"), raises=IndexError),
        Sample((randn(rng, 3, 4), 0, np.array([0]), randn(rng, 2, 4), "prod"), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 0, np.array([0, 2]), randn(rng, 2, 3), "prod"), raises=RuntimeError),
        Sample((randn(rng, 3, 4), 2, np.array([0, 2]), randn(rng, 2, 4), "prod"), raises=IndexError),
        Sample((randn(rng, 3, 4), 0, np.array([[0], [2]]), randn(rng, 2, 4), "prod"),
               raises=IndexError),
        Sample((randn(rng, 3, 4), 0, np.array([0, 2]), randn(rng, 2, 4).astype(np.float32), "prod"),
               grad=(), raises=RuntimeError),
    ]


def _quiet(fn):
    """PyTorch warns once that index_reduce is in beta; which call warns first is order-bound."""
    def call(*a, **k):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*a, **k)
    return call


def _reduce_inplace(lib, x, dim, index, source, reduce, **kw):
    y = x.clone()
    r = y.index_reduce_(dim, index, source, reduce, **kw)
    return y, r is y, y._version


def _fill_diag(lib, x, *a, **k):
    y = x.clone()
    r = y.fill_diagonal_(*a, **k)
    return y, r is y


def _fill_samples(rng):
    return [
        Sample((randn(rng, 3, 4), 5.0)),
        Sample((randn(rng, 7, 3), 5.0), dict(wrap=True)),
        Sample((randn(rng, 7, 3), 5.0)),
        Sample((randn(rng, 8, 3), -1.0), dict(wrap=True)),
        Sample((randn(rng, 2, 2, 2), 2.0)),
        Sample((randn(rng, 4, 3), 0.5), noncontig=(0,)),
        Sample((integers(rng, 3, 4), 2.7)),
        Sample((randn(rng, 2, 3, 2), 1.0), raises=RuntimeError),
        Sample((randn(rng, 3), 1.0), raises=RuntimeError),
    ]


def _vander(rng):
    return [
        Sample((randn(rng, 3),)), Sample((randn(rng, 3), 2)), Sample((randn(rng, 3), 4, True)),
        Sample((randn(rng, 3), 1)), Sample((randn(rng, 3), 0)), Sample((randn(rng, 0),)),
        Sample((integers(rng, 3),)), Sample((np.array([True, False]),)),
        Sample((integers(rng, 2).astype(np.int8), 3, True)),
        Sample((randn(rng, 4),), noncontig=(0,)),
        Sample((randn(rng, 2, 2),), raises=RuntimeError),
        Sample((randn(rng, 2), -1), raises=RuntimeError),
    ]


def _linalg_vander(rng):
    return [
        Sample((randn(rng, 3),)), Sample((randn(rng, 2, 3),)), Sample((randn(rng, 3),), dict(N=2)),
        Sample((randn(rng, 2, 2),), dict(N=4)), Sample((integers(rng, 3).astype(np.int32),)),
        Sample((randn(rng, 3, 2),), noncontig=(0,)),
        Sample((randn(rng),), raises=RuntimeError),
        Sample((randn(rng, 2),), dict(N=1), raises=RuntimeError),
        Sample((np.array([True, False]),), raises=RuntimeError),
    ]


register(
    OpInfo("unravel_index", lambda lib, i, s: lib.unravel_index(i, s), _unravel, grad=False),
    OpInfo("narrow_copy", lambda lib, x, *a: lib.narrow_copy(x, *a), _narrow_copy,
           xfail=_NEGATIVE_START),
    OpInfo("narrow_copy", lambda lib, x, *a: (lambda r: (r, r._is_view(), r.is_contiguous()))(
        x.narrow_copy(*a)), _narrow_copy, variant="method", xfail=_NEGATIVE_START),
    OpInfo("index_reduce", _quiet(lambda lib, x, *a, **k: lib.index_reduce(x, *a, **k)), _reduce),
    OpInfo("index_reduce", _quiet(lambda lib, x, *a, **k: x.index_reduce(*a, **k)), _reduce,
           variant="method"),
    OpInfo("index_reduce_", _quiet(_reduce_inplace), _reduce),
    OpInfo("fill_diagonal_", _fill_diag, _fill_samples),
    OpInfo("fill_diagonal_", lambda lib, x: x.fill_diagonal_(1.0),
           lambda rng: [Sample((randn(rng, 3, 3),), raises=RuntimeError)], variant="leaf",
           grad=False),
    # PyTorch 2.13's torch.vander cannot be differentiated for N > 2 (its in-place cumprod on
    # a slice trips the version check), so only values are compared; gradcheck runs on ember's
    OpInfo("vander", lambda lib, x, *a: lib.vander(x, *a), _vander, grad_parity=False),
    OpInfo("vander", lambda lib, x: lib.vander(x, N=3, increasing=True),
           lambda rng: [Sample((randn(rng, 2),))], variant="keywords", grad_parity=False),
    OpInfo("linalg.vander", lambda lib, x, **k: lib.linalg.vander(x, **k), _linalg_vander),
)
