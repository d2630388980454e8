"""MultivariateNormal(loc, covariance_matrix=None, precision_matrix=None, scale_tril=None):
everything is computed from the lower Cholesky factor L of the covariance."""
import math

from .._tensor import Size
from .. import linalg as _linalg
from ..ops.rearrange import broadcast_shapes as _broadcast_shape
from ..ops import cholesky_inverse, eye, flip, matmul, transpose
from . import constraints
from ._bases import _Params, _from
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """Matrix-vector products over broadcast batch dims."""
    return matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """x^T (L L^T)^{-1} x for each batch element (L lower triangular)."""
    n = bx.size(-1)
    if bL.dim() == 2:
        # one L for every x: solve once with all x as columns, never copying L per sample
        sol = _linalg.solve_triangular(bL, bx.reshape(-1, n).T, upper=False)
        return sol.pow(2).sum(0).reshape(bx.shape[:-1])
    batch = _broadcast_shape(bL.shape[:-2], bx.shape[:-1])
    L = bL.expand(tuple(batch) + (n, n))
    x = bx.expand(tuple(batch) + (n,))
    sol = _linalg.solve_triangular(L, x.unsqueeze(-1), upper=False).squeeze(-1)
    return sol.pow(2).sum(-1)


def _precision_to_scale_tril(P):
    # the Cholesky factor of P's index-reversed copy gives L^{-1} without inverting P
    Lf = _linalg.cholesky(flip(P, (-2, -1)))
    L_inv = transpose(flip(Lf, (-2, -1)), -2, -1)
    Id = eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return _linalg.solve_triangular(L_inv, Id, upper=False)


def _scale_tril_of(scale_tril, covariance_matrix, precision_matrix):
    """The lower Cholesky factor of the covariance from whichever of the three is given
    (unbroadcast: MultivariateNormal and Wishart keep it at the shape it was given)."""
    if scale_tril is not None:
        return scale_tril
    if covariance_matrix is not None:
        return _linalg.cholesky(covariance_matrix)
    return _precision_to_scale_tril(precision_matrix)


class MultivariateNormal(_Params):
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True
    # the matrices given or (lazily) computed are expanded; the factor L is shared as is
    _batch_params = ("loc", "covariance_matrix", "scale_tril", "precision_matrix")
    _carried = ("_unbroadcasted_scale_tril",)
    mean = mode = _from("loc")

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        if (covariance_matrix is not None) + (scale_tril is not None) + \
                (precision_matrix is not None) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        if scale_tril is not None:
            if scale_tril.dim() < 2:
                raise ValueError("scale_tril matrix must be at least two-dimensional, with "
                                 "optional leading batch dimensions")
            batch_shape = _broadcast_shape(scale_tril.shape[:-2], loc.shape[:-1])
            self.scale_tril = scale_tril.expand(tuple(batch_shape) + (-1, -1))
        elif covariance_matrix is not None:
            if covariance_matrix.dim() < 2:
                raise ValueError("covariance_matrix must be at least two-dimensional, with "
                                 "optional leading batch dimensions")
            batch_shape = _broadcast_shape(covariance_matrix.shape[:-2], loc.shape[:-1])
            self.covariance_matrix = covariance_matrix.expand(tuple(batch_shape) + (-1, -1))
        else:
            if precision_matrix.dim() < 2:
                raise ValueError("precision_matrix must be at least two-dimensional, with "
                                 "optional leading batch dimensions")
            batch_shape = _broadcast_shape(precision_matrix.shape[:-2], loc.shape[:-1])
            self.precision_matrix = precision_matrix.expand(tuple(batch_shape) + (-1, -1))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        event_shape = self.loc.shape[-1:]
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._unbroadcasted_scale_tril = _scale_tril_of(scale_tril, covariance_matrix,
                                                        precision_matrix)

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(
            tuple(self._batch_shape) + tuple(self._event_shape) + tuple(self._event_shape))

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return matmul(L, L.mT).expand(
            tuple(self._batch_shape) + tuple(self._event_shape) + tuple(self._event_shape))

    @lazy_property
    def precision_matrix(self):
        return cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            tuple(self._batch_shape) + tuple(self._event_shape) + tuple(self._event_shape))

    @property
    def variance(self):
        return self._unbroadcasted_scale_tril.pow(2).sum(-1).expand(
            tuple(self._batch_shape) + tuple(self._event_shape))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        diff = value - self.loc
        M = _batch_mahalanobis(self._unbroadcasted_scale_tril, diff)
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + M) - half_log_det

    def entropy(self):
        half_log_det = self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
        H = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + half_log_det
        if len(self._batch_shape) == 0:
            return H
        return H.expand(self._batch_shape)
