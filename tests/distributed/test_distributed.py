"""ember.distributed and DistributedDataParallel: collectives between real processes on
127.0.0.1 (forked, or spawned as PyTorch scripts do), stores, errors, and DDP training that
matches single-process training. Every wait is bounded, so a broken rank fails, not hangs."""
import datetime
import gc
import os
import socket
import time
import traceback

import numpy as np
import pytest

import ember
import ember.distributed as dist
import ember.multiprocessing as emp
from ember.nn.parallel import DistributedDataParallel as DDP
from ember.testing import assert_close

TIMEOUT = datetime.timedelta(seconds=15)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _entry(rank, target, world, port, queue, init):
    try:
        os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                          WORLD_SIZE=str(world))
        if init:
            dist.init_process_group("gloo", timeout=TIMEOUT)
        queue.put((rank, None, target(rank, world)))
    except BaseException:
        queue.put((rank, traceback.format_exc(), None))
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def _launch(target, world=2, method="fork", init=True, timeout=40):
    """Run `target(rank, world)` in `world` processes; their results, by rank (each awaited
    for at most `timeout` seconds)."""
    import multiprocessing
    queue = multiprocessing.get_context(method).Queue()
    ctx = emp.start_processes(_entry, args=(target, world, _free_port(), queue, init),
                              nprocs=world, join=False, start_method=method)
    results, errors = {}, []
    try:
        for _ in range(world):
            rank, error, value = queue.get(timeout=timeout)
            if error:
                errors.append(f"rank {rank}:\n{error}")
            results[rank] = value
    finally:
        for p in ctx.processes:
            p.join(10)
            if p.exitcode is None:
                p.kill()
                p.join()
    assert not errors, "\n".join(errors)
    return results


def _raises(exc, message, fn, *args, **kwargs):
    with pytest.raises(exc) as info:
        fn(*args, **kwargs)
    assert str(info.value) == message, str(info.value)


# ---- collectives between two processes ----------------------------------------------------
def _collectives(rank, world):
    T = ember.tensor
    assert dist.is_initialized() and dist.get_rank() == rank and dist.get_world_size() == 2
    assert dist.get_backend() == os.environ.get("EMBER_TEST_BACKEND", "gloo")
    mine = T([1.0, 2.0]) * (rank + 1)                    # rank 0: [1, 2]; rank 1: [2, 4]
    for op, want in [(dist.ReduceOp.SUM, [3., 6.]), (dist.ReduceOp.AVG, [1.5, 3.]),
                     (dist.ReduceOp.PRODUCT, [2., 8.]), (dist.ReduceOp.MIN, [1., 2.]),
                     (dist.ReduceOp.MAX, [2., 4.])]:
        t = mine.clone()
        assert dist.all_reduce(t, op=op) is None
        assert t.tolist() == want, (op, t)
    t = T([rank + 5, 6], dtype=ember.int32)
    dist.all_reduce(t, op=dist.ReduceOp.BXOR)
    assert t.tolist() == [5 ^ 6, 0] and t.dtype == ember.int32
    b = T([True, False]) if rank == 0 else T([False, False])
    dist.all_reduce(b)
    assert b.tolist() == [True, False]
    h = T([1.5, 2.0], dtype=ember.bfloat16) * (rank + 1)
    dist.all_reduce(h)
    assert h.dtype == ember.bfloat16 and h.float().tolist() == [4.5, 6.0]
    scalar = ember.tensor(float(rank + 1))
    dist.all_reduce(scalar, op=dist.ReduceOp.AVG)
    assert scalar.shape == () and scalar.item() == 1.5
    # in place, through views, and the async form
    base = ember.zeros(2, 3)
    view = base[:, 1]
    view.fill_(rank + 1.0)
    dist.all_reduce(view)
    assert base[:, 1].tolist() == [3., 3.] and base.sum().item() == 6.
    t = mine.clone()
    work = dist.all_reduce(t, async_op=True)
    assert work.wait() is True and work.is_completed() and work.is_success()
    assert t.tolist() == [3., 6.] and work.result()[0] is t
    # broadcast / reduce
    t = mine.clone()
    dist.broadcast(t, src=1)
    assert t.tolist() == [2., 4.]
    t = mine.clone()
    dist.reduce(t, dst=0, op=dist.ReduceOp.SUM)
    assert t.tolist() == ([3., 6.] if rank == 0 else [2., 4.])
    # all_gather, all_gather_into_tensor, reduce_scatter_tensor
    out = [ember.zeros(2), ember.zeros(2)]
    dist.all_gather(out, mine)
    assert [o.tolist() for o in out] == [[1., 2.], [2., 4.]]
    flat = ember.zeros(4)
    dist.all_gather_into_tensor(flat, mine)
    assert flat.tolist() == [1., 2., 2., 4.]
    rows = ember.zeros(4, 3)
    dist.all_gather_into_tensor(rows, ember.full((2, 3), float(rank)))
    assert rows[:, 0].tolist() == [0., 0., 1., 1.]
    out = ember.zeros(2)
    dist.reduce_scatter_tensor(out, ember.arange(4.) * (rank + 1))
    assert out.tolist() == ([0., 3.] if rank == 0 else [6., 9.])
    # gather / scatter
    got = [ember.zeros(2), ember.zeros(2)] if rank == 1 else None
    dist.gather(mine, got, dst=1)
    if rank == 1:
        assert [g.tolist() for g in got] == [[1., 2.], [2., 4.]]
    t = ember.zeros(2)
    dist.scatter(t, [T([7., 8.]), T([9., 10.])] if rank == 0 else None, src=0)
    assert t.tolist() == ([7., 8.] if rank == 0 else [9., 10.])
    # point to point: tags keep messages apart; recv without src names the sender
    if rank == 0:
        dist.send(T([1., 1.]), dst=1, tag=7)
        dist.send(T([2., 2.]), dst=1)
        t = ember.zeros(3)
        assert dist.recv(t) == 1 and t.tolist() == [5., 6., 7.]
    else:
        t = ember.zeros(2)
        dist.recv(t, src=0)
        assert t.tolist() == [2., 2.]
        dist.recv(t, src=0, tag=7)
        assert t.tolist() == [1., 1.]
        dist.send(T([5., 6., 7.]), dst=0)
    # crossing isend/irecv cannot deadlock
    incoming = ember.zeros(1000)
    works = [dist.irecv(incoming, src=1 - rank), dist.isend(ember.full((1000,), rank + 1.), 1 - rank)]
    for w in works:
        w.wait()
    assert incoming.sum().item() == 1000. * (2 - rank)
    # Python objects
    objs = [None, None]
    dist.all_gather_object(objs, {"rank": rank, "t": T([float(rank)])})
    assert [o["rank"] for o in objs] == [0, 1] and objs[1]["t"].tolist() == [1.]
    lst = [rank, "x"] if rank == 0 else [None, None]
    dist.broadcast_object_list(lst, src=0)
    assert lst == [0, "x"]
    gathered = [None, None] if rank == 0 else None
    dist.gather_object(rank * 10, gathered, dst=0)
    if rank == 0:
        assert gathered == [0, 10]
    dist.barrier()
    # groups: the world, and a group of rank 1 only
    world_group = dist.new_group()
    t = mine.clone()
    dist.all_reduce(t, group=world_group)
    assert t.tolist() == [3., 6.] and dist.get_process_group_ranks(world_group) == [0, 1]
    solo = dist.new_group([1])
    if rank == 0:
        assert solo == dist.GroupMember.NON_GROUP_MEMBER
        assert dist.get_rank(solo) == -1 and dist.get_world_size(solo) == -1
        assert dist.all_reduce(mine.clone(), group=solo) is None
    else:
        assert dist.get_rank(solo) == 0 and dist.get_world_size(solo) == 1
        t = mine.clone()
        dist.all_reduce(t, group=solo)
        assert t.tolist() == [2., 4.]
        assert dist.get_global_rank(solo, 0) == 1 and dist.get_group_rank(solo, 1) == 0
    assert dist.group.WORLD is dist.GroupMember.WORLD
    t = mine.clone()
    dist.all_reduce(t, group=dist.group.WORLD)
    assert t.tolist() == [3., 6.]
    return "done"


def test_collectives_between_two_processes():
    assert _launch(_collectives) == {0: "done", 1: "done"}


def _ring_data(rank, n, dtype):
    """Each rank's contribution: small integers, so every reduction order gives the same sum."""
    return ember.tensor(((np.arange(n) * (rank + 3)) % 7 + 1).astype(np.float64)).to(dtype)


def _ring(rank, world):
    from ember.distributed import gloo
    n = gloo.RING_MIN_BYTES // 4 + 1001  # above the ring's threshold, not a multiple of 3
    out = {}
    for dtype in (ember.float32, ember.int64, ember.bfloat16):
        for op in ("SUM", "AVG", "PRODUCT", "MIN", "MAX"):
            if (dtype == ember.bfloat16 and op in ("AVG", "PRODUCT")) or \
                    (dtype == ember.int64 and op == "AVG"):  # (gloo refuses an integer AVG)
                continue
            t = _ring_data(rank, n, dtype)
            dist.all_reduce(t, op=getattr(dist.ReduceOp, op))
            out[str(dtype), op] = t.float().numpy().tobytes()
    # several wire segments per ring step, landing in the posted receive buffers
    big = _ring_data(rank, _multi_segment_size(world), ember.float64)
    dist.all_reduce(big)
    out["multi-segment"] = big.numpy().tobytes()
    inp = _ring_data(rank, world * 25000, ember.float32)
    part = ember.empty(25000)
    dist.reduce_scatter_tensor(part, inp)
    out["reduce_scatter"] = part.numpy().tobytes()
    return out


def _multi_segment_size(world):
    from ember.distributed import gloo
    return 3 * world * gloo._SEGMENT_BYTES // 8 + 333


def _check_ring(results, world):
    """`_ring`'s results from every rank against the reductions computed here."""
    from ember.distributed import gloo
    n = gloo.RING_MIN_BYTES // 4 + 1001
    results = {r: dict(v) for r, v in results.items()}
    scattered = [results[r].pop("reduce_scatter") for r in range(world)]
    big = [results[r].pop("multi-segment") for r in range(world)]
    want = sum(_ring_data(r, _multi_segment_size(world), ember.float64).numpy()
               for r in range(world))
    for r in range(world):
        np.testing.assert_array_equal(np.frombuffer(big[r], np.float64), want)
    assert all(results[r] == results[0] for r in range(world))  # the same bits everywhere
    for dtype in (ember.float32, ember.int64, ember.bfloat16):
        parts = np.stack([_ring_data(r, n, dtype).double().numpy() for r in range(world)])
        for op, want in [("SUM", parts.sum(0)), ("AVG", parts.sum(0) / world),
                         ("PRODUCT", parts.prod(0)), ("MIN", parts.min(0)),
                         ("MAX", parts.max(0))]:
            if (str(dtype), op) not in results[0]:
                continue
            got = np.frombuffer(results[0][str(dtype), op], np.float32)
            expected = ember.tensor(want).to(dtype).float().numpy()
            np.testing.assert_array_equal(got, expected, err_msg=f"{dtype} {op}")
    parts = np.stack([_ring_data(r, world * 25000, ember.float32).numpy()
                      for r in range(world)])
    for r in range(world):
        np.testing.assert_array_equal(np.frombuffer(scattered[r], np.float32),
                                      parts.sum(0)[r * 25000:(r + 1) * 25000])


def test_ring_collectives_between_three_processes():
    _check_ring(_launch(_ring, world=3), 3)


def _init_methods(rank, world):
    path, port = os.environ["EMBER_TEST_FILE"], os.environ["EMBER_TEST_PORT"]
    seen = []
    for method in (f"tcp://127.0.0.1:{port}", f"file://{path}"):
        dist.init_process_group("gloo", init_method=method, rank=rank, world_size=world,
                                timeout=TIMEOUT)
        t = ember.tensor([rank + 1.0])
        dist.all_reduce(t)
        seen.append(t.item())
        dist.destroy_process_group()
    assert not dist.is_initialized()
    store = dist.TCPStore("127.0.0.1", int(os.environ["MASTER_PORT"]), world, rank == 0,
                          timeout=TIMEOUT)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=world)
    t = ember.tensor([rank + 1.0])
    dist.all_reduce(t, op=dist.ReduceOp.MAX)
    seen.append(t.item())
    return seen


def test_init_methods_tcp_file_and_store(tmp_path):
    os.environ["EMBER_TEST_FILE"] = str(tmp_path / "rendezvous")
    os.environ["EMBER_TEST_PORT"] = str(_free_port())
    try:
        assert _launch(_init_methods, init=False) == {0: [3., 3., 2.], 1: [3., 3., 2.]}
    finally:
        del os.environ["EMBER_TEST_FILE"], os.environ["EMBER_TEST_PORT"]
    assert not (tmp_path / "rendezvous").exists()  # the last FileStore removes its file


# ---- DistributedDataParallel ----------------------------------------------------------------
class _Net(ember.nn.Module):
    def __init__(self, seed):
        super().__init__()
        self.body = ember.nn.Sequential(ember.nn.Linear(4, 8), ember.nn.Tanh(),
                                        ember.nn.Linear(8, 2))
        self.register_buffer("offset", ember.full((2,), float(seed)))

    def forward(self, x):
        return self.body(x) + self.offset


def _model(seed):
    ember.manual_seed(seed)
    return _Net(seed)


def _data():
    g = ember.Generator().manual_seed(0)
    return ember.randn(8, 4, generator=g), ember.randn(8, 2, generator=g)


def _loss(model, x, y):
    return ((model(x) - y) ** 2).mean()


def _ddp_train(rank, world):
    model = DDP(_model(seed=rank + 1))  # rank 1 starts elsewhere: DDP gives it rank 0's
    assert isinstance(model.module, _Net) and model.module.offset.tolist() == [1., 1.]
    keys = list(model.state_dict())
    assert keys == ["module." + k for k in model.module.state_dict()] and "module.body.0.bias" in keys
    x, y = _data()
    xs, ys = x.chunk(world)[rank], y.chunk(world)[rank]
    opt = ember.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        _loss(model, xs, ys).backward()
        opt.step()
    # gradient accumulation: no_sync on the first half, a reducing backward on the second
    opt.zero_grad()
    with model.no_sync():
        (_loss(model, xs[:2], ys[:2]) / 2).backward()
    local = [p.grad.clone() for p in model.parameters()]
    (_loss(model, xs[2:], ys[2:]) / 2).backward()
    opt.step()
    return {"local": [g.numpy() for g in local],
            "state": {k: v.numpy() for k, v in model.module.state_dict().items()}}


def test_ddp_training_matches_single_process():
    results = _launch(_ddp_train, method="spawn")
    single = _model(seed=1)
    x, y = _data()
    opt = ember.optim.SGD(single.parameters(), lr=0.1)
    for _ in range(3):
        opt.zero_grad()
        _loss(single, x, y).backward()
        opt.step()
    opt.zero_grad()
    # the accumulated step: each rank's two halves, averaged over ranks = four quarters
    for part in range(2):
        rows = [r * 4 + part * 2 + i for r in range(2) for i in range(2)]
        (_loss(single, x[rows], y[rows]) / 2).backward()
    opt.step()
    want = {k: v.numpy() for k, v in single.state_dict().items()}
    for rank in (0, 1):
        state = results[rank]["state"]
        assert state.keys() == want.keys()
        for k in want:
            np.testing.assert_allclose(state[k], want[k], rtol=1e-5, atol=1e-6, err_msg=k)
            np.testing.assert_array_equal(state[k], results[0]["state"][k])
    # inside no_sync the gradients stayed local (they differ between the ranks)
    assert not np.allclose(results[0]["local"][0], results[1]["local"][0])


def _ddp_unused(rank, world):
    class TwoHeads(ember.nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = ember.nn.Linear(2, 2), ember.nn.Linear(2, 2)

        def forward(self, x):
            return self.a(x) if rank == 0 or x.shape[0] > 1 else self.b(x)

    ember.manual_seed(0)
    strict = DDP(TwoHeads())
    strict(ember.ones(3, 2)).sum().backward()  # b never gets a gradient: no reduction ran
    assert strict.module.a.weight.grad is not None
    with pytest.raises(RuntimeError) as info:
        strict(ember.ones(3, 2))
    assert "Parameter indices which did not receive grad for rank %d: 2 3" % rank \
        in str(info.value)
    found = DDP(TwoHeads(), find_unused_parameters=True)
    found(ember.ones(1, 2)).sum().backward()  # rank 0 uses a, rank 1 uses b
    a, b = found.module.a.weight.grad.tolist(), found.module.b.weight.grad.tolist()
    found(ember.ones(3, 2)).sum().backward()  # nobody uses b: its grad stays as it was
    return [a, b, found.module.a.weight.grad.tolist(), found.module.b.weight.grad.tolist()]


def test_ddp_unused_parameters():
    r = _launch(_ddp_unused)
    assert r[0] == r[1]
    a, b, a_after, b_after = r[0]
    assert a == [[0.5, 0.5], [0.5, 0.5]] and b == a
    assert a_after == [[3.5, 3.5], [3.5, 3.5]] and b_after == b


def test_ddp_errors():
    _raises(ValueError, "Default process group has not been initialized, please make sure to "
            "call init_process_group.", DDP, ember.nn.Linear(2, 2))
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        _raises(ValueError, "DistributedDataParallel device_ids and output_device arguments "
                "only work with single-device/multiple-device GPU modules or CPU modules, but "
                "got device_ids [0], output_device None, and module parameters "
                "{device(type='cpu')}.", DDP, ember.nn.Linear(2, 2), device_ids=[0])
        frozen = ember.nn.Linear(2, 2).requires_grad_(False)
        _raises(RuntimeError, "DistributedDataParallel is not needed when a module doesn't "
                "have any parameter that requires a gradient.", DDP, frozen)
    finally:
        dist.destroy_process_group()


# ---- one process: initialisation errors, argument errors, stores --------------------------------
def test_initialisation_errors(monkeypatch):
    assert dist.is_available() and not dist.is_initialized()
    for fn in (dist.get_rank, dist.get_world_size, dist.barrier):
        _raises(ValueError, "Default process group has not been initialized, please make "
                "sure to call init_process_group.", fn)
    for name in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    for name, value in [("RANK", "0"), ("WORLD_SIZE", "1"), ("MASTER_ADDR", "127.0.0.1"),
                        ("MASTER_PORT", None)]:
        _raises(ValueError, "Error initializing torch.distributed using env:// rendezvous: "
                f"environment variable {name} expected, but not set",
                dist.init_process_group, "gloo")
        if value is not None:
            monkeypatch.setenv(name, value)
    _raises(RuntimeError, "Distributed package doesn't have NCCL built in",
            dist.init_process_group, "nccl")
    if not dist.is_mpi_available():  # without the optional mpi4py
        _raises(RuntimeError, "Distributed package doesn't have MPI built in. MPI is only "
                "included if you build PyTorch from source on a host that has MPI installed.",
                dist.init_process_group, "mpi")
    _raises(AssertionError, "Unknown backend type foo", dist.init_process_group, "foo",
            init_method="tcp://127.0.0.1:1", rank=0, world_size=1)
    _raises(AssertionError, "Cannot specify both init_method and store.",
            dist.init_process_group, "gloo", init_method="env://", store=dist.HashStore())
    _raises(AssertionError, "world_size must be positive if using store",
            dist.init_process_group, "gloo", store=dist.HashStore())
    _raises(AssertionError, "rank must be non-negative if using store",
            dist.init_process_group, "gloo", store=dist.HashStore(), world_size=1)
    _raises(ValueError, "Error initializing torch.distributed using tcp:// rendezvous: rank "
            "parameter missing", dist.init_process_group, "gloo",
            init_method="tcp://127.0.0.1:1", world_size=1)
    _raises(RuntimeError, "No rendezvous handler for bogus://", dist.init_process_group,
            "gloo", init_method="bogus://x", rank=0, world_size=1)
    _raises(AssertionError, "Process group cannot be None", dist.destroy_process_group)
    assert not dist.is_initialized()


def test_argument_errors_in_a_world_of_one():
    dist.init_process_group(backend="gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        _raises(ValueError, "trying to initialize the default process group twice!",
                dist.init_process_group, "gloo", store=dist.HashStore(), rank=0, world_size=1)
        _raises(TypeError, "Invalid function argument. Expected parameter `tensor` of type "
                "torch.Tensor\n             but got <class 'list'> instead.",
                dist.all_reduce, [1])
        _raises(RuntimeError, "Cannot use ReduceOp.BAND with non-integral dtype",
                dist.all_reduce, ember.ones(2), op=dist.ReduceOp.BAND)
        _raises(ValueError, "all_reduce does not support RedOpType.MAX on complex tensors",
                dist.all_reduce, ember.ones(2, dtype=ember.complex64), op=dist.ReduceOp.MAX)
        _raises(RuntimeError, "ProcessGroupGloo::broadcast: invalid root rank: 3",
                dist.broadcast, ember.ones(2), src=3)
        _raises(RuntimeError, "ProcessGroupGloo::allgather: invalid output tensor list at "
                "index 0 (expected length 1, got 2)", dist.all_gather,
                [ember.ones(2), ember.ones(2)], ember.ones(2))
        _raises(RuntimeError, "ProcessGroupGloo::allgather: invalid tensor size at index 0 "
                "(expected (2), got (3))", dist.all_gather, [ember.ones(3)], ember.ones(2))
        _raises(ValueError, "Invalid usage of tensors with different dtypesFound torch.int64 "
                "and  torch.float32", dist.all_gather, [ember.ones(2, dtype=ember.int64)],
                ember.ones(2))
        _raises(RuntimeError, "ProcessGroupGloo::allgather: invalid tensor size at index 0 "
                "(expected (2), got (1, 2))", dist.all_gather_into_tensor, ember.ones(1, 2),
                ember.ones(2))
        _raises(ValueError, "Argument ``gather_list`` must be specified on destination rank.",
                dist.gather, ember.ones(2), None, dst=0)
        _raises(ValueError, "Argument ``scatter_list`` must be specified on source rank.",
                dist.scatter, ember.ones(2), None, src=0)
        _raises(RuntimeError, "ProcessGroupGloo::scatter: Incorrect input list size 2. Input "
                "list size should be 1, same as size of the process group.", dist.scatter,
                ember.ones(2), [ember.ones(2), ember.ones(2)], src=0)
        _raises(ValueError, "Invalid destination rank: destination rank should not be the same "
                "as the rank of the current process.", dist.send, ember.ones(2), dst=0)
        _raises(ValueError, "the new group's world size should be less or equal to the world "
                "size set by init_process_group", dist.new_group, [0, 1])
        # a world of one: collectives are the identity, in place
        t = ember.tensor([1., 2.])
        dist.all_reduce(t, op=dist.ReduceOp.AVG)
        assert t.tolist() == [1., 2.]
        assert str(dist.ReduceOp.SUM) == "RedOpType.SUM"
        assert repr(dist.ReduceOp.AVG) == "<RedOpType.AVG: 1>"
        assert dist.ReduceOp.SUM == dist.ReduceOp.RedOpType.SUM
        assert dist.Backend("GLOO") == dist.Backend.GLOO == dist.get_backend() == "gloo"
    finally:
        dist.destroy_process_group()


def test_stores(tmp_path):
    master = dist.TCPStore("127.0.0.1", 0, 2, True, timeout=datetime.timedelta(seconds=5),
                           wait_for_workers=False)
    client = dist.TCPStore("127.0.0.1", master.port, 2, False,
                           timeout=datetime.timedelta(seconds=0.2))
    master.set("a", "x")
    assert client.get("a") == b"x"
    client.set("b", b"\x00y")
    assert master.get("b") == b"\x00y"
    assert master.add("c", 3) == 3 and client.add("c", 2) == 5 and master.get("c") == b"5"
    assert client.check(["a", "c"]) and not client.check(["a", "zz"])
    start = time.monotonic()
    _raises(dist.DistStoreError, "wait timeout after 200ms, keys: /zz", client.get, "zz")
    assert time.monotonic() - start < 2
    _raises(dist.DistStoreError, "wait timeout after 50ms, keys: /zz", client.wait, ["zz"],
            datetime.timedelta(seconds=0.05))
    assert issubclass(dist.DistStoreError, RuntimeError)
    assert master.num_keys() == 3
    assert client.delete_key("a") and not client.delete_key("a")
    assert master.compare_set("k", "", "v") == b"v" and master.compare_set("k", "q", "w") == b"v"
    assert master.compare_set("k", "v", "w") == b"w"
    client.append("ap", "x")
    client.append("ap", "y")
    assert master.multi_get(["ap", "c"]) == [b"xy", b"5"]
    client.set_timeout(datetime.timedelta(seconds=2))
    assert client.timeout == datetime.timedelta(seconds=2)
    port = _free_port()  # nobody listens there
    _raises(dist.DistNetworkError, f"The client socket has timed out after 200ms while trying "
            f"to connect to (127.0.0.1, {port}).", dist.TCPStore, "127.0.0.1", port,
            timeout=datetime.timedelta(seconds=0.2))
    # FileStore: two objects on one file see each other; the last one removes it
    path = str(tmp_path / "store")
    f1, f2 = dist.FileStore(path, 2), dist.FileStore(path, 2)
    f1.set("a", "1")
    assert f2.add("a", 2) == 3 and f1.get("a") == b"3" and f2.num_keys() == 1
    f2.set_timeout(datetime.timedelta(seconds=0.1))
    _raises(RuntimeError, "Timeout waiting for key: q after 100 ms", f2.get, "q")
    del f1
    gc.collect()
    assert os.path.exists(path)
    del f2
    gc.collect()
    assert not os.path.exists(path)
    h = dist.HashStore()
    p = dist.PrefixStore("pre", h)
    p.set("x", "y")
    assert h.get("pre/x") == b"y" and p.get("x") == b"y" and p.add("n", 4) == 4


def test_compat_resolves_torch_distributed_and_ddp():
    import subprocess
    import sys
    code = ("import ember.compat; ember.compat.install(); import torch.distributed as dist; "
            "import torch, ember; from torch.nn.parallel import DistributedDataParallel as D; "
            "import torch.distributed.distributed_c10d as c; "
            "assert dist is ember.distributed is torch.distributed and c is dist.distributed_c10d; "
            "assert D is ember.nn.parallel.DistributedDataParallel; "
            "assert torch.nn.parallel.DistributedDataParallel is D; print(dist.__name__)")
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=60, env=env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["ember.distributed"]


_MPI_SCRIPT = """
import os, sys, warnings
sys.path.insert(0, {here!r})
import ember.distributed as dist
import test_distributed as T
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    dist.init_process_group("mpi", rank=5)
assert "are ignored since they are assigned by the MPI runtime" in str(caught[0].message)
rank = dist.get_rank()
assert dist.get_world_size() == 2 and dist.is_initialized()
os.environ["EMBER_TEST_BACKEND"] = "mpi"
T._collectives(rank, 2)
result = T._ddp_unused(rank, 2)
assert result[0] == [[0.5, 0.5], [0.5, 0.5]] and result[3] == result[1], result
dist.destroy_process_group()
sys.stdout.write(f"rank {{rank}} OK\\n")  # one write: the ranks share a pipe
"""


def test_mpi_backend_through_mpi4py():
    """The "mpi" backend when the optional mpi4py is installed, under a real MPI launcher."""
    import shutil
    import subprocess
    import sys
    pytest.importorskip("mpi4py")
    here = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    launcher = shutil.which("mpiexec.hydra", path=here) or shutil.which("mpiexec", path=here)
    if launcher is None:
        pytest.skip("mpi4py is installed but no mpiexec was found")
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.pathsep.join([os.path.dirname(os.path.dirname(here))] + [p for p in os.environ.get(
        "PYTHONPATH", "").split(os.pathsep) if p])
    env = dict(os.environ, PYTHONPATH=path, OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    out = subprocess.run([launcher, "-n", "2", sys.executable, "-c",
                          _MPI_SCRIPT.format(here=here)],
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-3000:]
    assert sorted(out.stdout.split("\n"))[-2:] == ["rank 0 OK", "rank 1 OK"], out.stdout


def test_post_accumulate_grad_hook():
    """What DDP's reduction hangs on: called with the leaf once its .grad holds the sum."""
    a = ember.ones(2, requires_grad=True)
    _raises(RuntimeError, "post accumulate grad hooks cannot be registered on non-leaf tensors",
            (a * 2).register_post_accumulate_grad_hook, print)
    _raises(RuntimeError, "cannot register a hook on a tensor that doesn't require gradient",
            ember.ones(2).register_post_accumulate_grad_hook, print)
    seen = []
    handle = a.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (a * 3 + a).sum().backward()
    (a * 3).sum().backward()
    ember.autograd.grad((a * 3).sum(), a)  # accumulates nothing: no call
    handle.remove()
    (a * 3).sum().backward()
    assert seen == [[4., 4.], [7., 7.]] and a.grad.tolist() == [10., 10.]


def test_ddp_starts_each_bucket_while_backward_runs(monkeypatch):
    """The last layer's bucket is reduced before the first layer's gradient exists."""
    dist.init_process_group("gloo", store=dist.HashStore(), rank=0, world_size=1)
    try:
        ember.manual_seed(0)
        net = ember.nn.Sequential(ember.nn.Linear(3, 4), ember.nn.Tanh(), ember.nn.Linear(4, 2))
        model = DDP(net, bucket_cap_mb=1e-5)  # a bucket per parameter
        events, real = [], dist.all_reduce

        def logged(tensor, *args, **kwargs):
            events.append(f"reduce {tensor.numel()}")
            return real(tensor, *args, **kwargs)
        monkeypatch.setattr(dist, "all_reduce", logged)
        net[0].weight.register_hook(lambda g: events.append("first layer's grad"))
        model(ember.ones(5, 3)).sum().backward()
        assert events.index("reduce 2") < events.index("first layer's grad")  # last bias
        assert events[-1] == "reduce 12"  # the first layer's weight, last
        assert net[0].weight.grad is not None
    finally:
        dist.destroy_process_group()


def _ddp_hooks(rank, world):
    from ember.distributed.algorithms.ddp_comm_hooks import default_hooks as hooks
    x, y = _data()
    xs, ys = x.chunk(world)[rank], y.chunk(world)[rank]
    grads, seen = {}, []

    def summing(state, bucket):  # a hook of one's own: the sum, not the mean
        seen.append((bucket.index(), bucket.is_last(), len(bucket.parameters()),
                     [tuple(g.shape) for g in bucket.gradients()]))
        return dist.all_reduce(bucket.buffer(), async_op=True).get_future().then(
            lambda fut: fut.value()[0])

    for name, hook in [("none", None), ("allreduce", hooks.allreduce_hook),
                       ("fp16", hooks.fp16_compress_hook), ("bf16", hooks.bf16_compress_hook),
                       ("sum", summing),
                       ("fp16 wrapped", hooks.fp16_compress_wrapper(hooks.allreduce_hook))]:
        model = DDP(_model(seed=1), bucket_cap_mb=1e-4)
        if hook is not None:
            model.register_comm_hook(None, hook)
        _loss(model, xs, ys).backward()
        grads[name] = [p.grad.numpy() for p in model.parameters()]
    with pytest.raises(RuntimeError, match="can only be called once"):
        model.register_comm_hook(None, hooks.allreduce_hook)
    return grads, seen


def test_ddp_communication_hooks():
    results = _launch(_ddp_hooks)
    grads, seen = results[0]
    assert seen[-1][1] and not seen[0][1] and seen[0][0] == 0
    for name, tol in [("allreduce", 0), ("fp16", 1e-3), ("bf16", 1e-2), ("fp16 wrapped", 1e-3)]:
        for a, b in zip(grads[name], grads["none"]):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol, err_msg=name)
    for a, b in zip(grads["sum"], grads["none"]):
        np.testing.assert_allclose(a, 2 * b, rtol=1e-6, err_msg="sum")
    assert results[1][0]["none"][0].tolist() == grads["none"][0].tolist()


def _p2p_batch_and_monitored_barrier(rank, world):
    mine, theirs = ember.full((3,), float(rank)), ember.zeros(3)
    ops = [dist.P2POp(dist.isend, mine, 1 - rank), dist.P2POp(dist.irecv, theirs, 1 - rank)]
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    with pytest.raises(ValueError, match="Each op is expected"):
        dist.batch_isend_irecv([ops[0], "send"])
    with pytest.raises(ValueError, match="Invalid ``op``"):
        dist.P2POp(dist.all_reduce, mine, 0)
    dist.monitored_barrier(timeout=datetime.timedelta(seconds=10))
    message = None
    if rank == 0:
        try:
            dist.monitored_barrier(timeout=datetime.timedelta(seconds=1))
        except RuntimeError as e:
            message = str(e)
    else:
        time.sleep(2)  # never arrives at the second barrier
    return theirs.tolist(), message


def test_batch_isend_irecv_and_monitored_barrier():
    results = _launch(_p2p_batch_and_monitored_barrier)
    assert results[0] == ([1.0] * 3, "Rank 1 failed to pass monitoredBarrier in 1000 ms")
    assert results[1] == ([0.0] * 3, None)
