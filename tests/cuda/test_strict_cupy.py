"""The strict CuPy stand-in itself (tests/_strict_cupy): it must be no more lenient than CuPy 14,
or the op table and training steps on 'cuda' would prove nothing."""
import sys

import numpy as np
import pytest

from tests._strict_cupy import REAL_CUDA, TRANSFERS, strict_cupy
from tests._strict_cupy._cupy_api import CLASSES, MODULES

pytestmark = pytest.mark.skipif(REAL_CUDA, reason="tests the stand-in, not the GPU")


@pytest.fixture
def cp():
    with strict_cupy() as module:
        yield module


def test_it_has_only_cupys_names(cp):
    import sys
    for name in ("cupy", "cupy.random", "cupy.linalg", "cupy.fft", "cupyx",
                 "cupyx.scipy.special"):
        module = sys.modules[name]
        public = {n for n in vars(module) if not n.startswith("_")}
        submodules = {n for n in public if type(getattr(module, n)).__name__ == "module"}
        extra = public - set(MODULES[name]) - submodules - {"TRANSFERS", "get_default_memory_pool"}
        assert not extra, f"{name} has names CuPy 14 lacks: {sorted(extra)}"
    methods = {n for n in dir(cp.ndarray) if not n.startswith("_")}
    assert methods <= set(CLASSES["ndarray"]), sorted(methods - set(CLASSES["ndarray"]))
    a = cp.zeros(3)
    assert not hasattr(a.flags, "writeable") and not hasattr(a, "itemset")
    assert not isinstance(a, np.ndarray)


def test_host_conversion_is_refused_and_reads_are_counted(cp):
    a = cp.arange(4.0)
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array"):
        np.asarray(a)
    with pytest.raises(TypeError, match="Unsupported type"):
        a + np.ones(4)
    with pytest.raises(TypeError, match="Unsupported type"):
        cp.exp(np.ones(2))
    with pytest.raises(TypeError, match="only length-1 arrays"):
        float(a)
    before = TRANSFERS.count
    assert a.sum().ndim == 0 and type(a[1]) is cp.ndarray  # no host scalars
    assert TRANSFERS.count == before
    float(a[1]), bool(a[2] > 0), a.get(), a.tolist(), a[0].item(), repr(a)
    assert TRANSFERS.count == before + 6
    np.testing.assert_array_equal(cp.asnumpy(cp.exp(a)), np.exp(np.arange(4.0)))
    assert type(np.exp(a)) is cp.ndarray  # NumPy's ufuncs dispatch to CuPy's, as in CuPy


def test_signatures_loops_and_kernel_types_are_cupys(cp):
    with pytest.raises(TypeError):
        cp.sum(cp.ones(3), initial=0.0)  # NumPy's keyword; CuPy's sum has none
    with pytest.raises(TypeError, match="Wrong type"):
        cp.invert(cp.ones(3))  # no float loop
    import ml_dtypes
    with pytest.raises(ValueError, match="Unsupported dtype float8_e4m3fn"):
        cp.asarray(np.ones(4, dtype=ml_dtypes.float8_e4m3fn))  # only a view makes one
    x = cp.asarray(np.full(4, 0x38, np.uint8)).view(ml_dtypes.float8_e4m3fn)
    with pytest.raises(ValueError, match="Unsupported dtype float8_e4m3fn"):
        x.astype(np.float32)
    with pytest.raises(ValueError, match="Unsupported dtype"):
        cp.concatenate([x, x])
    assert x.view(np.uint8).get().tolist() == [0x38] * 4  # its bits cross freely


def test_views_know_their_base_and_host_data_is_copied(cp):
    host = np.arange(6.0)
    a = cp.asarray(host)
    host[0] = 99
    assert a[0].item() == 0.0
    v = a.reshape(2, 3)
    assert v.base is a and v.reshape(6).base is a
    assert a.copy().base is None
    # a view holds its owner, as CuPy's does: the owner's references count each live view
    before = sys.getrefcount(a)
    w = a[1:]
    assert sys.getrefcount(a) == before + 1
    del w
    assert sys.getrefcount(a) == before


def test_an_array_given_back_unchanged_is_the_same_array(cp):
    """CuPy returns the input itself from astype(same dtype, copy=False) and ascontiguousarray
    of a contiguous array; a second array over the same memory would make the first one's
    later views name another base (ember's view() then called them copies: siamese_network's
    `targets.view_as(pred)` failed on 'cuda')."""
    a = cp.arange(6.0)
    assert a.astype(a.dtype, copy=False) is a and cp.ascontiguousarray(a) is a
    assert a.reshape(2, 3).base is a


def test_arrays_take_memory_from_the_pool(cp):
    pool = cp.get_default_memory_pool()
    before = pool.used_bytes()
    a = cp.empty(1000, dtype=np.float32)
    assert pool.used_bytes() == before + 4096  # rounded up to CuPy's 512-byte blocks
    del a
    assert pool.used_bytes() == before


def test_integer_array_indices_wrap_around_as_cupys_do(cp):
    """CuPy's documented difference from NumPy: an out-of-range integer-array index wraps
    around, in gathers and scatters alike (NumPy raises IndexError)."""
    a = cp.arange(4.0)
    i = cp.asarray(np.array([1, 5, -6]))
    assert a[i].get().tolist() == [1.0, 1.0, 2.0]
    assert cp.take(a, i).get().tolist() == [1.0, 1.0, 2.0]
    b = a.copy()
    b[i] = 9.0
    assert b.get().tolist() == [0.0, 9.0, 9.0, 3.0]
    c = cp.zeros(4)
    cp.add.at(c, i, 1.0)
    assert c.get().tolist() == [0.0, 2.0, 1.0, 0.0]
    m = cp.arange(6.0).reshape(2, 3)
    j = cp.asarray(np.array([[4], [-1]]))
    assert cp.take_along_axis(m, j, 1).get().tolist() == [[1.0], [5.0]]
    cp.put_along_axis(m, j, cp.zeros((2, 1)), 1)
    assert m.get().tolist() == [[0.0, 0.0, 2.0], [3.0, 4.0, 0.0]]


def test_float64_scatter_max_keeps_float32_precision_as_cupys(cp):
    """On an H200, CuPy 14.2's float64 scatter-max of random values gave maxima within float32
    rounding, equal to none of the inputs; float32 and integer scatters are exact."""
    rng = np.random.default_rng(0)
    vals, idx = rng.standard_normal((6, 2)), np.array([0, 0, 1, 1, 1, 0])
    out = cp.full((2, 2), -np.inf)
    cp.maximum.at(out, cp.asarray(idx), cp.asarray(vals))
    exact = np.full((2, 2), -np.inf)
    np.maximum.at(exact, idx, vals)
    assert not (out.get() == exact).any()
    np.testing.assert_allclose(out.get(), exact, rtol=1e-7)
    single = cp.full((2, 2), -np.inf, dtype=np.float32)
    cp.maximum.at(single, cp.asarray(idx), cp.asarray(vals.astype(np.float32)))
    assert (single.get() == exact.astype(np.float32)).all()


@pytest.mark.parametrize("dtype", [np.float64, np.float32, np.float16, np.int64])
@pytest.mark.parametrize("largest", [True, False])
def test_device_scatter_extremes_are_exact(cp, dtype, largest):
    """ember's scatter-max/min for devices (_accumulate.scatter_extreme) gives NumPy's exact
    result for every float width, NaN propagating and infinities kept, through integer keys
    (CuPy's float64 scatter would round)."""
    from ember.ops._accumulate import scatter_extreme
    rng = np.random.default_rng(1)
    target = rng.standard_normal((4, 3)).astype(dtype) if dtype is not np.int64 else \
        rng.integers(-9, 9, (4, 3))
    vals = (rng.standard_normal((7, 3)) * 5).astype(dtype)
    if dtype is not np.int64:
        vals[2, 1], vals[5, 2], target[1, 2] = np.nan, -np.inf, np.inf
    idx = np.array([0, 0, 2, 2, 1, 3, 3])
    got = cp.asarray(target)
    scatter_extreme(cp, got, cp.asarray(idx), cp.asarray(vals), largest)
    want = target.copy()
    (np.maximum if largest else np.minimum).at(want, idx, vals)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got.get(), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.int64])
def test_device_row_adds_sum_each_row_on_its_own(cp, dtype):
    """ember's deterministic scatter-add for devices (_accumulate.add_rows_on_device): sorted
    rows summed by a segmented scan. Each row's sum uses only its own values: an inf in one
    row leaves the others finite, and a row hit once gets its value exactly."""
    from ember.ops._accumulate import add_rows_on_device
    rng = np.random.default_rng(0)
    idx = rng.integers(0, 7, 40)
    vals = (rng.standard_normal((40, 3)) * 100).astype(dtype)
    if dtype is np.float64:
        vals[idx == 3] = np.inf
        idx[0], vals[0] = 6, 1e-3  # then 6 is hit once, with a value a running sum would blur
        idx[idx == 6] = 5
        idx[0] = 6
    out = cp.zeros((8, 3), dtype)
    add_rows_on_device(out, cp.asarray(idx), cp.asarray(vals))
    wide = np.complex128 if dtype is np.complex64 else np.float64 if dtype is np.float32 else dtype
    expected = np.zeros((8, 3), wide)
    np.add.at(expected, idx, vals.astype(wide))  # summed wide, as the CPU's bincount
    np.testing.assert_allclose(out.get(), expected.astype(dtype), rtol=1e-6)
    if dtype is np.float64:
        assert np.isinf(out.get()[3]).all() and np.isfinite(np.delete(out.get(), 3, 0)).all()
        assert (out.get()[6] == vals[0]).all()


def test_empty_memory_holds_garbage_as_a_pool_block_can(cp):
    assert bool(cp.isnan(cp.empty(3)).all())
    assert bool(cp.isnan(cp.empty_like(cp.zeros((2, 2), np.float32))).all())
    assert bool((cp.empty(2, np.int64) != 0).all()) and bool(cp.empty(2, bool).all())


def test_reduction_kernels_run_their_arithmetic_and_check_arguments_as_cupys(cp):
    rng = np.random.default_rng(0)
    x, w = rng.standard_normal((2, 3, 4, 5)), rng.standard_normal((2, 3, 4, 5))
    dot = cp.ReductionKernel("T x, T w", "T y", "x * w", "a + b", "y = a", "0", "dot")
    got = dot(cp.asarray(x), cp.asarray(w), axis=(0, 2, 3), keepdims=True)
    np.testing.assert_allclose(got.get(), (x * w).sum(axis=(0, 2, 3), keepdims=True))
    peak = cp.ReductionKernel("T x", "T y", "x - 1", "max(a, b)", "y = a * 2", "0", "peak")
    np.testing.assert_allclose(peak(cp.asarray(x), axis=1).get(), (x - 1).max(axis=1) * 2)
    # post_map reads a scalar parameter (a kernel argument), not an array one
    mean = cp.ReductionKernel("T x, T n", "T y", "x", "a + b", "y = a / n", "0", "mean")
    x32 = x.astype(np.float32)
    got = mean(cp.asarray(x32), np.float32(12), axis=(0, 2))
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got.get(), np.einsum("abcd->bd", x32) / 12)
    with pytest.raises(NotImplementedError, match="array parameter"):
        mean(cp.asarray(x), cp.asarray(x), axis=0)
    with pytest.raises(TypeError, match="Unsupported type"):
        dot(cp.asarray(x), w)  # a host array
    with pytest.raises(TypeError, match="Type is mismatched"):
        dot(cp.asarray(x), cp.asarray(w.astype(np.float32)))
    with pytest.raises(TypeError, match="Wrong number of arguments"):
        dot(cp.asarray(x))
    for refused in ("log(x)", "x * 0.5", "(float)x", "z"):  # a call, a fraction literal,
        with pytest.raises(NotImplementedError):  # a C cast, a name not a parameter
            cp.ReductionKernel("T x", "T y", refused, "a + b", "y = a", "0", "refused")


def test_elementwise_kernels_run_their_assignments_as_cupys(cp):
    rng = np.random.default_rng(2)
    x, k = rng.standard_normal((3, 4)).astype(np.float32), rng.standard_normal((3, 1))
    axpb = cp.ElementwiseKernel("T x, T k, T b", "T y, T z", "y = x * k + b; z = sqrt(y * y)",
                                "axpb")
    y, z = axpb(cp.asarray(x), cp.asarray(k.astype(np.float32)), np.float32(0.5))
    want = x * k.astype(np.float32) + np.float32(0.5)  # float32 roundings, one per operation
    assert y.dtype == np.float32 and (y.get() == want).all() and (z.get() == np.abs(want)).all()
    out = cp.zeros((3, 4), dtype=np.float32)  # an output passed in (and read: in place)
    acc = cp.ElementwiseKernel("T x", "T y", "y = y + x", "accumulate")
    acc(cp.asarray(x), out)
    acc(cp.asarray(x), out)
    assert (out.get() == x + x).all()
    with pytest.raises(TypeError, match="Type is mismatched"):
        axpb(cp.asarray(x), cp.asarray(k), 0.5)  # float64 k for the float32 T
    with pytest.raises(TypeError, match="Unsupported type"):
        axpb(x, cp.asarray(k), 0.5)
    with pytest.raises(TypeError, match="Wrong number of arguments"):
        axpb(cp.asarray(x))
    for refused in ("if (x > 0) y = x", "y = *x", "x = y", "y = x; return"):
        with pytest.raises(NotImplementedError):
            cp.ElementwiseKernel("T x", "T y", refused, "refused")(cp.asarray(x))


def test_elementwise_kernels_run_index_arithmetic_loops_and_raw_reads_as_c(cp):
    """The subset of C++ ember's index kernels use, evaluated for every element at once: C's
    truncating integer division and remainder, its arithmetic conversions, branches taken
    only where they hold (a read past the end in the other is never made), and loops."""
    x = np.arange(10, dtype=np.float32) * np.float32(1.5)
    shifted = cp.ElementwiseKernel(
        "raw T x, int64 n, int64 k", "T y",
        "ptrdiff_t j = i - k; y = (j >= 0 && j < n) ? x[j] : T(0)", "shifted")
    got = shifted(cp.asarray(x), 10, 3, size=12)
    assert got.dtype == np.float32 and got.shape == (12,)
    np.testing.assert_array_equal(got.get(), np.concatenate([np.zeros(3), x[:9]]))
    with pytest.raises(IndexError, match="illegal memory access"):
        cp.ElementwiseKernel("raw T x", "T y", "y = x[i + 1]", "past")(cp.asarray(x), size=10)
    with pytest.raises(ValueError, match="undecided"):
        shifted(cp.asarray(x), 10, 3)  # raw arrays do not size the loop
    c_ops = cp.ElementwiseKernel(
        "int64 a", "int64 q, int64 r, int64 f",
        "q = (i - 7) / 2; r = (i - 7) % 2; int w = 2147483647; w += 1; f = (i + w) / 4",
        "c_ops")
    q, r, f = c_ops(0, *(cp.empty(10, np.int64) for _ in range(3)))
    v = np.arange(10) - 7
    np.testing.assert_array_equal(q.get(), np.trunc(v / 2))  # toward zero, not floor
    np.testing.assert_array_equal(r.get(), np.fmod(v, 2))  # the dividend's sign
    np.testing.assert_array_equal(f.get(), -((2 ** 31 - np.arange(10)) // 4))  # int wrapped
    window = cp.ElementwiseKernel(
        "raw T x, int64 n, int64 k", "T y",
        "T s = T(0); for (int j = 0; j < k; j++) { s += (i + j < n) ? x[i + j] : T(0); } y = s",
        "window")
    want = np.array([x[i:i + 3].sum(dtype=np.float32) for i in range(10)])
    np.testing.assert_array_equal(window(cp.asarray(x), 10, 3, size=10).get(), want)
    ragged = cp.ElementwiseKernel(  # bounds of each element's own; the loop's locals stay in it
        "raw T x", "T y", "T s = T(0); for (int j = i / 2; j < i; j++) { T v = x[j]; s += v; }"
        " y = s", "ragged")
    want = np.array([x[i // 2:i].sum(dtype=np.float32) for i in range(10)])
    np.testing.assert_array_equal(ragged(cp.asarray(x), size=10).get(), want)


def test_elementwise_kernels_read_and_write_through_pointers_as_a_gpu(cp):
    """`T* q = (T*)addr` from device addresses (`a.data.ptr`, as uint64) reads and writes
    device memory as a GPU does; an address outside every live allocation, a misaligned one and
    two elements writing one cell fail as they would on a GPU (a fault, a race), not quietly."""
    a, b = cp.zeros(3, np.float32), cp.full(2, 10, np.float32)
    ptrs = cp.asarray(np.array([a.data.ptr, b.data.ptr], np.uint64))
    scatter = cp.ElementwiseKernel(
        "raw uint64 ptrs, int64 split", "T u",
        "ptrdiff_t k = i < split ? 0 : 1; T* q = (T*)ptrs[k]; "
        "q[i - k * split] += u; u = q[i - k * split] * u", "scatter")
    u = cp.asarray(np.arange(1, 6, dtype=np.float32))
    scatter(ptrs, 3, u)
    np.testing.assert_array_equal(a.get(), [1, 2, 3])
    np.testing.assert_array_equal(b.get(), [14, 15])
    np.testing.assert_array_equal(u.get(), [1, 4, 9, 56, 75])  # read back through q
    at = cp.ElementwiseKernel("raw uint64 ptrs, int64 shift", "T u",
                              "T* q = (T*)ptrs[0]; q[i + shift] = u", "at")
    with pytest.raises(IndexError, match="illegal memory access"):
        at(ptrs, 1, cp.ones(3, np.float32))  # one past a's end
    with pytest.raises(RuntimeError, match="race"):
        cp.ElementwiseKernel("raw uint64 ptrs", "T u", "T* q = (T*)ptrs[0]; q[i / 2] = u",
                             "race")(ptrs, cp.ones(4, np.float32))
    odd = cp.asarray(np.array([a.data.ptr + 2], np.uint64))
    with pytest.raises(IndexError, match="misaligned"):
        at(odd, 0, cp.ones(1, np.float32))
    for refused in ("T* q = ptrs[0]; u = q[0]", "T* q = (T*)i; u = q[0]",
                    "T* q = (T*)ptrs[0]; q = q; u = 0"):
        with pytest.raises(NotImplementedError):
            cp.ElementwiseKernel("raw uint64 ptrs", "T u", refused, "refused")(
                ptrs, cp.ones(1, np.float32))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_norms_softmax_and_attention_sum_on_a_device_without_einsum(cp, monkeypatch, dtype):
    """CuPy's einsum parses its subscripts in Python at every call (0.3 ms of an H200 host's
    time): the norms' statistics, softmax's backward and attention's backward sum by the
    reduction kernels instead, with the CPU's values."""
    import ember
    import ember.nn.functional as F

    def refused(*args, **kwargs):
        raise AssertionError("einsum on the device")
    monkeypatch.setattr(cp, "einsum", refused)
    rng = np.random.default_rng(1)
    x = rng.standard_normal((4, 3, 5, 5)).astype(dtype)
    q, k, v = (rng.standard_normal((2, 2, 6, 4)).astype(dtype) for _ in range(3))

    def run(device):
        xt = ember.tensor(x, device=device, requires_grad=True)
        qkv = [ember.tensor(a, device=device, requires_grad=True) for a in (q, k, v)]
        bn = F.batch_norm(xt, None, None, training=True)
        ln = F.layer_norm(xt, (5, 5))
        gn = F.group_norm(xt, 3)
        sm = xt.softmax(-1)
        att = F.scaled_dot_product_attention(*qkv, is_causal=True)
        (bn.sin().sum() + ln.cos().sum() + gn.pow(3).sum() + (sm * xt).sum()
         + att.sin().sum()).backward()
        return [t.detach().cpu().numpy() for t in (bn, ln, gn, sm, att, xt.grad)] + [
            t.grad.cpu().numpy() for t in qkv]

    for got, want in zip(run("cuda"), run("cpu")):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_kernel_calls_are_recorded_for_nvcc_check(cp, monkeypatch, tmp_path):
    """With EMBER_KERNEL_RECORD, each distinct kernel call is written once, as
    benchmarks/nvcc_check.py reads it: the definition and what each argument is."""
    import json

    from tests._strict_cupy import kernels
    monkeypatch.setattr(kernels, "_RECORD_PREFIX", str(tmp_path / "rec"))
    monkeypatch.setattr(kernels, "_RECORDED", {})
    x = cp.asarray(np.arange(12, dtype=np.float32).reshape(3, 4))
    scale = cp.ElementwiseKernel("T x, raw T w, T k", "T y", "y = x * w[i % 4] * k", "scale")
    for _ in range(2):  # the same call twice: one record
        scale(x, x, np.float32(2))
    scale(x.T, x, np.float32(2))  # another layout: a record of its own
    total = cp.ReductionKernel("T x, T n", "T y", "x", "a + b", "y = a / n", "0", "total")
    total(x, np.float32(3), axis=0)
    with pytest.raises(NotImplementedError):  # refused by the stand-in: no record
        total(x, x, axis=0)
    kernels._write_records()
    (path,) = tmp_path.glob("rec.*.jsonl")
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["kind"] for r in records] == ["elementwise", "elementwise", "reduction"]
    first, transposed, reduction = records
    assert first["definition"][:4] == ["T x, raw T w, T k", "T y", "y = x * w[i % 4] * k",
                                       "scale"]
    assert first["arguments"] == [["float32", 2, True], ["float32", 2, True], [None, 0, True],
                                  ["float32", 2, True]]
    assert transposed["arguments"][0] == ["float32", 2, False] and not first["size"]
    assert reduction["arguments"] == [["float32", 2, True], [None, 0, True]]
    assert reduction["axis"] == [0] and reduction["ndim"] == 2 and not reduction["keepdims"]
