"""DeviceMesh, DTensor's placements and layout conversions, and the functional collectives:
beside PyTorch's in one process (a world of one), and between two processes, where shards
are gathered, partial sums reduced and gradients flow back as PyTorch's do."""
import numpy as np
import pytest

import ember
import ember.distributed as dist
from ember.distributed import _functional_collectives as funcol
from ember.distributed.tensor import (DTensor, Partial, Replicate, Shard, distribute_tensor,
                                      init_device_mesh)
from ember.distributed.tensor._utils import compute_local_shape_and_global_offset
from ember.distributed.tensor.placement_types import _StridedShard
from tests.distributed.test_distributed import _free_port, _launch


def _placements(lib):
    from importlib import import_module
    pt = import_module(lib.__name__ + ".distributed.tensor.placement_types")
    S, R, P, SS = pt.Shard, pt.Replicate, pt.Partial, pt._StridedShard
    return [str(S(0)), repr(S(1)), str(R()), repr(R()), str(P()), repr(P("max")),
            str(SS(0, split_factor=2)), repr(SS(1, split_factor=3)),
            S(0) == S(0), S(0) == S(1), S(0) == SS(0, split_factor=2), R() == R(), P() == P("avg"),
            hash(S(2)) == hash(S(2)), hash(R()), S(0).is_shard(), S(0).is_shard(1),
            R().is_replicate(), P().is_partial(), P().is_partial("max"), P().reduce_op,
            [S.local_shard_size_and_offset(*a) for a in
             [(10, 4, 3), (10, 4, 0), (3, 4, 3), (2, 4, 3), (8, 2, 1)]],
            [(p.tolist(), pad) for p, pad in
             zip(*S(0)._split_tensor(lib.arange(10.0), 4, with_padding=True))],
            [p.tolist() for p in S(0)._split_tensor(lib.arange(2.0), 4,
                                                     with_padding=False)[0]]]


def test_placements_match_pytorchs(torch):
    assert _placements(ember) == _placements(torch)


@pytest.fixture
def world_of_one(torch):
    """ember's and PyTorch's default groups, each a world of one."""
    for lib in (ember, torch):
        lib.distributed.init_process_group(
            "gloo", init_method=f"tcp://127.0.0.1:{_free_port()}", rank=0, world_size=1)
    yield
    for lib in (ember, torch):
        lib.distributed.destroy_process_group()


def _single(lib):
    from importlib import import_module
    dt = import_module(lib.__name__ + ".distributed.tensor")
    utils = import_module(lib.__name__ + ".distributed.tensor._utils")
    mesh = dt.init_device_mesh("cpu", (1, 1), mesh_dim_names=("dp", "tp"))
    seen = [repr(mesh), repr(mesh["tp"]), mesh.ndim, mesh.shape, mesh.size(), mesh.size(1),
            mesh.mesh.tolist(), str(mesh.mesh.dtype), mesh.mesh_dim_names,
            mesh.get_local_rank("tp"), mesh.get_coordinate(), mesh["tp"] == mesh["tp"],
            utils.compute_local_shape_and_global_offset((10, 4), mesh,
                                                        [dt.Shard(0), dt.Shard(1)])]
    for call in (lambda: mesh.get_group(), lambda: mesh["xx"], lambda: mesh.size(2),
                 lambda: dt.init_device_mesh("cpu", (2,)),
                 lambda: dt.init_device_mesh("cpu", (1,), mesh_dim_names=("a", "b")),
                 lambda: dt.DTensor.from_local(lib.ones(2))):
        with pytest.raises(Exception) as info:
            call()
        seen.append((type(info.value).__name__, str(info.value)))
    tp = mesh["tp"]
    t = lib.arange(12.0).reshape(3, 4).requires_grad_()
    d = dt.distribute_tensor(t, tp, [dt.Shard(-1)])
    seen += [repr(d.placements), tuple(d.shape), d.stride(), str(d.dtype), d.requires_grad,
             d.to_local().tolist(), d.full_tensor().tolist(), d.to_local().requires_grad]
    r = d.redistribute(tp, [dt.Replicate()])
    p = dt.DTensor.from_local(lib.ones(2, 2), tp, [dt.Partial()])
    seen += [repr(r.placements), p.full_tensor().tolist(),
             repr(p.redistribute(tp, [dt.Shard(0)]).placements)]
    local = lib.arange(6.0).reshape(2, 3).requires_grad_()
    whole = dt.DTensor.from_local(local, tp, [dt.Shard(0)]).full_tensor()
    (whole * lib.arange(6.0).reshape(2, 3)).sum().backward()
    seen.append(local.grad.tolist())
    return seen


def test_single_process_mesh_and_dtensor_match_pytorchs(torch, world_of_one):
    ours, theirs = _single(ember), _single(torch)
    theirs = [x.replace("torch.distributed.tensor", "ember.distributed.tensor")
              if isinstance(x, str) else x for x in theirs]
    assert ours == theirs


def _two_ranks(rank, world):
    mesh = init_device_mesh("cpu", (2,), mesh_dim_names=("tp",))
    out = {"coordinate": mesh.get_coordinate(), "local_rank": mesh.get_local_rank()}
    whole = ember.arange(15.0).reshape(5, 3)  # 5 rows on 2 ranks: 3 and 2
    d = distribute_tensor(whole if rank == 0 else ember.zeros(5, 3), mesh, [Shard(0)])
    out["local"] = d.to_local().tolist()  # rank 1's data came from rank 0
    out["full"] = d.full_tensor().tolist()
    out["offset"] = compute_local_shape_and_global_offset((5, 3), mesh, [Shard(0)])
    out["cols"] = d.redistribute(mesh, [Shard(1)]).to_local().tolist()
    partial = DTensor.from_local(ember.full((2,), float(rank + 1)), mesh, [Partial()])
    out["summed"] = partial.full_tensor().tolist()
    out["partial_to_shard"] = partial.redistribute(mesh, [Shard(0)]).to_local().tolist()
    out["split"] = distribute_tensor(ember.ones(4), mesh, [Partial()]).to_local().tolist()
    fused = ember.arange(8.0)  # two fused parts [0..3], [4..7], each split over the ranks
    strided = distribute_tensor(fused, mesh, [_StridedShard(0, split_factor=2)])
    out["strided"] = (strided.to_local().tolist(), strided.full_tensor().tolist())
    # gradients: a gathered shard gets its piece of the (replicated) gradient; a replicated
    # tensor sharded gets the gathered gradient
    local = ember.full((2, 2), float(rank)).requires_grad_()
    gathered = DTensor.from_local(local, mesh, [Shard(0)]).full_tensor()
    (gathered * ember.arange(8.0).reshape(4, 2)).sum().backward()
    out["grad_gather"] = local.grad.tolist()
    rep = ember.ones(4, requires_grad=True)
    shard = DTensor.from_local(rep, mesh, [Replicate()]).redistribute(mesh, [Shard(0)])
    (shard.to_local() * (rank + 1)).sum().backward()
    out["grad_scatter"] = rep.grad.tolist()
    x = ember.tensor([1.0, 2.0, 3.0, 4.0]) * (rank + 1)
    out["funcol"] = (funcol.all_reduce(x, "sum", mesh).tolist(),
                     funcol.all_gather_tensor(x[:2], 0, mesh).tolist(),
                     funcol.reduce_scatter_tensor(x, "sum", 0, (mesh, 0)).tolist(),
                     funcol.all_to_all_single(x, [3, 1] if rank else [1, 3],
                                              [3, 1] if rank else [1, 3], [0, 1]).tolist(),
                     funcol.wait_tensor(x) is x)
    y = x.clone().requires_grad_()
    funcol.all_to_all_single_autograd(y, None, None, mesh).mul(ember.arange(4.0)).sum() \
        .backward()
    out["a2a_grad"] = y.grad.tolist()
    return out


def test_two_ranks_gather_reduce_and_pass_gradients():
    got = _launch(_two_ranks)
    r0, r1 = got[0], got[1]
    assert (r0["coordinate"], r1["coordinate"]) == ((0,), (1,))
    assert (r0["local_rank"], r1["local_rank"]) == (0, 1)
    whole = np.arange(15.0).reshape(5, 3)
    assert r0["local"] == whole[:3].tolist() and r1["local"] == whole[3:].tolist()
    assert r0["full"] == r1["full"] == whole.tolist()
    assert r0["offset"] == ((3, 3), (0, 0)) and r1["offset"] == ((2, 3), (3, 0))
    assert r0["cols"] == whole[:, :2].tolist() and r1["cols"] == whole[:, 2:].tolist()
    assert r0["summed"] == r1["summed"] == [3.0, 3.0]
    assert (r0["partial_to_shard"], r1["partial_to_shard"]) == ([3.0], [3.0])
    assert r0["split"] == r1["split"] == [0.5] * 4
    assert r0["strided"] == ([0.0, 1.0, 4.0, 5.0], list(np.arange(8.0)))
    assert r1["strided"] == ([2.0, 3.0, 6.0, 7.0], list(np.arange(8.0)))
    assert r0["grad_gather"] == [[0.0, 1.0], [2.0, 3.0]]
    assert r1["grad_gather"] == [[4.0, 5.0], [6.0, 7.0]]
    assert r0["grad_scatter"] == r1["grad_scatter"] == [1.0, 1.0, 2.0, 2.0]
    assert r0["funcol"] == ([3.0, 6.0, 9.0, 12.0], [1.0, 2.0, 2.0, 4.0], [3.0, 6.0],
                            [1.0, 2.0, 4.0, 6.0], True)
    assert r1["funcol"] == ([3.0, 6.0, 9.0, 12.0], [1.0, 2.0, 2.0, 4.0], [9.0, 12.0],
                            [2.0, 3.0, 4.0, 8.0], True)
    assert r0["a2a_grad"] == [0.0, 1.0, 0.0, 1.0] and r1["a2a_grad"] == [2.0, 3.0, 2.0, 3.0]


def _four_ranks(rank, world):
    mesh = init_device_mesh("cpu", (2, 2), mesh_dim_names=("dp", "tp"))
    out = {"coordinate": mesh.get_coordinate(), "tp_group": dist.get_process_group_ranks(
        mesh.get_group("tp")), "dp_sub": mesh["dp"].mesh.tolist()}
    whole = ember.arange(42.0).reshape(7, 6)
    nested = distribute_tensor(whole, mesh, [Shard(0), Shard(0)])  # 7 rows: 4|3 then 2|2, 2|1
    out["nested"] = nested.to_local().tolist()
    out["offset"] = compute_local_shape_and_global_offset((7, 6), mesh, [Shard(0), Shard(0)])
    out["nested_full"] = nested.full_tensor().tolist() == whole.tolist()
    moved = nested.redistribute(mesh, [Replicate(), Shard(1)])
    out["moved"] = moved.to_local().tolist()
    back = moved.redistribute(mesh, [Shard(0), Shard(0)])
    out["back"] = back.to_local().tolist() == out["nested"]
    partial = DTensor.from_local(ember.ones(2) * (rank + 1), mesh, [Partial(), Replicate()])
    out["partial"] = partial.full_tensor().tolist()
    return out


def test_four_ranks_nested_shards_on_a_two_dimensional_mesh():
    got = _launch(_four_ranks, world=4)
    whole = np.arange(42.0).reshape(7, 6)
    rows = {(0, 0): whole[0:2], (0, 1): whole[2:4], (1, 0): whole[4:6], (1, 1): whole[6:7]}
    for rank, r in got.items():
        coordinate = (rank // 2, rank % 2)
        assert r["coordinate"] == coordinate
        assert r["tp_group"] == [2 * coordinate[0], 2 * coordinate[0] + 1]
        assert r["dp_sub"] == [coordinate[1], 2 + coordinate[1]]
        assert r["nested"] == rows[coordinate].tolist(), rank
        want_shape = rows[coordinate].shape
        assert r["offset"] == (want_shape, (2 * (2 * coordinate[0] + coordinate[1]), 0))
        assert r["nested_full"] and r["back"]
        assert r["moved"] == whole[:, 3 * coordinate[1]:3 * coordinate[1] + 3].tolist()
        # rank r holds r+1 on the dp dimension's summands: ranks 0,2 (tp 0) sum 1+3, 1,3: 2+4
        assert r["partial"] == ([4.0, 4.0] if coordinate[1] == 0 else [6.0, 6.0])
