"""Op-table entries for `ember/ops/unary/float_bits.py`: logaddexp, logaddexp2, ldexp, frexp,
nextafter, gcd, lcm and their in-place forms."""
import numpy as np

from . import OpInfo, Sample, integers, randn, register


def _named(res):
    return res, None if res.grad_fn is None else type(res.grad_fn).__name__


def _float_pairs(rng):
    return [
        Sample((randn(rng, 3, 4), randn(rng, 3, 4))),
        Sample((randn(rng, 3, 1), randn(rng, 4))),
        Sample((randn(rng, 2, 3), randn(rng))),
        Sample((randn(rng, 4, 3), randn(rng, 4, 3)), noncontig=(0, 1)),
        Sample((randn(rng, 3, 4), randn(rng, 3, 4)), grad=(1,)),
        Sample((randn(rng, 0, 3), randn(rng, 3))),
        Sample((integers(rng, 3).astype(np.int32), randn(rng, 3)), grad=()),
        Sample((np.array([1e4, -1e4, np.inf, -np.inf]), np.array([1e4, -1e4, np.inf, -np.inf])),
               grad=()),
        Sample((integers(rng, 3), integers(rng, 3)), raises=NotImplementedError),
        Sample((randn(rng, 3), 2.0), raises=TypeError),
        Sample((randn(rng, 3), randn(rng, 2)), raises=RuntimeError),
    ]


def _float_pairs_f16(rng):
    return [Sample((randn(rng, 3).astype(np.float16), randn(rng, 3).astype(np.float16)), grad=())]


def _keep_dtype(fn):
    """Arrays of a half sample stay half (the runner casts floating arrays otherwise)."""
    return lambda lib, x, y: fn(lib, x.to(lib.float16), y.to(lib.float16))


for _name in ("logaddexp", "logaddexp2"):
    register(
        OpInfo(_name, lambda lib, x, y, n=_name: _named(getattr(lib, n)(x, y)), _float_pairs),
        OpInfo(_name, lambda lib, x, y, n=_name: getattr(x, n)(y),
               lambda rng: _float_pairs(rng)[:2], variant="method"),
        OpInfo(_name, _keep_dtype(lambda lib, x, y, n=_name: getattr(lib, n)(x, y)),
               _float_pairs_f16, variant="half", grad=False, atol=1e-3, rtol=1e-3),
    )


def _nextafter_samples(rng):
    return [s for k, s in enumerate(_float_pairs(rng)) if k != 7] + [
        Sample((np.array([0.0, 1.0, -1.0]), np.array([1.0, 1.0, -2.0])), grad=())]


register(
    OpInfo("nextafter", lambda lib, x, y: _named(lib.nextafter(x, y)), _nextafter_samples,
           atol=0, rtol=0, gradgrad=False),
    OpInfo("nextafter", lambda lib, x, y: x.nextafter(y), lambda rng: _float_pairs(rng)[:1],
           variant="method", atol=0, rtol=0, gradgrad=False),
    OpInfo("nextafter_", lambda lib, x, y: _named(x.clone().nextafter_(y)),
           lambda rng: [_float_pairs(rng)[k] for k in (0, 2)], atol=0, rtol=0, gradgrad=False),
)


def _exponents(rng, *shape):
    """Integer exponents >= 0: below, PyTorch's gradient takes pow(2, e) in integers (0)."""
    return integers(rng, *shape, low=0, high=6)


def _ldexp_samples(rng):
    return [
        Sample((randn(rng, 3, 4), _exponents(rng, 3, 4))),
        Sample((randn(rng, 3, 4), _exponents(rng, 4))),
        Sample((randn(rng, 3, 4), randn(rng, 3, 4))),
        Sample((randn(rng, 4, 3), _exponents(rng, 4, 3)), noncontig=(0, 1)),
        Sample((integers(rng, 3).astype(np.int32), integers(rng, 3))),
        Sample((randn(rng, 3), _exponents(rng, 3).astype(np.int32))),
        Sample((randn(rng, 3), 2), raises=TypeError),
        Sample((randn(rng, 3), integers(rng, 2)), raises=RuntimeError),
    ]


register(
    OpInfo("ldexp", lambda lib, x, y: _named(lib.ldexp(x, y)), _ldexp_samples),
    OpInfo("ldexp", lambda lib, x, y: _named(lib.ldexp(x, y)),
           lambda rng: [Sample((randn(rng, 3, 4), integers(rng, 3, 4)))], variant="negative",
           grad=False, gradgrad=False),  # parity of PyTorch's (zero) gradient below 2**0
    OpInfo("ldexp", lambda lib, x, y: x.ldexp(y), lambda rng: _ldexp_samples(rng)[:1],
           variant="method"),
    OpInfo("ldexp_", lambda lib, x, y: _named(x.clone().ldexp_(y)),
           lambda rng: [*_ldexp_samples(rng)[:3],
                        Sample((integers(rng, 3), integers(rng, 3)), raises=RuntimeError)]),
    OpInfo("ldexp_", lambda lib, x, y: _named(lib.ldexp_(x.clone(), y)),
           lambda rng: _ldexp_samples(rng)[:1], variant="function"),
)


def _frexp_samples(rng):
    return [
        Sample((randn(rng, 3, 4) * 10,)),
        Sample((randn(rng),)),
        Sample((randn(rng, 4, 3),), noncontig=(0,)),
        Sample((np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, 0.5]),), grad=()),
        Sample((integers(rng, 3),), raises=RuntimeError),
    ]


def _frexp_out(lib, x):
    m, e = lib.empty(0, dtype=x.dtype), lib.empty(0, dtype=lib.int32)
    res = lib.frexp(x, out=(m, e))
    return res, m, e


register(
    OpInfo("frexp", lambda lib, x: lib.frexp(x), _frexp_samples),
    OpInfo("frexp", lambda lib, x: (lambda r: (r, type(r.mantissa.grad_fn).__name__))(x.frexp()),
           lambda rng: _frexp_samples(rng)[:1], variant="method"),
    OpInfo("frexp", _frexp_out, lambda rng: [Sample((randn(rng, 3),), grad=())], variant="out",
           grad=False),
)


def _int_pairs(rng):
    return [
        Sample((integers(rng, 3, 4, low=-20, high=20), integers(rng, 3, 4, low=-20, high=20))),
        Sample((integers(rng, 3, 1, low=-20, high=20), integers(rng, 4, low=-20, high=20))),
        Sample((integers(rng, 3, low=0, high=20).astype(np.uint8),
                integers(rng, 3, low=-20, high=20).astype(np.int8))),
        Sample((integers(rng, 3, low=0, high=20).astype(np.int32), integers(rng, low=0, high=9))),
        Sample((np.array([0, 0, 5, -6]), np.array([0, 7, 0, 4]))),
        Sample((integers(rng, 4, 3), integers(rng, 4, 3)), noncontig=(0, 1)),
        Sample((randn(rng, 3), integers(rng, 3)), raises=NotImplementedError),
        Sample((np.array([True, False]), np.array([True, True])), raises=NotImplementedError),
        Sample((integers(rng, 3), 2), raises=TypeError),
    ]


for _name in ("gcd", "lcm"):
    register(
        OpInfo(_name, lambda lib, x, y, n=_name: getattr(lib, n)(x, y), _int_pairs, grad=False),
        OpInfo(_name, lambda lib, x, y, n=_name: getattr(x, n)(y), lambda rng: _int_pairs(rng)[:1],
               variant="method", grad=False),
        OpInfo(_name + "_", lambda lib, x, y, n=_name: getattr(x.clone(), n + "_")(y),
               lambda rng: [_int_pairs(rng)[k] for k in (0, 3)], grad=False),
        OpInfo(_name + "_", lambda lib, x, y, n=_name: getattr(lib, n + "_")(x.clone(), y),
               lambda rng: _int_pairs(rng)[:1], variant="function", grad=False),
    )
