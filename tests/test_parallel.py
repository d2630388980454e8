"""ember's intra-op threads (`ember._parallel`): how parts are shared out, errors, forks, the
split products, and convolutions on two threads against one."""
import multiprocessing
import threading
import time

import numpy as np
import pytest

import ember
from ember import _parallel
from ember.ops.conv import _routines, _winograd

try:
    import torch
except ImportError:
    torch = None


@pytest.fixture(params=["openmp", "own threads"])
def two_threads(monkeypatch, request):
    """The pool at two threads, its parts on GNU OpenMP's team or on threads of its own,
    holding the cores (as after its first parallel conv) from a BLAS of its own threads."""
    if request.param == "openmp" and _parallel._Team.load() is None:
        pytest.skip("no GNU OpenMP (libgomp) here")
    if request.param == "own threads":
        monkeypatch.setattr(_parallel._pool, "_team", None)
    monkeypatch.setattr(_parallel, "threaded", lambda: False)  # products on OpenBLAS's threads
    monkeypatch.setattr(_parallel._pool, "threads", 2)
    _parallel.run_parts(2, lambda share: None)  # takes the cores from the BLAS
    assert _parallel._pool.blas_claimed
    yield


@pytest.fixture
def thread_counts(monkeypatch):
    """The thread count of every run of the pool's parts, as they happen."""
    counts = []
    real = _parallel._pool.run
    monkeypatch.setattr(_parallel._pool, "run", lambda count, body, threads, holds=True:
                        counts.append(threads) or real(count, body, threads, holds))
    return counts


def test_parts_are_shared_by_thread_and_returned_in_thread_order(two_threads):
    seen = {}

    def body(share):
        seen[tuple(share)] = threading.get_ident()
        return list(share)
    assert _parallel.run_parts(5, body, threads=2) == [[0, 2, 4], [1, 3]]
    assert seen[(0, 2, 4)] == threading.get_ident() != seen[(1, 3)]


def test_parts_run_on_openmps_team_where_libgomp_loads(monkeypatch):
    team = _parallel._Team.load()
    if team is None:
        pytest.skip("no GNU OpenMP (libgomp) here")
    monkeypatch.setattr(_parallel._pool, "threads", 2)
    monkeypatch.setattr(_parallel._pool, "_team", team)
    member = team._member
    assert _parallel.run_parts(4, lambda share: (list(share), member())) == \
        [([0, 2], 0), ([1, 3], 1)]
    # OpenMP may give a region fewer threads than asked (OMP_THREAD_LIMIT): every share runs
    real = team._parallel
    monkeypatch.setattr(team, "_parallel", lambda entry, key, threads, flags:
                        real(entry, key, 1, flags))
    assert _parallel.run_parts(3, lambda share: (list(share), member()), threads=3) == \
        [([0], 0), ([1], 0), ([2], 0)]


def test_thread_local_data_stays_with_each_thread_across_parts(two_threads):
    """A team worker keeps its Python thread state from part to part, as the pool's own
    threads do: the scratch memory and caches kept in threading.local live on."""
    local = threading.local()

    def body(share):
        local.count = getattr(local, "count", 0) + 1
        return threading.get_ident(), local.count
    first = _parallel.run_parts(2, body)
    second = _parallel.run_parts(2, body)
    assert [ident for ident, _ in first] == [ident for ident, _ in second]
    assert [count + 1 for _, count in first] == [count for _, count in second]


def test_parts_leave_products_on_openmp_threads_to_mkl(monkeypatch):
    """Where MKL's products run on OpenMP's threads, parts do not take the cores from the
    BLAS: there is no spinning BLAS thread of another runtime to keep off them, and products
    between parts stay on MKL's threads, unsplit."""
    monkeypatch.setattr(_parallel, "threaded", lambda: True)
    monkeypatch.setattr(_parallel._pool, "threads", 2)
    monkeypatch.setattr(_parallel._pool, "blas_claimed", False)
    assert _parallel.run_parts(2, lambda share: share[0]) == [0, 1]
    assert not _parallel._pool.blas_claimed


def test_one_thread_runs_every_part_in_the_caller():
    idents = set()
    assert _parallel.run_parts(3, lambda share: idents.add(threading.get_ident()) or len(share),
                               threads=1) == [3]
    assert idents == {threading.get_ident()}


def test_parts_inside_a_part_run_in_that_part_thread(two_threads):
    def outer(share):
        me = threading.get_ident()
        inner = _parallel.run_parts(2, lambda s: threading.get_ident(), threads=2)
        return inner == [me, me]
    assert _parallel.run_parts(2, outer, threads=2) == [True, True]


def test_a_failing_part_raises_once_every_part_is_done(two_threads):
    finished = []

    def body(share):
        if share[0] == 1:
            raise ValueError("part 1 failed")
        time.sleep(0.05)
        finished.append(share[0])
    with pytest.raises(ValueError, match="part 1 failed"):
        _parallel.run_parts(2, body, threads=2)
    assert finished == [0]
    finished.clear()

    def caller_fails(share):
        if share[0] == 0:
            raise KeyError("caller")
        time.sleep(0.05)
        finished.append(share[0])
    with pytest.raises(KeyError):
        _parallel.run_parts(2, caller_fails, threads=2)
    assert finished == [1]  # the worker's part had finished before the error came back
    assert _parallel.run_parts(2, lambda share: share[0], threads=2) == [0, 1]  # not left busy

    def interrupted(share):  # (Ctrl-C lands in the caller's part, thread 0)
        if share[0] == 0:
            raise KeyboardInterrupt
        return share[0]
    with pytest.raises(KeyboardInterrupt):
        _parallel.run_parts(2, interrupted, threads=2)
    assert _parallel.run_parts(2, lambda share: share[0], threads=2) == [0, 1]


def _split_cases(rng):
    f = lambda *shape, dtype=np.float32: rng.standard_normal(shape).astype(dtype)  # noqa: E731
    return [
        (f(64, 40), f(40, 24)),                               # rows
        (f(6, 40), f(40, 96)),                                # columns
        (f(64, 40).T, f(64, 24)),                             # a transposed view
        (f(5, 16, 8), f(5, 8, 12)),                           # a batch
        (f(5, 16, 8), f(8, 12)),                              # a batch times a matrix
        (f(3, 2, 16, 8), f(3, 2, 8, 12)),                     # two batch dims
        (f(1, 64, 8), f(1, 8, 12)),                           # a batch of one: rows
        (f(64, 40, dtype=np.float64), f(40, 24, dtype=np.float64)),
        (f(48, 40) + 1j * f(48, 40), f(40, 8) + 1j * f(40, 8)),
    ]


@pytest.mark.parametrize("shared_repack_bytes", [1 << 62, 0], ids=["two_parts", "one_part"])
def test_split_products_equal_numpy_products(two_threads, monkeypatch, shared_repack_bytes):
    monkeypatch.setattr(_parallel, "SPLIT_PRODUCT_MIN", 0)
    monkeypatch.setattr(_parallel, "SHARED_REPACK_BYTES", shared_repack_bytes)
    for a, b in _split_cases(np.random.default_rng(0)):
        expected = np.matmul(a, b)
        got = _parallel.matmul(np, a, b)
        assert got.dtype == expected.dtype and got.shape == expected.shape
        rtol = 1e-5 if a.dtype in (np.float32, np.complex64) else 1e-12
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=rtol * np.abs(expected).max())
        out = np.full(expected.shape, np.nan, expected.dtype)
        assert _parallel.matmul(np, a, b, out=out) is out
        np.testing.assert_array_equal(out, got)  # the same bits on every run


def test_products_numpy_would_refuse_still_raise_its_errors(two_threads, monkeypatch):
    monkeypatch.setattr(_parallel, "SPLIT_PRODUCT_MIN", 0)
    a, b = np.ones((8, 5), np.float32), np.ones((4, 6), np.float32)
    with pytest.raises(ValueError, match="matmul"):
        _parallel.matmul(np, a, b)
    # mixed dtypes and integers are NumPy's own product
    np.testing.assert_array_equal(_parallel.matmul(np, np.ones((8, 4), np.int64), b),
                                  np.ones((8, 4), np.int64) @ b)


def test_the_pool_holds_the_cores_while_in_use(two_threads, monkeypatch):
    monkeypatch.setattr(_parallel, "threaded", lambda: False)  # products on OpenBLAS's threads
    blas = _parallel.blas
    assert blas.get() in (None, 1)  # taken from the BLAS by the fixture's parallel parts
    monkeypatch.setattr(_parallel, "SPLIT_PRODUCT_MIN", 0)
    a = np.ones((64, 64), np.float32)
    _parallel.matmul(np, a, a)
    assert _parallel._pool.blas_claimed
    monkeypatch.setattr(_parallel, "RELEASE_AFTER_S", 0.0)
    time.sleep(0.01)
    np.testing.assert_array_equal(_parallel.matmul(np, a, a), a @ a)  # idle: given back
    assert not _parallel._pool.blas_claimed
    assert blas.get() in (None, _parallel._pool._blas_threads or 2)  # its count as it was
    _parallel.run_parts(2, lambda share: None)
    assert _parallel._pool.blas_claimed and blas.get() in (None, 1)


def test_a_product_inside_parts_leaves_the_cores_with_the_pool(two_threads, monkeypatch):
    # A product inside a part, long after the last parts ended, once gave the BLAS its threads
    # back from the part's thread mid-run; with threadpoolctl that set was lost, and every
    # product after it ran on one thread.
    monkeypatch.setattr(_parallel, "threaded", lambda: False)  # products on OpenBLAS's threads
    monkeypatch.setattr(_parallel._pool, "_blas_threads", 2)
    monkeypatch.setattr(_parallel, "SPLIT_PRODUCT_MIN", 0)
    monkeypatch.setattr(_parallel, "RELEASE_AFTER_S", 0.0)
    a = np.ones((64, 64), np.float32)
    seen = []

    def part(share):
        time.sleep(0.01)
        np.testing.assert_array_equal(_parallel.matmul(np, a, a), a @ a)
        seen.append((_parallel._pool.blas_claimed, _parallel.blas.get()))
    _parallel.run_parts(2, part)
    assert seen == [(True, _parallel.blas.get() and 1)] * 2
    time.sleep(0.01)
    _parallel.matmul(np, a, a)  # the caller's, between parts: given back, at the count it had
    assert not _parallel._pool.blas_claimed
    assert _parallel.blas.get() in (None, 2)


def test_openblas_keeps_one_thread_while_mkl_has_openmp_threads(two_threads, monkeypatch):
    """Products on MKL's OpenMP threads (`_gemm.threaded`): OpenBLAS's own threads would spin
    beside them, so it keeps one, given back by the pool and set by set_num_threads alike."""
    monkeypatch.setattr(_parallel, "threaded", lambda: True)
    monkeypatch.setattr(_parallel, "RELEASE_AFTER_S", 0.0)
    blas = _parallel.blas
    before = ember.get_num_threads()
    try:
        _parallel.run_parts(2, lambda share: None)
        time.sleep(0.01)
        assert not _parallel._pool.holds_cores()  # given back: at one thread
        assert blas.get() in (None, 1)
        ember.set_num_threads(2)
        assert blas.get() in (None, 1)
        monkeypatch.setattr(_parallel, "threaded", lambda: False)
        ember.set_num_threads(2)
        assert blas.get() in (None, 2)
    finally:
        ember.set_num_threads(before)


def test_the_blas_count_is_set_from_any_thread():
    blas = _parallel.blas
    before = blas.get()
    if before is None:
        pytest.skip("no BLAS thread count to set")
    try:
        for count in (1, 2):
            worker = threading.Thread(target=blas.set, args=(count,))
            worker.start()
            worker.join()
            assert blas.get() == count
    finally:
        blas.set(before)


def _conv_pass(x, w, stride, padding, groups=1):
    xt = ember.tensor(x, requires_grad=True)
    wt = ember.tensor(w, requires_grad=True)
    y = ember.nn.functional.conv2d(xt, wt, stride=stride, padding=padding, groups=groups)
    g = np.random.default_rng(1).standard_normal(tuple(y.shape)).astype(x.dtype)
    y.backward(ember.tensor(g))
    return y.detach().numpy(), xt.grad.numpy(), wt.grad.numpy()


CONV_CASES = [  # (N, C, O, size, kernel, stride, padding, groups, dtype)
    (6, 16, 16, 12, 3, 1, 1, 1, np.float32),    # Winograd
    (5, 8, 12, 9, 3, 1, 1, 1, np.float64),      # Winograd, odd sizes
    (4, 3, 8, 16, 7, 2, 3, 1, np.float32),      # a stem: im2col, batched columns
    (4, 32, 16, 10, 3, 2, 1, 1, np.float32),    # stride 2, channels-last columns
    (4, 8, 16, 10, 1, 2, 0, 1, np.float32),     # 1x1 stride 2
    (5, 8, 8, 9, 3, 2, 1, 2, np.float64),       # groups
]


@pytest.mark.usefixtures("numpy_kernels")  # (oneDNN's threads are its own)
@pytest.mark.parametrize("case", CONV_CASES, ids=lambda c: "x".join(map(str, c[:8])))
def test_convolutions_on_two_threads_match_one(case, monkeypatch, thread_counts):
    n, c, o, size, k, stride, padding, groups, dtype = case
    rng = np.random.default_rng(0)
    x = rng.standard_normal((n, c, size, size)).astype(dtype)
    w = rng.standard_normal((o, c // groups, k, k)).astype(dtype)
    monkeypatch.setattr(_winograd, "THREADED_RULES", ((0, 0),))
    monkeypatch.setattr(_routines, "THREADED_MIN_COL_BYTES", 0)
    if k == 3 and stride == 1:
        monkeypatch.setattr(ember.ops.conv._layout, "LAYOUT", "winograd")
    monkeypatch.setattr(_parallel._pool, "threads", 1)
    one = _conv_pass(x, w, stride, padding, groups)
    monkeypatch.setattr(_parallel._pool, "threads", 2)
    two = _conv_pass(x, w, stride, padding, groups)
    assert 2 in thread_counts  # the parts did run on two threads
    again = _conv_pass(x, w, stride, padding, groups)
    rtol = 1e-5 if dtype == np.float32 else 1e-12
    for a, b, c2 in zip(one, two, again):  # output, input gradient, weight gradient
        np.testing.assert_allclose(b, a, rtol=rtol, atol=rtol * np.abs(a).max())
        np.testing.assert_array_equal(c2, b)  # the same bits on every run at two threads


def _sdpa(mask=None, causal=False):
    def run(lib, q, k, v):
        m = None if mask is None else lib.tensor(mask)
        return lib.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m,
                                                              is_causal=causal)
    return run


_MASK = np.random.default_rng(5).random((35, 1, 6, 7)) > 0.3


@pytest.mark.parametrize("name, shapes, run", [
    ("softmax", [(37, 4, 9)], lambda lib, x: lib.softmax(x, -1)),
    ("softmax dim 1", [(37, 4, 9)], lambda lib, x: lib.softmax(x, 1)),
    ("log_softmax", [(43, 33)], lambda lib, x: lib.log_softmax(x, 1)),
    ("cross_entropy", [(43, 33)], lambda lib, x: lib.nn.functional.cross_entropy(
        x, lib.tensor(np.arange(43) % 33))),
    ("attention", [(35, 2, 6, 4), (35, 2, 7, 4), (35, 2, 7, 5)], _sdpa()),
    ("causal attention", [(35, 2, 6, 4), (35, 2, 6, 4), (35, 2, 6, 4)], _sdpa(causal=True)),
    ("masked attention", [(35, 2, 6, 4), (35, 2, 7, 4), (35, 2, 7, 5)], _sdpa(_MASK))])
def test_rows_and_heads_on_two_threads_give_one_thread_bits(name, shapes, run, monkeypatch,
                                                            thread_counts):
    """Softmax's rows and attention's batch split across the threads: each part is the
    whole's computation on its rows, so the bits are the one-thread bits."""
    from ember.ops import _attention_core, softmax_family
    monkeypatch.setattr(softmax_family, "THREADED_MIN_BYTES", 0)
    monkeypatch.setattr(_attention_core, "THREADED_MIN_BYTES", 0)
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s).astype(np.float32) for s in shapes]
    results = []
    for threads in (1, 2):
        monkeypatch.setattr(_parallel._pool, "threads", threads)
        inputs = [ember.tensor(a, requires_grad=True) for a in arrays]
        y = run(ember, *inputs)
        y.backward(ember.tensor(np.cos(np.arange(y.numel())).reshape(tuple(y.shape))
                                .astype(np.float32)))
        results.append([y.detach().numpy()] + [t.grad.numpy() for t in inputs])
    assert 2 in thread_counts  # (the parts of 16 rows or batch items and the rest)
    for a, b in zip(*results):
        np.testing.assert_array_equal(b, a)
    if torch is not None:
        inputs = [torch.tensor(a, requires_grad=True) for a in arrays]
        expected = run(torch, *inputs)
        np.testing.assert_allclose(results[1][0], expected.detach().numpy(), rtol=1e-5,
                                   atol=1e-6)


@pytest.mark.usefixtures("numpy_kernels")  # (the NumPy routines' own bits)
@pytest.mark.parametrize("module, shape", [
    ("BatchNorm2d", (4, 6, 5, 5)), ("BatchNorm1d", (6, 4)), ("GroupNorm", (6, 4, 3, 3)),
    ("LayerNorm", (6, 4, 8))])
def test_normalizations_on_two_threads_give_one_thread_bits(module, shape, monkeypatch,
                                                            thread_counts):
    from ember.ops.normalization import _fused
    monkeypatch.setattr(_fused, "THREADED_MIN_BYTES", 0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32) * 3 + 1
    g = rng.standard_normal(shape).astype(np.float32)
    norm = {"BatchNorm2d": lambda: ember.nn.BatchNorm2d(shape[1]),
            "BatchNorm1d": lambda: ember.nn.BatchNorm1d(shape[1]),
            "GroupNorm": lambda: ember.nn.GroupNorm(2, shape[1]),
            "LayerNorm": lambda: ember.nn.LayerNorm(shape[-1])}[module]()
    with ember.no_grad():
        for p in norm.parameters():
            p.copy_(ember.tensor(rng.standard_normal(tuple(p.shape)).astype(np.float32)))
    start = {k: v.clone() for k, v in norm.state_dict().items()}
    results = []
    for threads in (1, 2):
        monkeypatch.setattr(_parallel._pool, "threads", threads)
        norm.load_state_dict(start)
        norm.zero_grad()
        xt = ember.tensor(x, requires_grad=True)
        y = norm(xt)
        y.backward(ember.tensor(g))
        results.append([y.detach().numpy(), xt.grad.numpy()] +
                       [p.grad.numpy() for p in norm.parameters()] +
                       [t.detach().numpy().copy() for t in norm.state_dict().values()])
    assert 2 in thread_counts  # the parts ran on two threads
    for a, b in zip(*results):
        np.testing.assert_array_equal(b, a)


@pytest.mark.parametrize("op", ["max_pool2d k3 s2 p1", "max_pool2d k2", "max_pool3d k2",
                                "adaptive_max_pool2d", "max_unpool2d"])
def test_pooling_on_two_threads_gives_one_thread_bits(op, monkeypatch, thread_counts):
    from ember.ops.pooling import _common
    monkeypatch.setattr(_common, "THREADED_MIN_BYTES", 0)
    F = ember.nn.functional
    rng = np.random.default_rng(0)
    shape = (3, 4, 4, 9, 9) if "3d" in op else (3, 4, 9, 9)
    x = rng.standard_normal(shape).astype(np.float32)
    x[0, 0, 1, 1:3] = np.nan  # NaN wins its windows
    x[1, 1, :2] = 1.0  # ties: the first maximum wins

    def run(xt):
        if op == "max_pool2d k3 s2 p1":
            return F.max_pool2d(xt, 3, 2, 1, return_indices=True)
        if op == "max_pool2d k2":
            return F.max_pool2d(xt, 2, return_indices=True)
        if op == "max_pool3d k2":
            return F.max_pool3d(xt, 2, return_indices=True)
        if op == "adaptive_max_pool2d":
            return F.adaptive_max_pool2d(xt, (4, 5), return_indices=True)
        y, idx = F.max_pool2d(xt, 2, return_indices=True)
        return F.max_unpool2d(y, idx, 2, output_size=xt.shape[-2:]), idx
    results = []
    for threads in (1, 2):
        monkeypatch.setattr(_parallel._pool, "threads", threads)
        xt = ember.tensor(x, requires_grad=True)
        y, idx = run(xt)
        g = np.random.default_rng(1).standard_normal(tuple(y.shape)).astype(np.float32)
        y.backward(ember.tensor(g))
        results.append((y.detach().numpy(), idx.numpy(), xt.grad.numpy()))
    assert 2 in thread_counts
    for a, b in zip(*results):
        np.testing.assert_array_equal(b, a)


def _child_conv(queue):
    x = ember.ones(4, 16, 12, 12)
    w = ember.ones(16, 16, 3, 3)
    queue.put(ember.nn.functional.conv2d(x, w, padding=1).sum().item())


@pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods(), reason="no fork")
def test_a_forked_child_makes_its_own_pool(two_threads, monkeypatch):
    monkeypatch.setattr(_winograd, "THREADED_RULES", ((0, 0),))
    expected = ember.nn.functional.conv2d(ember.ones(4, 16, 12, 12), ember.ones(16, 16, 3, 3),
                                          padding=1).sum().item()  # the parent's pool is up
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    child = ctx.Process(target=_child_conv, args=(queue,))
    child.start()
    got = queue.get(timeout=60)
    child.join(timeout=60)
    assert child.exitcode == 0 and got == expected


def test_set_num_threads_sets_the_pool(monkeypatch):
    monkeypatch.setattr(_parallel._pool, "threads", None)
    before = ember.get_num_threads()
    assert before >= 1
    try:
        ember.set_num_threads(3)
        assert ember.get_num_threads() == 3 == _parallel.intra_threads()
        ember.set_num_threads(1)
        assert ember.get_num_threads() == 1
        assert _parallel.blas.get() in (None, 1)
    finally:
        ember.set_num_threads(before)


def test_the_default_follows_omp_num_threads(monkeypatch):
    monkeypatch.setenv("OMP_NUM_THREADS", "3")
    assert _parallel._default_threads() == 3
    monkeypatch.setenv("OMP_NUM_THREADS", "")
    assert _parallel._default_threads() >= 1
