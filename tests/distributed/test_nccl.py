"""The "nccl" backend on the strict CuPy stand-in: each rank is a process with a stand-in GPU
of its own, and the stand-in's `cupy.cuda.nccl` moves the bytes between them. Every
collective's values against gloo's on the same data (one job, "cpu:gloo,cuda:nccl": cpu
tensors go to gloo, cuda tensors to NCCL), with no device-to-host transfer on the NCCL side;
DDP on cuda; subgroups; PyTorch's errors; a hung rank timing out; and what one real GPU can
run (world size 1, two groups in one process)."""
import datetime
import os
import time

import numpy as np
import pytest

import ember
import ember.distributed as dist
from tests._strict_cupy import REAL_CUDA, TRANSFERS, strict_cupy

from .test_distributed import _launch

TIMEOUT = datetime.timedelta(seconds=20)
RO = dist.ReduceOp


def _cuda(t):
    return t.to("cuda")


def _same(cpu, cuda):
    got = cuda.cpu()
    assert got.dtype == cpu.dtype and got.shape == cpu.shape, (got, cpu)
    np.testing.assert_array_equal(got.float().numpy() if cpu.dtype == ember.bfloat16
                                  else got.numpy(),
                                  cpu.float().numpy() if cpu.dtype == ember.bfloat16
                                  else cpu.numpy())


def _no_transfers(fn, *args, **kwargs):
    """`fn` through NCCL: nothing read back to the host."""
    before = TRANSFERS.count
    out = fn(*args, **kwargs)
    assert TRANSFERS.count == before, f"{fn.__name__} read device memory on the host"
    return out


def _data(rank, shape, dtype, salt=0):
    g = np.random.default_rng(rank * 101 + salt)
    if dtype == ember.bool:
        return ember.tensor(g.integers(0, 2, shape).astype(bool))
    if dtype.is_floating_point:
        return ember.tensor(g.integers(-4, 5, shape).astype(np.float64)).to(dtype) / 2
    if dtype.is_complex:
        return ember.tensor(g.standard_normal(shape) + 1j * g.standard_normal(shape)).to(dtype)
    return ember.tensor(g.integers(-9, 10, shape)).to(dtype)


# ---- every collective, NCCL against gloo -------------------------------------------------------
def _against_gloo(rank, world):
    with strict_cupy():
        dist.init_process_group("cpu:gloo,cuda:nccl", timeout=TIMEOUT)
        try:
            _collectives_against_gloo(rank, world)
        finally:
            dist.destroy_process_group()
    return True


def _both(fn, cpu_tensors):
    """fn on the cpu tensors (gloo) and on cuda copies (NCCL); the cuda copies."""
    cuda_tensors = [[_cuda(t) for t in x] if isinstance(x, list) else _cuda(x)
                    for x in cpu_tensors]
    fn(*cpu_tensors)
    _no_transfers(fn, *cuda_tensors)
    for c, g in zip(cpu_tensors, cuda_tensors):
        for a, b in (zip(c, g) if isinstance(c, list) else [(c, g)]):
            _same(a, b)


def _collectives_against_gloo(rank, world):
    assert dist.get_backend() == "cpu:gloo,cuda:nccl" and dist.is_nccl_available()
    n = world
    for dtype, ops in [(ember.float32, [RO.SUM, RO.PRODUCT, RO.MIN, RO.MAX, RO.AVG]),
                       (ember.float64, [RO.SUM, RO.AVG]), (ember.int64, [RO.SUM, RO.MAX]),
                       (ember.int32, [RO.MIN]), (ember.uint8, [RO.SUM]),
                       (ember.bool, [RO.SUM, RO.MIN]), (ember.bfloat16, [RO.SUM, RO.MAX]),
                       (ember.float16, [RO.SUM]), (ember.complex64, [RO.SUM])]:
        for op in ops:
            _both(lambda t: dist.all_reduce(t, op=op), [_data(rank, (3, 2), dtype)])
            _both(lambda t: dist.reduce(t, dst=n - 1, op=op), [_data(rank, (5,), dtype)])
        _both(lambda t: dist.broadcast(t, src=n - 1), [_data(rank, (2, 3), dtype)])
    x = _data(rank, (2, 3), ember.float32)
    # the async form: a Work whose wait orders the current stream, result, future
    t = _cuda(x)
    work = _no_transfers(dist.all_reduce, t, async_op=True)
    assert work.wait() is True and work.is_completed() and work.is_success()
    assert work.result()[0] is t and work.get_future().wait()[0] is t
    work.synchronize()
    expected = x.clone()
    dist.all_reduce(expected)
    _same(expected, t)
    # gathers and scatters
    _both(lambda outs, t: dist.all_gather(outs, t), [[ember.zeros(2, 3) for _ in range(n)], x])
    _both(lambda out, t: dist.all_gather_into_tensor(out, t), [ember.zeros(2 * n, 3), x])
    big = _data(rank, (2 * n, 3), ember.float64)
    _both(lambda out, t: dist.reduce_scatter_tensor(out, t, op=RO.MAX),
          [ember.zeros(2, 3, dtype=ember.float64), big])
    _both(lambda out, ts: dist.reduce_scatter(out, ts, op=RO.SUM),
          [ember.zeros(3), [_data(rank, (3,), ember.float32, salt=i) for i in range(n)]])
    _both(lambda outs, ins: dist.all_to_all(outs, ins),
          [[ember.zeros(2) for _ in range(n)],
           [_data(rank, (2,), ember.float32, salt=i) for i in range(n)]])
    ins = [r + 1 for r in range(n)]           # rank r sends r + 1 rows to each rank
    _both(lambda out, t: dist.all_to_all_single(out, t, [rank + 1] * n, ins),
          [ember.zeros((rank + 1) * n, 2), _data(rank, (sum(ins), 2), ember.float32)])
    _both(lambda out, t: dist.all_to_all_single(out, t),
          [ember.zeros(n, 2, dtype=ember.int64), _data(rank, (n, 2), ember.int64)])
    root = n - 1
    if rank == root:
        _both(lambda t, outs: dist.gather(t, outs, dst=root),
              [x, [ember.zeros(2, 3) for _ in range(n)]])
        _both(lambda t, ins: dist.scatter(t, ins, src=root),
              [ember.zeros(2, 3), [_data(rank, (2, 3), ember.float32, i) for i in range(n)]])
    else:
        _both(lambda t: dist.gather(t, dst=root), [x])
        _both(lambda t: dist.scatter(t, src=root), [ember.zeros(2, 3)])
    # point to point round the ring, blocking and not, and batched
    if n > 1:
        right, left = (rank + 1) % n, (rank - 1) % n
        mine, got = _cuda(x), ember.zeros(2, 3, device="cuda")
        if rank % 2 == 0:
            dist.send(mine, right)
            assert dist.recv(got, left) == left
        else:
            assert dist.recv(got, left) == left
            dist.send(mine, right)
        _same(_data(left, (2, 3), ember.float32), got)
        got = ember.zeros(2, 3, device="cuda")
        works = dist.batch_isend_irecv([dist.P2POp(dist.irecv, got, left),
                                        dist.P2POp(dist.isend, mine, right)])
        for w in works:
            w.wait()
        _same(_data(left, (2, 3), ember.float32), got)
        got = ember.zeros(2, 3, device="cuda")
        recv = dist.irecv(got, left) if rank % 2 else None
        dist.isend(mine, right).wait()
        recv = recv or dist.irecv(got, left)
        recv.wait()
        _same(_data(left, (2, 3), ember.float32), got)
    dist.barrier(device_ids=[0])


@pytest.mark.skipif(REAL_CUDA, reason="several ranks need several GPUs")
@pytest.mark.parametrize("world", [1, 2, 4])
def test_every_collective_matches_gloo(world):
    assert _launch(_against_gloo, world=world, init=False) == {r: True for r in range(world)}


# ---- a world of "nccl" alone: objects, subgroups, errors ---------------------------------
def _nccl_world(rank, world):
    with strict_cupy():
        dist.init_process_group("nccl", timeout=TIMEOUT)
        try:
            return _nccl_world_body(rank, world)
        finally:
            dist.destroy_process_group()


def _raises(exc, message, fn, *args, **kwargs):
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    assert str(info.value) == message, str(info.value)


def _nccl_world_body(rank, world):
    assert dist.get_backend() == "nccl"
    # objects travel as pickled bytes through device memory
    everyone = [None] * world
    dist.all_gather_object(everyone, {"rank": rank})
    assert everyone == [{"rank": r} for r in range(world)]
    objects = [rank, "x" * (rank + 1)] if rank == 1 else [None, None]
    dist.broadcast_object_list(objects, src=1)
    assert objects == [1, "xx"]
    gathered = [None] * world if rank == 0 else None
    dist.gather_object(("from", rank), gathered, dst=0)
    if rank == 0:
        assert gathered == [("from", r) for r in range(world)]
    out = [None]
    dist.scatter_object_list(out, [f"to {r}" for r in range(world)] if rank == 0 else None,
                             src=0)
    assert out == [f"to {rank}"]
    # PyTorch's errors
    _raises(RuntimeError, "No backend type associated with device type cpu",
            dist.all_reduce, ember.ones(2))
    _raises(ValueError, "Tensors must be contiguous",
            dist.all_reduce, ember.ones(3, 2, device="cuda").t())
    _raises(ValueError, "Tensors must be CUDA and dense",
            dist.all_gather_into_tensor, ember.zeros(2 * world), ember.ones(2, device="cuda"))
    for op in ("BAND", "BOR", "BXOR"):
        _raises(ValueError, f"Cannot use ReduceOp.{op} with NCCL", dist.all_reduce,
                ember.ones(2, dtype=ember.int64, device="cuda"), op=getattr(RO, op))
    _raises(TypeError, "Cannot use ReduceOp.AVG with boolean inputs", dist.all_reduce,
            ember.ones(2, dtype=ember.bool, device="cuda"), op=RO.AVG)
    _raises(TypeError, "Input tensor data type is not supported for NCCL process group: "
            "Short", dist.all_reduce, ember.ones(2, dtype=ember.int16, device="cuda"))
    _raises(ValueError, "all_reduce does not support RedOpType.MAX on complex tensors",
            dist.all_reduce, ember.ones(2, dtype=ember.complex64, device="cuda"), op=RO.MAX)
    if world > 1:
        _raises(RuntimeError, "ProcessGroupNCCL does not support recvAnysource",
                dist.recv, ember.zeros(2, device="cuda"))
    # subgroups: each its own communicator; a gloo subgroup for cpu tensors
    halves = [dist.new_group([r for r in range(world) if r % 2 == k]) for k in (0, 1)]
    mine = halves[rank % 2]
    assert dist.get_backend(mine) == "nccl"
    t = ember.full((2,), float(rank), device="cuda")
    dist.all_reduce(t, group=mine)
    assert t.tolist() == [float(sum(r for r in range(world) if r % 2 == rank % 2))] * 2
    assert mine._comm is not dist.group.WORLD._comm
    cpu_group = dist.new_group(backend="gloo")
    c = ember.ones(2)
    dist.all_reduce(c, group=cpu_group)
    assert c.tolist() == [float(world)] * 2 and dist.get_backend(cpu_group) == "gloo"
    dist.barrier()
    return rank


@pytest.mark.skipif(REAL_CUDA, reason="several ranks need several GPUs")
@pytest.mark.parametrize("world", [2, 4])
def test_nccl_world_objects_subgroups_and_errors(world):
    assert _launch(_nccl_world, world=world, init=False) == {r: r for r in range(world)}


# ---- DDP on cuda through NCCL -----------------------------------------------------------------
def _ddp(rank, world):
    from .test_ddp_parity import BATCH, STEPS, _weights_and_data
    with strict_cupy():
        if world > 1:
            dist.init_process_group("nccl", timeout=TIMEOUT)
        try:
            weights, x, y = _weights_and_data()
            nn = ember.nn
            model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2)).double()
            with ember.no_grad():
                for p, w in zip(model.parameters(), weights):
                    p.copy_(ember.tensor(w))
            model = model.to("cuda")
            if world > 1:
                model = nn.parallel.DistributedDataParallel(  # (4: the used-flags on cuda)
                    model, device_ids=[0], find_unused_parameters=world == 4)
            opt = ember.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
            rows = slice(rank * BATCH // world, (rank + 1) * BATCH // world)
            xs, ys = ember.tensor(x[rows]).cuda(), ember.tensor(y[rows]).cuda()
            for _ in range(STEPS):
                opt.zero_grad()
                ((model(xs) - ys) ** 2).mean().backward()
                opt.step()
            return [p.detach().cpu().numpy().copy() for p in model.parameters()]
        finally:
            if world > 1:
                dist.destroy_process_group()


@pytest.mark.skipif(REAL_CUDA, reason="several ranks need several GPUs")
@pytest.mark.parametrize("world", [2, 4])
def test_ddp_on_cuda_equals_one_process_with_the_whole_batch(world):
    single = _ddp(0, 1)
    results = _launch(_ddp, world=world, init=False)
    for rank in range(world):
        for got, want in zip(results[rank], single):
            np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


# ---- a hung rank ------------------------------------------------------------------------------
def _hung(rank, world):
    with strict_cupy():
        dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=2))
        try:
            t = ember.ones(2, device="cuda")
            dist.all_reduce(t)                  # both ranks: the communicator exists
            if rank == 1:
                time.sleep(4)                   # never joins the second all_reduce
                return "slept"
            started = time.monotonic()
            with pytest.raises(dist.DistBackendError) as info:
                dist.all_reduce(t)
            message = str(info.value)
            assert message.startswith(
                "[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, "
                "OpType=ALLREDUCE, NumelIn=2, NumelOut=2, Timeout(ms)=2000) ran for "), message
            assert message.endswith(" milliseconds before timing out.")
            assert time.monotonic() - started < 15
            with pytest.raises(dist.DistBackendError, match="Watchdog caught"):
                dist.broadcast(t, 0)            # the group stays failed, as after an abort
            return "timed out"
        finally:
            dist.destroy_process_group()


@pytest.mark.skipif(REAL_CUDA, reason="two ranks need two GPUs")
def test_a_hung_rank_times_out():
    assert _launch(_hung, world=2, init=False) == {0: "timed out", 1: "slept"}


# ---- one GPU: world size 1, two groups in one process -----------------------------------------
def test_world_of_one_and_two_groups(fake_cuda, tmp_path):
    dist.init_process_group("nccl", store=dist.FileStore(str(tmp_path / "store"), 1), rank=0,
                            world_size=1, timeout=TIMEOUT, device_id=ember.device("cuda:0"))
    try:
        assert dist.group.WORLD._comm is not None  # device_id: made at once, not lazily
        first, second = dist.new_group([0]), dist.new_group([0])
        a = ember.arange(6.0, device="cuda")
        for group in (None, first, second):
            dist.all_reduce(a, group=group)
            dist.broadcast(a, 0, group=group)
            out = [ember.zeros(6, device="cuda")]
            dist.all_gather(out, a, group=group)
            assert out[0].tolist() == a.tolist() == list(range(6))
        assert len({id(g._comm) for g in (dist.group.WORLD, first, second)}) == 3
        work = dist.all_reduce(a, op=RO.AVG, group=second, async_op=True)
        assert work.wait() and work.is_completed()
        assert a.tolist() == list(range(6))
    finally:
        dist.destroy_process_group()


@pytest.mark.skipif(REAL_CUDA, reason="the stand-in's device count")
def test_init_errors_without_a_gpu(cupy_like, monkeypatch, tmp_path):
    monkeypatch.setattr(cupy_like.cuda.runtime, "getDeviceCount", lambda: 0)
    _raises(ValueError, "ProcessGroupNCCL is only supported with GPUs, no GPUs found!",
            dist.init_process_group, "nccl", store=dist.HashStore(), rank=0, world_size=1)
    assert not dist.is_initialized()


# ---- the stand-in refuses what NCCL refuses ------------------------------------------------------
@pytest.mark.skipif(REAL_CUDA, reason="the stand-in's own checks")
def test_stand_in_communicator_refuses_what_nccl_refuses(cupy_like):
    from cupy.cuda import nccl
    with pytest.raises(TypeError, match="expected bytes"):
        nccl.NcclCommunicator(1, tuple(nccl.get_unique_id()), 0)
    comm = nccl.NcclCommunicator(1, nccl.get_unique_id(), 0)
    assert (comm.size(), comm.rank_id(), comm.device_id()) == (1, 0, 0)
    a = cupy_like.arange(4, dtype=cupy_like.float32)
    stream = cupy_like.cuda.get_current_stream().ptr
    comm.allReduce(a.data.ptr, a.data.ptr, 4, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, stream)
    host = np.arange(4, dtype=np.float32)
    for bad in [lambda: comm.allReduce(host.ctypes.data, a.data.ptr, 4, nccl.NCCL_FLOAT32,
                                       nccl.NCCL_SUM, stream),             # a host pointer
                lambda: comm.allReduce(a.data.ptr, a.data.ptr, 4, 42, nccl.NCCL_SUM, stream),
                lambda: comm.allReduce(a.data.ptr, a.data.ptr, 4, nccl.NCCL_FLOAT32, 9, stream),
                lambda: comm.allReduce(a.data.ptr, a.data.ptr, 5, nccl.NCCL_FLOAT32,
                                       nccl.NCCL_SUM, stream)]:            # past the end
        with pytest.raises(nccl.NcclError):
            bad()
    nccl.groupStart()
    comm.send(a.data.ptr, 4, nccl.NCCL_FLOAT32, 0, stream)
    b = cupy_like.zeros(4, dtype=cupy_like.float32)
    comm.recv(b.data.ptr, 4, nccl.NCCL_FLOAT32, 0, stream)
    nccl.groupEnd()
    assert b.tolist() == [0.0, 1.0, 2.0, 3.0]
    comm.abort()
    with pytest.raises(nccl.NcclError):
        comm.allReduce(a.data.ptr, a.data.ptr, 4, nccl.NCCL_FLOAT32, nccl.NCCL_SUM, stream)


def _mismatched(rank, world):
    with strict_cupy():
        from cupy.cuda import nccl
        import cupy
        store = dist.TCPStore("127.0.0.1", int(os.environ["MASTER_PORT"]), world, rank == 0,
                              TIMEOUT)
        if rank == 0:
            store.set("uid", nccl.get_unique_id())
        comm = nccl.NcclCommunicator(world, store.get("uid"), rank)
        a = cupy.zeros(4, dtype=cupy.float32)
        try:
            comm.allReduce(a.data.ptr, a.data.ptr, 3 + rank, nccl.NCCL_FLOAT32, nccl.NCCL_SUM,
                           cupy.cuda.get_current_stream().ptr)
        except nccl.NcclError as e:
            return str(e)
        finally:
            comm.destroy()


@pytest.mark.skipif(REAL_CUDA, reason="the stand-in's own checks")
def test_stand_in_refuses_ranks_that_disagree():
    results = _launch(_mismatched, world=2, init=False)
    assert results[0] == results[1] == \
        "NCCL_ERROR_INVALID_USAGE: invalid usage (run with NCCL_DEBUG=WARN for details)"


def test_torch_cuda_nccl_takes_cupy_14s_byte_ids(fake_cuda):
    """torch.cuda.nccl on one device: the unique id is bytes (CuPy 14 refuses a tuple)."""
    from ember.cuda import nccl
    uid = nccl.unique_id()
    assert isinstance(uid, bytes) and len(uid) == 128
    assert nccl.init_rank(1, uid, 0).size() == 1
    t, out = ember.arange(3.0, device="cuda"), [ember.zeros(3, device="cuda")]
    nccl.all_reduce([t])
    nccl.all_gather([t], out)
    assert t.tolist() == out[0].tolist() == [0.0, 1.0, 2.0]


def _sync_batchnorm(rank, world):
    from .test_sync_batchnorm import _sync
    with strict_cupy():
        dist.init_process_group("nccl", timeout=TIMEOUT)
        try:
            return _sync(rank, world)
        finally:
            dist.destroy_process_group()


@pytest.mark.skipif(REAL_CUDA, reason="two ranks need two GPUs")
def test_sync_batchnorm_through_nccl_equals_gloo():
    from .test_sync_batchnorm import _sync
    ours, theirs = _launch(_sync_batchnorm, init=False), _launch(_sync)
    for rank in (0, 1):
        for key, want in theirs[rank].items():
            np.testing.assert_allclose(ours[rank][key], want, rtol=1e-12, atol=1e-12)


def test_no_backend_named_and_an_nccl_group_beside_gloo(fake_cuda, tmp_path):
    """No backend: PyTorch's default map (gloo for cpu, NCCL for cuda where it is there), and
    get_backend says "undefined"; new_group(backend="nccl") in a gloo world."""
    dist.init_process_group(store=dist.FileStore(str(tmp_path / "a"), 1), rank=0, world_size=1)
    try:
        assert dist.get_backend() == "undefined"
        world = dist.group.WORLD
        c, g = ember.ones(2), ember.ones(2, device="cuda")
        dist.all_reduce(c)
        assert world.cuda_group._comm is None  # the cpu tensor went to gloo
        dist.all_reduce(g)
        assert world.cuda_group._comm is not None and g.tolist() == c.tolist() == [1.0, 1.0]
    finally:
        dist.destroy_process_group()
    dist.init_process_group("gloo", store=dist.FileStore(str(tmp_path / "b"), 1), rank=0,
                            world_size=1)
    try:
        group = dist.new_group([0], backend="nccl")
        assert dist.get_backend(group) == "nccl" and dist.get_backend() == "gloo"
        dist.all_reduce(g, group=group)
        assert group._comm is not None
        _raises(RuntimeError, "No backend type associated with device type cpu",
                dist.all_reduce, c, group=group)
    finally:
        dist.destroy_process_group()


def test_all_to_all_single_split_errors(tmp_path):
    """c10d's split-size checks (gloo here: the checks come before any backend)."""
    dist.init_process_group("gloo", store=dist.FileStore(str(tmp_path / "s"), 1), rank=0,
                            world_size=1)
    try:
        _raises(RuntimeError, "Number of tensor splits not equal to group size",
                dist.all_to_all_single, ember.zeros(2), ember.zeros(2), [1, 1], [2])
        _raises(RuntimeError, "Split sizes doesn't match total dim 0 size",
                dist.all_to_all_single, ember.zeros(2), ember.zeros(3), [2], [2])
        out = ember.zeros(3, 2)
        dist.all_to_all_single(out, ember.ones(3, 2))
        assert out.tolist() == [[1.0, 1.0]] * 3
    finally:
        dist.destroy_process_group()


def _average_without_nccl_avg(rank, world, native=False):
    with strict_cupy() as cupy:
        if not native:
            del cupy.cuda.nccl.NCCL_AVG  # a CuPy whose bindings have no ncclAvg
        dist.init_process_group("cpu:gloo,cuda:nccl", timeout=TIMEOUT)
        try:
            for dtype in (ember.float32, ember.bfloat16):
                _both(lambda t: dist.all_reduce(t, op=RO.AVG), [_data(rank, (4,), dtype)])
                _both(lambda t: dist.reduce(t, 0, op=RO.AVG), [_data(rank, (4,), dtype)])
            for dtype in (ember.int64, ember.int32):  # NCCL's integer AVG rounds toward zero
                t = ember.tensor([-1 if rank == 0 else 0, 5 if rank == 0 else 0, 3 * rank],
                                 dtype=dtype, device="cuda")
                dist.all_reduce(t, op=RO.AVG)
                assert t.tolist() == [0, 1, 3] and t.dtype == dtype
            _both(lambda out, t: dist.reduce_scatter_tensor(out, t, op=RO.AVG),
                  [ember.zeros(2), _data(rank, (2 * world,), ember.float32)])
            _both(lambda out, ts: dist.reduce_scatter(out, ts, op=RO.AVG),
                  [ember.zeros(2), [_data(rank, (2,), ember.float32, i) for i in range(world)]])
        finally:
            dist.destroy_process_group()
    return True


def _average_with_nccl_avg(rank, world):
    return _average_without_nccl_avg(rank, world, native=True)


@pytest.mark.skipif(REAL_CUDA, reason="three ranks need three GPUs")
@pytest.mark.parametrize("target", [_average_with_nccl_avg, _average_without_nccl_avg])
def test_average_with_and_without_nccl_avg(target):
    assert _launch(target, world=3, init=False) == {r: True for r in range(3)}
