"""The `*_object` collectives of `torch.distributed`: Python objects, pickled (the user asked
for objects, as PyTorch's pickle), through the group's own point-to-point messages or its
exchange (an NCCL group moves the bytes through device memory)."""
from . import distributed_c10d as _c10d  # (which imports this module at its end)

__all__ = ["all_gather_object", "gather_object", "broadcast_object_list",
           "scatter_object_list"]


def _objects(pg, fn):
    work = pg.submit(fn, wait=True)
    work.wait(pg.timeout)
    return work._result


def all_gather_object(object_list, obj, group=None):
    if _c10d._not_member(group):
        return None
    pg = _c10d._group(group)
    gathered = _objects(pg, lambda key: (pg.exchange_objects(key, obj), -1))
    object_list[:len(gathered)] = gathered


def gather_object(obj, object_gather_list=None, dst=None, group=None, group_dst=None):
    if _c10d._not_member(group):
        return None
    pg = _c10d._group(group)
    root = _c10d._root(pg, dst, group_dst, "dst", "gather")

    def fn(key):
        if pg.rank() != root:
            pg.send_object(root, key, obj)
            return [], -1
        return [obj if p == root else pg.recv_object(p, key) for p in range(pg.size())], -1
    gathered = _objects(pg, fn)
    if pg.rank() == root:
        object_gather_list[:len(gathered)] = gathered


def broadcast_object_list(object_list, src=None, group=None, device=None, group_src=None):
    if _c10d._not_member(group):
        return None
    pg = _c10d._group(group)
    root = _c10d._root(pg, src, group_src, "src", "broadcast")

    def fn(key):
        if pg.rank() == root:
            for p in pg._peers():
                pg.send_object(p, key, list(object_list))
            return list(object_list), -1
        return pg.recv_object(root, key), -1
    object_list[:] = _objects(pg, fn)


def scatter_object_list(scatter_object_output_list, scatter_object_input_list=None, src=None,
                        group=None, group_src=None):
    if _c10d._not_member(group):
        return None
    if not isinstance(scatter_object_output_list, list) or len(scatter_object_output_list) < 1:
        raise ValueError("Expected argument scatter_object_output_list to be a list of size at "
                         "least 1.")
    pg = _c10d._group(group)
    root = _c10d._root(pg, src, group_src, "src", "scatter")

    def fn(key):
        if pg.rank() == root:
            for p in pg._peers():
                pg.send_object(p, key, scatter_object_input_list[p])
            return [scatter_object_input_list[root]], -1
        return [pg.recv_object(root, key)], -1
    scatter_object_output_list[0] = _objects(pg, fn)[0]
