"""Op-table entries for `ember.special` (named "special.<name>"), the top-level i0 and
polygamma (with their Tensor methods and in-place forms) and the window functions."""
import numpy as np

from . import OpInfo, Sample, integers, randn, register


def _special(name, domain, extra=(), gradgrad=True, atol=1e-5, rtol=1.3e-6):
    def call(lib, *args, **kwargs):
        return getattr(lib.special, name)(*args, **kwargs)

    def samples(rng):
        return [Sample((domain(rng, 3, 4),)), Sample((domain(rng, 2, 3),), noncontig=(0,)),
                Sample((domain(rng),)), Sample((integers(rng, 4, low=1, high=4),), grad=())] + \
            [make(rng) for make in extra]
    register(OpInfo("special." + name, call, samples, gradgrad=gradgrad, atol=atol, rtol=rtol))


def _uniform(lo, hi):
    return lambda rng, *shape: rng.uniform(lo, hi, shape)


_COMPLEX = lambda rng: Sample((randn(rng, 3) + 1j,), raises=NotImplementedError)  # noqa: E731
_WIDE = lambda rng: Sample((np.array([-60.0, -31.0, -29.5, -3.0, 0.0, 1e-3, 2.5, 29.5, 31.0, 60.0,  # noqa: E731
                                      np.nan, np.inf, -np.inf]),), grad=())
_MODERATE = lambda rng: Sample((np.array([-35.0, -30.5, -12.0, 12.0, 30.5, 35.0]),))  # noqa: E731

for _name, _domain in (("expit", randn), ("erf", randn), ("erfc", randn),
                       ("erfinv", _uniform(-0.8, 0.8)), ("exp2", randn), ("expm1", randn),
                       ("log1p", _uniform(-0.5, 2.0)), ("gammaln", _uniform(0.5, 5.0)),
                       ("digamma", _uniform(0.5, 5.0)), ("psi", _uniform(0.5, 5.0)),
                       ("logit", _uniform(0.1, 0.9)), ("sinc", _uniform(0.3, 2.0))):
    _special(_name, _domain)
for _name in ("i0", "i0e", "i1", "i1e"):
    _special(_name, randn, extra=(_WIDE, _MODERATE, _COMPLEX), rtol=2e-6)


def _polygamma_samples(rng):
    return [Sample((0, rng.uniform(0.5, 4.0, (3, 4)))), Sample((1, rng.uniform(0.5, 4.0, (5,)))),
            Sample((3, rng.uniform(0.5, 4.0, (2, 3)))),
            Sample((2, np.arange(1, 4)), grad=()),
            Sample((-1, randn(rng, 3)), raises=RuntimeError),
            Sample((1.5, randn(rng, 3)), raises=TypeError)]


register(OpInfo("special.polygamma", lambda lib, n, x: lib.special.polygamma(n, x),
                _polygamma_samples, atol=1e-4, rtol=1e-5))
register(OpInfo("polygamma", lambda lib, n, x: lib.polygamma(n, x), _polygamma_samples,
                atol=1e-4, rtol=1e-5))
register(OpInfo("polygamma", lambda lib, n, x: x.polygamma(n),
                lambda rng: [s for s in _polygamma_samples(rng) if s.raises is None],
                variant="method", atol=1e-4, rtol=1e-5))
register(OpInfo("polygamma_", lambda lib, n, x: x.clone().polygamma_(n),
                lambda rng: [Sample((1, rng.uniform(0.5, 4.0, (3, 4)))),
                             Sample((2, integers(rng, 3)), raises=RuntimeError)],
                atol=1e-4, rtol=1e-5))
register(OpInfo("i0", lambda lib, x: lib.i0(x),
                lambda rng: [Sample((randn(rng, 3, 4),)), _WIDE(rng), _MODERATE(rng), _COMPLEX(rng),
                             Sample((integers(rng, 4),), grad=())], rtol=2e-6))
register(OpInfo("i0_", lambda lib, x: x.clone().i0_(),
                lambda rng: [Sample((randn(rng, 3, 4),)),
                             Sample((integers(rng, 4),), raises=RuntimeError)]))


def _xlogy_samples(rng):
    return [Sample((rng.uniform(0.5, 2, (3, 4)), rng.uniform(0.5, 2, (3, 4)))),
            Sample((np.array([0.0, 1.0]), np.array([0.0, 2.0])), grad=())]


register(OpInfo("special.xlogy", lambda lib, a, b: lib.special.xlogy(a, b), _xlogy_samples))
register(OpInfo("special.logsumexp", lambda lib, x, *a, **k: lib.special.logsumexp(x, *a, **k),
                lambda rng: [Sample((randn(rng, 3, 4), 1)), Sample((randn(rng, 3, 4), (0, 1), True))]))
for _name in ("softmax", "log_softmax"):
    register(OpInfo("special." + _name,
                    (lambda n: lambda lib, x, *a, **k: getattr(lib.special, n)(x, *a, **k))(_name),
                    lambda rng: [Sample((randn(rng, 3, 4), 1)), Sample((randn(rng, 3, 4), 0))]))
register(OpInfo("special.round", lambda lib, x, **k: lib.special.round(x, **k),
                lambda rng: [Sample((randn(rng, 3, 4) * 3,)),
                             Sample((randn(rng, 3, 4) * 3,), {"decimals": 1})]))


# ---- windows ----------------------------------------------------------------------------------
def _window(name):
    def call(lib, n, *args, dtype=None, **kwargs):
        if dtype is not None:
            kwargs["dtype"] = getattr(lib, dtype)
        return getattr(lib, name)(n, *args, **kwargs)

    def samples(rng):
        out = [Sample((0,)), Sample((1,)), Sample((2,)), Sample((7,)), Sample((8, False)),
               Sample((6,), {"dtype": "float64", "requires_grad": True}),
               Sample((-1,), raises=RuntimeError),
               Sample((4,), {"dtype": "int64"}, raises=RuntimeError)]
        if name == "kaiser_window":
            out += [Sample((9, False, 3.0)), Sample((10, True, 40.0), {"dtype": "float64"})]
        if name == "hamming_window":
            out += [Sample((9, False, 0.5)), Sample((10, True, 0.6, 0.3), {"dtype": "float64"})]
        return out
    register(OpInfo(name, call, samples, grad=False, atol=1e-3 if False else 1e-5))


for _name in ("hann_window", "hamming_window", "blackman_window", "bartlett_window",
              "kaiser_window"):
    _window(_name)
