"""ember._gemm: products through a CBLAS library by ctypes (MKL's where installed). CI has no
MKL, so these tests hand the module NumPy's own OpenBLAS CBLAS (ILP64 symbols), which
exercises every layout, batch and output case the MKL path takes."""
import ctypes
import glob
import os

import numpy as np
import pytest

import ember
from ember import _gemm


def _numpy_cblas():
    libs = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in glob.glob(os.path.join(libs, "*openblas*")):
        lib = ctypes.CDLL(path)
        if hasattr(lib, "scipy_cblas_sgemm64_"):
            return _gemm.Cblas(lib, lambda r: f"scipy_cblas_{r}64_", "openblas",
                               index=ctypes.c_int64)
    pytest.skip("NumPy's BLAS is not scipy-openblas64")


@pytest.fixture
def cblas(monkeypatch):
    """Products through NumPy's OpenBLAS by ctypes, for the test, of every size; counted."""
    monkeypatch.setattr(_gemm, "MIN_MULTIPLY_ADDS", 0)
    calls = []
    library = _numpy_cblas()
    for table in (library.gemm,):
        for kind, f in list(table.items()):
            def counted(*args, f=f):
                calls.append(args[3:6])
                return f(*args)
            table[kind] = counted
    before = _gemm.use(library)
    yield calls
    _gemm.use(before)


def _matrix(rng, shape, dtype, layout):
    """A (…, r, c) array laid out as `layout`: "c" contiguous, "f" transposed storage,
    "rows" a row-strided view of a wider array, "neg" a reversed view."""
    if layout == "c":
        return rng.standard_normal(shape).astype(dtype)
    if layout == "f":
        return np.ascontiguousarray(rng.standard_normal(shape).astype(dtype).swapaxes(-1, -2)) \
            .swapaxes(-1, -2)
    if layout == "rows":
        return rng.standard_normal(shape[:-1] + (shape[-1] + 3,)).astype(dtype)[..., 1:-2]
    return rng.standard_normal(shape).astype(dtype)[..., ::-1, :]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("la", ["c", "f", "rows"])
@pytest.mark.parametrize("lb", ["c", "f", "rows"])
@pytest.mark.parametrize("mkn", [(5, 7, 3), (1, 9, 4), (6, 1, 5), (4, 8, 1), (1, 1, 1),
                                 (33, 65, 17)])
def test_products_equal_numpys(cblas, dtype, la, lb, mkn):
    m, k, n = mkn
    rng = np.random.default_rng(m * 100 + k * 10 + n)
    a, b = _matrix(rng, (m, k), dtype, la), _matrix(rng, (k, n), dtype, lb)
    got = _gemm.product(a, b)
    tol = 1e-5 if dtype == np.float32 else 1e-12
    np.testing.assert_allclose(got, np.matmul(a, b), rtol=tol, atol=tol)
    assert got.dtype == dtype and got.flags.c_contiguous and len(cblas) == 1


@pytest.mark.parametrize("shapes", [((3, 5, 4), (4, 6)), ((5, 4), (3, 4, 6)),
                                    ((2, 3, 5, 4), (2, 3, 4, 6)), ((2, 3, 5, 4), (4, 6)),
                                    ((1, 5, 4), (3, 4, 6)), ((3, 5, 4), (1, 4, 6))])
def test_batches_equal_numpys(cblas, shapes):
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(s).astype(np.float32) for s in shapes)
    got = _gemm.product(a, b)
    np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-5, atol=1e-5)
    assert got.shape == np.matmul(a, b).shape


def test_batch_of_transposed_and_strided_views(cblas):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((4, 6, 5)).astype(np.float32).swapaxes(1, 2)  # (4, 5, 6), each F
    b = rng.standard_normal((8, 6, 3)).astype(np.float32)[::2]              # every other one
    got = _gemm.product(a, b)
    np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-5, atol=1e-5)


def test_into_out_and_its_views(cblas):
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((6, 4)), rng.standard_normal((4, 5))
    wide = np.zeros((6, 9))
    out = wide[:, 2:7]  # rows strided past the product's width
    assert _gemm.product(a, b, out) is out
    np.testing.assert_allclose(out, a @ b, rtol=1e-12)
    assert not wide[:, :2].any() and not wide[:, 7:].any()
    batched = np.zeros((2, 6, 5))
    assert _gemm.product(np.stack([a, 2 * a]), b, batched) is batched
    np.testing.assert_allclose(batched[1], 2 * a @ b, rtol=1e-12)


@pytest.mark.parametrize("case", ["int", "mixed", "vector", "empty_m", "empty_k", "half",
                                  "overlap", "out_dtype", "out_transposed", "unbatchable",
                                  "readonly_out", "object", "big_endian"])
def test_numpy_computes_what_blas_cannot(cblas, case):
    """Cases left to NumPy: product() answers None and calls nothing."""
    rng = np.random.default_rng(3)
    a, b, out = rng.standard_normal((4, 3)), rng.standard_normal((3, 5)), None
    if case == "int":
        a, b = a.astype(np.int64), b.astype(np.int64)
    elif case == "mixed":
        b = b.astype(np.float32)
    elif case == "vector":
        b = b[:, 0]
    elif case == "empty_m":
        a = a[:0]
    elif case == "empty_k":
        a, b = a[:, :0], b[:0]
    elif case == "half":
        a, b = a.astype(np.float16), b.astype(np.float16)
    elif case == "overlap":
        buf = np.zeros((4, 5))
        a, out = buf[:, :3], buf
        b = rng.standard_normal((3, 5))
    elif case == "out_dtype":
        out = np.empty((4, 5), np.float32)
    elif case == "out_transposed":
        out = np.empty((5, 4)).T
    elif case == "unbatchable":
        a, b = rng.standard_normal((2, 5, 4, 3)), rng.standard_normal((5, 3, 2))
    elif case == "readonly_out":
        out = np.empty((4, 5))
        out.flags.writeable = False
    elif case == "object":
        a = a.astype(object)
    elif case == "big_endian":
        a, b = a.astype(">f8"), b.astype(">f8")
    assert _gemm.product(a, b, out) is None and not cblas


@pytest.fixture
def one_thread():
    before = ember.get_num_threads()
    ember.set_num_threads(1)
    yield
    ember.set_num_threads(before)


@pytest.mark.parametrize("case", ["zero_stride", "misaligned", "both_strides",
                                  "batch_of_strided"])
def test_operands_blas_cannot_read_are_copied(cblas, case):
    """As NumPy's matmul does: a C-ordered copy of the operand, then the library's product."""
    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((4, 3)), rng.standard_normal((3, 5))
    if case == "zero_stride":
        a = np.broadcast_to(rng.standard_normal((1, 3)), (4, 3))
    elif case == "misaligned":  # float64s one byte into a buffer
        a = np.frombuffer(np.zeros(4 * 3 * 8 + 1, np.uint8).tobytes(), np.float64, 12,
                          offset=1).reshape(4, 3)
    elif case == "both_strides":  # a weight's view: neither stride a unit one
        b = rng.standard_normal((5, 9, 3))[:, ::3, :].transpose(2, 1, 0)[:, 0, :]
    else:  # a conv weight seen per kernel offset: strides (1, 576, 9) in items
        a = rng.standard_normal((9, 6, 4))
        b = rng.standard_normal((5, 4, 9)).transpose(2, 1, 0)
    got = _gemm.product(a, b)
    np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-12)
    assert cblas


@pytest.mark.parametrize("shapes", [((6, 4), (4, 5)), ((3, 6, 4), (3, 4, 5)),
                                    ((3, 6, 4), (4, 5))])
def test_accumulate_adds_the_product_into_out(cblas, shapes):
    rng = np.random.default_rng(3)
    a, b = (rng.standard_normal(s) for s in shapes)
    start = rng.standard_normal(np.matmul(a, b).shape)
    out = start.copy()
    assert _gemm.product(a, b, out, accumulate=True) is out
    np.testing.assert_allclose(out, start + a @ b, rtol=1e-12, atol=1e-12)
    with pytest.raises(ValueError, match="out"):
        _gemm.product(a, b, accumulate=True)


@pytest.mark.parametrize("library", ["cblas", "numpy"])
def test_addmm_adds_its_product_into_the_bias(cblas, one_thread, library):
    """Linear's addmm: the bias copied into the output and the product added into it by one
    ?gemm with beta = 1 (PyTorch's addmm, to the bit where MKL computes both), or NumPy's
    product added where the library does not take it; every bias shape addmm broadcasts."""
    if library == "numpy":
        _gemm.use(None)
    rng = np.random.default_rng(4)
    a, w = rng.standard_normal((6, 4)).astype(np.float32), rng.standard_normal((4, 5))
    w = w.astype(np.float32)
    for bias in (rng.standard_normal(5), rng.standard_normal((6, 5)), rng.standard_normal(
            (6, 1)), rng.standard_normal((1, 5)), np.array(1.5)):
        bias = bias.astype(np.float32)
        before = len(cblas)
        got = ember.addmm(ember.tensor(bias), ember.tensor(a), ember.tensor(w)).numpy()
        np.testing.assert_allclose(got, bias + a @ w, rtol=1e-6, atol=1e-6)
        assert len(cblas) - before == (library == "cblas")  # one ?gemm call, no other
    lin = ember.nn.Linear(4, 5)
    x = ember.tensor(a, requires_grad=True)
    lin(x).sum().backward()  # (the node and its gradients as before)
    np.testing.assert_allclose(x.grad.numpy(), np.tile(lin.weight.detach().numpy().sum(0),
                                                       (6, 1)), rtol=1e-6)


def test_ember_ops_run_through_it(cblas, one_thread):
    """At one thread, matmul, linear, a convolution and attention go through the library,
    and give what NumPy's products give (the same model, gradients included)."""
    def run():
        ember.manual_seed(0)
        model = ember.nn.Sequential(ember.nn.Conv2d(3, 8, 3, padding=1), ember.nn.ReLU(),
                                    ember.nn.Flatten(), ember.nn.Linear(8 * 36, 5))
        x = ember.randn(4, 3, 6, 6, requires_grad=True)
        q = ember.randn(2, 3, 7, 8)
        attn = ember.nn.functional.scaled_dot_product_attention(q, q, q, is_causal=True)
        loss = model(x).square().sum() + (attn.sum(0) @ q[0].transpose(-1, -2)).sum()
        loss.backward()
        return [loss.detach().numpy(), x.grad.numpy()] + [p.grad.numpy()
                                                          for p in model.parameters()]
    with_library = run()
    assert cblas
    calls = len(cblas)
    _gemm.use(None)
    for got, want in zip(with_library, run()):
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-5)
    assert len(cblas) == calls  # without it, NumPy's own products


def test_small_products_stay_numpys(cblas, monkeypatch):
    monkeypatch.setattr(_gemm, "MIN_MULTIPLY_ADDS", 1 << 20)
    a, b = np.ones((64, 128), np.float32), np.ones((128, 128), np.float32)
    assert _gemm.product(a, b[:, :127]) is None and not cblas
    assert _gemm.product(a, b) is not None and len(cblas) == 1


def test_products_on_the_blas_threads_stay_numpys(cblas, monkeypatch):
    """At two threads, a product the pool does not split runs on OpenBLAS's own threads,
    where the library has none (MKL without GNU OpenMP)."""
    from ember import _parallel
    monkeypatch.setattr(_parallel, "threaded", lambda: False)
    before = ember.get_num_threads()
    ember.set_num_threads(2)
    try:
        if not _parallel._pool.blas_claimed:
            a = np.ones((8, 8))
            np.testing.assert_array_equal(_parallel.one_product(a, a), a @ a)
            assert not cblas
        _parallel._pool.claim_blas()  # the pool's parts: one thread each
        a = np.ones((8, 8))
        _parallel.one_product(a, a)
        assert cblas
    finally:
        _parallel._pool.last_parallel = 0.0
        _parallel._pool.holds_cores()  # gives the cores back to the BLAS
        ember.set_num_threads(before)


def test_large_products_take_the_openmp_threads(cblas, monkeypatch):
    """Where the library has threads, a product of PARALLEL_MIN_MULTIPLY_ADDS or more runs on
    the threads asked for, a smaller one (or any in a forked child) on one."""
    counts = []
    library = _gemm.library()
    monkeypatch.setattr(library, "threads", counts.append)
    monkeypatch.setattr(_gemm, "PARALLEL_MIN_MULTIPLY_ADDS", 64 * 64 * 64)
    a = np.ones((64, 64), np.float32)
    assert _gemm.threaded()
    _gemm.product(a, a, threads=2)
    _gemm.product(a[:32], a, threads=2)
    _gemm.product(np.stack([a[:32]] * 2), a, threads=2)  # a batch counts in all
    monkeypatch.setattr(_gemm._state, "forked", True)
    assert not _gemm.threaded()
    _gemm.product(a, a, threads=2)
    assert counts == [2, 1, 2, 1]


def test_one_product_asks_for_the_intra_op_threads(cblas, monkeypatch):
    from ember import _parallel
    counts = []
    monkeypatch.setattr(_gemm.library(), "threads", counts.append)
    monkeypatch.setattr(_gemm, "PARALLEL_MIN_MULTIPLY_ADDS", 0)
    monkeypatch.setattr(_parallel._pool, "threads", 2)
    monkeypatch.setattr(_parallel._pool, "blas_claimed", False)
    a = np.ones((16, 16), np.float32)
    np.testing.assert_array_equal(_parallel.one_product(a, a), a @ a)
    monkeypatch.setattr(_parallel._pool, "blas_claimed", True)  # the pool's parts: one each
    np.testing.assert_array_equal(_parallel.one_product(a, a), a @ a)
    assert counts == [2, 1]


def test_mkl_takes_gnu_openmp_only_where_libgomp_loads(monkeypatch):
    real = ctypes.CDLL

    def no_gomp(name, *args, **kwargs):
        if "gomp" in str(name):
            raise OSError(name)
        return real(name, *args, **kwargs)
    monkeypatch.setattr(ctypes, "CDLL", no_gomp)
    assert not _gemm._gnu_openmp()


def test_mkl_is_left_off_on_request(monkeypatch):
    monkeypatch.setenv("EMBER_MKL", "0")
    assert _gemm._load_mkl() is None


