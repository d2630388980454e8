"""The special functions of the unary family, a family of their own so that they load on first
use (ember/ops/__init__.py): `import ember` need not read their kernels and coefficient tables.

  logit, erf, erfc, erfinv, lgamma, digamma, polygamma  ops/unary/special.py
  i0                                                   ops/unary/bessel.py
  mvlgamma, igamma, igammac                            ops/unary/gamma_functions.py
with their in-place forms. Tensor.polygamma, .mvlgamma, .igamma and .igammac take `self`
first, unlike the functions of those names: their modules bind them onto Tensor when they load,
and until then ember/ops/__init__.py leaves stand-ins that load this family.
"""
from .unary import gamma_functions, special
from .unary.bessel import i0, i0_
from .unary.gamma_functions import igamma, igamma_, igammac, igammac_, mvlgamma, mvlgamma_
from .unary.special import (digamma, digamma_, erf, erf_, erfc, erfc_, erfinv, erfinv_, lgamma,
                            lgamma_, logit, logit_, polygamma)

# PyTorch has no torch.erfinv_, lgamma_ or digamma_: those are Tensor methods only
__all__ = ["logit", "erf", "erfc", "erfinv", "lgamma", "digamma", "i0", "polygamma", "mvlgamma",
           "igamma", "igammac", "logit_", "erf_", "erfc_", "i0_"]
polygamma_ = special._polygamma_inplace
# the methods whose own form (self first) special.py and gamma_functions.py bind onto Tensor
OWN_METHODS = ("polygamma", "mvlgamma", "igamma", "igammac")
METHODS = [*(n for n in __all__ if not n.endswith("_") and n not in OWN_METHODS),
           "logit_", "erf_", "erfc_", "erfinv_", "lgamma_", "digamma_", "i0_", "polygamma_",
           *gamma_functions.METHODS]
