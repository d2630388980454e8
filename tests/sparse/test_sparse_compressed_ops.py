"""Sparse compressed tensors (CSR, CSC, BSR, BSC) in use: products with dense tensors
(values and gradients to the values and the dense operand, as PyTorch's, and gradcheck in
float64), the arithmetic users do, and checkpoints shared with PyTorch both ways."""
import io
import pickle
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

RNG = np.random.RandomState(0)
DENSE = (RNG.randn(4, 6) * (RNG.rand(4, 6) < 0.5)).astype(np.float32)
OTHER = RNG.randn(6, 3).astype(np.float32)
VEC = RNG.randn(6).astype(np.float32)
LEFT = RNG.randn(2, 4).astype(np.float32)
BIAS = RNG.randn(4, 3).astype(np.float32)


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse invariant checks")
        warnings.filterwarnings("ignore", message="Sparse .* tensor support is in beta")
        yield


def compressed(lib, layout, x=DENSE, requires_grad=False):
    """`x` in `layout` (rebuilt from its parts, so that it can be a leaf)."""
    d = lib.tensor(x)
    s = {"csr": d.to_sparse_csr, "csc": d.to_sparse_csc}.get(layout)
    s = s() if s else getattr(d, f"to_sparse_{layout}")((2, 2))
    row = layout in ("csr", "bsr")
    parts = (s.crow_indices(), s.col_indices()) if row else (s.ccol_indices(), s.row_indices())
    return lib.sparse_compressed_tensor(*parts, s.values().detach(), s.shape,
                                        layout=getattr(lib, f"sparse_{layout}"),
                                        requires_grad=requires_grad)


def grad_at_pattern(t):
    """PyTorch's gradient of a compressed leaf (dense or compressed) at its stored entries."""
    g = t.grad if t.grad.layout == torch.strided else t.grad.to_dense()
    row = t.layout in (torch.sparse_csr, torch.sparse_bsr)
    parts = (t.crow_indices(), t.col_indices()) if row else (t.ccol_indices(), t.row_indices())
    stored = torch.sparse_compressed_tensor(*parts, torch.ones_like(t.values()), t.shape,
                                            layout=t.layout).to_dense()
    return (g * stored).detach().numpy()


PRODUCTS = {
    "@": lambda lib, s, d: s @ d,
    "mm": lambda lib, s, d: lib.mm(s, d),
    "matmul": lambda lib, s, d: lib.matmul(s, d),
    "sparse.mm": lambda lib, s, d: lib.sparse.mm(s, d),
    "addmm": lambda lib, s, d: lib.addmm(lib.tensor(BIAS), s, d, beta=0.5, alpha=2.0),
    "mv": lambda lib, s, d: lib.mv(s, d[:, 0]),
    "@ vector": lambda lib, s, d: s @ d[:, 0],
    "dense @": lambda lib, s, d: lib.tensor(LEFT) @ s,
}


@pytest.mark.parametrize("layout", ["csr", "csc", "bsr", "bsc"])
@pytest.mark.parametrize("op", PRODUCTS)
def test_products_match_pytorch_with_gradients(layout, op):
    def run(lib):
        s = compressed(lib, layout, requires_grad=True)
        d = lib.tensor(OTHER, requires_grad=True)
        out = PRODUCTS[op](lib, s, d)
        (out * lib.arange(out.numel(), dtype=out.dtype).reshape(out.shape)).sum().backward()
        return s, d, out
    try:
        ts, td, tout = run(torch)
    except (RuntimeError, NotImplementedError) as e:
        pytest.skip(f"PyTorch has no {op} for {layout}: {e}")
    es, ed, eout = run(ember)
    np.testing.assert_allclose(eout.detach().numpy(), tout.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    if td.grad is None:     # "dense @" leaves the right operand out
        assert ed.grad is None
    else:
        np.testing.assert_allclose(ed.grad.numpy(), td.grad.numpy(), rtol=1e-5, atol=1e-5)
    assert es.grad.layout is es.layout
    np.testing.assert_allclose(es.grad.to_dense().numpy(), grad_at_pattern(ts), rtol=1e-5,
                               atol=1e-5)


GRADCHECK = {
    "csr @ dense": lambda lib, v, d: lib.sparse_csr_tensor([0, 2, 3, 5], [0, 2, 1, 0, 3], v,
                                                           (3, 4)) @ d,
    "csc mm": lambda lib, v, d: lib.mm(lib.sparse_csc_tensor([0, 2, 3, 4, 5], [0, 2, 1, 0, 2],
                                                             v, (3, 4)), d),
    "bsr @ dense": lambda lib, v, d: lib.sparse_bsr_tensor([0, 1, 2], [1, 0],
                                                           v[:4].reshape(2, 1, 2), (2, 4)) @ d,
    "csr mv": lambda lib, v, d: lib.mv(lib.sparse_csr_tensor([0, 2, 3, 5], [0, 2, 1, 0, 3],
                                                             v, (3, 4)), d[:, 0]),
    "csr addmm": lambda lib, v, d: lib.addmm(
        d[:3], lib.sparse_csr_tensor([0, 2, 3, 5], [0, 2, 1, 0, 3], v, (3, 4)), d, alpha=3.0),
    "sparse.mm": lambda lib, v, d: lib.sparse.mm(
        lib.sparse_csr_tensor([0, 2, 3, 5], [0, 2, 1, 0, 3], v, (3, 4)), d),
    "scaled sum to_dense": lambda lib, v, d: (
        lib.sparse_csr_tensor([0, 2, 3, 5], [0, 2, 1, 0, 3], v, (3, 4)) * 2.5
        + lib.sparse_csr_tensor([0, 1, 3, 3], [1, 0, 2], v[:3], (3, 4))).to_dense(),
    "dense to csr to csc": lambda lib, v, d: (d * 2).to_sparse_csr().to_sparse_csc()
    .to_dense(),
    "dense to bsr": lambda lib, v, d: d.to_sparse_bsr((2, 1)).values(),
    "csr to bsr": lambda lib, v, d: lib.sparse_csr_tensor(
        [0, 2, 3, 5, 5], [0, 2, 1, 0, 3], v, (4, 4)).to_sparse_bsr((2, 2)).to_dense(),
    "csr to coo": lambda lib, v, d: lib.sparse_csr_tensor(
        [0, 2, 3, 5], [0, 2, 1, 0, 3], v, (3, 4)).to_sparse().to_dense(),
}


@pytest.mark.parametrize("case", GRADCHECK)
def test_gradcheck_float64(case):
    v = ember.tensor(RNG.randn(5), dtype=ember.float64, requires_grad=True)
    d = ember.tensor(RNG.randn(4, 2), dtype=ember.float64, requires_grad=True)
    assert ember.autograd.gradcheck(lambda v, d: GRADCHECK[case](ember, v, d), (v, d))


ARITH = {
    "* 2": lambda lib, a, b: a * 2,
    "2 *": lambda lib, a, b: 2 * a,
    "mul 0-dim": lambda lib, a, b: a.mul(lib.tensor(3.0)),
    "/ 4": lambda lib, a, b: a / 4,
    "neg": lambda lib, a, b: -a,
    "add": lambda lib, a, b: a + b,
    "add alpha": lambda lib, a, b: a.add(b, alpha=2),
    "torch.add": lambda lib, a, b: lib.add(a, b),
    "sub": lambda lib, a, b: a - b,
    "sum": lambda lib, a, b: a.sum(),
    "csr * dense": lambda lib, a, b: a * lib.tensor(DENSE + 1) if a.layout == lib.sparse_csr
    else a * 1,
    "+ dense": lambda lib, a, b: a + lib.tensor(DENSE),
    "dense +": lambda lib, a, b: lib.tensor(DENSE) + a,
    "torch.add dense": lambda lib, a, b: lib.add(lib.tensor(DENSE), a, alpha=2),
}


@pytest.mark.parametrize("layout", ["csr", "csc", "bsr", "bsc"])
@pytest.mark.parametrize("op", ARITH)
def test_arithmetic_matches_pytorch(layout, op):
    other = np.where(np.arange(24).reshape(4, 6) % 5 == 0, 1.5, 0).astype(np.float32)

    def run(lib):
        return ARITH[op](lib, compressed(lib, layout), compressed(lib, layout, other))
    try:
        t = run(torch)
    except (RuntimeError, NotImplementedError) as e:
        pytest.skip(f"PyTorch has no {op} for {layout}: {e}")
    e = run(ember)
    assert repr(e) == repr(t)


def test_leaf_grad_and_requires_grad():
    e, t = (compressed(lib, "csr").requires_grad_() for lib in (ember, torch))
    assert repr(e) == repr(t) and e.is_leaf and e.grad is None
    for s in (e, t):
        s.to_dense().sum().backward()
    assert repr(e.grad) == repr(t.grad)
    e2, t2 = (compressed(lib, "csr", requires_grad=True) * 2 for lib in (ember, torch))
    assert repr(e2) == repr(t2) and not e2.is_leaf


LAYOUTS = ["csr", "csc", "bsr", "bsc"]


@pytest.mark.parametrize("layout", LAYOUTS)
def test_checkpoints_both_ways(layout):
    ours, theirs = compressed(ember, layout), compressed(torch, layout)
    buffer = io.BytesIO()
    torch.save({"adj": theirs, "layout": theirs.layout}, buffer)
    buffer.seek(0)
    loaded = ember.load(buffer)        # weights-only by default, as PyTorch's
    assert repr(loaded["adj"]) == repr(theirs) and loaded["layout"] is ours.layout
    buffer = io.BytesIO()
    ember.save({"adj": ours}, buffer)
    buffer.seek(0)
    assert repr(torch.load(buffer, weights_only=True)["adj"]) == repr(theirs)
    again = pickle.loads(pickle.dumps(ours))
    assert repr(again) == repr(ours) and again.layout is ours.layout


def test_loaded_indices_are_checked():
    bad = torch.sparse_csr_tensor([0, 1, 2], [0, 9], [1., 2.], (2, 3))
    buffer = io.BytesIO()
    torch.save(bad, buffer)
    buffer.seek(0)
    with pytest.raises(RuntimeError, match="col_indices < ncols"):
        ember.load(buffer)


def test_products_and_conversions_need_no_scipy(monkeypatch):
    import sys
    for name in [m for m in sys.modules if m == "scipy" or m.startswith("scipy.")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "scipy", None)   # `import scipy...` now raises ImportError
    x = ember.tensor(DENSE, requires_grad=True)
    d = ember.tensor(OTHER, requires_grad=True)
    s = x.to_sparse_csr()
    out = s @ d + ember.mv(s.to_sparse_csc(), d[:, 0]).unsqueeze(1) \
        + (s * 2 + s).to_sparse_bsr((2, 2)).to_dense() @ d
    out.sum().backward()
    xt, dt = (torch.tensor(a, requires_grad=True) for a in (DENSE, OTHER))
    ref = xt @ dt + (xt @ dt[:, 0]).unsqueeze(1) + (xt * 3) @ dt
    ref.sum().backward()
    np.testing.assert_allclose(out.detach().numpy(), ref.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(d.grad.numpy(), dt.grad.numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x.grad.numpy(), (xt.grad * (xt != 0)).numpy(), rtol=1e-5,
                               atol=1e-5)
