"""Op-table entries for `ember/ops/histograms.py`: bincount, histc, histogram and isin (none
differentiable: parity of values, dtypes, grad_fns and errors)."""
import numpy as np

from . import OpInfo, Sample, integers, randn, register


def _named(res):
    def flat(r):
        return [t for item in r for t in flat(item)] if isinstance(r, tuple) else [r]
    return res, tuple(None if o.grad_fn is None else type(o.grad_fn).__name__ for o in flat(res))


def _counts(rng, n=20, high=7):
    return rng.integers(0, high, n, dtype=np.int64)


def _bincount_samples(rng):
    return [
        Sample((_counts(rng),)),
        Sample((_counts(rng).astype(np.int32),), {"minlength": 10}),
        Sample((_counts(rng).astype(np.uint8), None, 3)),
        Sample((_counts(rng), rng.standard_normal(20).astype(np.float32)), grad=()),
        Sample((_counts(rng), integers(rng, 20))),
        Sample((np.zeros(0, np.int64),), {"minlength": 4}),
        Sample((np.zeros(0, np.int64), randn(rng, 0))),
        Sample((_counts(rng, n=8),), noncontig=(0,)),
        Sample((np.array([1, -1, 2]),), raises=RuntimeError),
        Sample((_counts(rng).reshape(4, 5),), raises=RuntimeError),
        Sample((randn(rng, 3),), raises=NotImplementedError),
        Sample((np.array([True, False]),), raises=NotImplementedError),
        Sample((_counts(rng), randn(rng, 3)), raises=RuntimeError),
        Sample((_counts(rng),), {"minlength": -1}, raises=RuntimeError),
    ]


def _weights_backward(lib, x, w):
    """PyTorch records bincount on its weights; backward says it has no derivative."""
    return lib.bincount(x, w).sum().backward()


def _histc_samples(rng):
    return [
        Sample((randn(rng, 50),), grad=()),
        Sample((randn(rng, 4, 5), 7), grad=()),
        Sample((randn(rng, 30), 5, -1.0, 1.0), grad=()),
        Sample((randn(rng, 30),), {"bins": 4, "min": 2, "max": 2}, grad=()),
        Sample((np.array([1.0, 1.0]), 3), grad=()),
        Sample((np.zeros(0), 3), grad=()),
        Sample((np.linspace(0.0, 9.0, 10), 3), grad=()),
        Sample((np.arange(12.0).reshape(3, 4), 6), noncontig=(0,), grad=()),
        Sample((randn(rng, 10), 4), grad=(0,)),  # an input that requires grad: no graph
        Sample((integers(rng, 5), 3), raises=NotImplementedError),
        Sample((randn(rng, 5), 0), raises=RuntimeError),
        Sample((randn(rng, 5), 3, 3.0, 1.0), raises=RuntimeError),
        Sample((np.array([1.0, np.inf]), 3), raises=RuntimeError),
    ]


def _histogram_samples(rng):
    edges = np.array([-1.5, -0.25, 0.0, 0.5, 2.0])
    return [
        Sample((randn(rng, 50), 6), grad=()),
        Sample((randn(rng, 5, 6), 4), grad=()),
        Sample((randn(rng, 40), edges), grad=()),
        Sample((randn(rng, 40), 3), {"range": (-1.0, 1.0), "weight": randn(rng, 40)}, grad=()),
        Sample((randn(rng, 40), 5), {"density": True}, grad=()),
        Sample((randn(rng, 40), edges), {"density": True, "weight": np.abs(randn(rng, 40))},
               grad=()),
        Sample((np.array([1.0, 1.0]), 2), grad=()),
        Sample((np.zeros(0), 2), grad=()),
        Sample((np.linspace(0.0, 3.0, 4), 3), {"range": (0, 3)}, grad=()),
        Sample((np.arange(12.0).reshape(3, 4), 5), noncontig=(0,), grad=()),
        Sample((integers(rng, 5), 3), raises=NotImplementedError),
        Sample((randn(rng, 5), 0), raises=RuntimeError),
        Sample((randn(rng, 5), 3), {"range": (3.0, 1.0)}, raises=RuntimeError),
        Sample((randn(rng, 5), 3), {"weight": randn(rng, 2)}, raises=RuntimeError),
        Sample((randn(rng, 5), np.ones((2, 2))), raises=RuntimeError),
        Sample((randn(rng, 5), integers(rng, 3)), raises=RuntimeError),
        Sample((randn(rng, 5), np.array([1.0])), raises=RuntimeError),
    ]


def _histogram_weight_dtype(rng):
    return [Sample((randn(rng, 5).astype(np.float32), 3), {"weight": randn(rng, 5)},
                   raises=RuntimeError)]


def _isin_samples(rng):
    return [
        Sample((integers(rng, 3, 4), integers(rng, 5))),
        Sample((integers(rng, 3, 4), 2)),
        Sample((3, integers(rng, 2, 3))),
        Sample((integers(rng, 3, 4), randn(rng, 4).round() + 0.5)),
        Sample((randn(rng, 5).round(1), randn(rng, 6).round(1))),
        Sample((np.array([np.nan, 1.0]), np.array([np.nan, 1.0]))),
        Sample((integers(rng, 5).astype(np.uint8), np.array([-254, 2]))),
        Sample((integers(rng, 3, 4), integers(rng, 5)), {"invert": True}),
        Sample((integers(rng, 3, 4), np.array([0, 2, 4])), {"assume_unique": True}),
        Sample((integers(rng, 4, 3), integers(rng, 3)), noncontig=(0,)),
        Sample((integers(rng, 3), np.zeros(0, np.float32))),
        Sample((randn(rng, 3), randn(rng, 3))),  # requires grad: the result does not
        Sample((1, 2), raises=TypeError),
        Sample((np.array([True]), np.array([True])), raises=RuntimeError),
    ]


register(
    OpInfo("bincount", lambda lib, *a, **k: _named(lib.bincount(*a, **k)), _bincount_samples,
           grad=False),
    OpInfo("bincount", lambda lib, x, *a, **k: x.bincount(*a, **k),
           lambda rng: _bincount_samples(rng)[:3], variant="method", grad=False),
    OpInfo("bincount", _weights_backward, lambda rng: [Sample((_counts(rng), randn(rng, 20)),
                                                              raises=RuntimeError)],
           variant="backward", grad=False),
    OpInfo("histc", lambda lib, *a, **k: _named(lib.histc(*a, **k)), _histc_samples, grad=False),
    OpInfo("histc", lambda lib, x, *a, **k: x.histc(*a, **k), lambda rng: _histc_samples(rng)[:2],
           variant="method", grad=False),
    OpInfo("histc", lambda lib, x: lib.histc(x, 4, out=lib.empty(0, dtype=x.dtype)),
           lambda rng: [Sample((randn(rng, 10),), grad=())], variant="out", grad=False),
    OpInfo("histogram", lambda lib, *a, **k: _named(lib.histogram(*a, **k)), _histogram_samples,
           grad=False),
    OpInfo("histogram", lambda lib, x, *a, **k: lib.histogram(x.float(), *a, **k),
           _histogram_weight_dtype, variant="dtype", grad=False),
    OpInfo("histogram", lambda lib, x, *a, **k: x.histogram(*a, **k),
           lambda rng: _histogram_samples(rng)[:3], variant="method", grad=False),
    OpInfo("isin", lambda lib, *a, **k: _named(lib.isin(*a, **k)), _isin_samples, grad=False),
    # weights (and histogram's input) that require grad: PyTorch's NotImplemented node
    OpInfo("bincount", lambda lib, x, w: _named(lib.bincount(x, w.requires_grad_())),
           lambda rng: [Sample((_counts(rng), randn(rng, 20)), grad=())], variant="graph",
           grad=False),
    OpInfo("histogram", lambda lib, x, w: _named(lib.histogram(x.requires_grad_(), 3, weight=w)),
           lambda rng: [Sample((randn(rng, 6), randn(rng, 6)), grad=())], variant="graph",
           grad=False),
)


# ---- histogramdd ------------------------------------------------------------------------------------
def _histogramdd_samples(rng):
    edges = [np.array([-1.5, 0.0, 0.5, 2.0]), np.array([-2.0, 0.25, 2.0])]
    return [
        Sample((randn(rng, 30, 2), [3, 4]), grad=()),
        Sample((randn(rng, 30, 3), 2), grad=()),
        Sample((randn(rng, 5, 6, 2), (2, 3)), grad=()),
        Sample((randn(rng, 30, 2), edges), grad=()),
        Sample((randn(rng, 30, 2), [3, 2]), {"range": [-1.0, 1.0, 0.0, 2.0],
                                              "weight": randn(rng, 30), "density": True}, grad=()),
        Sample((randn(rng, 30, 2), edges), {"density": True}, grad=()),
        Sample((randn(rng, 4, 5, 2), [2, 2]), {"weight": randn(rng, 4, 5)}, grad=()),
        Sample((np.array([[0.0, 1.0], [1.0, 0.0], [2.0, 0.0], [2.0, 2.0]]), [3, 3]), grad=()),
        Sample((np.zeros((0, 2)), [2, 2]), grad=()),
        Sample((randn(rng, 30, 2), [3]), raises=RuntimeError),
        Sample((randn(rng, 30, 2), edges[:1]), raises=RuntimeError),
        Sample((randn(rng, 30, 2), [3, 3]), {"range": [0.0, 1.0]}, raises=RuntimeError),
        Sample((randn(rng, 30), [2]), raises=RuntimeError),
        Sample((randn(rng, 30, 2), [3, 0]), raises=RuntimeError),
        Sample((randn(rng, 30, 2), [2, 2]), {"range": [0.0, 1.0, 3.0, 2.0]}, raises=RuntimeError),
        Sample((randn(rng, 2, 3, 2), 2), {"weight": randn(rng, 6)}, raises=RuntimeError),
        Sample((integers(rng, 4, 2), [2, 2]), raises=NotImplementedError),
        Sample((randn(rng, 4, 2), 2.5), raises=TypeError),
    ]


register(
    OpInfo("histogramdd", lambda lib, *a, **k: _named(lib.histogramdd(*a, **k)),
           _histogramdd_samples, grad=False),
    OpInfo("histogramdd", lambda lib, x, b: _named(lib.histogramdd(x.requires_grad_(), b)),
           lambda rng: [Sample((randn(rng, 6, 2), [2, 3]), grad=())], variant="graph",
           grad=False),
    OpInfo("histogram", lambda lib, x, w: lib.histogram(x, 3, weight=w),
           lambda rng: [Sample((randn(rng, 5, 6), randn(rng, 6, 5)), grad=()),
                        Sample((randn(rng, 5, 6), randn(rng, 7)), grad=(), raises=RuntimeError)],
           variant="weight_shape", grad=False),
)
register(OpInfo("histogramdd", lambda lib, x: lib.histogramdd(x.requires_grad_(), [2, 2]).hist.sum().backward(),
                lambda rng: [Sample((randn(rng, 6, 2),), grad=(), raises=RuntimeError)],
                variant="backward", grad=False))
