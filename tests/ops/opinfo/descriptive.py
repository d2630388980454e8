"""Op-table entries for `ember/ops/descriptive.py`: aminmax, dist, renorm, quantile,
nanquantile, cov and corrcoef."""
import numpy as np

from . import OpInfo, Sample, integers, positive, randn, register


def _named(res):
    outs = res if isinstance(res, tuple) else (res,)
    return res, tuple(None if o.grad_fn is None else type(o.grad_fn).__name__ for o in outs)


def distinct(rng, *shape):
    """Values 0.5 apart in random order: no ties, and finite differences never reorder them."""
    n = int(np.prod(shape, dtype=np.int64))
    return ((rng.permutation(n) - n / 2 + 0.25) * 0.5).reshape(shape)


def ties(rng, *shape):
    return rng.integers(-2, 3, shape).astype(np.float64)


# ---- aminmax ----------------------------------------------------------------------------------
def _aminmax_samples(rng):
    return [
        Sample((distinct(rng, 3, 4),)),
        Sample((distinct(rng, 3, 4),), {"dim": 1}),
        Sample((distinct(rng, 2, 3, 4),), {"dim": -1, "keepdim": True}),
        Sample((distinct(rng, 3, 4),), {"keepdim": True}),
        Sample((distinct(rng, 4, 3),), {"dim": 0}, noncontig=(0,)),
        Sample((distinct(rng),)),
        Sample((distinct(rng),), {"dim": 0}),
        Sample((integers(rng, 3, 4),), {"dim": 0}),
        Sample((np.asarray(rng.random((3, 4)) < 0.5),)),
        Sample((np.zeros((2, 0)),), {"dim": 0}),
        Sample((np.zeros(0),), raises=RuntimeError),
        Sample((np.zeros((2, 0)),), {"dim": 1}, raises=IndexError),
    ]


def _aminmax_out(lib, x):
    lo, hi = lib.empty(0, dtype=x.dtype), lib.empty(0, dtype=x.dtype)
    res = lib.aminmax(x, dim=0, out=(lo, hi))
    return res, lo, hi


def _aminmax_ties(rng):
    """Ties share the gradient evenly (parity only: ties have no derivative)."""
    return [Sample((ties(rng, 3, 4),), {"dim": 1}), Sample((ties(rng, 3, 4),)),
            Sample((ties(rng, 2, 3, 2),), {"dim": 0, "keepdim": True})]


register(
    OpInfo("aminmax", lambda lib, x, **k: _named(lib.aminmax(x, **k)), _aminmax_samples),
    OpInfo("aminmax", lambda lib, x, **k: _named(lib.aminmax(x, **k)), _aminmax_ties,
           variant="ties", grad=False, gradgrad=False),
    OpInfo("aminmax", lambda lib, x, **k: x.aminmax(**k), lambda rng: _aminmax_samples(rng)[:2],
           variant="method"),
    OpInfo("aminmax", lambda lib, x: lib.aminmax(x).max, lambda rng: _aminmax_samples(rng)[:1],
           variant="one_output"),
    OpInfo("aminmax", _aminmax_out, lambda rng: [Sample((randn(rng, 3, 4),), grad=())],
           variant="out", grad=False),
)


# ---- dist and renorm ----------------------------------------------------------------------------
def _dist_samples(rng):
    x = randn(rng, 3, 4)
    return [
        Sample((x, randn(rng, 3, 4))),
        Sample((x, randn(rng, 4), 1)),
        Sample((x, randn(rng, 4), 3.5)),
        Sample((x, randn(rng, 3, 1), 0.5)),
        Sample((distinct(rng, 3, 4), distinct(rng, 3, 4) * 0.1, float("inf"))),
        Sample((distinct(rng, 3, 4), distinct(rng, 3, 4) * 0.1, -float("inf"))),
        Sample((x, randn(rng, 3, 4), 0), grad=()),  # PyTorch's p=0 backward fails
        Sample((randn(rng, 4, 3), randn(rng, 4, 3)), noncontig=(0, 1)),
        Sample((randn(rng), randn(rng, 2))),
        Sample((randn(rng, 3).astype(np.float32), randn(rng, 3)), grad=()),
        Sample((integers(rng, 3), integers(rng, 3)), raises=RuntimeError),
        Sample((randn(rng, 3, 4), randn(rng, 5)), raises=RuntimeError),
    ]


def _renorm_samples(rng):
    big = randn(rng, 3, 4) * 2
    return [
        Sample((big, 2, 0, 1.0)),
        Sample((big, 1, 1, 1.5)),
        Sample((randn(rng, 2, 3, 4), 3, -1, 0.8)),
        Sample((big, 2, 0, 100.0)),  # no slice over maxnorm: a copy
        Sample((randn(rng, 4, 3) * 2, 2.5, 1, 1.0), noncontig=(0,)),
        Sample((big, -1, 0, 1.0), raises=RuntimeError),
        Sample((big, 2, 2, 1.0), raises=IndexError),
        Sample((big, 2, 0, -1.0), raises=RuntimeError),
        Sample((randn(rng, 3), 2, 0, 1.0), raises=RuntimeError),
    ]


register(
    OpInfo("dist", lambda lib, *a: _named(lib.dist(*a)), _dist_samples),
    OpInfo("dist", lambda lib, x, *a: x.dist(*a), lambda rng: _dist_samples(rng)[:2],
           variant="method"),
    OpInfo("renorm", lambda lib, *a: _named(lib.renorm(*a)), _renorm_samples),
    OpInfo("renorm", lambda lib, x, *a: x.renorm(*a), lambda rng: _renorm_samples(rng)[:1],
           variant="method"),
    OpInfo("renorm_", lambda lib, x, *a: _named(x.clone().renorm_(*a)),
           lambda rng: [*_renorm_samples(rng)[:2], _renorm_samples(rng)[-1]]),
)


# ---- quantile ---------------------------------------------------------------------------------------
def _quantile_samples(rng):
    x = distinct(rng, 3, 5)
    out = []
    for mode in ("linear", "lower", "higher", "midpoint", "nearest"):
        out += [
            Sample((x, 0.3), {"interpolation": mode}),
            Sample((x, np.array([0.05, 0.3, 0.55, 0.95])), {"dim": 1, "interpolation": mode}),
        ]
    return out + [
        Sample((x, np.array([0.0, 1.0])), grad=(0,)),  # the ends (q itself at its bounds)
        Sample((x, 0.4, 0)),
        Sample((x, 0.4, 1), {"keepdim": True}),
        Sample((x, np.array([0.2, 0.9]), 0), {"keepdim": True}),
        Sample((x, 0.5), {"keepdim": True}),
        Sample((x, np.array(0.125)), {"dim": -1}),
        Sample((distinct(rng, 2, 3, 4), 0.6, 1)),
        Sample((distinct(rng, 5, 3), 0.7, 0), noncontig=(0,)),
        Sample((distinct(rng), 0.5)),
        Sample((distinct(rng), np.array(0.25)), {"dim": 0, "keepdim": True}),
        Sample((np.array([[1.0, np.nan, 3.0], [4.0, 5.0, 6.0]]), 0.5, 1), grad=()),
        Sample((np.array([[np.nan, np.nan], [1.0, 2.0]]), np.array([0.3, 0.8]), 1), grad=()),
        Sample((x, 1.5), raises=RuntimeError),
        Sample((x, np.array([[0.5]])), raises=RuntimeError),
        Sample((integers(rng, 3), 0.5), raises=RuntimeError),
        Sample((x, 0.5), {"interpolation": "foo"}, raises=RuntimeError),
        Sample((np.zeros(0), 0.5), raises=RuntimeError),
        Sample((x, np.array([0.5, 2.0])), raises=RuntimeError),
        Sample((x, 0.5, 3), raises=IndexError),
    ]


def _q_dtype(rng):
    return [Sample((distinct(rng, 3, 4), np.array([0.5])), raises=RuntimeError)]


for _name in ("quantile", "nanquantile"):
    register(
        OpInfo(_name, lambda lib, *a, n=_name, **k: _named(getattr(lib, n)(*a, **k)),
               _quantile_samples),
        OpInfo(_name, lambda lib, x, *a, n=_name, **k: getattr(x, n)(*a, **k),
               lambda rng: _quantile_samples(rng)[:2], variant="method"),
        # q in another dtype than the input
        OpInfo(_name, lambda lib, x, q, n=_name: getattr(lib, n)(x, q.float()), _q_dtype,
               variant="q_dtype", grad=False),
        OpInfo(_name, lambda lib, x, q, n=_name: getattr(lib, n)(x, q, 1, out=lib.empty(0, dtype=x.dtype)),
               lambda rng: [Sample((randn(rng, 3, 4), 0.5), grad=())], variant="out", grad=False),
    )


# ---- cov and corrcoef -----------------------------------------------------------------------------
def _cov_samples(rng):
    return [
        Sample((randn(rng, 3, 5),)),
        Sample((randn(rng, 5),)),
        Sample((randn(rng, 3, 5),), {"correction": 0}),
        Sample((randn(rng, 3, 5),), {"correction": 2}),
        Sample((randn(rng, 3, 5),), {"fweights": np.array([1, 2, 3, 1, 1])}),
        Sample((randn(rng, 3, 5),), {"aweights": positive(rng, 5)}),
        Sample((randn(rng, 3, 5),), {"fweights": np.array([1, 2, 3, 1, 1]),
                                     "aweights": positive(rng, 5), "correction": 0}),
        Sample((randn(rng, 2, 4),), {"fweights": np.array([2, 1, 0, 3]),
                                     "aweights": positive(rng, 4)}),
        Sample((randn(rng, 5, 3),), noncontig=(0,)),
        Sample((integers(rng, 2, 4),)),
        Sample((integers(rng, 2, 4),), {"aweights": positive(rng, 4)}, grad=()),
        Sample((randn(rng, 1, 2),), {"correction": 3}, grad=()),  # no degrees of freedom: inf
        Sample((np.zeros((2, 2, 2)),), raises=RuntimeError),
        Sample((randn(rng, 3, 5),), {"fweights": positive(rng, 5)}, raises=RuntimeError),
        Sample((randn(rng, 3, 5),), {"fweights": np.array([1, 2, 3])}, raises=RuntimeError),
        Sample((randn(rng, 3, 5),), {"fweights": np.array([1, -2, 3, 1, 1])}, raises=RuntimeError),
        Sample((randn(rng, 3, 5),), {"aweights": np.array([1, 2, 3, 1, 1])}, raises=RuntimeError),
        Sample((randn(rng, 3, 5),), {"aweights": -positive(rng, 5)}, raises=RuntimeError),
        Sample((randn(rng, 3, 5),), {"fweights": np.ones((1, 5), np.int64)}, raises=RuntimeError),
        Sample((randn(rng, 3, 5),), {"fweights": np.zeros(5, np.int64)}, raises=RuntimeError),
    ]


def _corrcoef_samples(rng):
    return [
        Sample((randn(rng, 3, 5),)),
        Sample((randn(rng, 5),)),
        Sample((randn(rng, 5, 3),), noncontig=(0,)),
        Sample((integers(rng, 2, 4),)),
        Sample((np.array([[1.0, 1, 1], [1, 2, 3]]),), grad=()),
        Sample((np.zeros((2, 2, 2)),), raises=RuntimeError),
    ]


register(
    OpInfo("cov", lambda lib, x, **k: _named(lib.cov(x, **k)), _cov_samples),
    OpInfo("cov", lambda lib, x, **k: x.cov(**k), lambda rng: _cov_samples(rng)[:1],
           variant="method"),
    OpInfo("corrcoef", lambda lib, x: _named(lib.corrcoef(x)), _corrcoef_samples),
    OpInfo("corrcoef", lambda lib, x: x.corrcoef(), lambda rng: _corrcoef_samples(rng)[:1],
           variant="method"),
)
