"""Op-table entries for `torch.special`'s Bessel-family functions beyond j0/j1 (airy_ai,
bessel_y0/y1, modified_bessel_*, scaled_modified_bessel_*, spherical_bessel_j0) and its
orthogonal polynomials (chebyshev_*, shifted_chebyshev_*, hermite_*, laguerre, legendre).
PyTorch differentiates none of them, so no gradcheck; parity covers values, dtypes and errors.
Every sample runs in float64 and float32, so the edge values here are ones float32 holds (the
float64-only wide ranges are in tests/ops/test_special_functions.py)."""
import numpy as np

from . import OpInfo, Sample, integers, randn, register


def _call(name):
    def call(lib, *args, **kwargs):
        return getattr(lib.special, name)(*args, **kwargs)
    return call


def _values(*values):
    return lambda rng: Sample((np.array(values),))


_COMPLEX = lambda rng: Sample((randn(rng, 3) + 1j,), raises=NotImplementedError)  # noqa: E731
_HALF = lambda rng: Sample((randn(rng, 3).astype(np.float16),), raises=NotImplementedError)  # noqa: E731
_NUMBER = lambda rng: Sample((1.5,), raises=TypeError)  # noqa: E731
_NAN_INF = (np.nan, np.inf, -np.inf, 0.0, -0.0)


def _unary(name, domain, edges):
    def samples(rng):
        return [Sample((domain(rng, 3, 4),)), Sample((domain(rng, 2, 3),), noncontig=(0,)),
                Sample((domain(rng),)), Sample((integers(rng, 4, low=-2, high=4),)),
                _values(*_NAN_INF, *edges)(rng), _COMPLEX(rng), _HALF(rng), _NUMBER(rng)]
    register(OpInfo("special." + name, _call(name), samples, grad=False))


def _scaled(scale, shift=0.0):
    return lambda rng, *shape: np.asarray(rng.standard_normal(shape) * scale + shift)


def _spread(lo, hi):
    return lambda rng, *shape: np.asarray(rng.uniform(lo, hi, shape))


_unary("airy_ai", _scaled(3.0),
       (-20.0, -7.5, -7.0, -1.0, 1e-6, 2.09, 2.1, 8.3, 50.0, 103.8, 104.0, 200.0))
for _order in "01":
    _unary("bessel_y" + _order, _spread(-1.0, 40.0),
           (-1.0, 1e-6, 0.5, 1.99, 2.0, 5.0, 24.9, 25.0, 60.0, 1e3))
for _name in ("modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
              "scaled_modified_bessel_k1"):
    _unary(_name, _spread(-0.5, 12.0), (-1.0, 1e-6, 0.5, 1.99, 2.0, 2.01, 10.0, 80.0, 700.0))
for _order in "01":
    _unary("modified_bessel_i" + _order, _scaled(6.0),
           (-1.0, 8.0, -8.0, 30.0, 31.0, 88.0, 89.0, -100.0, 700.0, 720.0))
_unary("spherical_bessel_j0", _scaled(4.0), (-0.49, 0.49, 0.5, -0.5, 3.0, 1e4))


# ---- the orthogonal polynomials -------------------------------------------------------------
# x = NaN with n >= 2 is left out: PyTorch's kernels return an unset local there (whatever the
# register held: 0, 4.6e-41, -1.4e32 ...); ember gives NaN.
_X_EDGES = np.array([np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 0.999, 1e3])
_N_EDGES = np.array([-3.0, -1.0, 0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 20.0,
                     2.5, -0.5, 6.9, np.nan, np.inf, -np.inf])


def _polynomial(name, x_domain, big_n, rtol=1.3e-6):
    def samples(rng):
        grid_x, grid_n = np.meshgrid(_X_EDGES, _N_EDGES)
        return [
            Sample((x_domain(rng, 3, 4), integers(rng, 3, 4, low=0, high=12))),
            Sample((x_domain(rng, 3, 1), integers(rng, 4, low=-1, high=10)), noncontig=(1,)),
            Sample((x_domain(rng, 5), 9)), Sample((x_domain(rng, 5), 3.7)),
            Sample((x_domain(rng, 5), big_n)), Sample((x_domain(rng, 5), True)),
            Sample((0.3, integers(rng, 6, low=0, high=12))),
            Sample((x_domain(rng), integers(rng, 3, low=0, high=8))),
            Sample((grid_x, grid_n)),
            Sample((np.array([np.nan, np.nan]), np.array([0, 1]))),
            Sample((integers(rng, 4), integers(rng, 4, low=0, high=6))),
            Sample((x_domain(rng, 3), np.array([2.0, 5.0, 9.0]))),
            Sample((0.5, 3), raises=TypeError),
            Sample((randn(rng, 3).astype(np.float16), 3), raises=NotImplementedError),
            Sample((randn(rng, 3) + 1j, 3), raises=NotImplementedError),
            Sample((randn(rng, 2), integers(rng, 3)), raises=RuntimeError),
        ]
    register(OpInfo("special." + name, _call(name), samples, grad=False, rtol=rtol))


# float32 at degree 60: PyTorch's AVX-512 vector kernel and its scalar one (ember's model)
# round the trigonometric forms differently, up to 3e-5 apart; test_special_functions holds
# float64 to 1e-9 and float32 to PyTorch's accuracy against the exact values
for _kind in "tuvw":
    _polynomial(f"chebyshev_polynomial_{_kind}", _spread(-1.2, 1.2), 60, rtol=1e-4)
    _polynomial(f"shifted_chebyshev_polynomial_{_kind}", _spread(-0.1, 1.1), 60, rtol=1e-4)
_polynomial("hermite_polynomial_h", _scaled(1.5), 129)
_polynomial("hermite_polynomial_he", _scaled(1.5), 129)
_polynomial("laguerre_polynomial_l", _spread(-1.0, 6.0), 40)
_polynomial("legendre_polynomial_p", _spread(-1.1, 1.1), 70)
