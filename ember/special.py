"""`torch.special`: special functions (`ember.special.i0e`, `ember.special.gammaln` ...).

Re-exports only: the functions live in the op families (`ember/ops/unary/special.py`,
`ember/ops/unary/bessel.py`, `ember/ops/activation.py` ...); the names here are PyTorch's
`torch.special` spellings of them.
"""
from .ops.activation import log_softmax, softmax
from .ops.pointwise import sigmoid as expit
from .ops.statistics import logsumexp
from .ops.unary import (digamma, erf, erfc, erfinv, exp2, expm1, i0, log1p, logit,
                        round, sinc, xlogy)
from .ops.unary import lgamma as gammaln
from .ops.unary.bessel import bessel_j0, bessel_j1, i0e, i1, i1e
from .ops.unary.entropy import entr, xlog1py
from .ops.unary.gamma_functions import gammainc, gammaincc, multigammaln, zeta
from .ops.unary.normal import erfcx, log_ndtr, ndtr, ndtri
from .ops.unary.special import special_polygamma as polygamma

psi = digamma

__all__ = ["expit", "logit", "erf", "erfc", "erfinv", "exp2", "expm1", "log1p", "gammaln",
           "digamma", "psi", "polygamma", "i0", "i0e", "i1", "i1e", "sinc", "xlogy", "logsumexp",
           "softmax", "log_softmax", "round", "erfcx", "ndtr", "ndtri", "log_ndtr", "entr",
           "xlog1py", "zeta", "multigammaln", "gammainc", "gammaincc", "bessel_j0", "bessel_j1"]
