"""Two-operand einsums that run as one batched product (`einsum._pair_as_matmul`) against
PyTorch: values and gradients for batch, row, column and summed letters in any order, with
ellipses and broadcast batches; the einsum loop's cases (diagonals, one-sided sums, tiny
products, integers) beside them."""
import numpy as np
import pytest

import ember

CASES = [("bij,bjk->bik", (4, 5, 6), (4, 6, 7)), ("ij,jk->ik", (5, 6), (6, 7)),
         ("ij,kj->ik", (5, 6), (7, 6)), ("ij,jk", (5, 6), (6, 7)),
         ("bhqd,bhkd->bhqk", (2, 3, 5, 8), (2, 3, 7, 8)),
         ("bhqk,bhkd->bqhd", (2, 3, 5, 7), (2, 3, 7, 8)),
         ("ijk,ikl->jl", (3, 4, 5), (3, 5, 6)), ("...ij,...jk->...ik", (2, 3, 4, 5), (2, 3, 5, 6)),
         ("bij,jk->bki", (4, 5, 6), (6, 7)), ("bij,bjk->bik", (1, 5, 6), (4, 6, 7)),
         ("i,j->ij", (5,), (7,)), ("ij,ij->i", (5, 6), (5, 6)), ("ij,j->i", (5, 6), (6,)),
         ("ii,ij->j", (5, 5), (5, 6)), ("ij,jk->k", (5, 6), (6, 7)),
         ("nchw,oc->nohw", (2, 6, 4, 5), (8, 6))]


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "int64"])
@pytest.mark.parametrize("eq,sa,sb", CASES, ids=[c[0] for c in CASES])
def test_einsum_pair_matches_torch(torch, eq, sa, sb, dtype):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal(sa) * 3).astype(dtype)
    b = (rng.standard_normal(sb) * 3).astype(dtype)
    grad = dtype != "int64"
    ea, eb = ember.tensor(a, requires_grad=grad), ember.tensor(b, requires_grad=grad)
    ta, tb = torch.tensor(a, requires_grad=grad), torch.tensor(b, requires_grad=grad)
    got, want = ember.einsum(eq, ea, eb), torch.einsum(eq, ta, tb)
    assert tuple(got.shape) == tuple(want.shape) and str(got.dtype)[6:] == str(want.dtype)[6:]
    tol = 1e-12 if dtype == "float64" else 1e-5
    np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=tol, atol=tol)
    if grad:
        g = rng.standard_normal(tuple(want.shape)).astype(dtype)
        got.backward(ember.tensor(g))
        want.backward(torch.tensor(g))
        np.testing.assert_allclose(ea.grad.numpy(), ta.grad.numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(eb.grad.numpy(), tb.grad.numpy(), rtol=tol, atol=tol)
