"""Op-table entries for `ember.special` (named "special.<name>"), the top-level i0 and
polygamma (with their Tensor methods and in-place forms) and the window functions."""
import numpy as np

from . import OpInfo, Sample, integers, randn, register


def _special(name, domain, extra=(), gradgrad=True, atol=1e-5, rtol=1.3e-6, grad=True):
    def call(lib, *args, **kwargs):
        return getattr(lib.special, name)(*args, **kwargs)

    def samples(rng):
        return [Sample((domain(rng, 3, 4),)), Sample((domain(rng, 2, 3),), noncontig=(0,)),
                Sample((domain(rng),)), Sample((integers(rng, 4, low=1, high=4),), grad=())] + \
            [make(rng) for make in extra]
    register(OpInfo("special." + name, call, samples, grad=grad, gradgrad=gradgrad, atol=atol,
                    rtol=rtol))


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



def _values(*values, grad=()):
    return lambda rng: Sample((np.array(values),), grad=grad)


_HALF = lambda rng: Sample((randn(rng, 3).astype(np.float16),), raises=NotImplementedError)  # noqa: E731
_special("erfcx", lambda rng, *shape: np.asarray(randn(rng, *shape) * 3),
         extra=(_values(-30.0, -26.0, -5.0, -0.4, 0.0, 0.3, 0.5, 4.5, 30.0, 1e10, np.inf, -np.inf,
                        np.nan), _COMPLEX, _HALF))
_special("ndtr", lambda rng, *shape: np.asarray(randn(rng, *shape) * 2),
         extra=(_values(-40.0, -10.0, -5.0, -1e-3, 0.0, 3.0, 10.0, np.inf, np.nan), _COMPLEX))
_special("ndtri", _uniform(0.02, 0.98),
         extra=(_values(0.0, 1e-300, 1e-20, 1e-5, 0.1, 0.25, 0.5, 0.75, 0.9999, 1.0, -0.5, 1.5,
                        np.nan),
                lambda rng: Sample((np.array([2e-3, 0.05, 0.3, 0.99]),)), _COMPLEX, _HALF))
_special("log_ndtr", lambda rng, *shape: np.asarray(randn(rng, *shape) * 3),
         extra=(_values(-40.0, -10.0, -1.5, -1.0, -0.5, 0.0, 3.0, 10.0, np.inf, -np.inf, np.nan),
                lambda rng: Sample((np.array([-30.0, -8.0, -1.0, 2.0, 7.0]),)), _COMPLEX, _HALF))
_special("entr", _uniform(0.1, 3.0),
         extra=(_values(0.0, -1.0, 2.0, np.inf, np.nan), _COMPLEX,
                lambda rng: Sample((rng.uniform(0.1, 3.0, 4).astype(np.float16),), grad=())))
for _name in ("bessel_j0", "bessel_j1"):
    _special(_name, lambda rng, *shape: np.asarray(randn(rng, *shape) * 6), grad=False,
             extra=(_values(-60.0, -24.9, -25.0, -2.0, -1.99, 0.0, 1e-5, 3.0, 8.0, 25.0, 40.0,
                            1e4, np.inf, -np.inf, np.nan), _COMPLEX, _HALF))


def _xlog1py_samples(rng):
    return [Sample((rng.uniform(0.5, 2, (3, 4)), rng.uniform(-0.5, 2, (3, 4)))),
            Sample((rng.uniform(0.5, 2, (3, 1)), rng.uniform(-0.5, 2, (4,)))),
            Sample((rng.uniform(0.5, 2, (3,)), 1.5)), Sample((2.5, rng.uniform(-0.5, 2, (3,)))),
            Sample((np.array([0.0, 1.0, 2.0]), -0.5)),
            Sample((np.array([0.0, 0.0, 1.0, 2.0]), np.array([np.nan, -1.0, -1.0, -2.0])),
                   grad=()),
            Sample((integers(rng, 3), integers(rng, 3, low=0, high=4)), grad=()),
            Sample((integers(rng, 3), 2.5), grad=()),
            Sample((randn(rng, 3) + 1j, randn(rng, 3)), raises=NotImplementedError),
            Sample((1.0, 2.0), raises=TypeError),
            Sample((randn(rng, 2), randn(rng, 3)), raises=RuntimeError)]


register(OpInfo("special.xlog1py", lambda lib, a, b: lib.special.xlog1py(a, b), _xlog1py_samples))


def _zeta_samples(rng):
    return [Sample((rng.uniform(1.5, 5.0, (3, 4)), rng.uniform(0.5, 3.0, (3, 4))), grad=(1,)),
            Sample((rng.uniform(1.5, 5.0, (3, 1)), rng.uniform(0.5, 3.0, (4,))), grad=(1,)),
            Sample((2.5, rng.uniform(0.5, 3.0, (3,)))), Sample((3, rng.uniform(0.5, 3.0, (3,)))),
            Sample((rng.uniform(1.5, 5.0, (3,)), 2.0), grad=()),
            Sample((np.array([1.0, 0.5, 2.0, 2.0, 3.0, 2.5, np.nan, 2.0, 30.0, 1.2]),
                    np.array([1.0, 1.0, 0.0, -2.0, -2.5, -2.5, 1.0, np.nan, 0.5, 1e-3])), grad=()),
            Sample((integers(rng, 3, low=1, high=5), integers(rng, 3, low=1, high=5)), grad=()),
            Sample((randn(rng, 3) + 1j, randn(rng, 3)), raises=NotImplementedError),
            Sample((randn(rng, 3).astype(np.float16), randn(rng, 3).astype(np.float16)),
                   raises=NotImplementedError),
            Sample((1.0, 2.0), raises=TypeError)]


register(OpInfo("special.zeta", lambda lib, a, b: lib.special.zeta(a, b), _zeta_samples,
                atol=1e-5, rtol=2e-6))


def _mvlgamma_samples(rng):
    return [Sample((rng.uniform(2.0, 5.0, (3, 4)), 1)), Sample((rng.uniform(2.0, 5.0, (5,)), 3)),
            Sample((np.array([0.4, 3.5]), 2)), Sample((np.array([-3.5, 0.2, 0.0, -1.0]), 3), grad=()),
            Sample((integers(rng, 3, low=3, high=7), 2), grad=()),
            Sample((rng.uniform(2.0, 5.0, (3,)), 0), raises=RuntimeError),
            Sample((rng.uniform(2.0, 5.0, (3,)), 2.0), raises=TypeError),
            Sample((rng.uniform(2.0, 5.0, (3,)), True), raises=TypeError),
            Sample((np.array([True, False]), 2), raises=RuntimeError),
            Sample((randn(rng, 2) + 1j, 2), raises=NotImplementedError)]


register(OpInfo("special.multigammaln", lambda lib, x, p: lib.special.multigammaln(x, p),
                _mvlgamma_samples))
register(OpInfo("mvlgamma", lambda lib, x, p: lib.mvlgamma(x, p), _mvlgamma_samples))
register(OpInfo("mvlgamma", lambda lib, x, p: x.mvlgamma(p), _mvlgamma_samples,
                variant="method"))
register(OpInfo("mvlgamma_", lambda lib, x, p: x.clone().mvlgamma_(p),
                lambda rng: [Sample((rng.uniform(2.0, 5.0, (3, 4)), 2)),
                             Sample((integers(rng, 3, low=3, high=7), 2), raises=RuntimeError),
                             Sample((rng.uniform(2.0, 5.0, (3,)), 0), raises=RuntimeError),
                             Sample((rng.uniform(2.0, 5.0, (3,)), 1.5), raises=TypeError)]))


def _igamma_samples(rng):
    return [Sample((rng.uniform(0.5, 5.0, (3, 4)), rng.uniform(0.1, 6.0, (3, 4))), grad=(1,)),
            Sample((rng.uniform(0.5, 5.0, (3, 1)), rng.uniform(0.1, 6.0, (4,))), grad=(1,)),
            Sample((rng.uniform(20.0, 60.0, (6,)), rng.uniform(10.0, 80.0, (6,))), grad=(1,)),
            Sample((np.array([0.0, 0.0, 1.0, np.inf, np.inf, 2.0, np.nan, -1.0, 1e-4, 3e-5, 40.0]),
                    np.array([0.0, 1.0, 0.0, 1.0, np.inf, np.inf, 1.0, 1.0, 0.3, 0.6, 3e-5])),
                   grad=()),
            Sample((integers(rng, 3, low=1, high=5), rng.uniform(0.1, 6.0, (3,))), grad=()),
            Sample((integers(rng, 3, low=1, high=5), integers(rng, 3, low=1, high=5)),
                   raises=NotImplementedError),
            Sample((randn(rng, 3) + 1j, randn(rng, 3)), raises=NotImplementedError),
            Sample((rng.uniform(0.5, 5.0, (3,)), 2.0), raises=TypeError),
            Sample((2.0, rng.uniform(0.5, 5.0, (3,))), raises=TypeError),
            Sample((randn(rng, 2), randn(rng, 3)), raises=RuntimeError)]


for _name, _lib in (("gammainc", "special"), ("gammaincc", "special"), ("igamma", ""),
                    ("igammac", "")):
    register(OpInfo(("special." if _lib else "") + _name,
                    (lambda n, l: lambda lib, a, x: getattr(getattr(lib, l) if l else lib, n)(a, x))(
                        _name, _lib), _igamma_samples, rtol=2e-6))
for _name in ("igamma", "igammac"):
    register(OpInfo(_name, (lambda n: lambda lib, a, x: getattr(a, n)(x))(_name),
                    lambda rng: [s for s in _igamma_samples(rng) if not isinstance(s.args[0], float)],
                    variant="method", rtol=2e-6))
    register(OpInfo(_name + "_", (lambda n: lambda lib, a, x: getattr(a.clone(), n + "_")(x))(_name),
                    lambda rng: [Sample((rng.uniform(0.5, 5.0, (3, 4)), rng.uniform(0.1, 6.0, (3, 4))),
                                        grad=(1,)),
                                 Sample((rng.uniform(0.5, 5.0, (3, 4)), rng.uniform(0.1, 6.0, (4,))),
                                        grad=(1,)),
                                 Sample((integers(rng, 3, low=1, high=5), integers(rng, 3, low=1, high=5)),
                                        raises=NotImplementedError),
                                 Sample((rng.uniform(0.5, 5.0, (2,)), rng.uniform(0.5, 5.0, (2, 2))),
                                        raises=RuntimeError),
                                 Sample((rng.uniform(0.5, 5.0, (2,)), 2.0), raises=TypeError)],
                    rtol=2e-6))


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
