"""The default planners (`torch.distributed.checkpoint.default_planner`). A nested state
dict is flattened to dotted keys ("optim.state.0.exp_avg"); a tensor is one item, a DTensor
its rank's shard (Shard placements give the chunk's offset in the global tensor), anything
else pickled bytes. Items several ranks hold (a plain tensor, a replicated shard) are
written once, by the rank with the fewest bytes planned so far. A load reads, for each of
its tensors (or DTensor shards), the overlap with every stored chunk, so the reading world's
layout need not be the writing one's."""
import dataclasses
import io

from .metadata import (BytesStorageMetadata, ChunkStorageMetadata, Metadata, MetadataIndex,
                       TensorProperties, TensorStorageMetadata)
from .planner import (LoadItemType, LoadPlan, LoadPlanner, ReadItem, SavePlan, SavePlanner,
                      TensorWriteData, WriteItem, WriteItemType)

__all__ = ["DefaultSavePlanner", "DefaultLoadPlanner", "create_default_local_save_plan",
           "create_default_local_load_plan", "create_default_global_save_plan"]


# ---- nested <-> flat state dicts --------------------------------------------------------------
def _is_tensorlike(value):
    from ..._tensor import Tensor
    from ..tensor import DTensor
    return isinstance(value, (Tensor, DTensor))


def _holds_more(value):
    """Whether a list is walked into (it holds tensors or containers that do), as PyTorch's
    traversal does; a list of plain values is one item."""
    values = value.values() if isinstance(value, dict) else value
    return any(_is_tensorlike(v) or (isinstance(v, dict) and v) or
               (isinstance(v, list) and _holds_more(v)) for v in values)


def flatten_state_dict(state_dict):
    """({dotted key: leaf}, {dotted key: its path of keys and list indices})."""
    flat, mappings = {}, {}

    def walk(path, value):
        if isinstance(value, dict) and value and path or isinstance(value, list) and \
                _holds_more(value):
            for key, item in (value.items() if isinstance(value, dict) else enumerate(value)):
                walk(path + (key,), item)
            return
        fqn = ".".join(str(p) for p in path)
        if fqn in flat:
            raise ValueError(f"duplicated flatten key {fqn}")
        flat[fqn], mappings[fqn] = value, path

    for key, value in state_dict.items():
        walk((key,), value)
    return flat, mappings


def set_element(root, path, value):
    for key in path[:-1]:
        root = root[key]
    root[path[-1]] = value


# ---- the geometry of shards -------------------------------------------------------------------
def global_shape(value):
    """A tensor's shape, or a DTensor's global one (an FSDP parameter is both a Tensor of
    its shard's shape and a DTensor, whose `_shape` is the whole)."""
    from ..tensor import DTensor
    return value._shape if isinstance(value, DTensor) else value.shape


def local_chunk(value):
    """(the local tensor, its chunk of the global tensor, the global size) of a tensor or a
    DTensor (None for the local tensor of a rank outside the DTensor's mesh). The local
    tensor is a plain Tensor sharing the shard's memory: what is written, or copied into."""
    from ..._tensor import Size, Tensor, _make
    from ..tensor import DTensor
    from ..tensor._utils import compute_local_shape_and_global_offset
    if isinstance(value, DTensor):
        size = global_shape(value)
        shape, offset = compute_local_shape_and_global_offset(size, value.device_mesh,
                                                              value.placements)
        local = value.to_local() if offset != () else None
        if local is not None and type(local) is not Tensor:
            local = _make(Tensor, local._array, local._device, version=local._vc)
        offset = offset or (0,) * len(shape)
        return local, ChunkStorageMetadata(Size(offset), Size(shape)), Size(size)
    return value, ChunkStorageMetadata(Size((0,) * value.dim()), Size(value.shape)), value.shape


def _overlap(want, have):
    """(offsets in the wanted chunk, offsets in the stored chunk, lengths) of their common
    block, or None if they do not meet."""
    dest, src, lengths = [], [], []
    for w_off, w_len, h_off, h_len in zip(want.offsets, want.sizes, have.offsets, have.sizes):
        start, stop = max(w_off, h_off), min(w_off + w_len, h_off + h_len)
        if stop <= start:
            return None
        dest.append(start - w_off)
        src.append(start - h_off)
        lengths.append(stop - start)
    return dest, src, lengths


def narrow(tensor, offsets, lengths):
    for dim, (start, length) in enumerate(zip(offsets, lengths)):
        if start != 0 or length != tensor.size(dim):
            tensor = tensor.narrow(dim, start, length)
    return tensor


# ---- plans ------------------------------------------------------------------------------------
def create_default_local_save_plan(state_dict, is_coordinator):
    """Every rank plans every value it holds (a DTensor: its shard); the coordinator's
    global plan keeps one writer of each."""
    from ..tensor import DTensor
    items = []
    for fqn, value in state_dict.items():
        if not _is_tensorlike(value):
            items.append(WriteItem(MetadataIndex(fqn), WriteItemType.BYTE_IO))
            continue
        local, chunk, size = local_chunk(value)
        if local is None or (0 in tuple(chunk.sizes) and 0 not in tuple(size)):
            continue  # this rank holds none of it
        kind = WriteItemType.SHARD if isinstance(value, DTensor) else WriteItemType.TENSOR
        properties = TensorProperties.create_from_tensor(local)
        items.append(WriteItem(MetadataIndex(fqn, chunk.offsets), kind,
                               tensor_data=TensorWriteData(chunk, properties, size)))
    return SavePlan(items)


def _dedup(all_plans, to_lowest_rank=False):
    """Each item several ranks planned kept by one of them: the one with the fewest bytes
    so far, heaviest items placed first (or the lowest rank holding it)."""
    holders, sizes = {}, {}
    for rank, plan in enumerate(all_plans):
        for item in plan.items:
            holders.setdefault(item.index, []).append(rank)
            sizes[item.index] = item.tensor_storage_size() or 0
    load = [0] * len(all_plans)
    keep = {}
    for index in sorted(holders, key=lambda idx: -sizes[idx]):
        rank = min(holders[index], key=lambda r: (0 if to_lowest_rank else load[r], r))
        keep[index] = rank
        load[rank] += sizes[index]
    return [dataclasses.replace(plan, items=[i for i in plan.items if keep[i.index] == rank])
            for rank, plan in enumerate(all_plans)]


def create_default_global_save_plan(all_plans, rewrite_index_hints=True):
    """(the plans with each item's index hint, the checkpoint's Metadata)."""
    md, new_plans = {}, []
    for plan in all_plans:
        items = []
        for item in plan.items:
            if item.type == WriteItemType.BYTE_IO:
                md[item.index.fqn] = BytesStorageMetadata()
                items.append(item)
                continue
            data = item.tensor_data
            entry = md.setdefault(item.index.fqn, TensorStorageMetadata(
                data.properties, data.size, []))
            if not isinstance(entry, TensorStorageMetadata):
                raise ValueError(f"{item.index.fqn} is a tensor on one rank and not on another")
            if rewrite_index_hints:
                item = dataclasses.replace(item, index=dataclasses.replace(
                    item.index, index=len(entry.chunks)))
            entry.chunks.append(data.chunk)
            items.append(item)
        new_plans.append(dataclasses.replace(plan, items=items))
    return new_plans, Metadata(md)


def create_default_local_load_plan(state_dict, metadata, strict=True):
    items = []
    for fqn, value in state_dict.items():
        md = metadata.state_dict_metadata.get(fqn)
        if md is None:
            if strict:
                raise RuntimeError(f"Missing key in checkpoint state_dict: {fqn}.")
            continue
        if isinstance(md, BytesStorageMetadata):
            index = MetadataIndex(fqn)
            items.append(ReadItem(LoadItemType.BYTE_IO, index, (0,), index, (0,), (0,)))
            continue
        if not _is_tensorlike(value):
            raise ValueError(f"{fqn} is a tensor in the checkpoint and "
                             f"{type(value).__name__} in the state_dict to load")
        if tuple(md.size) != tuple(global_shape(value)):
            raise ValueError(f"Size mismatch between saved {md.size} and current: "
                             f"{global_shape(value)} for {fqn}")
        local, want, _ = local_chunk(value)
        if local is None:
            continue
        for i, have in enumerate(md.chunks):
            common = _overlap(want, have)
            if common is not None:
                dest, src, lengths = common
                items.append(ReadItem(LoadItemType.TENSOR, MetadataIndex(fqn, want.offsets),
                                      tuple(dest), MetadataIndex(fqn, have.offsets, i),
                                      tuple(src), tuple(lengths)))
    return LoadPlan(items)


class DefaultSavePlanner(SavePlanner):
    def __init__(self, flatten_state_dict=True, flatten_sharded_tensors=True,
                 dedup_replicated_tensors=None, dedup_save_to_lowest_rank=False,
                 enable_plan_caching=False):
        self.flatten_state_dict = flatten_state_dict
        self.dedup_save_to_lowest_rank = dedup_save_to_lowest_rank
        self.mappings = {}

    def set_up_planner(self, state_dict, storage_meta=None, is_coordinator=False):
        from ..tensor import DTensor, Replicate
        if self.flatten_state_dict:
            state_dict, self.mappings = flatten_state_dict(state_dict)
        # a Partial DTensor is summands: what is written is their reduction
        self.state_dict = {k: v.redistribute(v.device_mesh, [
            Replicate() if p.is_partial() else p for p in v.placements])
            if isinstance(v, DTensor) and any(p.is_partial() for p in v.placements) else v
            for k, v in state_dict.items()}
        self.is_coordinator = is_coordinator

    def create_local_plan(self):
        plan = create_default_local_save_plan(self.state_dict, self.is_coordinator)
        if self.flatten_state_dict:
            plan = dataclasses.replace(plan, planner_data=self.mappings)
        return plan

    def create_global_plan(self, all_plans):
        all_plans = _dedup(all_plans, self.dedup_save_to_lowest_rank)
        plans, metadata = create_default_global_save_plan(all_plans)
        if self.flatten_state_dict:
            merged = {}
            for plan in plans:
                merged.update(plan.planner_data or {})
            metadata = dataclasses.replace(metadata, planner_data=merged)
        return plans, metadata

    def finish_plan(self, new_plan):
        return new_plan

    def resolve_data(self, write_item):
        value = self.lookup_object(write_item.index)
        if write_item.type == WriteItemType.BYTE_IO:
            from ...serialization import save
            buffer = io.BytesIO()
            save(value, buffer)
            return buffer
        return local_chunk(value)[0].detach().cpu().contiguous()

    def lookup_object(self, index):
        return self.state_dict[index.fqn]


class DefaultLoadPlanner(LoadPlanner):
    """`allow_partial_load`: keys of the state dict the checkpoint lacks are left as they
    are (else RuntimeError)."""

    def __init__(self, flatten_state_dict=True, flatten_sharded_tensors=True,
                 allow_partial_load=False):
        self.flatten_state_dict = flatten_state_dict
        self.allow_partial_load = allow_partial_load
        self.mappings = {}

    def set_up_planner(self, state_dict, metadata=None, is_coordinator=False):
        self.original_state_dict = state_dict
        if self.flatten_state_dict:
            state_dict, self.mappings = flatten_state_dict(state_dict)
        self.state_dict, self.metadata, self.is_coordinator = state_dict, metadata, \
            is_coordinator

    def create_local_plan(self):
        return create_default_local_load_plan(self.state_dict, self.metadata,
                                              not self.allow_partial_load)

    def create_global_plan(self, global_plan):
        return global_plan

    def finish_plan(self, central_plan):
        return central_plan

    def load_bytes(self, read_item, value):
        """The stored object, read as a weights-only load reads: no code from the file runs."""
        from ...serialization import load
        obj = load(value, weights_only=True)
        fqn = read_item.dest_index.fqn
        self.state_dict[fqn] = obj
        if self.flatten_state_dict:
            set_element(self.original_state_dict, self.mappings[fqn], obj)
        else:
            self.original_state_dict[fqn] = obj

    def resolve_tensor(self, read_item):
        local = local_chunk(self.lookup_tensor(read_item.dest_index))[0]
        return narrow(local.detach(), read_item.dest_offsets, read_item.lengths)

    def commit_tensor(self, read_item, tensor):
        """resolve_tensor handed out a view of the state dict's tensor: the copy is in."""

    def lookup_tensor(self, index):
        return self.state_dict[index.fqn]
