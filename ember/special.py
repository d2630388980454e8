"""`torch.special`: special functions (`ember.special.i0e`, `ember.special.gammaln` ...).

Re-exports only: the functions live in the op families (`ember/ops/unary/special.py`,
`ember/ops/unary/bessel.py`, `ember/ops/activation.py` ...); the names here are PyTorch's
`torch.special` spellings of them.
"""
from .ops.softmax_family import log_softmax, softmax
from .ops.pointwise import sigmoid as expit
from .ops.statistics import logsumexp
from .ops.unary import exp2, expm1, log1p, round, sinc, xlogy
from .ops.unary_special import digamma, erf, erfc, erfinv, i0, logit
from .ops.unary_special import lgamma as gammaln
from .ops.unary.bessel import bessel_j0, bessel_j1, i0e, i1, i1e
from .ops.unary.bessel_kinds import (airy_ai, bessel_y0, bessel_y1, modified_bessel_i0,
                                     modified_bessel_i1, modified_bessel_k0, modified_bessel_k1,
                                     scaled_modified_bessel_k0, scaled_modified_bessel_k1,
                                     spherical_bessel_j0)
from .ops.unary.orthogonal_polynomials import (
    chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v, chebyshev_polynomial_w,
    hermite_polynomial_h, hermite_polynomial_he, laguerre_polynomial_l, legendre_polynomial_p,
    shifted_chebyshev_polynomial_t, shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w)
from .ops.unary.entropy import entr, xlog1py
from .ops.unary.gamma_functions import gammainc, gammaincc, multigammaln, zeta
from .ops.unary.normal import erfcx, log_ndtr, ndtr, ndtri
from .ops.unary.special import special_polygamma as polygamma

psi = digamma

__all__ = ["expit", "logit", "erf", "erfc", "erfinv", "exp2", "expm1", "log1p", "gammaln",
           "digamma", "psi", "polygamma", "i0", "i0e", "i1", "i1e", "sinc", "xlogy", "logsumexp",
           "softmax", "log_softmax", "round", "erfcx", "ndtr", "ndtri", "log_ndtr", "entr",
           "xlog1py", "zeta", "multigammaln", "gammainc", "gammaincc", "bessel_j0", "bessel_j1",
           "airy_ai", "bessel_y0", "bessel_y1", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "scaled_modified_bessel_k0",
           "scaled_modified_bessel_k1", "spherical_bessel_j0", "chebyshev_polynomial_t",
           "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
           "hermite_polynomial_h", "hermite_polynomial_he", "laguerre_polynomial_l",
           "legendre_polynomial_p"]

from .ops._numpy_names import accept_in as _accept_in  # noqa: E402

_accept_in(globals(), __all__, "special")  # `axis=` ... as PyTorch's C++-bound functions take them
