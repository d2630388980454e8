"""The process-group API of `torch.distributed`: initialisation (rendezvous through a
store), groups, and the collectives on tensors, which write their results into the given
tensors in place as PyTorch's do."""
import datetime
import os
import warnings

from .. import dtypes
from ..device import backend_of
from . import _group
from ._checks import (RedOpType, ReduceOp, _check_op, _check_single_tensor,  # noqa: F401
                      _check_tensor_list, _list_check, _same_dtype, _size_check)
from . import gloo as _gloo
from . import nccl as _nccl
from ._rendezvous import local_address, rendezvous
from ._transport import Mesh
from .store import PrefixStore, TCPStore, _seconds

__all__ = ["Backend", "ReduceOp", "ProcessGroup", "Work", "group", "GroupMember",
           "is_available", "is_initialized", "is_gloo_available", "is_mpi_available",
           "is_nccl_available", "is_torchelastic_launched", "init_process_group",
           "destroy_process_group", "new_group", "get_rank", "get_world_size", "get_backend",
           "get_process_group_ranks", "get_global_rank", "get_group_rank",
           "all_reduce", "broadcast", "reduce", "all_gather", "all_gather_into_tensor",
           "reduce_scatter_tensor", "reduce_scatter", "gather", "scatter", "send", "recv",
           "isend", "irecv", "barrier", "all_to_all", "all_to_all_single", "all_gather_object",
           "gather_object",
           "broadcast_object_list", "scatter_object_list", "default_pg_timeout", "P2POp",
           "batch_isend_irecv", "monitored_barrier"]

default_pg_timeout = datetime.timedelta(minutes=30)
Work = _group.Work
ProcessGroup = _group.ProcessGroup


class Backend(str):
    """A backend name, lower-cased: `Backend("GLOO") == "gloo"`."""

    UNDEFINED, GLOO, NCCL, UCC, MPI = "undefined", "gloo", "nccl", "ucc", "mpi"
    backend_list = [UNDEFINED, GLOO, NCCL, UCC, MPI]

    def __new__(cls, name):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got: "
                             f"{type(name)}")
        return str.__new__(cls, name.lower())


class _State:
    default_pg = None
    mesh = None
    groups = {}        # ProcessGroup -> backend name
    own_store = None   # the store init_process_group's rendezvous made
    group_count = 0
    init_count = 0


_state = _State()


class _WorldMeta(type):
    @property
    def WORLD(cls):
        return _state.default_pg


class GroupMember(metaclass=_WorldMeta):
    NON_GROUP_MEMBER = -100


class group(metaclass=_WorldMeta):
    pass


# ---- availability and initialisation ----------------------------------------------------
def is_available():
    return True


def is_initialized():
    return _state.default_pg is not None


def is_gloo_available():
    return True


def is_mpi_available():
    """True when the optional mpi4py (the `distributed` extra) is installed."""
    import importlib.util
    return importlib.util.find_spec("mpi4py") is not None


def is_nccl_available():
    """True where CuPy has NCCL (`cupy.cuda.nccl`): PyTorch's "built with NCCL"."""
    return _nccl.is_available()


def is_torchelastic_launched():
    return os.getenv("TORCHELASTIC_RUN_ID") is not None


def _default_group():
    if _state.default_pg is None:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return _state.default_pg


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    if _state.default_pg is not None:
        raise ValueError("trying to initialize the default process group twice!")
    assert (store is None) or (init_method is None), \
        "Cannot specify both init_method and store."
    if store is not None:
        assert world_size > 0, "world_size must be positive if using store"
        assert rank >= 0, "rank must be non-negative if using store"
    elif init_method is None:
        init_method = "env://"
    config, name, cuda_nccl = _backends(backend)
    if cuda_nccl and backend is not None:
        _check_nccl()
    if name == Backend.MPI and not is_mpi_available():
        raise RuntimeError("Distributed package doesn't have MPI built in. MPI is only "
                           "included if you build PyTorch from source on a host that has MPI "
                           "installed.")
    if name not in (Backend.GLOO, Backend.MPI, Backend.NCCL):
        raise AssertionError(f"Unknown backend type {name}")
    timeout = default_pg_timeout if timeout is None else timeout
    seconds = timeout.total_seconds()
    if name == Backend.MPI:  # the MPI runtime says who is who: no rendezvous
        if world_size != -1 or rank != -1:
            warnings.warn(f"For MPI backend, world_size ({world_size}) and rank ({rank}) are "
                          "ignored since they are assigned by the MPI runtime.")
        from .mpi import world_group
        _install(None, world_group(seconds))
        return
    if store is None:
        store, rank, world_size, host = rendezvous(init_method, rank, world_size, timeout)
        _state.own_store = store  # (destroy_process_group releases it; a user's store stays)
    else:
        host = local_address(store.host) if isinstance(store, TCPStore) else "127.0.0.1"
    _state.init_count += 1
    prefix = PrefixStore(f"{group_name or 'default_pg'}/{_state.init_count}", store)
    mesh = Mesh(prefix, rank, world_size, seconds, host)  # (also under nccl: gloo subgroups)
    mesh.store, mesh.prefix = store, prefix
    if name == Backend.NCCL:
        pg = _nccl.ProcessGroupNCCL(prefix, range(world_size), 0, rank, seconds, device_id)
    else:
        pg = _gloo.ProcessGroupGloo(mesh, range(world_size), 0)
        if cuda_nccl:  # "cpu:gloo,cuda:nccl" (and no backend named): cuda tensors to NCCL
            pg.cuda_group = _nccl.ProcessGroupNCCL(prefix, range(world_size), 0, rank,
                                                   seconds, device_id)
    _install(mesh, pg, config)


def _backends(backend):
    """(what get_backend answers, the backend of the group itself, whether the group's cuda
    tensors go to an NCCL group beside it) for init_process_group's `backend`: a name, or
    PyTorch's "cpu:gloo,cuda:nccl" device map (no name: gloo, and NCCL for cuda tensors
    where NCCL is available, as PyTorch's default map)."""
    if not backend:
        return Backend.UNDEFINED, Backend.GLOO, is_nccl_available()
    config = Backend(backend)
    if ":" not in config:
        return config, config, config == Backend.NCCL
    try:
        pairs = dict(p.strip().split(":") for p in config.split(","))
    except ValueError:
        raise ValueError(f"The custom backend string argument is invalid: {backend}") from None
    host, cuda = pairs.get("cpu"), pairs.get("cuda")
    if host is None:
        return config, Backend(cuda or Backend.GLOO), cuda == Backend.NCCL
    return config, Backend(host), cuda == Backend.NCCL and host != Backend.NCCL


def _check_nccl():
    if not is_nccl_available():
        raise RuntimeError("Distributed package doesn't have NCCL built in")
    from ..cuda import device_count
    if device_count() == 0:
        raise ValueError("ProcessGroupNCCL is only supported with GPUs, no GPUs found!")


def _install(mesh, pg, config=None):
    _state.mesh, _state.group_count = mesh, 0
    _state.default_pg, _state.groups = pg, {pg: Backend(config or pg.backend)}


def destroy_process_group(group=None):
    if group is None or group is _state.default_pg:
        assert _state.default_pg is not None, "Process group cannot be None"
        for pg in _state.groups:
            _shutdown(pg)
        if _state.mesh is not None:  # (an MPI job has none)
            _state.mesh.close()
        _release(_state.own_store)
        _state.default_pg, _state.mesh, _state.groups = None, None, {}
        _state.own_store = None
    elif group in _state.groups:
        _shutdown(group)
        del _state.groups[group]


def _release(store):
    """Free the rendezvous store that init_process_group made: PyTorch's goes with its
    group, so a job that destroys its group can initialise again on the same port."""
    while isinstance(store, PrefixStore):
        store = store.underlying_store
    if isinstance(store, TCPStore):
        store._release()


def _shutdown(pg):
    pg.shutdown()
    if getattr(pg, "cuda_group", None) is not None:
        pg.cuda_group.shutdown()


def new_group(ranks=None, timeout=None, backend=None, pg_options=None,
              use_local_synchronization=False, group_desc=None, device_id=None,
              sort_ranks=True):
    world = _default_group()
    size = world.size()
    ranks = list(range(size)) if ranks is None else list(ranks)
    if sort_ranks:
        ranks = sorted(ranks)
    if len(ranks) > size:
        raise ValueError("the new group's world size should be less or equal to the world "
                         "size set by init_process_group")
    for r in ranks:
        if r < 0 or r >= size:
            raise ValueError("The new group's rank should be within the world_size set by "
                             "init_process_group")
    _state.group_count += 1  # every rank calls new_group, members or not: ids agree
    gid, name = _state.group_count, Backend(backend) if backend else None
    cuda = getattr(world, "cuda_group", None)
    if name == Backend.NCCL and world.backend != Backend.NCCL:
        _check_nccl()
        me = world.ranks[world.rank()]
        pg = _nccl.ProcessGroupNCCL(_state.mesh.prefix, ranks, gid, me, _state.mesh.timeout,
                                    device_id) if me in ranks else None
    elif name == Backend.GLOO and world.backend == Backend.NCCL:
        me = world.ranks[world.rank()]
        pg = _gloo.ProcessGroupGloo(_state.mesh, ranks, gid) if me in ranks else None
    else:
        pg = world.subgroup(ranks, gid)
        if pg is not None and cuda is not None and (name is None or ":" in name):
            pg.cuda_group = cuda.subgroup(ranks, gid)
    if pg is None:
        return GroupMember.NON_GROUP_MEMBER
    if timeout is not None and isinstance(pg, _gloo.ProcessGroupGloo):
        pg.recv_timeout = _seconds(timeout)  # (its collectives time out on their own)
    _state.groups[pg] = Backend(name or _state.groups[world])
    return pg


def _group(group):
    return _default_group() if group is None else group


def _not_member(group):
    return group == GroupMember.NON_GROUP_MEMBER


def get_rank(group=None):
    if _not_member(group):
        return -1
    return _group(group).rank()


def get_world_size(group=None):
    if _not_member(group):
        return -1
    return _group(group).size()


def get_backend(group=None):
    pg = _group(group)
    if _not_member(pg):
        raise ValueError("Invalid process group specified")
    return _state.groups.get(pg, Backend.GLOO)


def get_process_group_ranks(group):
    return list(_group(group).ranks)


def get_global_rank(group, group_rank):
    pg = _group(group)
    if not 0 <= group_rank < pg.size():
        raise ValueError(f"Group rank {group_rank} is not part of group {pg}")
    return pg.ranks[group_rank]


def get_group_rank(group, global_rank):
    pg = _group(group)
    if global_rank not in pg.ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {pg}")
    return pg.ranks.index(global_rank)


# ---- argument checks (the rest are in _checks) ----------------------------------------------
def _root(pg, rank, group_rank, name, fname):
    """The group rank of a root given as a global `rank` or as `group_rank`."""
    if group_rank is not None:
        if rank is not None:
            raise ValueError(f"Can not specify both {name} and group_{name}")
        r = group_rank
    elif rank is None:
        r = 0
    elif pg is _state.default_pg:
        r = rank
    elif rank in pg.ranks:
        r = pg.ranks.index(rank)
    else:
        raise ValueError(f"Global rank {rank} is not part of group {pg}")
    if not 0 <= r < pg.size():
        raise RuntimeError(f"ProcessGroupGloo::{fname}: invalid root rank: {r}")
    return r


# ---- moving arrays in and out of tensors -----------------------------------------------------
def _host(t):
    return t._host()


def _store(t, arr):
    """Write `arr` into `t`'s memory, as PyTorch's collectives write into their tensors; data
    of another dtype or size means the ranks called mismatched collectives."""
    if arr.dtype != t._array.dtype or arr.size != t.numel():
        raise RuntimeError(f"[gloo] Received a {dtypes.FROM_NUMPY[arr.dtype]} tensor of "
                           f"{arr.size} elements for a {t.dtype} tensor of {t.numel()}. Is "
                           "there a distributed collective mismatch in your code?")
    t._array[...] = backend_of(t._device).from_host(arr, t._device.index).reshape(t._array.shape)


def _run(pg, fn, async_op, key=None, inline=False):
    work = pg.submit(fn, wait=not async_op) if key is None else \
        pg.submit_keyed(key, fn, inline)
    if async_op:
        return work
    work.wait(pg.timeout)
    return None


# ---- collectives ----------------------------------------------------------------------------
def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    _check_single_tensor(tensor, "tensor")
    if _not_member(group):
        return None
    pg = _group(group)
    nccl = _nccl.device_group(pg, [tensor])
    if nccl is not None:
        return nccl.all_reduce(tensor, op, async_op)
    _check_op(op, [tensor], "all_reduce")

    def fn(key):
        arr = _host(tensor)
        out = pg.all_reduce(key, arr, op)
        if out is not arr:  # (a contiguous host tensor was reduced in its own memory)
            _store(tensor, out)
        return [tensor], -1
    return _run(pg, fn, async_op)


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    _check_single_tensor(tensor, "tensor")
    if _not_member(group):
        return None
    pg = _group(group)
    root = _root(pg, src, group_src, "src", "broadcast")
    nccl = _nccl.device_group(pg, [tensor])
    if nccl is not None:
        return nccl.broadcast(tensor, root, async_op)

    def fn(key):
        got = pg.broadcast(key, _host(tensor), root)
        if pg.rank() != root:
            _store(tensor, got)
        return [tensor], -1
    return _run(pg, fn, async_op)


def reduce(tensor, dst=None, op=ReduceOp.SUM, group=None, async_op=False, group_dst=None):
    _check_single_tensor(tensor, "tensor")
    if _not_member(group):
        return None
    pg = _group(group)
    root = _root(pg, dst, group_dst, "dst", "reduce")
    nccl = _nccl.device_group(pg, [tensor])
    if nccl is not None:
        return nccl.reduce(tensor, root, op, async_op)
    _check_op(op, [tensor], "reduce")

    def fn(key):
        out = pg.reduce(key, _host(tensor), op, root)
        if out is not None:
            _store(tensor, out)
        return [tensor], -1
    return _run(pg, fn, async_op)


def all_gather(tensor_list, tensor, group=None, async_op=False):
    _check_tensor_list(tensor_list, "tensor_list")
    _check_single_tensor(tensor, "tensor")
    _same_dtype(tensor_list, [tensor])
    if _not_member(group):
        return None
    pg = _group(group)
    _list_check("allgather", "output tensor", tensor_list, pg)
    _size_check("allgather", "tensor", tensor_list, tensor.shape)
    nccl = _nccl.device_group(pg, tensor_list + [tensor])
    if nccl is not None:
        return nccl.all_gather(list(tensor_list), tensor, async_op)

    def fn(key):
        for t, arr in zip(tensor_list, pg.exchange(key, _host(tensor))):
            _store(t, arr)
        return list(tensor_list), -1
    return _run(pg, fn, async_op)


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    _check_single_tensor(input_tensor, "input_tensor")
    _check_single_tensor(output_tensor, "output_tensor")
    _same_dtype([output_tensor, input_tensor])
    if _not_member(group):
        return None
    pg = _group(group)
    n, shape = pg.size(), tuple(input_tensor.shape)
    expected = ((shape[0] * n,) + shape[1:]) if shape else (n,)
    if tuple(output_tensor.shape) != expected:  # the inputs concatenated along dim 0
        _size_check("allgather", "tensor", [output_tensor], shape)
    nccl = _nccl.device_group(pg, [output_tensor, input_tensor])
    if nccl is not None:
        return nccl.all_gather_into_tensor(output_tensor, input_tensor, async_op)

    def fn(key):
        import numpy as np
        arrays = pg.exchange(key, _host(input_tensor))
        _store(output_tensor, np.stack([np.asarray(a).reshape(shape) for a in arrays]))
        return [output_tensor], -1
    return _run(pg, fn, async_op)


def reduce_scatter_tensor(output, input, op=ReduceOp.SUM, group=None, async_op=False):
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    _same_dtype([output, input])
    if _not_member(group):
        return None
    pg = _group(group)
    nccl = _nccl.device_group(pg, [output, input])
    if nccl is None:
        _check_op(op, [input], "reduce_scatter_tensor")
    n = pg.size()
    out_shape, in_shape = tuple(output.shape), tuple(input.shape)
    if input.numel() != n * output.numel() or (in_shape and out_shape and
                                               in_shape[0] != out_shape[0] * n):
        raise RuntimeError(f"output tensor size must be equal to world_size times input "
                           f"tensor size (got output {list(out_shape)}, input "
                           f"{list(in_shape)}, world_size {n})")
    if nccl is not None:
        return nccl.reduce_scatter_tensor(output, input, op, async_op)

    def fn(key):
        _store(output, pg.reduce_scatter(key, _host(input).reshape((n,) + out_shape), op))
        return [output], -1
    return _run(pg, fn, async_op)


def reduce_scatter(output, input_list, op=ReduceOp.SUM, group=None, async_op=False):
    _check_single_tensor(output, "output")
    _check_tensor_list(input_list, "input_list")
    _same_dtype([output], input_list)
    if _not_member(group):
        return None
    pg = _group(group)
    nccl = _nccl.device_group(pg, [output] + input_list)
    if nccl is None:
        _check_op(op, [output], "reduce_scatter")
    _list_check("reduce_scatter", "input tensor", input_list, pg)
    _size_check("reduce_scatter", "tensor", input_list, output.shape)
    if nccl is not None:
        return nccl.reduce_scatter(output, list(input_list), op, async_op)

    def fn(key):
        _store(output, pg.reduce_scatter(key, [_host(t) for t in input_list], op))
        return [output], -1
    return _run(pg, fn, async_op)


def all_to_all(output_tensor_list, input_tensor_list, group=None, async_op=False):
    _check_tensor_list(output_tensor_list, "output_tensor_list")
    _check_tensor_list(input_tensor_list, "input_tensor_list")
    _same_dtype(output_tensor_list, input_tensor_list)
    if _not_member(group):
        return None
    pg = _group(group)
    _list_check("alltoall", "output tensor", output_tensor_list, pg)
    _list_check("alltoall", "input tensor", input_tensor_list, pg)
    nccl = _nccl.device_group(pg, output_tensor_list + input_tensor_list)
    if nccl is not None:
        return nccl.all_to_all(list(output_tensor_list), list(input_tensor_list), async_op)

    def fn(key):
        for p in pg._peers():
            pg.send_array(p, key, _host(input_tensor_list[p]))
        _store(output_tensor_list[pg.rank()], _host(input_tensor_list[pg.rank()]))
        for p in pg._peers():
            _store(output_tensor_list[p], pg.recv_array(p, key)[1])
        return list(output_tensor_list), -1
    return _run(pg, fn, async_op)


def all_to_all_single(output, input, output_split_sizes=None, input_split_sizes=None,
                      group=None, async_op=False):
    """all_to_all on dim-0 pieces of `input` and `output` (equal pieces without split
    sizes): piece i of `input` goes to rank i, piece j of `output` comes from rank j."""
    _check_single_tensor(output, "output")
    _check_single_tensor(input, "input")
    _same_dtype([output, input])
    if _not_member(group):
        return None
    n = _group(group).size()

    def pieces(t, sizes):
        rows = t.shape[0] if t.dim() else 1
        if not sizes:  # (c10d's checkSplitSizes, its messages)
            if rows % n:
                raise RuntimeError("Tensor's dim 0 does not divide equally across group size")
            sizes = [rows // n] * n
        if len(sizes) != n:
            raise RuntimeError("Number of tensor splits not equal to group size")
        if sum(sizes) != rows:
            raise RuntimeError("Split sizes doesn't match total dim 0 size")
        starts = [sum(sizes[:i]) for i in range(n)]
        return [t[s:s + k] for s, k in zip(starts, sizes)]
    return all_to_all(pieces(output, output_split_sizes), pieces(input, input_split_sizes),
                      group, async_op)


def gather(tensor, gather_list=None, dst=None, group=None, async_op=False, group_dst=None):
    _check_single_tensor(tensor, "tensor")
    if gather_list:
        _check_tensor_list(gather_list, "gather_list")
    else:
        gather_list = []
    _same_dtype([tensor], gather_list)
    if _not_member(group):
        return None
    pg = _group(group)
    root = _root(pg, dst, group_dst, "dst", "gather")
    if pg.rank() == root:
        if not gather_list:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        if len(gather_list) != pg.size():
            raise RuntimeError(f"ProcessGroupGloo::gather: Incorrect output list size "
                               f"{len(gather_list)}. Output list size should be {pg.size()}, "
                               "same as size of the process group.")
        _size_check("gather", "tensor", gather_list, tensor.shape)
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")
    nccl = _nccl.device_group(pg, [tensor] + gather_list)
    if nccl is not None:
        return nccl.gather(tensor, list(gather_list), root, async_op)

    def fn(key):
        arrays = pg.gather(key, _host(tensor), root)
        if arrays is not None:
            for t, arr in zip(gather_list, arrays):
                _store(t, arr)
        return list(gather_list), -1
    return _run(pg, fn, async_op)


def scatter(tensor, scatter_list=None, src=None, group=None, async_op=False, group_src=None):
    _check_single_tensor(tensor, "tensor")
    if scatter_list:
        _check_tensor_list(scatter_list, "scatter_list")
    else:
        scatter_list = []
    _same_dtype([tensor], scatter_list)
    if _not_member(group):
        return None
    pg = _group(group)
    root = _root(pg, src, group_src, "src", "scatter")
    if pg.rank() == root:
        if not scatter_list:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        if len(scatter_list) != pg.size():
            raise RuntimeError(f"ProcessGroupGloo::scatter: Incorrect input list size "
                               f"{len(scatter_list)}. Input list size should be {pg.size()}, "
                               "same as size of the process group.")
        _size_check("scatter", "tensor", scatter_list, tensor.shape)
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    nccl = _nccl.device_group(pg, [tensor] + scatter_list)
    if nccl is not None:
        return nccl.scatter(tensor, list(scatter_list), root, async_op)

    def fn(key):
        arrays = [_host(t) for t in scatter_list] if pg.rank() == root else None
        _store(tensor, pg.scatter(key, arrays, root, like=_host(tensor)))
        return [tensor], -1
    return _run(pg, fn, async_op)


def _peer(pg, rank, group_rank, name, what):
    r = _root(pg, rank, group_rank, name, what) if (rank is not None or group_rank is not None) \
        else None
    if r == pg.rank():
        word = "destination" if name == "dst" else "source"
        raise ValueError(f"Invalid {word} rank: {word} rank should not be the same as the rank "
                         "of the current process.")
    return r


def isend(tensor, dst=None, group=None, tag=0, group_dst=None):
    _check_single_tensor(tensor, "tensor")
    if _not_member(group):
        return None
    pg = _group(group)
    peer = _peer(pg, dst, group_dst, "dst", "send")
    if peer is None:
        raise ValueError("Either dst or group_dst must be specified")
    nccl = _nccl.device_group(pg, [tensor])
    if nccl is not None:
        return nccl.send(tensor, peer)
    data = _host(tensor).copy()  # what is sent is the tensor as it is now

    def fn(key):
        pg.send_array(peer, key, data)
        return [tensor], -1
    return _run(pg, fn, True, key=("p2p", pg.group_id, tag), inline=True)


def irecv(tensor, src=None, group=None, tag=0, group_src=None):
    _check_single_tensor(tensor, "tensor")
    if _not_member(group):
        return None
    pg = _group(group)
    peer = _peer(pg, src, group_src, "src", "recv")
    nccl = _nccl.device_group(pg, [tensor])
    if nccl is not None:
        return nccl.recv(tensor, peer)

    def fn(key):
        sender, arr = pg.recv_array(peer, key)
        if tuple(arr.shape) != tuple(tensor.shape) and arr.size != tensor.numel():
            raise RuntimeError(f"[gloo] recv: received {arr.size} elements, expected "
                               f"{tensor.numel()}")
        _store(tensor, arr)
        return [tensor], pg.ranks[sender]
    return _run(pg, fn, True, key=("p2p", pg.group_id, tag))


def send(tensor, dst=None, group=None, tag=0, group_dst=None):
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def recv(tensor, src=None, group=None, tag=0, group_src=None):
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    work.wait()
    return work._source


def barrier(group=None, async_op=False, device_ids=None, timeout=None):
    if _not_member(group):
        return None
    pg = _group(group)
    nccl = pg if isinstance(pg, _nccl.ProcessGroupNCCL) else getattr(pg, "cuda_group", None)
    if nccl is not None and (device_ids or nccl is pg):
        return nccl.barrier(device_ids, async_op)
    import numpy as np
    seconds = None if timeout is None else _seconds(timeout)  # (None: the group's timeout)
    return _run(pg, lambda key: (pg.exchange(key, np.zeros(0, np.uint8), seconds), None)[1],
                async_op)


class P2POp:
    """One send or receive for `batch_isend_irecv`: `op` is `isend` or `irecv`."""

    def __init__(self, op, tensor, peer=None, group=None, tag=0, group_peer=None):
        if op not in (isend, irecv):
            raise ValueError("Invalid ``op``. Expected ``op`` to be of type "
                             "``torch.distributed.isend`` or ``torch.distributed.irecv``.")
        _check_single_tensor(tensor, "tensor")
        self.op, self.tensor, self.group, self.tag = op, tensor, _group(group), tag
        self.peer, self.group_peer = peer, group_peer

    def __repr__(self):
        return (f"P2POp(op={self.op.__name__}, tensor shape={list(self.tensor.shape)}, "
                f"peer={self.peer})")


def batch_isend_irecv(p2p_op_list):
    """Start every send and receive of the list; their Works, in the same order."""
    if not isinstance(p2p_op_list, list) or not p2p_op_list or \
            not all(isinstance(p, P2POp) for p in p2p_op_list):
        raise ValueError("Invalid ``p2p_op_list``. Each op is expected to to be of type "
                         "``torch.distributed.P2POp``.")
    if not all(p.group is p2p_op_list[0].group for p in p2p_op_list):
        raise ValueError("All ops need to use the same group.")
    pg = p2p_op_list[0].group
    nccl = _nccl.device_group(pg, [p.tensor for p in p2p_op_list])
    if nccl is not None:  # one NCCL group call, as PyTorch's coalesced send/recv
        return nccl.batch_isend_irecv([
            (p.op is isend, p.tensor, _peer(pg, p.peer, p.group_peer,
                                            "dst" if p.op is isend else "src",
                                            "send" if p.op is isend else "recv"))
            for p in p2p_op_list])
    return [p.op(p.tensor, p.peer, p.group, p.tag, p.group_peer) for p in p2p_op_list]


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """A barrier that names the ranks that did not reach it: every other rank reports to the
    group's rank 0, which waits at most `timeout` for each (all of them with
    `wait_all_ranks`) and then releases them; gloo only, as PyTorch's."""
    if _not_member(group):
        return None
    pg = _group(group)
    if pg.backend != Backend.GLOO:
        raise ValueError("monitored_barrier is only implemented for GLOO backend.")
    seconds = _seconds(default_pg_timeout if timeout is None else timeout)
    import numpy as np
    token = np.zeros(0, np.uint8)

    def fn(key):
        if pg.rank() != 0:
            pg.send_array(0, key + ("arrived",), token)
            pg.recv_array(0, key + ("released",), timeout=seconds)
            return None
        late = []
        for r in pg._peers():
            try:
                pg.recv_array(r, key + ("arrived",), timeout=seconds)
            except RuntimeError:
                late.append(r)
                if not wait_all_ranks:
                    break
        if late:
            who = f"Rank {late[0]}" if len(late) == 1 else \
                "Ranks " + ", ".join(map(str, late))
            raise RuntimeError(f"{who} failed to pass monitoredBarrier in "
                               f"{round(seconds * 1000)} ms")
        for r in pg._peers():
            pg.send_array(r, key + ("released",), token)
        return None
    _run(pg, fn, False)


# the *_object collectives (pickles through the group's own messages)
from ._object_collectives import (all_gather_object, broadcast_object_list,  # noqa: E402
                                  gather_object, scatter_object_list)
