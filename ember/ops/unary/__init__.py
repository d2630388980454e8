"""Elementwise math beyond the core arithmetic: exp2, log1p, trig and hyperbolic functions, erf
and friends, rounding, and the other pointwise ops of PyTorch, with derivatives.

One op family (its `__all__`, `METHODS`) split by kind of function, each module holding its
ops, their backward nodes and their in-place forms (special, bessel's i0 and gamma_functions
make up the `unary_special` family, loaded on first use: ops/unary_special.py):
  elementary   exponentials, logarithms, trigonometric and hyperbolic functions
  special      logit, erf, erfc, erfinv, lgamma, digamma, polygamma, mvlgamma and their
               float64 kernels
  rounding     floor, ceil, round ..., the predicates isnan, isfinite, isclose ..., nan_to_num
  float_bits   logaddexp, logaddexp2, ldexp, frexp, nextafter, gcd, lcm
  binary_math  fmod, fmax, fmin, hypot, copysign, xlogy, heaviside, float_power
  bessel       i0 (and torch.special's i0e, i1, i1e, bessel_j0, bessel_j1)
  bessel_kinds, orthogonal_polynomials  torch.special's bessel_y*, modified_bessel_*, airy_ai,
               spherical_bessel_j0 and its Chebyshev, Hermite, Laguerre, Legendre polynomials
  gamma_functions  mvlgamma, igamma, igammac (and torch.special's zeta)
  normal, entropy  torch.special's erfcx, ndtr, ndtri, log_ndtr, entr, xlog1py
  ternary      lerp, addcmul, addcdiv
  _common      the helpers they share (`_unary`, half-precision compute, argument checks)
Float16 and bfloat16 are computed in float32 and rounded once, as PyTorch's CPU kernels do;
the special functions compute in float64.
"""
from .binary_math import *  # noqa: F401,F403
from .elementary import *  # noqa: F401,F403
from .float_bits import *  # noqa: F401,F403
from .rounding import *  # noqa: F401,F403
from .ternary import *  # noqa: F401,F403

__all__ = [
    "exp2", "expm1", "log2", "log10", "log1p", "rsqrt", "tan", "asin", "acos", "atan", "atan2",
    "arctan2", "sinh", "cosh", "asinh", "acosh", "atanh", "arcsin", "arccos", "arctan",
    "arcsinh", "arccosh", "arctanh", "reciprocal", "square", "floor", "ceil", "round", "trunc",
    "fix", "frac", "fmod", "fmax", "fmin", "lerp", "addcmul", "addcdiv", "hypot", "xlogy", "copysign", "nan_to_num", "isnan",
    "isinf", "isfinite", "isposinf", "isneginf", "isreal", "isclose", "signbit", "deg2rad",
    "rad2deg", "sinc", "heaviside", "float_power", "positive", "angle",
    # PyTorch's top-level in-place forms
    "exp2_", "expm1_", "log2_", "log10_", "log1p_", "rsqrt_", "tan_", "asin_", "acos_", "atan_",
    "sinh_", "cosh_", "asinh_", "acosh_", "atanh_", "arcsin_", "arccos_", "arctan_",
    "arcsinh_", "arccosh_", "arctanh_", "reciprocal_", "square_", "floor_", "ceil_", "round_",
    "trunc_", "fix_", "frac_", "xlogy_", "nan_to_num_", "deg2rad_", "rad2deg_", "sinc_",
    # float_bits
    "logaddexp", "logaddexp2", "ldexp", "frexp", "nextafter", "gcd", "lcm", "ldexp_", "gcd_",
    "lcm_",
]
_INPLACE_METHODS = [
    "exp2_", "expm1_", "log2_", "log10_", "log1p_", "rsqrt_", "tan_", "asin_", "acos_", "atan_",
    "atan2_", "arctan2_", "sinh_", "cosh_", "asinh_", "acosh_", "atanh_", "arcsin_", "arccos_",
    "arctan_", "arcsinh_", "arccosh_", "arctanh_", "reciprocal_", "square_", "floor_", "ceil_",
    "round_", "trunc_", "fix_", "frac_", "fmod_", "lerp_", "addcmul_", "addcdiv_", "hypot_",
    "xlogy_", "copysign_", "nan_to_num_", "deg2rad_", "rad2deg_", "sinc_", "heaviside_",
    "float_power_", "ldexp_", "nextafter_", "gcd_", "lcm_"]
METHODS = [n for n in __all__ if not n.endswith("_")] + _INPLACE_METHODS
