"""`torch.linalg`: the linear-algebra namespace (`ember.linalg.inv`, `ember.linalg.svd` ...).

Re-exports only: the functions live in `ember/ops/linalg/` (products) and
`ember/ops/decompositions/` (decompositions, solves, norms).
"""
from .ops.decompositions import (LinAlgError, cholesky_ex, cond, diagonal, eig, eigh,
                                 eigvals, eigvalsh, householder_product, inv, inv_ex, lstsq, lu_factor,
                                 lu_factor_ex, solve_ex, matrix_exp, matrix_norm,
                                 matrix_power, matrix_rank, norm, pinv, solve, solve_triangular,
                                 svdvals, tensorinv, tensorsolve, vector_norm)
from .ops.decompositions._common import common_notes
from .ops.decompositions.ldl import ldl_factor, ldl_factor_ex, ldl_solve
from .ops.decompositions import linalg_cholesky as cholesky
from .ops.decompositions import linalg_det as det
from .ops.decompositions import linalg_lu as lu
from .ops.decompositions import linalg_lu_solve as lu_solve
from .ops.decompositions import linalg_qr as qr
from .ops.decompositions import linalg_slogdet as slogdet
from .ops.decompositions import linalg_svd as svd
from .ops.linalg import linalg_cross as cross
from .ops.linalg import matmul, multi_dot, vecdot
from .ops.vander import linalg_vander as vander

__all__ = ["LinAlgError", "cholesky", "common_notes", "cholesky_ex", "cond", "cross", "det", "diagonal", "eig",
           "eigh", "eigvals", "eigvalsh", "householder_product",
           "inv", "inv_ex", "ldl_factor", "ldl_factor_ex", "ldl_solve", "lstsq", "lu", "lu_factor",
           "lu_factor_ex", "lu_solve", "matmul", "matrix_exp",
           "matrix_norm", "matrix_power", "matrix_rank", "multi_dot", "norm", "pinv", "qr",
           "slogdet", "solve", "solve_ex", "solve_triangular", "svd", "svdvals", "tensorinv",
           "tensorsolve", "vander", "vecdot", "vector_norm"]

from .ops._numpy_names import accept_in as _accept_in  # noqa: E402

_accept_in(globals(), __all__, "linalg")  # `axis=` ... as PyTorch's C++-bound functions take them
