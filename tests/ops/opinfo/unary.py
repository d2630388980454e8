"""Op-table entries for ember/ops/unary/: elementwise math (exp2 ... erf ... rounding ...),
the binary and ternary pointwise ops there (atan2, fmod, lerp, addcmul ...) and predicates.

Each float op has a main entry (float samples where it is smooth, for gradcheck), a "dtypes"
entry (int, bool, float16, bfloat16 inputs: result dtypes and values, no gradients) and an
in-place entry calling the method `name_` on a clone.
"""
import ml_dtypes
import numpy as np

from . import OpInfo, Sample, away_from, integers, randn, register


def uniform(lo, hi):
    def make(rng, *shape):
        return rng.uniform(lo, hi, shape)
    return make


def gaussian(rng, *shape):
    return randn(rng, *shape)


def nonzero(rng, *shape):
    return away_from(rng, *shape, points=(0.0,), gap=0.3)


def _float_samples(domain):
    def samples(rng):
        return [Sample((domain(rng, 3, 4),)), Sample((domain(rng, 2, 3),), noncontig=(0,)),
                Sample((domain(rng),)), Sample((domain(rng, 2, 0),))]
    return samples


def _dtype_samples(domain, complex_ok=True):
    def samples(rng):
        base = domain(rng, 5)
        out = [Sample((integers(rng, 5, low=0, high=4),), grad=()),
               Sample((np.array([True, False, True]),), grad=()),
               Sample((base.astype(np.float16),), grad=()),
               Sample((base.astype(ml_dtypes.bfloat16),), grad=()),
               Sample((np.array([0.0, -0.0, np.inf, -np.inf, np.nan]),), grad=())]
        if complex_ok:
            out.append(Sample((base + 0.5j * domain(rng, 5),), grad=()))
        return out
    return samples


def _unary(name, domain, aliases=(), inplace=True, complex_ok=True, complex_error=None,
           gradgrad=True, atol=1e-5, rtol=1.3e-6, extra=(), int_inplace_raises=True,
           inplace_grad=True):
    def call(lib, x, **kw):
        return getattr(lib, name)(x, **kw)

    def samples(rng):
        return _float_samples(domain)(rng) + [s(rng) for s in extra]

    register(OpInfo(name, call, samples, covers=tuple(aliases), gradgrad=gradgrad,
                    atol=atol, rtol=rtol))

    def dtype_samples(rng):
        out = _dtype_samples(domain, complex_ok)(rng)
        if complex_error is not None:
            out.append(Sample((randn(rng, 3) + 1j * randn(rng, 3),), raises=complex_error))
        return out
    register(OpInfo(name, call, dtype_samples, variant="dtypes", grad=False, atol=1e-2,
                    rtol=1e-2))
    if inplace:
        names = [a + "_" for a in (name,) + tuple(aliases)]

        def call_(lib, x, **kw):
            return getattr(x.clone(), name + "_")(**kw)

        def samples_(rng):
            g = None if inplace_grad else ()  # asinh_ & co.: PyTorch has no derivative
            out = [Sample((domain(rng, 3, 4),), grad=g), Sample((domain(rng),), grad=g)]
            if int_inplace_raises:  # a float result cannot be written into an integer tensor
                out.append(Sample((integers(rng, 4),), raises=RuntimeError))
            return out
        register(OpInfo(name + "_", call_, samples_, covers=tuple(names[1:]), gradgrad=gradgrad))


_unary("exp2", gaussian)
_unary("expm1", gaussian)
_unary("log2", uniform(0.5, 3.0))
_unary("log10", uniform(0.5, 3.0))
_unary("log1p", uniform(-0.5, 3.0))
_unary("rsqrt", uniform(0.5, 3.0))
_unary("reciprocal", nonzero)
_unary("tan", uniform(-1.2, 1.2))
_unary("asin", uniform(-0.8, 0.8), aliases=("arcsin",))
_unary("acos", uniform(-0.8, 0.8), aliases=("arccos",))
_unary("atan", gaussian, aliases=("arctan",))
_unary("sinh", gaussian)
_unary("cosh", gaussian)
_unary("asinh", gaussian, aliases=("arcsinh",), inplace_grad=False)
_unary("acosh", uniform(1.5, 3.0), aliases=("arccosh",), inplace_grad=False)
_unary("atanh", uniform(-0.8, 0.8), aliases=("arctanh",), inplace_grad=False)
_unary("sinc", nonzero)
_unary("deg2rad", gaussian, complex_ok=False)
_unary("rad2deg", gaussian, complex_ok=False)
_unary("erf", gaussian, complex_ok=False, complex_error=NotImplementedError)
_unary("erfc", gaussian, complex_ok=False, complex_error=NotImplementedError)
_unary("erfinv", uniform(-0.8, 0.8), complex_ok=False, complex_error=NotImplementedError)
_unary("lgamma", uniform(0.2, 6.0), complex_ok=False, complex_error=NotImplementedError,
       extra=(lambda rng: Sample((rng.uniform(-2.8, -2.2, (4,)),)),))
_unary("digamma", uniform(0.5, 5.0), complex_ok=False, complex_error=NotImplementedError,
       extra=(lambda rng: Sample((rng.uniform(-1.8, -1.2, (4,)),)),))
_unary("logit", uniform(0.1, 0.9), complex_ok=False, complex_error=NotImplementedError,
       extra=(lambda rng: Sample((rng.uniform(0.1, 0.9, (5,)),), {"eps": 0.05}),
              lambda rng: Sample((np.array([0.01, 0.3, 0.99]),), {"eps": 0.2})))
_unary("angle", nonzero, inplace=False)
_unary("nan_to_num", gaussian,
       extra=(lambda rng: Sample((np.array([np.nan, np.inf, -np.inf, 1.5]),),
                                 {"nan": 2.0, "posinf": 10.0}, grad=()),
              lambda rng: Sample((np.array([np.nan, np.inf, -np.inf, 1.5]),), grad=())),
       int_inplace_raises=False)
_unary("square", gaussian, int_inplace_raises=False)


# ---- rounding: zero (frac: unit) gradient; integers pass through -------------------------------
def _rounding(name, aliases=(), kwargs=None, variant=""):
    kw = kwargs or {}

    def call(lib, x):
        return getattr(lib, name)(x, **kw)

    def samples(rng):
        base = randn(rng, 3, 4) * 3
        out = [Sample((base,)), Sample((randn(rng, 2, 3) * 3,), noncontig=(0,)),
               Sample((np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.49999, -0.0]),), grad=()),
               Sample((np.array([np.inf, -np.inf, np.nan]),), grad=()),
               Sample((base.astype(np.float16),), grad=()),
               Sample((base.astype(ml_dtypes.bfloat16),), grad=()),
               Sample((randn(rng, 3) + 1j,), raises=NotImplementedError)]
        if name == "frac" or kw:
            out.append(Sample((integers(rng, 4),), raises=NotImplementedError))
        else:
            out += [Sample((integers(rng, 4),)), Sample((integers(rng, 4).astype(np.uint8),)),
                    Sample((np.array([True, False]),), raises=NotImplementedError)]
        return out
    register(OpInfo(name, call, samples, covers=tuple(aliases), variant=variant))

    def call_(lib, x):
        return getattr(x.clone(), name + "_")(**kw)
    register(OpInfo(name + "_", call_, lambda rng: [Sample((randn(rng, 3, 4) * 3,))],
                    covers=tuple(a + "_" for a in aliases), variant=variant))


_rounding("floor")
_rounding("ceil")
_rounding("trunc", aliases=("fix",))
_rounding("round")
_rounding("round", kwargs={"decimals": 2}, variant="decimals")
_rounding("round", kwargs={"decimals": -1}, variant="negative_decimals")
_rounding("frac")


# ---- predicates (bool results, no gradient) ------------------------------------------------------
_SPECIAL = np.array([0.0, -0.0, 1.5, -2.0, np.inf, -np.inf, np.nan])


def _predicate(name, complex_error=None):
    def call(lib, x):
        return getattr(lib, name)(x)

    def samples(rng):
        # (no NaN in bfloat16: PyTorch's float -> bfloat16 cast makes a negative NaN)
        out = [Sample((_SPECIAL,)), Sample((randn(rng, 2, 3),)),
               Sample((_SPECIAL.astype(np.float16),)),
               Sample((_SPECIAL[:-1].astype(ml_dtypes.bfloat16),)),
               Sample((integers(rng, 4),)), Sample((np.array([True, False]),)),
               Sample((integers(rng, 3).astype(np.uint8),))]
        cplx = np.array([1 + 1j, np.nan + 0j, complex(np.inf, 0), 2 + 0j])
        out.append(Sample((cplx,), raises=complex_error) if complex_error else Sample((cplx,)))
        return out
    register(OpInfo(name, call, samples, grad=False))


_predicate("isnan")
_predicate("isinf")
_predicate("isfinite")
_predicate("isposinf", RuntimeError)
_predicate("isneginf", RuntimeError)
_predicate("isreal")
_predicate("signbit", NotImplementedError)


def _isclose_samples(rng):
    a = randn(rng, 4, 3)
    b = a + rng.choice([0.0, 1e-9, 1e-3], a.shape)
    return [Sample((a, b)), Sample((a, b), {"rtol": 1e-2, "atol": 0.0}),
            Sample((_SPECIAL, _SPECIAL[::-1].copy())),
            Sample((_SPECIAL, _SPECIAL), {"equal_nan": True}),
            Sample((a, b[0])),
            Sample((integers(rng, 5), integers(rng, 5)), {"atol": 1.0}),
            Sample((np.array([True, False]), np.array([True, True]))),
            Sample((a, b), {"rtol": 0.0, "atol": 0.0}),
            Sample((a.astype(np.float16), b.astype(np.float16))),
            Sample((a, integers(rng, 4, 3)), raises=RuntimeError),
            Sample((a, b), {"rtol": -1.0}, raises=RuntimeError),
            Sample((a, b), {"atol": -1.0}, raises=RuntimeError)]


register(OpInfo("isclose", lambda lib, a, b, **kw: lib.isclose(a, b, **kw), _isclose_samples,
                grad=False))


# ---- binary ops ------------------------------------------------------------------------------------
def _binary(name, samples, aliases=(), inplace=True, grad=True, gradgrad=True, atol=1e-5,
            rtol=1.3e-6):
    register(OpInfo(name, lambda lib, a, b, **kw: getattr(lib, name)(a, b, **kw), samples,
                    covers=tuple(aliases), grad=grad, gradgrad=gradgrad, atol=atol, rtol=rtol))
    if inplace:
        def call_(lib, a, b, **kw):
            return getattr(a.clone(), name + "_")(b, **kw)

        def samples_(rng):
            return [s for s in samples(rng) if s.raises is None
                    and isinstance(s.args[0], np.ndarray) and s.args[0].dtype == np.float64
                    and np.broadcast_shapes(s.args[0].shape, np.shape(s.args[1]))
                    == s.args[0].shape][:3]
        register(OpInfo(name + "_", call_, samples_, covers=tuple(a + "_" for a in aliases),
                        grad=grad, gradgrad=gradgrad, atol=atol, rtol=rtol))


def _tensor_pair_samples(x, y, dtypes_error=None):
    """Shared samples of the tensor-tensor ops: broadcasting, 0-dim, dtypes, scalars."""
    def samples(rng):
        out = [Sample((x(rng, 3, 4), y(rng, 3, 4))), Sample((x(rng, 3, 4), y(rng, 4))),
               Sample((x(rng, 2, 1, 3), y(rng, 4, 1)), noncontig=(0,)),
               Sample((x(rng), y(rng, 3))),
               Sample((x(rng, 3), y(rng, 3).astype(np.float16)), grad=()),
               Sample((x(rng, 3).astype(ml_dtypes.bfloat16),
                       y(rng, 3).astype(np.float16)), grad=()),
               Sample((integers(rng, 3, low=1), np.array(2.0)), grad=())]
        if dtypes_error is None:
            out += [Sample((integers(rng, 4, low=1), integers(rng, 4, low=1)), grad=()),
                    Sample((np.array([True, False]), np.array([True, True])), grad=())]
        else:
            out.append(Sample((integers(rng, 4), integers(rng, 4)), raises=dtypes_error))
        out.append(Sample((x(rng, 3), 2.0), raises=TypeError))
        return out
    return samples


def nonzero_wide(rng, *shape):
    return away_from(rng, *shape, points=(0.0,), gap=0.3) * 2


_binary("atan2", _tensor_pair_samples(nonzero, nonzero), aliases=("arctan2",))
_binary("hypot", _tensor_pair_samples(nonzero, nonzero, NotImplementedError))


def _fmaxmin_samples(rng):
    s = _tensor_pair_samples(lambda r, *sh: away_from(r, *sh, points=(0.0,), gap=0.2),
                             lambda r, *sh: away_from(r, *sh, points=(0.0,), gap=0.2) + 0.05)(rng)
    nan = np.array([np.nan, 1.0, np.nan, -2.0])
    return s + [Sample((nan, np.array([0.5, np.nan, np.nan, 3.0])), grad=()),
                Sample((randn(rng, 2) + 0j, randn(rng, 2)), raises=RuntimeError)]


_binary("fmax", _fmaxmin_samples, inplace=False)
_binary("fmin", _fmaxmin_samples, inplace=False)


def _fmod_samples(rng):
    x = randn(rng, 3, 4) * 3
    return [Sample((x, rng.uniform(0.7, 1.3, (3, 4)))), Sample((x, 1.5)), Sample((x, -2)),
            Sample((x, rng.uniform(0.7, 1.3, (3, 4))), noncontig=(1,)),
            Sample((integers(rng, 5), 3), grad=()), Sample((integers(rng, 5), -3), grad=()),
            Sample((integers(rng, 5), integers(rng, 5, low=1, high=4)), grad=()),
            Sample((integers(rng, 5), 2.5), grad=()),
            Sample((np.array([True, False]), 2), grad=()),
            Sample((x.astype(np.float16), 2.5), grad=()),
            Sample((np.array([np.inf, 1.0, np.nan]), 0.0), grad=()),
            Sample((integers(rng, 3), 0), raises=RuntimeError),
            Sample((np.array([True]), np.array([True])), raises=NotImplementedError)]


_binary("fmod", _fmod_samples)


def _xlogy_samples(rng):
    x = nonzero(rng, 3, 4)
    y = rng.uniform(0.5, 2.0, (3, 4))
    return [Sample((x, y)), Sample((x, y[0])), Sample((2.5, y)), Sample((x, 3.0)),
            Sample((np.array([0.0, 0.0, 1.0, 2.0]), np.array([np.nan, 0.0, 0.0, 3.0])), grad=()),
            Sample((integers(rng, 3), integers(rng, 3, low=1)), grad=()),
            Sample((np.array([True, False]), 2), grad=()),
            Sample((x.astype(np.float16), 2.5), grad=())]


_binary("xlogy", _xlogy_samples)


def _copysign_samples(rng):
    x, y = nonzero(rng, 3, 4), nonzero(rng, 3, 4)
    return [Sample((x, y)), Sample((x, y[1])), Sample((x, -2.0)), Sample((x, 0.0)),
            Sample((np.array([1.0, 2.0]), np.array([-0.0, 0.0])), grad=()),
            Sample((integers(rng, 3), -0.0), grad=()),
            Sample((np.array([True, False]), 2), grad=()),
            Sample((x.astype(np.float16), y.astype(np.float16)), grad=()),
            Sample((x + 1j, y), raises=NotImplementedError)]


_binary("copysign", _copysign_samples)


def _heaviside_samples(rng):
    x = np.array([-1.0, 0.0, -0.0, 2.0, np.nan, 0.0])
    return [Sample((x, np.array([0.5, 0.5, 1.0, 0.5, 0.5, np.nan])), grad=()),
            Sample((x, np.array(0.25)), grad=()),
            Sample((integers(rng, 5), integers(rng, 5))),
            Sample((np.array([True, False]), np.array([False, True]))),
            Sample((x, integers(rng, 6)), raises=RuntimeError)]


_binary("heaviside", _heaviside_samples, grad=False)


def _float_power_samples(rng):
    x = rng.uniform(0.5, 2.0, (3, 4))
    return [Sample((x, rng.uniform(-1.0, 2.0, (3, 4)))), Sample((x, 2)), Sample((x, 0.5)),
            Sample((x, rng.uniform(-1.0, 2.0, (4,)))),
            Sample((2.0, rng.uniform(-1.0, 2.0, (3,)))),
            Sample((integers(rng, 4, low=1), 2), grad=()),
            Sample((x.astype(np.float16), 2.5), grad=())]


register(OpInfo("float_power", lambda lib, a, b: lib.float_power(a, b), _float_power_samples))


def _float_power_inplace(rng):
    x = rng.uniform(0.5, 2.0, (3, 4))
    return [Sample((x, 2.5)), Sample((x, rng.uniform(-1.0, 2.0, (4,)))),
            Sample((x.astype(np.float32), 2.0), {"double": False}, grad=(), raises=RuntimeError)]


def _float_power_(lib, a, b, double=True):
    # float_power_ needs a float64 base: the float32 parity run gets one through .double()
    return (a.clone().double() if double else a.clone()).float_power_(b)


register(OpInfo("float_power_", _float_power_, _float_power_inplace))


# ---- lerp, addcmul, addcdiv -------------------------------------------------------------------------
def _lerp_samples(rng):
    a, b = randn(rng, 3, 4), randn(rng, 3, 4)
    return [Sample((a, b, 0.3)), Sample((a, b, 0.8)), Sample((a, b[0], rng.uniform(0, 1, (3, 4)))),
            Sample((a, b, rng.uniform(0, 1, (4,)))), Sample((a, b, np.array(0.7))),
            Sample((a, b, 2)), Sample((a, b, -1.5)),
            Sample((a.astype(np.float16), b.astype(np.float16), 0.3), grad=()),
            Sample((a, integers(rng, 3, 4), 0.5), raises=RuntimeError),
            Sample((a, b, integers(rng, 4)), raises=RuntimeError),
            Sample((integers(rng, 3), integers(rng, 3), 0.5), raises=NotImplementedError),
            Sample((a, b[:, :2], 0.5), raises=RuntimeError)]


register(OpInfo("lerp", lambda lib, a, b, w: lib.lerp(a, b, w), _lerp_samples))
register(OpInfo("lerp_", lambda lib, a, b, w: a.clone().lerp_(b, w),
                lambda rng: [s for s in _lerp_samples(rng) if s.raises is None][:5]))


def _addc_samples(div):
    def samples(rng):
        a, b = randn(rng, 3, 4), randn(rng, 3, 4)
        c = nonzero(rng, 3, 4) if div else randn(rng, 3, 4)
        out = [Sample((a, b, c)), Sample((a, b, c), {"value": 0.5}),
               Sample((a[0], b, c[:, :1]), {"value": -2}),
               Sample((np.array(1.5), b, c)),
               Sample((a.astype(np.float16), b, c), grad=()),
               Sample((integers(rng, 3), b[0, :3], c[0, :3]), grad=()),
               Sample((a, b, c), {"value": 1j}, raises=RuntimeError),
               Sample((a, b[:, :2], c), raises=RuntimeError)]
        if div:
            out += [Sample((a, integers(rng, 3, 4), integers(rng, 3, 4, low=1)), raises=RuntimeError),
                    Sample((a, b, integers(rng, 3, 4, low=1)), grad=())]
        else:
            out += [Sample((integers(rng, 3), integers(rng, 3), integers(rng, 3))),
                    Sample((integers(rng, 3), integers(rng, 3), integers(rng, 3)), {"value": 2.5}),
                    Sample((np.array([True]), np.array([True]), np.array([True])),
                           raises=NotImplementedError)]
        return out
    return samples


register(OpInfo("addcmul", lambda lib, a, b, c, **kw: lib.addcmul(a, b, c, **kw),
                _addc_samples(False)))
register(OpInfo("addcdiv", lambda lib, a, b, c, **kw: lib.addcdiv(a, b, c, **kw),
                _addc_samples(True)))
register(OpInfo("addcmul_", lambda lib, a, b, c, **kw: a.clone().addcmul_(b, c, **kw),
                lambda rng: [_addc_samples(False)(rng)[i] for i in (0, 1)]))
register(OpInfo("addcdiv_", lambda lib, a, b, c, **kw: a.clone().addcdiv_(b, c, **kw),
                lambda rng: [_addc_samples(True)(rng)[i] for i in (0, 1)]))


# ---- positive ---------------------------------------------------------------------------------------
register(OpInfo("positive", lambda lib, x: lib.positive(x),
                lambda rng: [Sample((randn(rng, 3),)), Sample((integers(rng, 3),)),
                             Sample((np.array([True]),), raises=RuntimeError)]))
