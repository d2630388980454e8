"""Functions PyTorch removed in 1.9 and still offers, so that old scripts fail with a note on what
replaces each: `torch.eig`, `torch.lstsq`, `torch.solve`, `torch.symeig`, `torch.matrix_rank`
(and the Tensor methods of the first four). Each raises PyTorch's RuntimeError, whatever its
arguments, as PyTorch's Python stubs do."""
from .._tensor import Tensor

__all__ = ["eig", "lstsq", "matrix_rank", "solve", "symeig"]
METHODS = ["eig", "symeig"]  # Tensor.lstsq and Tensor.solve name their argument `other`

_REMOVED = "This function was deprecated since version 1.9 and is now removed."


def eig(self, eigenvectors=False, *, e=None, v=None):
    raise RuntimeError(
        f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or `cdouble` "
        "rather than real tensors mimicking complex tensors.\n\n"
        "L, _ = torch.eig(A) should be replaced with:\n"
        "L_complex = torch.linalg.eigvals(A)\n\nand\n\n"
        "L, V = torch.eig(A, eigenvectors=True) should be replaced with:\n"
        "L_complex, V_complex = torch.linalg.eig(A)")


def lstsq(input, A, *, out=None):
    raise RuntimeError(
        f"{_REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
        "`torch.linalg.lstsq` has reversed arguments and does not return the QR decomposition in "
        "the returned tuple (although it returns other information about the problem).\n\n"
        "To get the QR decomposition consider using `torch.linalg.qr`.\n\n"
        "The returned solution in `torch.lstsq` stored the residuals of the solution in the last "
        "m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, the "
        "residuals are in the field 'residuals' of the returned named tuple.\n\n"
        "The unpacking of the solution, as in\n"
        "X, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
        "should be replaced with:\n"
        "X = torch.linalg.lstsq(A, B).solution")


def solve(input, A, *, out=None):
    raise RuntimeError(
        f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. "
        "`torch.linalg.solve` has its arguments reversed and does not return the LU "
        "factorization.\n\n"
        "To get the LU factorization see `torch.lu`, which can be used with `torch.lu_solve` or "
        "`torch.lu_unpack`.\n"
        "X = torch.solve(B, A).solution should be replaced with:\n"
        "X = torch.linalg.solve(A, B)")


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    raise RuntimeError(
        f"{_REMOVED} The default behavior has changed from using the upper triangular portion "
        "of the matrix by default to using the lower triangular portion.\n\n"
        "L, _ = torch.symeig(A, upper=upper) should be replaced with:\n"
        "L = torch.linalg.eigvalsh(A, UPLO='U' if upper else 'L')\n\nand\n\n"
        "L, V = torch.symeig(A, eigenvectors=True) should be replaced with:\n"
        "L, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    raise RuntimeError(
        f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. The parameter "
        "'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")



def _solve_method(self, other):
    return solve(self, other)


def _lstsq_method(self, other):
    return lstsq(self, other)


_solve_method.__name__ = _solve_method.__qualname__ = "solve"
_lstsq_method.__name__ = _lstsq_method.__qualname__ = "lstsq"
Tensor.solve, Tensor.lstsq = _solve_method, _lstsq_method
