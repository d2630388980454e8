"""Op-table entries for polygamma and mvlgamma (`ember/ops/unary/special.py`)."""
import numpy as np

from . import OpInfo, Sample, integers, register


def _named(res):
    return res, None if res.grad_fn is None else type(res.grad_fn).__name__


def _args(rng, *shape):
    return rng.uniform(0.3, 4.0, shape)


def _polygamma_samples(rng):
    out = [Sample((n, _args(rng, 3, 4))) for n in (0, 1, 2, 3)]
    return out + [
        Sample((1, _args(rng, 4, 3)), noncontig=(1,)),
        Sample((2, _args(rng))),
        Sample((1, integers(rng, 4, low=1, high=6))),
        Sample((1, np.array([True, False]))),
        Sample((2, np.array([-1.5, 0.0, -2.0, 0.5, np.nan])), grad=()),
        Sample((-1, _args(rng, 3)), raises=RuntimeError),
        Sample((1.5, _args(rng, 3)), raises=TypeError),
        Sample((1, np.array([1j])), raises=NotImplementedError),
        Sample((3, np.array([1j])), raises=NotImplementedError),
    ]


def _mvlgamma_samples(rng):
    return [
        Sample((_args(rng, 3, 4) + 2, 1)),
        Sample((_args(rng, 3, 4) + 2, 3)),
        Sample((_args(rng, 4, 3) + 2, 2), noncontig=(0,)),
        Sample((np.asarray(_args(rng) + 2), 4)),
        Sample((integers(rng, 3, low=3, high=8), 3)),
        Sample((np.array([0.5, 1.0]), 2), grad=()),
        Sample((_args(rng, 3), 0), raises=RuntimeError),
        Sample((np.array([True]), 1), raises=RuntimeError),
        Sample((np.array([1j]), 1), raises=NotImplementedError),
    ]


register(
    OpInfo("polygamma", lambda lib, n, x: _named(lib.polygamma(n, x)), _polygamma_samples),
    OpInfo("polygamma", lambda lib, n, x: x.polygamma(n), lambda rng: _polygamma_samples(rng)[:2],
           variant="method"),
    OpInfo("polygamma_", lambda lib, n, x: _named(x.clone().polygamma_(n)),
           lambda rng: _polygamma_samples(rng)[:3]),
    OpInfo("polygamma", lambda lib, n, x: lib.polygamma(n, x, out=lib.empty(0, dtype=x.dtype)),
           lambda rng: [Sample((1, _args(rng, 3)), grad=())], variant="out", grad=False),
    OpInfo("mvlgamma", lambda lib, x, p: _named(lib.mvlgamma(x, p)), _mvlgamma_samples),
    OpInfo("mvlgamma", lambda lib, x, p: x.mvlgamma(p), lambda rng: _mvlgamma_samples(rng)[:2],
           variant="method"),
    OpInfo("mvlgamma_", lambda lib, x, p: _named(x.clone().mvlgamma_(p)),
           lambda rng: _mvlgamma_samples(rng)[:2]),
)


# ---- conj_physical (elementary.py) -----------------------------------------------------------
def _conj_samples(rng):
    z = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    return [
        Sample((z,)),
        Sample((np.asarray(z[0, 0]),)),
        Sample((rng.standard_normal((3, 4)),)),
        Sample((integers(rng, 3),)),
        Sample((z.T.copy(),), noncontig=(0,)),
        Sample((2,), raises=TypeError),
    ]


def _is_same(lib, x):
    """A real tensor comes back itself."""
    return lib.conj_physical(x) is x


register(
    OpInfo("conj_physical", lambda lib, x: _named(lib.conj_physical(x)), _conj_samples,
           gradgrad=True),
    OpInfo("conj_physical", lambda lib, x: x.conj_physical(), lambda rng: _conj_samples(rng)[:1],
           variant="method"),
    OpInfo("conj_physical", _is_same, lambda rng: _conj_samples(rng)[2:4], variant="identity",
           grad=False),
    OpInfo("conj_physical_", lambda lib, x: _named(lib.conj_physical_(x * 1)),
           lambda rng: _conj_samples(rng)[:4]),
    OpInfo("conj_physical_", lambda lib, x: _named(x.clone().conj_physical_()),
           lambda rng: _conj_samples(rng)[:1], variant="method"),
)
