"""Sparse compressed tensors (CSR, CSC, BSR, BSC): parity with PyTorch in construction, size
inference, invariant errors, conversions, printing, accessors and the `*_indices_copy`
functions. Products, arithmetic, gradients and checkpoints: test_sparse_compressed_ops.py."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="Sparse invariant checks")
        warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta")
        yield


def both(fn):
    return fn(ember), fn(torch)


def same_repr(fn):
    e, t = both(fn)
    assert repr(e) == repr(t)
    assert str(e) == str(t)
    return e, t


def dense(lib):
    x = lib.arange(1., 25.).reshape(4, 6)
    return x * (x.remainder(3) != 0)     # a pattern with zeros


CONSTRUCT = {
    "csr": lambda lib: lib.sparse_csr_tensor([0, 2, 3], [0, 2, 1], [1., 2., 3.]),
    "csr sized": lambda lib: lib.sparse_csr_tensor([0, 2, 3, 3], [0, 2, 1], [1., 2., 3.],
                                                   (3, 5)),
    "csr int values": lambda lib: lib.sparse_csr_tensor([0, 2, 3], [0, 2, 1], [1, 2, 3]),
    "csr float64": lambda lib: lib.sparse_csr_tensor([0, 2, 3], [0, 2, 1], [1, 2, 3],
                                                     dtype=lib.float64),
    "csr requires_grad": lambda lib: lib.sparse_csr_tensor(
        [0, 2, 3], [0, 2, 1], [1., 2., 3.], (2, 3), dtype=lib.float64, requires_grad=True,
        device="cpu", pin_memory=False, check_invariants=True),
    "csr int32": lambda lib: lib.sparse_csr_tensor(lib.tensor([0, 2, 3], dtype=lib.int32),
                                                   lib.tensor([0, 2, 1], dtype=lib.int32),
                                                   lib.tensor([1., 2., 3.])),
    "csr empty": lambda lib: lib.sparse_csr_tensor([0, 0], lib.zeros(0, dtype=lib.int64),
                                                   lib.zeros(0), (1, 5)),
    "csr long values": lambda lib: lib.sparse_csr_tensor(
        [0, 4, 8], [0, 1, 2, 3, 0, 1, 2, 3], lib.arange(8.) / 7 - 0.5),
    "csc": lambda lib: lib.sparse_csc_tensor([0, 2, 3], [0, 2, 1], [1., 2., 3.]),
    "bsr": lambda lib: lib.sparse_bsr_tensor([0, 2, 3], [0, 2, 1],
                                             lib.arange(18.).reshape(3, 2, 3)),
    "bsc": lambda lib: lib.sparse_bsc_tensor([0, 1, 2], [0, 1],
                                             lib.arange(8.).reshape(2, 2, 2), (4, 4)),
    "compressed csc": lambda lib: lib.sparse_compressed_tensor(
        [0, 2, 3], [0, 2, 1], lib.ones(3), layout=lib.sparse_csc),
    "keywords": lambda lib: lib.sparse_csr_tensor(
        crow_indices=[0, 1], col_indices=[1], values=[5.], size=(1, 2)),
    "compressed keywords": lambda lib: lib.sparse_compressed_tensor(
        compressed_indices=[0, 1], plain_indices=[1], values=[[[5.]]], size=(2, 1),
        layout=lib.sparse_bsc),
}


@pytest.mark.parametrize("name", CONSTRUCT)
def test_construction_prints_and_answers_as_pytorch(name):
    e, t = same_repr(CONSTRUCT[name])
    assert str(e.layout) == str(t.layout) and tuple(e.shape) == tuple(t.shape)
    assert str(e.dtype) == str(t.dtype) and e.device.type == t.device.type
    assert (e._nnz(), e.numel(), e.dim(), e.requires_grad, e.is_leaf) == \
        (t._nnz(), t.numel(), t.dim(), t.requires_grad, t.is_leaf)
    assert (e.is_sparse, e.is_sparse_csr) == (t.is_sparse, t.is_sparse_csr)
    assert (e.sparse_dim(), e.dense_dim()) == (t.sparse_dim(), t.dense_dim())
    row = t.layout in (torch.sparse_csr, torch.sparse_bsr)
    names = ("crow_indices", "col_indices") if row else ("ccol_indices", "row_indices")
    for n in names + ("values",):
        ei, ti = getattr(e, n)(), getattr(t, n)()
        assert str(ei.dtype) == str(ti.dtype)
        np.testing.assert_array_equal(ei.detach().numpy(), ti.detach().numpy())
    np.testing.assert_array_equal(e.to_dense().detach().numpy(), t.to_dense().detach().numpy())
    assert not isinstance(e._array, np.ndarray)    # no dense copy held


def test_layouts_print_and_compare():
    for name in ("sparse_csr", "sparse_csc", "sparse_bsr", "sparse_bsc"):
        assert repr(getattr(ember, name)) == repr(getattr(torch, name))
    assert ember.ones(2).layout is ember.strided and not ember.ones(2).is_sparse_csr


def _csr(crow, col, size=(2, 3), values=(1., 2., 3.), **kw):
    return lambda lib: lib.sparse_csr_tensor(crow, col, list(values), size,
                                             check_invariants=True, **kw)


def _bsr(crow, col, size, **kw):
    return lambda lib: lib.sparse_bsr_tensor(crow, col, lib.ones(len(col), 2, 2), size,
                                             check_invariants=True, **kw)


BAD = {
    "crow too long": _csr([0, 2, 3, 3], [0, 2, 1]),
    "crow end is not nnz": _csr([0, 2, 4], [0, 2, 1]),
    "crow starts above 0": _csr([1, 2, 3], [0, 2, 1]),
    "crow not monotone": _csr([0, 2, 1, 3], [0, 1, 2], (3, 3)),
    "crow step above ncols": _csr([0, 4, 4, 4], [0, 1, 2, 2], (3, 3), (1., 2., 3., 4.)),
    "col out of range": _csr([0, 2, 3], [0, 3, 1]),
    "col negative": _csr([0, 2, 3], [0, -1, 1]),
    "cols unsorted": _csr([0, 2, 3], [2, 0, 1]),
    "cols repeated": _csr([0, 2, 3], [0, 0, 1]),
    "unsorted before a bad step": _csr([0, 2, 1, 3], [2, 0, 1], (3, 3)),
    "nnz mismatch": _csr([0, 2, 3], [0, 2, 1], values=(1., 2.)),
    "index dtypes differ": lambda lib: lib.sparse_csr_tensor(
        lib.tensor([0, 2, 3], dtype=lib.int32), lib.tensor([0, 2, 1]), [1., 2., 3.],
        check_invariants=True),
    "csc ccol too long": lambda lib: lib.sparse_csc_tensor(
        [0, 2, 3, 3], [0, 2, 1], [1., 2., 3.], (3, 2), check_invariants=True),
    "csc row out of range": lambda lib: lib.sparse_csc_tensor(
        [0, 2, 3], [0, 3, 1], [1., 2., 3.], (3, 2), check_invariants=True),
    "csc rows unsorted": lambda lib: lib.sparse_csc_tensor(
        [0, 2, 3], [2, 0, 1], [1., 2., 3.], (3, 2), check_invariants=True),
    "bsr crow too long": _bsr([0, 1, 2, 2], [0, 1], (4, 4)),
    "bsr col out of range": _bsr([0, 1, 2], [0, 2], (4, 4)),
    "bsr size not divisible": _bsr([0, 1], [0], (3, 4)),
    "bsc ccol too long": lambda lib: lib.sparse_bsc_tensor(
        [0, 1, 2, 2], [0, 1], lib.ones(2, 2, 2), (4, 4), check_invariants=True),
    "no layout": lambda lib: lib.sparse_compressed_tensor([0, 1], [0], [1.]),
    "strided layout": lambda lib: lib.sparse_compressed_tensor([0, 1], [0], [1.],
                                                               layout=lib.strided),
}


@pytest.mark.parametrize("name", BAD)
def test_invariant_errors_match_pytorch(name):
    with pytest.raises(Exception) as theirs:
        BAD[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        BAD[name](ember)
    assert str(ours.value) == str(theirs.value)


def test_batches_and_dense_dimensions_are_refused_clearly():
    with pytest.raises(NotImplementedError, match="batch"):
        ember.sparse_csr_tensor([[0, 1], [0, 1]], [[0], [0]], [[1.], [2.]])
    with pytest.raises(NotImplementedError, match="hybrid"):
        ember.sparse_csr_tensor([0, 1], [0], [[1., 2.]])
    with pytest.raises(NotImplementedError, match="batch"):
        ember.ones(2, 2, 3).to_sparse_csr()


CONVERT = {
    "dense to csr": lambda lib: dense(lib).to_sparse_csr(),
    "dense to csc": lambda lib: dense(lib).to_sparse_csc(),
    "dense to bsr": lambda lib: dense(lib).to_sparse_bsr((2, 3)),
    "dense to bsc": lambda lib: dense(lib).to_sparse_bsc((2, 2)),
    "dense to_sparse(layout=csr)": lambda lib: dense(lib).to_sparse(layout=lib.sparse_csr),
    "dense to_sparse(layout=bsr)": lambda lib: dense(lib).to_sparse(layout=lib.sparse_bsr,
                                                                    blocksize=(1, 2)),
    "coo to csr": lambda lib: dense(lib).to_sparse().to_sparse_csr(),
    "coo to csc": lambda lib: dense(lib).to_sparse().to_sparse(layout=lib.sparse_csc),
    "coo to bsr": lambda lib: dense(lib).to_sparse().to_sparse_bsr((2, 2)),
    "csr to csc": lambda lib: dense(lib).to_sparse_csr().to_sparse_csc(),
    "csc to csr": lambda lib: dense(lib).to_sparse_csc().to_sparse_csr(),
    "csr to bsr": lambda lib: dense(lib).to_sparse_csr().to_sparse_bsr((2, 2)),
    "csc to bsc": lambda lib: dense(lib).to_sparse_csc().to_sparse_bsc((1, 3)),
    "bsr to bsc": lambda lib: dense(lib).to_sparse_bsr((2, 3)).to_sparse_bsc((2, 3)),
    "csr to coo": lambda lib: dense(lib).to_sparse_csr().to_sparse(),
    "csc to coo": lambda lib: dense(lib).to_sparse_csc().to_sparse(layout=lib.sparse_coo),
    "bsr to coo": lambda lib: dense(lib).to_sparse_bsr((2, 2)).to_sparse(),
    "csr t": lambda lib: dense(lib).to_sparse_csr().t(),
    "bsr t": lambda lib: dense(lib).to_sparse_bsr((2, 3)).t(),
    "csr to float64": lambda lib: dense(lib).to_sparse_csr().to(lib.float64),
    "csr clone": lambda lib: dense(lib).to_sparse_csr().clone(),
    "csr of requires_grad": lambda lib: dense(lib).requires_grad_().to_sparse_csr(),
    "csr detach": lambda lib: dense(lib).requires_grad_().to_sparse_csr().detach(),
}


@pytest.mark.parametrize("name", CONVERT)
def test_conversions_match_pytorch(name):
    e, t = same_repr(CONVERT[name])
    if t.layout == torch.sparse_coo:
        assert e.is_coalesced() == t.is_coalesced()
    np.testing.assert_array_equal(e.to_dense().detach().numpy(), t.to_dense().detach().numpy())


def test_same_layout_conversion_returns_the_tensor():
    c = dense(ember).to_sparse_csr()
    assert c.to_sparse_csr() is c and c.to_sparse(layout=ember.sparse_csr) is c


BAD_CONVERT = {
    "bsr to csr": lambda lib: dense(lib).to_sparse_bsr((2, 2)).to_sparse_csr(),
    "blocksize changed": lambda lib: dense(lib).to_sparse_bsr((2, 2)).to_sparse_bsc((1, 1)),
    "dense not divisible": lambda lib: dense(lib).to_sparse_bsr((3, 2)),
    "csr not divisible": lambda lib: dense(lib).to_sparse_csr().to_sparse_bsr((3, 2)),
    "no blocksize": lambda lib: dense(lib).to_sparse(layout=lib.sparse_bsr),
    "sparse_dim to coo": lambda lib: dense(lib).to_sparse_csr().to_sparse(1),
    "crow of csc": lambda lib: dense(lib).to_sparse_csc().crow_indices(),
    "col of csc": lambda lib: dense(lib).to_sparse_csc().col_indices(),
    "ccol of csr": lambda lib: dense(lib).to_sparse_csr().ccol_indices(),
    "row of bsr": lambda lib: dense(lib).to_sparse_bsr((2, 2)).row_indices(),
    "crow of dense": lambda lib: dense(lib).crow_indices(),
    "ccol of dense": lambda lib: dense(lib).ccol_indices(),
    "is_coalesced of csr": lambda lib: dense(lib).to_sparse_csr().is_coalesced(),
    "crow_indices_copy of csc": lambda lib: lib.crow_indices_copy(dense(lib).to_sparse_csc()),
    "is_contiguous": lambda lib: dense(lib).to_sparse_csr().is_contiguous(),
    "stride": lambda lib: dense(lib).to_sparse_csr().stride(),
}


@pytest.mark.parametrize("name", BAD_CONVERT)
def test_conversion_errors_match_pytorch(name):
    with pytest.raises(Exception) as theirs:
        BAD_CONVERT[name](torch)
    with pytest.raises(type(theirs.value)) as ours:
        BAD_CONVERT[name](ember)
    assert str(ours.value) == str(theirs.value)


@pytest.mark.parametrize("fname,layout", [
    ("crow_indices_copy", "csr"), ("col_indices_copy", "bsr"), ("ccol_indices_copy", "csc"),
    ("row_indices_copy", "bsc")])
def test_indices_copy_functions(fname, layout):
    def run(lib):
        x = dense(lib)
        s = getattr(x, f"to_sparse_{layout}")(*(((2, 2),) if layout[0] == "b" else ()))
        return s, getattr(lib, fname)(s)
    (es, e), (ts, t) = both(run)
    assert repr(e) == repr(t)
    accessor = fname[:-len("_copy")]
    assert e is not getattr(es, accessor)()     # a fresh tensor, not the stored one
    e.add_(100)
    assert getattr(es, accessor)().max().item() < 100


@pytest.mark.parametrize("source", ["dense", "coo", "csr", "bsr"])
@pytest.mark.parametrize("call", [
    lambda lib, t: t.to_sparse(layout=lib.sparse_csr, blocksize=(2, 2)),
    lambda lib, t: t.to_sparse(layout=lib.sparse_coo, blocksize=(2, 2)),
    lambda lib, t: t.to_sparse(blocksize=(2, 2)),
    lambda lib, t: t.to_sparse(layout=lib.sparse_csc, blocksize=(2, 2)),
    lambda lib, t: t.to_sparse(layout=lib.sparse_bsr),
    lambda lib, t: t.to_sparse(layout=lib.sparse_bsc),
])
def test_blocksize_only_for_block_layouts_and_always_for_them(source, call):
    """to_sparse takes a blocksize for bsr/bsc only, and needs one for them even from a block
    layout: PyTorch's errors, named by the conversion."""
    def run(lib):
        x = lib.eye(4)
        t = {"dense": x, "coo": x.to_sparse(), "csr": x.to_sparse_csr(),
             "bsr": x.to_sparse_bsr((2, 2))}[source]
        with pytest.raises(RuntimeError) as err:
            call(lib, t)
        return str(err.value)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # (PyTorch's beta-state warning for bsr)
        assert run(ember) == run(torch)
