"""Matrix functions and decompositions (`torch.linalg` and their top-level aliases): inverse,
determinants, solves, Cholesky, QR, SVD, symmetric eigendecomposition, pseudo-inverse,
least squares, rank, powers, the exponential and the matrix norms, with derivatives.

Forwards call the backend's `xp.linalg` (NumPy and CuPy broadcast over leading batch
dimensions); each backward is written with ember ops (inv, solve_triangular, matmul ...),
so second derivatives come from differentiating the backward itself.

One op family (its `__all__`, `METHODS`) split by kind of computation:
  inverse           linalg.inv(_ex), inverse, det, slogdet, logdet
  solves            linalg.solve, linalg.solve_triangular
  cholesky          linalg.cholesky(_ex), cholesky, cholesky_solve, cholesky_inverse
  orthogonal        QR, SVD (svd, svdvals), symmetric eigendecomposition (eigh, eigvalsh)
  lu                LU: linalg.lu_factor(_ex), linalg.lu, linalg.lu_solve, linalg.solve_ex,
                    lu, lu_solve, lu_unpack
  householder       linalg.householder_product, orgqr, geqrf, ormqr
  eig               the general eigendecomposition (eig, eigvals)
  least_squares     pinv, pinverse, lstsq, matrix_rank
  matrix_functions  matrix_power, matrix_exp
  norms             vector_norm, matrix_norm, norm, cond (and linalg.diagonal)
  _common           LinAlgError, argument checks, LAPACK info values, `_write_tuple`
`ember.linalg` re-exports the `torch.linalg` names from here.
"""
from ._common import LinAlgError  # noqa: F401
from .cholesky import (cholesky, cholesky_ex, cholesky_inverse, cholesky_solve,  # noqa: F401
                       linalg_cholesky)
from .eig import eig, eigvals  # noqa: F401
from .householder import geqrf, householder_product, orgqr, ormqr  # noqa: F401
from .inverse import (det, inv, inv_ex, inverse, linalg_det, linalg_slogdet, logdet, slogdet,  # noqa: F401
                      tensorinv)
from .least_squares import lstsq, matrix_rank, pinv, pinverse  # noqa: F401
from .lu import (linalg_lu, linalg_lu_solve, lu, lu_factor, lu_factor_ex, lu_solve,  # noqa: F401
                 lu_unpack, solve_ex)
from .matrix_functions import matrix_exp, matrix_power  # noqa: F401
from .norms import cond, diagonal, matrix_norm, norm, vector_norm  # noqa: F401
from .orthogonal import eigh, eigvalsh, linalg_qr, linalg_svd, qr, svd, svdvals  # noqa: F401
from .solves import solve, solve_triangular, tensorsolve, triangular_solve  # noqa: F401

__all__ = ["triangular_solve", "det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_solve",
           "cholesky_inverse", "qr", "svd", "pinverse", "matrix_power", "matrix_exp", "lu",
           "lu_solve", "lu_unpack", "orgqr", "geqrf", "ormqr"]
METHODS = ["triangular_solve", "det", "logdet", "slogdet", "inverse", "cholesky", "cholesky_solve",
           "cholesky_inverse", "qr", "svd", "pinverse", "matrix_power", "matrix_exp", "lu",
           "lu_solve", "orgqr", "geqrf", "ormqr"]
