"""What goes wrong in real jobs, on the gloo backend: ranks that call mismatched collectives,
a collective that raises on one rank only, reductions a dtype cannot take, and a job that
destroys its group and initialises again. Each must end in an error on every rank (never a
wait until the timeout, never a silently wrong result). Every wait is bounded (see
`_launch`), so a regression fails rather than hangs."""
import os
import socket

import pytest

import ember
import ember.distributed as dist

from .test_distributed import _launch


def _error(fn, *args, **kwargs):
    """(type name, message) of what fn raises; None when it returns."""
    try:
        fn(*args, **kwargs)
    except Exception as e:
        return type(e).__name__, str(e)
    return None


MISMATCH = "Is there a distributed collective mismatch in your code?"


def _mismatches(rank, world):
    from ember.distributed import gloo
    out = {}
    # shapes that differ: the small (whole-array) schedule and the ring
    out["shape"] = _error(dist.all_reduce, ember.ones(3 + rank))
    ring = gloo.RING_MIN_BYTES // 4 + 2
    out["ring"] = _error(dist.all_reduce, ember.ones(ring + rank))
    # one rank below the ring's threshold, one above: each waited for the other's schedule
    out["schedule"] = _error(dist.all_reduce, ember.ones(10 if rank == 0 else ring))
    # dtypes that differ: a float32 reduced with a float64 used to mix silently
    out["dtype"] = _error(dist.all_reduce,
                          ember.ones(3, dtype=ember.float32 if rank == 0 else ember.float64))
    # a broadcast into a tensor of another dtype used to cast silently
    t = ember.full((3,), 5.0) if rank == 0 else ember.zeros(3, dtype=ember.int64)
    out["broadcast"] = _error(dist.broadcast, t, 0)
    out["all_gather"] = _error(dist.all_gather, [ember.zeros(2 + rank)] * world,
                               ember.ones(2 + rank))
    # split sizes the ranks disagree on
    out["all_to_all"] = _error(dist.all_to_all_single, ember.zeros(5), ember.arange(5.),
                               [2, 3], [2, 3])
    # after all that the group still works
    ok = ember.ones(2) * (rank + 1)
    dist.all_reduce(ok)
    out["after"] = ok.tolist()
    return out


def test_mismatched_collectives_raise_on_every_rank_and_leave_the_group_usable():
    results = _launch(_mismatches)
    for rank in (0, 1):
        got = results[rank]
        assert got.pop("after") == [3.0, 3.0]
        for case in ("shape", "dtype", "all_gather", "all_to_all"):
            assert got[case][0] == "RuntimeError" and MISMATCH in got[case][1], (rank, case)
        # in the ring the rank that sees the mismatch tells the other, which raises at once
        for case in ("ring", "schedule"):
            assert got[case][0] in ("RuntimeError", "DistBackendError")
            assert MISMATCH in got[case][1], got[case]
    assert "Rank 1 sent a torch.float32 [4] tensor where this rank has a torch.float32 [3] " \
        "one" in results[0]["shape"][1]
    assert "Rank 0 sent a torch.float32 [3] tensor where this rank has a torch.float64 [3]" \
        in results[1]["dtype"][1]
    assert results[0]["broadcast"] is None  # the root sends; the receiver refuses
    assert results[1]["broadcast"][0] == "RuntimeError"
    assert "torch.float32 [3] tensor where this rank has a torch.int64 [3]" \
        in results[1]["broadcast"][1]


def _one_rank_raises(rank, world):
    # the root cannot pickle what it is asked to broadcast: before, the other rank waited
    # for the object until the group's timeout
    objects = [lambda: 1] if rank == 0 else [None]
    failed = _error(dist.broadcast_object_list, objects, src=0)
    t = ember.ones(1)
    dist.all_reduce(t)
    return failed, t.item()


def test_a_collective_that_raises_on_one_rank_fails_the_others_at_once():
    results = _launch(_one_rank_raises)
    (kind0, message0), total0 = results[0]
    (kind1, message1), total1 = results[1]
    assert total0 == total1 == 2.0
    assert kind0 == "AttributeError" and "pickle" in message0
    assert kind1 == "DistBackendError"
    assert message1.startswith("[gloo] Rank 0 failed this collective, so it cannot complete "
                               "here either. Rank 0: AttributeError: ")


@pytest.mark.parametrize("dtype", ["int64", "uint8", "bool"])
def test_average_of_integers_raises_as_pytorchs_gloo(torch, dtype):
    def run(lib):
        lib.distributed.init_process_group("gloo", store=lib.distributed.HashStore(), rank=0,
                                           world_size=1)
        try:
            t = lib.tensor([1, 2, 3]).to(getattr(lib, dtype))
            errors = [_error(lib.distributed.all_reduce, t, op=lib.distributed.ReduceOp.AVG),
                      _error(lib.distributed.reduce, t, 0, op=lib.distributed.ReduceOp.AVG)]
            complex_band = _error(lib.distributed.all_reduce, lib.tensor([1 + 1j]),
                                  op=lib.distributed.ReduceOp.BAND)
            return errors, complex_band, t.tolist()
        finally:
            lib.distributed.destroy_process_group()
    assert run(ember) == run(torch)


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_destroy_then_init_again_on_the_same_port(monkeypatch):
    # the rendezvous store's server used to outlive its group, holding MASTER_PORT
    monkeypatch.setitem(os.environ, "MASTER_ADDR", "127.0.0.1")
    monkeypatch.setitem(os.environ, "MASTER_PORT", str(_free_port()))
    for _ in range(2):
        dist.init_process_group("gloo", rank=0, world_size=1)
        t = ember.ones(2)
        dist.all_reduce(t)
        dist.destroy_process_group()
    assert not dist.is_initialized()


def _late_rank(rank, world):
    import datetime
    import time
    short = datetime.timedelta(seconds=0.3)  # the job's own timeout is 15 s
    group = dist.new_group([0, 1], timeout=short)
    if rank == 1:
        time.sleep(2.0)  # rank 0 gives up first, then tells this rank
    out = [_error(dist.barrier, timeout=short),
           _error(dist.all_reduce, ember.ones(1), group=group)]
    t = ember.ones(1)
    dist.all_reduce(t)
    return out, t.item()


def test_barrier_and_new_group_timeouts_bound_the_wait():
    # both were ignored: the wait was the job's timeout (30 minutes by default)
    results = _launch(_late_rank)
    (barrier0, group0), total0 = results[0]
    (barrier1, group1), total1 = results[1]
    assert total0 == total1 == 2.0
    timed_out = ("RuntimeError", "[gloo] Timed out waiting 300ms for recv operation to complete")
    assert barrier0 == group0 == timed_out
    # rank 0 had sent its part before it gave up: the late rank completes with it
    assert barrier1 is None and group1 is None


def test_a_taken_port_raises_pytorchs_dist_network_error(torch):
    def message(lib):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            with pytest.raises(lib.distributed.DistNetworkError) as info:
                lib.distributed.TCPStore("127.0.0.1", port, 1, True)
        return str(info.value).replace(str(port), "PORT")
    assert message(ember) == message(torch)


def _swapped_order(rank, world):
    t, u = ember.ones(3) * (rank + 1), ember.ones(3) * (rank + 10)
    ops = [lambda: dist.all_reduce(t), lambda: dist.broadcast(u, 0)]
    errors = [_error(op) for op in (ops if rank == 0 else ops[::-1])]
    ok = ember.ones(1)
    dist.all_reduce(ok)
    return errors, t.tolist(), u.tolist(), ok.item()


def test_collectives_called_in_another_order_raise_instead_of_mixing_data():
    # rank 1's broadcast used to take rank 0's all_reduce message as the broadcast data
    results = _launch(_swapped_order)
    errors0, t0, u0, ok0 = results[0]
    errors1, t1, u1, ok1 = results[1]
    assert ok0 == ok1 == 2.0
    assert (t0, t1, u1) == ([1.0] * 3, [2.0] * 3, [11.0] * 3)  # nothing received was used
    assert errors1[0] == ("RuntimeError", "[gloo] Rank 0 runs all_reduce where this rank runs "
                          "broadcast (the group's collective number 1). " + MISMATCH +
                          " Every rank must call the same collectives, in the same order.")
    assert errors1[1][1].startswith("[gloo] Rank 0 runs broadcast where this rank runs "
                                    "all_reduce (the group's collective number 2).")
    assert errors0[0][0] == "DistBackendError"
    assert "Rank 1: RuntimeError: [gloo] Rank 0 runs all_reduce" in errors0[0][1]
    assert errors0[1] is None  # (the root of the broadcast only sends)
