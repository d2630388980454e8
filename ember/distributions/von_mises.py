"""VonMises(loc, concentration): the circular normal distribution on [-pi, pi).
Its normaliser I0(concentration) is evaluated, as in PyTorch, with the polynomial
approximations of Abramowitz & Stegun 9.8.1-9.8.4 (so log_prob agrees with PyTorch's to
the last bit rather than being more exact); samples come from Best & Fisher's rejection
scheme, computed in float64."""
import math

from .._tensor import Size
from ..autograd import no_grad
from ..dtypes import float64
from ..ops import cos, empty, rand, where, zeros
from . import constraints
from ._bases import _from
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]

# Abramowitz & Stegun 9.8.1 / 9.8.2 (I0) and 9.8.3 / 9.8.4 (I1): polynomial coefficients in
# (x / 3.75)^2 below 3.75 and in 3.75 / x above it (the latter for sqrt(x) e^-x I(x))
_BESSEL_SMALL = {0: (1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.0360768, 0.0045813),
                 1: (0.5, 0.87890594, 0.51498869, 0.15084934, 0.02658733, 0.00301532,
                     0.00032411)}
_BESSEL_LARGE = {0: (0.39894228, 0.01328592, 0.00225319, -0.00157565, 0.00916281,
                     -0.02057706, 0.02635537, -0.01647633, 0.00392377),
                 1: (0.39894228, -0.03988024, -0.00362018, 0.00163801, -0.01031555,
                     0.02282967, -0.02895312, 0.01787654, -0.00420059)}


def _horner(y, coefficients):
    result = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        result = c + y * result
    return result


def _log_modified_bessel_fn(x, order=0):
    """log I_order(x) for x > 0 and order 0 or 1."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = x / 3.75
    small = _horner(y * y, _BESSEL_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _horner(3.75 / x, _BESSEL_LARGE[order]).log()
    return where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, x):
    done = zeros(x.shape, dtype=bool, device=loc.device)
    while not bool(done.all()):
        u1, u2, u3 = rand((3,) + tuple(x.shape), dtype=loc.dtype, device=loc.device).unbind()
        z = cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = (c * (2 - c) - u2 > 0) | ((c / u2).log() + 1 - c >= 0)
        if bool(accept.any()):
            x = where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * cos(value - self.loc)
        return (log_prob - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    @lazy_property
    def _loc(self):
        return self.loc.to(float64)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(float64)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        proposal_r = (1 + rho ** 2) / (2 * rho)
        return where(kappa < 1e-5, 1 / kappa + kappa, proposal_r)  # Taylor for tiny kappa

    def sample(self, sample_shape=Size()):
        with no_grad():
            shape = self._extended_shape(sample_shape)
            x = empty(shape, dtype=self._loc.dtype, device=self.loc.device)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r,
                                     x).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            validate_args = self.__dict__.get("_validate_args")
            loc = self.loc.expand(batch_shape)
            concentration = self.concentration.expand(batch_shape)
            return type(self)(loc, concentration, validate_args=validate_args)

    mean = mode = _from("loc")

    @lazy_property
    def variance(self):
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
