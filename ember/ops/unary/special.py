"""Special functions: logit, erf, erfc, erfinv, lgamma, digamma (and polygamma, digamma's
derivative), each with its backward node, and which kernel computes each where.

NumPy has none of these functions and SciPy is not a dependency: they are computed from
published rational approximations and series in float64 (_special_kernels.py), and for
float32 NumPy arrays from float32-accurate forms of their own (_single_kernels.py). On CUDA
cupyx.scipy.special serves; on the CPU scipy.special serves float64 erf, erfinv and lgamma
when importable (see USE_SCIPY).
"""
import builtins
import math

import numpy as np

from ..._select import select
from ..._vml import function as vml_function
from .._graph import Node, node_of
from ..pointwise import where
from ._common import _PI, _inplace, _need_tensor, _not_implemented, _unary
from ._single_kernels import (_digamma_single, _erf_single, _erfc_single, _erfinv_single,
                              _lgamma_single)
from ._special_kernels import (_TWO_OVER_SQRTPI, _blockwise, _digamma, _erf, _erfc, _erfinv,
                               _lgamma, _polygamma_kernel)

__all__ = [
    "logit", "erf", "erfc", "erfinv", "lgamma", "digamma", "logit_", "erf_", "erfc_",
    "erfinv_", "lgamma_", "digamma_", "polygamma",
]


# SciPy, when importable, is an accelerator on the CPU (its compiled kernels are one pass
# each); never a requirement. Tests set USE_SCIPY = False to check the NumPy kernels alone.
USE_SCIPY = True
_SCIPY = []


def _scipy_special():
    if not USE_SCIPY:
        return None
    if not _SCIPY:
        try:
            import scipy.special as sc
        except ImportError:
            sc = None
        _SCIPY.append(sc)
    return _SCIPY[0]


def _special(name, kernel, *args, edges=None, single=None, scipy=False, vml=None):
    """The kernel here; on CUDA, cupyx.scipy.special's version of the same function, then
    `edges(xp, x, y)` where SciPy's conventions (which CuPy copies) are not PyTorch's.
    `single(xp, x)`: a float32 kernel for float32 NumPy arrays (the op then passes
    wide=False, and other float32 input is widened here). `scipy`: scipy.special's `name`
    serves float64 on the CPU when importable. `vml`: MKL's vector-math function, which
    serves float32 and float64 on the CPU first where MKL is installed (ember/_vml.py):
    PyTorch's CPU erf, erfc and erfinv are those same functions, so the values are PyTorch's,
    bit for bit (200K values of each dtype), in its time (1M values: 0.6-1.6 ms)."""
    def run(xp, x):
        if xp.__name__ == "cupy":  # CuPy's kernels (meta arrays take NumPy's ufuncs)
            import cupyx.scipy.special as cs
            if single is not None and x.dtype == np.float32:
                x = x.astype(np.float64)  # as the wide ops: float32 computed in float64
                return run(xp, x).astype(np.float32)
            # number arguments as device arrays: CuPy's polygamma compares `n == 0` and
            # hands that to cupy.where, which takes no Python bool
            y = getattr(cs, name)(*(xp.asarray(a) for a in args), x)
            return y if edges is None else edges(xp, x, y)
        if vml is not None and xp is np:
            y = vml_function(vml, x)
            if y is not None:
                return y
        if single is not None and x.dtype == np.float32 and xp is np:
            return single(xp, x)
        sc = _scipy_special() if scipy else None
        if sc is not None:
            y = getattr(sc, name)(*args, x)
            if isinstance(y, np.generic):  # a 0-d input gives a NumPy scalar
                y = np.asarray(y)
            return y if edges is None else edges(xp, x, y)
        return _blockwise(kernel, xp, x)
    return run


def _lgamma_edges(xp, x, y):
    # SciPy's (and CuPy's) gammaln(-inf) is -inf; PyTorch's lgamma is +inf at both infinities.
    # SciPy's gammaln of a subnormal overflows in 1/x: lgamma(x) = -log|x| there (the next
    # term, -gamma x, is below a double's precision).
    y = select(xp.isinf(x), np.inf, y)
    tiny = (xp.abs(x) < 1e-300) & (x != 0)
    return select(tiny, -xp.log(xp.abs(select(tiny, x, 1.0))), y)


def _erfinv_edges(xp, x, y):
    return select(x == 0, x, y)  # SciPy's erfinv(-0.0) is +0.0; PyTorch keeps the sign


_erf_k = _special("erf", _erf, single=_erf_single, scipy=True, vml="Erf")
# (not SciPy's erfc: it loses 6e-14 far right)
_erfc_k = _special("erfc", _erfc, single=_erfc_single, vml="Erfc")
_erfinv_k = _special("erfinv", _erfinv, edges=_erfinv_edges, single=_erfinv_single,
                      scipy=True, vml="ErfInv")
# (float64 keeps the general kernels: beside its zeros the shifted form's absolute error,
# ~2e-15, is 1e-8 of lgamma(1 + 1e-7), where the series around 2 stays accurate; and beside
# digamma's zero it missed PyTorch's float64 values, whose scheme the general kernel is, by 1e-14)
_lgamma_k = _special("gammaln", _lgamma, edges=_lgamma_edges, single=_lgamma_single,
                     scipy=True)  # (VML's LGamma: 3.7x PyTorch's time, not its values)
_digamma_k = _special("digamma", _digamma, single=_digamma_single)


# ==== logit, erf and the gamma family =============================================================
class LogitBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        g = grad / (t * (1 - t))
        if self.eps is None or self.eps < 0:
            return where((t < 0) | (t > 1), math.nan, g)
        return where((t < self.eps) | (t > 1 - self.eps), 0.0, g)


def logit(input, eps=None, *, out=None):
    _need_tensor("logit", input)
    if input.dtype.is_complex:
        raise _not_implemented("logit_cpu", input.dtype)

    def kernel(xp, a):
        if eps is not None and eps >= 0:
            lo, hi = a.dtype.type(eps), a.dtype.type(1 - eps)
            a = select(a < lo, lo, select(a > hi, hi, a))
        return xp.log(a / (1 - a))
    res = _unary(input, kernel, LogitBackward0, "input", out, "logit")
    if type(node_of(res)) is LogitBackward0:
        node_of(res).eps = eps
    return res


class ErfBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * (_TWO_OVER_SQRTPI * (-(t * t)).exp())


def erf(input, *, out=None):
    return _unary(input, _erf_k, ErfBackward0, "input", out, "erf",
                  complex_error="erf_vml_cpu")


class ErfcBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * (-_TWO_OVER_SQRTPI * (-(t * t)).exp())


def erfc(input, *, out=None):
    return _unary(input, _erfc_k, ErfcBackward0, "input", out, "erfc",
                  complex_error="erfc_vml_cpu")


class ErfinvBackward0(Node):
    def backward(self, grad):
        (r,) = self.saved_tensors
        return grad * (0.5 * math.sqrt(_PI) * (r * r).exp())


def erfinv(input, *, out=None):
    return _unary(input, _erfinv_k, ErfinvBackward0, "result", out, "erfinv",
                  complex_error="erfinv_vml_cpu")


class LgammaBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * digamma(t)


def lgamma(input, *, out=None):
    return _unary(input, _lgamma_k, LgammaBackward0, "input", out, "lgamma",
                  complex_error="lgamma_vml_cpu")


class DigammaBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * _polygamma(1, t)


def digamma(input, *, out=None):
    return _unary(input, _digamma_k, DigammaBackward0, "input", out, "digamma",
                  complex_error="digamma")


class PolygammaBackward0(Node):
    def backward(self, grad):
        (t,) = self.saved_tensors
        return grad * _polygamma(self.n + 1, t)


def _polygamma(n, input):
    """polygamma(n, x): the derivatives of digamma (the backward of digamma and of itself)."""
    kernel = _special("polygamma", _polygamma_kernel(n), n)
    res = _unary(input, kernel, PolygammaBackward0, "input", None, "polygamma", wide=True)
    if type(node_of(res)) is PolygammaBackward0:
        node_of(res).n = n
    return res


erf_, erfc_, erfinv_, lgamma_, digamma_ = (_inplace(f) for f in (erf, erfc, erfinv, lgamma, digamma))
logit_ = _inplace(logit)


def polygamma(n, input, *, out=None, _fname="polygamma"):
    """The n-th derivative of digamma (n = 0: digamma itself, named PolygammaBackward0)."""
    if isinstance(n, builtins.bool) or not isinstance(n, (builtins.int, np.integer)):
        raise TypeError(f"{_fname}(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    _need_tensor("polygamma", input, position=2)
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    n = builtins.int(n)
    kernel = _special("polygamma", _polygamma_kernel(n), n)
    res = _unary(input, kernel, PolygammaBackward0, "input", out, "polygamma", wide=True,
                 complex_error={0: "digamma", 1: "trigamma"}.get(n, "polygamma"))
    if type(node_of(res)) is PolygammaBackward0:
        node_of(res).n = n
    return res


def _polygamma_method(self, n):
    return polygamma(n, self)


def _polygamma_inplace(self, n):
    from .._writes import inplace
    if not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{self.dtype._scalar_name}")
    def compute(x):
        res = polygamma(n, x)
        if type(node_of(res)) is PolygammaBackward0:
            node_of(res).__class__ = PolygammaBackward1
        return res
    return inplace(self, compute)


class PolygammaBackward1(PolygammaBackward0):
    """polygamma_ (PyTorch records the in-place form under its own name)."""


def special_polygamma(n, input, *, out=None):
    return polygamma(n, input, out=out, _fname="special_polygamma")


from ..._tensor import Tensor as _Tensor  # noqa: E402

_Tensor.polygamma = _polygamma_method
