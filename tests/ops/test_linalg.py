"""Behaviour of `ember.linalg` and the matrix products beyond the op table: named result
tuples, grad_fn names, LinAlgError, warn-once deprecations, info tensors, a training-style
use of the decompositions, and (where PyTorch is installed) their reprs and gradients."""
import warnings

import numpy as np
import pytest

import ember
from ember.autograd import gradcheck, gradgradcheck

try:
    import torch
except ImportError:
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is not installed")


def _t(a, grad=False):
    return ember.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def _spd(n=3, seed=0):
    a = np.random.default_rng(seed).standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def test_namespace_exports():
    for name in ("inv", "inv_ex", "det", "slogdet", "solve", "solve_triangular", "cholesky",
                 "cholesky_ex", "qr", "svd", "svdvals", "eigh", "eigvalsh", "eig", "eigvals",
                 "pinv", "lstsq", "matrix_rank", "matrix_power", "matrix_exp", "multi_dot",
                 "cross", "vecdot", "diagonal", "norm", "vector_norm", "matrix_norm", "cond",
                 "LinAlgError"):
        assert hasattr(ember.linalg, name), name
    for name in ("det", "logdet", "slogdet", "inverse", "cholesky", "qr", "svd", "pinverse",
                 "matrix_power", "matrix_exp", "einsum", "tensordot", "kron", "outer", "ger",
                 "addmv", "addr", "baddbmm", "addbmm", "chain_matmul", "cross"):
        assert callable(getattr(ember, name)), name


def test_result_types_and_fields():
    A = _t(_spd())
    r = ember.linalg.slogdet(A)
    assert type(r).__name__ == "linalg_slogdet" and r._fields == ("sign", "logabsdet")
    assert type(ember.slogdet(A)).__name__ == "slogdet"
    assert ember.linalg.qr(A)._fields == ("Q", "R")
    assert ember.linalg.svd(A)._fields == ("U", "S", "Vh")
    assert ember.svd(A)._fields == ("U", "S", "V")
    assert ember.linalg.eigh(A)._fields == ("eigenvalues", "eigenvectors")
    assert ember.linalg.lstsq(A, A)._fields == ("solution", "residuals", "rank", "singular_values")
    assert ember.linalg.inv_ex(A)._fields == ("inverse", "info")
    assert ember.linalg.cholesky_ex(A)._fields == ("L", "info")
    assert repr(r).startswith("torch.return_types.linalg_slogdet(\nsign=")


def test_grad_fn_names():
    A = _t(_spd(), grad=True)
    v = _t([1.0, 2, 3], grad=True)
    names = {
        "LinalgInvExBackward0": ember.linalg.inv(A),
        "LinalgDetBackward0": ember.linalg.det(A),
        "LinalgSlogdetBackward0": ember.linalg.slogdet(A).logabsdet,
        "LinalgCholeskyExBackward0": ember.linalg.cholesky(A),
        "LinalgQrBackward0": ember.linalg.qr(A).R,
        "LinalgSvdBackward0": ember.linalg.svd(A).S,
        "LinalgEighBackward0": ember.linalg.eigvalsh(A),
        "LinalgPinvBackward0": ember.linalg.pinv(A),
        "LinalgSolveExBackward0": ember.linalg.solve(A, v),
        "LinalgMatrixExpBackward0": ember.linalg.matrix_exp(A),
        "LinalgCrossBackward0": ember.linalg.cross(v, v),
        "AddmvBackward0": ember.addmv(v, A, v),
        "AddrBackward0": ember.addr(A, v, v),
        "BaddbmmBackward0": ember.baddbmm(A[None], A[None], A[None]),
        "AddbmmBackward0": ember.addbmm(A, A[None], A[None]),
        "MulBackward0": ember.outer(v, v),
    }
    for name, out in names.items():
        assert type(out.grad_fn).__name__ == name
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert type(ember.cholesky(A).grad_fn).__name__ == "CholeskyBackward0"
    assert ember.linalg.inv_ex(A).info.requires_grad is False
    assert ember.linalg.inv_ex(A).info.dtype == ember.int32


def test_linalg_error_is_runtime_error():
    S = _t([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]])
    with pytest.raises(ember.linalg.LinAlgError, match="The diagonal element 3 is zero"):
        ember.linalg.inv(S)
    assert issubclass(ember.linalg.LinAlgError, RuntimeError)
    assert ember.linalg.inv_ex(S).info.item() == 3
    with pytest.raises(RuntimeError, match="leading minor of order 2"):
        ember.linalg.cholesky(_t(np.diag([1.0, -1, 2])))
    assert ember.linalg.cholesky_ex(_t(np.diag([1.0, -1, 2]))).info.item() == 2


def test_deprecations_warn_once():
    A = _t(_spd())
    for key, call in (("chain_matmul", lambda: ember.chain_matmul(A, A)),
                      ("cholesky", lambda: ember.cholesky(A)),
                      ("qr", lambda: ember.qr(A)),
                      ("cross", lambda: ember.cross(A, A))):
        ember._state._warned_once.clear()
        with warnings.catch_warnings(record=True) as first:
            warnings.simplefilter("always")
            call()
        with warnings.catch_warnings(record=True) as second:
            warnings.simplefilter("always")
            call()
        assert len(first) == 1 and "deprecated" in str(first[0].message), key
        assert not second, key


def test_einsum_double_backward_and_diagonals():
    rng = np.random.default_rng(1)
    for eq, shapes in (("ii->i", [(3, 3)]), ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]),
                       ("i,i->", [(4,), (4,)]), ("iij,jk->ik", [(3, 3, 2), (2, 2)])):
        ts = tuple(_t(rng.standard_normal(s), grad=True) for s in shapes)
        assert gradcheck(lambda *x: ember.einsum(eq, *x), ts)
        assert gradgradcheck(lambda *x: ember.einsum(eq, *x), ts)


def test_svd_and_eigh_reconstruct():
    rng = np.random.default_rng(2)
    A = _t(rng.standard_normal((2, 5, 3)))
    U, S, Vh = ember.linalg.svd(A, full_matrices=False)
    np.testing.assert_allclose(((U * S.unsqueeze(-2)) @ Vh).numpy(), A.numpy(), atol=1e-12)
    B = _t(_spd(4))
    w, V = ember.linalg.eigh(B)
    np.testing.assert_allclose((V @ ember.diag_embed(w) @ V.mT).numpy(), B.numpy(), atol=1e-12)
    assert ember.linalg.svd(A).U.shape == (2, 5, 5)


def test_fit_by_gradient_through_solve_and_logdet():
    """A Gaussian negative log-likelihood whose covariance is learnt through cholesky,
    solve and logdet decreases under plain gradient steps."""
    rng = np.random.default_rng(3)
    x = _t(rng.standard_normal((50, 3)) @ np.diag([1.0, 2.0, 0.5]))
    L0 = _t(np.eye(3), grad=True)
    losses = []
    for _ in range(30):
        cov = L0 @ L0.mT + 0.1 * ember.eye(3, dtype=ember.float64)
        chol = ember.linalg.cholesky(cov)
        z = ember.linalg.solve_triangular(chol, x.mT, upper=False)
        loss = 0.5 * (z * z).sum() / 50 + ember.logdet(cov) / 2
        losses.append(loss.item())
        (g,) = ember.autograd.grad(loss, [L0])
        with ember.no_grad():
            L0 -= 0.1 * g
    assert losses[-1] < losses[0] - 0.5


@needs_torch
def test_reprs_match_torch():
    A = _spd()
    e, t = ember.linalg.slogdet(_t(A)), torch.linalg.slogdet(torch.tensor(A))
    assert repr(e) == repr(t)
    e, t = ember.linalg.inv_ex(_t(A)), torch.linalg.inv_ex(torch.tensor(A))
    assert type(e).__name__ == type(t).__name__


@needs_torch
def test_cholesky_gradient_on_raw_input_matches_torch():
    """Without a symmetrising wrapper the gradient reads only the lower triangle, as in
    PyTorch (the formula is applied to the factor, not symmetrised)."""
    A = _spd()
    w = np.random.default_rng(4).standard_normal((3, 3))
    ea, ta = _t(A, grad=True), torch.tensor(A, requires_grad=True)
    (ember.linalg.cholesky(ea) * _t(w)).sum().backward()
    (torch.linalg.cholesky(ta) * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), atol=1e-10)


@needs_torch
def test_products_match_torch_on_larger_inputs():
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((4, 6, 5)), rng.standard_normal((4, 5, 7))
    np.testing.assert_allclose(ember.einsum("bij,bjk->ik", _t(a), _t(b)).numpy(),
                               torch.einsum("bij,bjk->ik", torch.tensor(a), torch.tensor(b)).numpy(),
                               atol=1e-12)
    np.testing.assert_allclose(ember.tensordot(_t(a), _t(b), dims=([0, 2], [0, 1])).numpy(),
                               torch.tensordot(torch.tensor(a), torch.tensor(b),
                                               dims=([0, 2], [0, 1])).numpy(), atol=1e-12)


def test_no_torch_import_in_ember():
    import pathlib
    root = pathlib.Path(ember.__file__).parent
    files = [*(root / "ops/linalg").glob("*.py"), root / "linalg.py",
             *(root / "ops/decompositions").glob("*.py")]
    assert len(files) > 3
    for f in files:
        src = f.read_text()
        assert "import torch" not in src and "from torch" not in src


@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
@pytest.mark.parametrize("op", ["mm", "addmm"])
def test_product_gradients_of_transposed_and_complex_operands(layout, op):
    # a transposed operand takes the layout-preserving backward; complex checks the conj()s
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    b = rng.standard_normal((4, 2)) + 1j * rng.standard_normal((4, 2))
    c = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))
    g = rng.standard_normal((3, 2)) + 1j * rng.standard_normal((3, 2))

    def grads(lib):
        leaves = [lib.tensor(x.T.copy() if layout == "transposed" else x, requires_grad=True)
                  for x in (a, b)]
        ma, mb = (t.t() for t in leaves) if layout == "transposed" else leaves
        out = lib.mm(ma, mb) if op == "mm" else lib.addmm(lib.tensor(c), ma, mb, alpha=2)
        out.backward(lib.tensor(g))
        return [t.grad for t in leaves]

    ga, gb = grads(ember)
    want_b = 2 * a.conj().T @ g if op == "addmm" else a.conj().T @ g
    want_a = 2 * g @ b.conj().T if op == "addmm" else g @ b.conj().T
    if layout == "transposed":
        want_a, want_b = want_a.T, want_b.T
    np.testing.assert_allclose(ga.numpy(), want_a, rtol=1e-12)
    np.testing.assert_allclose(gb.numpy(), want_b, rtol=1e-12)
    assert ga.is_contiguous() and gb.is_contiguous()


def test_linear_weight_grad_is_contiguous():
    layer = ember.nn.Linear(5, 3)
    layer(ember.randn(4, 5)).sum().backward()
    assert layer.weight.grad.stride() == (5, 1) and layer.weight.grad.is_contiguous()


# ---- linalg.eig gradients ------------------------------------------------------------------
def _eig_loss(lib, A, w):
    """A real loss free of the eigenvectors' phases: weighted |L|^2 and |V|."""
    L, V = lib.linalg.eig(A)
    return (L.abs() ** 2 * lib.tensor(w[0])).sum() + (V.abs() * lib.tensor(w[1])).sum()


def test_eig_gradient_of_complex_matrix_matches_finite_differences():
    # PyTorch's convention for a real loss of a complex input: dl/dRe + i dl/dIm
    rng = np.random.default_rng(7)
    a = rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))
    w = (rng.standard_normal(3), rng.standard_normal((3, 3)))
    A = ember.tensor(a, requires_grad=True)
    _eig_loss(ember, A, w).backward()
    num = np.zeros_like(a)
    eps = 1e-6
    for i in np.ndindex(a.shape):
        d = np.zeros_like(a)
        d[i] = eps
        f = [float(_eig_loss(ember, ember.tensor(a + s * d), w)) for s in (1, -1, 1j, -1j)]
        num[i] = (f[0] - f[1]) / (2 * eps) + 1j * (f[2] - f[3]) / (2 * eps)
    np.testing.assert_allclose(A.grad.numpy(), num, atol=1e-6)


@needs_torch
@pytest.mark.parametrize("dtype", ["float64", "complex128", "float32", "complex64"])
def test_eig_gradients_match_torch(dtype):
    rng = np.random.default_rng(11)
    a = rng.standard_normal((2, 4, 4))
    if dtype.startswith("complex"):
        a = a + 1j * rng.standard_normal(a.shape)
    a = a.astype(dtype)
    real = "float64" if dtype in ("float64", "complex128") else "float32"
    w = (rng.standard_normal((2, 4)).astype(real), rng.standard_normal((2, 4, 4)).astype(real))
    grads = []
    for lib in (ember, torch):
        A = lib.tensor(a, requires_grad=True)
        _eig_loss(lib, A, w).backward()
        eigvals_grad, = lib.autograd.grad(lib.linalg.eigvals(A).abs().sum(), A)
        grads.append((A.grad.numpy(), eigvals_grad.numpy(), str(A.grad.dtype)))
    tol = 1e-10 if real == "float64" else 2e-3
    np.testing.assert_allclose(grads[0][0], grads[1][0], atol=tol, rtol=tol)
    np.testing.assert_allclose(grads[0][1], grads[1][1], atol=tol, rtol=tol)
    assert grads[0][2] == grads[1][2]


def test_eig_backward_refuses_a_phase_dependent_loss():
    rng = np.random.default_rng(2)
    A = ember.tensor(rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3)),
                     requires_grad=True)
    L, V = ember.linalg.eig(A)
    assert type(L.grad_fn).__name__ == "LinalgEigBackward0"
    with pytest.raises(RuntimeError, match=r"specified up to multiplication by e\^\{i phi\}"):
        V.sum().abs().backward()


@needs_torch
def test_eig_double_backward_of_real_matrix_matches_torch():
    a = np.random.default_rng(4).standard_normal((3, 3)) + np.diag([3.0, 0.5, -2.0])
    out = []
    for lib in (ember, torch):
        A = lib.tensor(a, requires_grad=True)
        L, V = lib.linalg.eig(A)
        g, = lib.autograd.grad((L * L).abs().sum() + (V.abs() ** 3).sum(), A, create_graph=True)
        h, = lib.autograd.grad((g * g).sum(), A)
        out.append(h.numpy())
    np.testing.assert_allclose(out[0], out[1], atol=1e-10)


def test_det_gradient_of_a_singular_matrix_is_its_adjugate_transposed():
    # rank n - 1: the adjugate is nonzero; rank 0 and a batch mixing both kinds
    x = ember.tensor([[1., 2.], [2., 4.]], dtype=ember.float64, requires_grad=True)
    ember.linalg.det(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), [[4., -2.], [-2., 1.]], atol=1e-12)
    batch = ember.tensor([[[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]], [[2., 0., 0.], [0., 3., 0.],
                         [0., 0., 4.]]], dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(ember.linalg.det, (batch,))
    zeros = ember.zeros(3, 3, dtype=ember.float64, requires_grad=True)
    ember.det(zeros).backward()
    assert zeros.grad.abs().max().item() < 1e-12


def test_det_gradient_of_complex_and_invertible_matrices_matches_torch(torch):
    rng = np.random.default_rng(3)
    for m in (rng.standard_normal((2, 3, 3)),
              rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))):
        grads = []
        for lib in (ember, torch):
            x = lib.tensor(m, requires_grad=True)
            d = lib.linalg.det(x)
            d.backward(lib.ones_like(d) * (1.5 - 0.5j if d.is_complex() else 1.5))
            grads.append(x.grad.numpy())
        np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)


def test_logdet_of_a_singular_matrix_backpropagates_without_raising():
    x = ember.tensor([[1., 2.], [2., 4.]], requires_grad=True)
    y = ember.logdet(x)
    y.backward()
    assert y.item() == float("-inf") and not ember.isfinite(x.grad).any()
