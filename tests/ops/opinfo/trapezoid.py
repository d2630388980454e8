"""Op-table entries for the trapezoid rule in `ember/ops/cumulative.py`: trapezoid, trapz and
cumulative_trapezoid, with sample points `x` or a spacing `dx`."""
import numpy as np

from . import OpInfo, Sample, integers, randn, register


def _named(res):
    return res, None if res.grad_fn is None else type(res.grad_fn).__name__


def _samples(cumulative):
    def samples(rng):
        out = [
            Sample((randn(rng, 3, 5),)),
            Sample((randn(rng, 3, 5), np.sort(randn(rng, 5)))),
            Sample((randn(rng, 3, 5),), {"dx": 0.5}),
            Sample((randn(rng, 3, 5),), {"dx": 2, "dim": 0}),
            Sample((randn(rng, 3, 5), np.sort(randn(rng, 3))), {"dim": 0}),
            Sample((randn(rng, 3, 5), randn(rng, 3, 5))),           # x with y's shape
            Sample((randn(rng, 2, 3, 5), randn(rng, 3, 5)), {"dim": 1}),  # x padded in front
            Sample((randn(rng, 3, 5), randn(rng, 3, 5)), grad=(1,)),
            Sample((randn(rng, 4, 3), randn(rng, 4)), {"dim": 0}, noncontig=(0,)),
            Sample((randn(rng, 5),)),
            Sample((randn(rng, 1),)),
            Sample((integers(rng, 4),)),
            Sample((integers(rng, 4), integers(rng, 4))),
            Sample((integers(rng, 4),), {"dx": 0.5}),
            Sample((randn(rng, 3, 5), randn(rng, 4)), raises=RuntimeError),
            Sample((randn(rng, 3, 5),), {"dim": 3}, raises=IndexError),
            Sample((np.array([True, False]),), raises=RuntimeError),
            Sample((np.array([True, False]), randn(rng, 2)), raises=RuntimeError),
            Sample((randn(rng, 3),), {"dx": 1j}, raises=RuntimeError),
            Sample((randn(rng, 3),), {"dx": True}, raises=RuntimeError),
            Sample((randn(rng, 3), randn(rng, 3)), {"dx": 1.0}, raises=TypeError),
            Sample((randn(rng, 3), 0.5), raises=TypeError),
            Sample((randn(rng),), raises=IndexError),
        ]
        if not cumulative:
            out += [Sample((np.zeros((2, 0)),), {"dim": 1}),
                    Sample((np.zeros((2, 0)), np.zeros(0)), {"dim": 1}),
                    Sample((np.zeros((2, 0), np.int64),), {"dim": 1})]
        else:
            out += [Sample((np.zeros((2, 0)),)), Sample((np.zeros(0),))]
        return out
    return samples


register(
    OpInfo("trapezoid", lambda lib, *a, **k: _named(lib.trapezoid(*a, **k)), _samples(False)),
    OpInfo("trapz", lambda lib, *a, **k: _named(lib.trapz(*a, **k)),
           lambda rng: _samples(False)(rng)[:3]),
    OpInfo("cumulative_trapezoid", lambda lib, *a, **k: _named(lib.cumulative_trapezoid(*a, **k)),
           _samples(True)),
)


# ---- gradient ---------------------------------------------------------------------------------------
def _coords(rng, n):
    return np.cumsum(rng.uniform(0.5, 1.5, n))


def _gradient_samples(rng):
    return [
        Sample((randn(rng, 4, 5),)),
        Sample((randn(rng, 6),), {"spacing": 2.0}),
        Sample((randn(rng, 4, 5),), {"dim": 1, "edge_order": 2}),
        Sample((randn(rng, 4, 5),), {"spacing": 0.5, "dim": (0, 1), "edge_order": 2}),
        Sample((randn(rng, 4, 5),), {"spacing": [2.0, 3.0]}),
        Sample((randn(rng, 4, 5),), {"spacing": (_coords(rng, 4),), "dim": 0}),
        Sample((randn(rng, 4, 5),), {"spacing": [_coords(rng, 4), _coords(rng, 5)],
                                     "edge_order": 2}),
        Sample((randn(rng, 3, 4, 5),), {"spacing": [_coords(rng, 5)], "dim": [-1]}, grad=(0,)),
        Sample((randn(rng, 5, 4),), {"dim": 0}, noncontig=(0,)),
        Sample((integers(rng, 6),)),
        Sample((integers(rng, 6),), {"spacing": [integers(rng, 6, low=0, high=3).cumsum() +
                                                 np.arange(6)]}),
        Sample((np.array([1.0]),), raises=RuntimeError),
        Sample((randn(rng, 4, 5),), {"edge_order": 3}, raises=RuntimeError),
        Sample((randn(rng, 4, 5),), {"spacing": [1.0, 2.0, 3.0]}, raises=RuntimeError),
        Sample((randn(rng, 4, 5),), {"spacing": [1.0, 2.0], "dim": 0}, raises=RuntimeError),
        Sample((randn(rng, 2),), {"edge_order": 2}, raises=RuntimeError),
        Sample((randn(rng, 4, 5),), {"dim": (0, 0)}, raises=RuntimeError),
        Sample((integers(rng, 4).astype(np.uint8),), raises=RuntimeError),
        Sample((randn(rng, 4, 5),), {"spacing": [np.ones((2, 2))], "dim": 0}, raises=RuntimeError),
    ]


register(OpInfo("gradient", lambda lib, x, **k: tuple(_named(t) for t in lib.gradient(x, **k)),
                _gradient_samples))
