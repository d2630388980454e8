"""Checkpoints as Hugging Face safetensors files (`torch.distributed.checkpoint.hf_storage`).
The writer puts each rank's tensors in `model-0000i-of-0000n.safetensors` files (by
`fqn_to_index_mapping`), recording in the file's `__metadata__` where each tensor's chunk
starts in the whole ("DCP_SHARDING_INFO"), and an index `model.safetensors.index.json`;
with `save_distributed` each rank writes its own `shard-0000r-...` files, merged into whole
tensors by `enable_consolidation`. The reader takes any directory of safetensors files
(those the `safetensors` package writes included), assembling chunks by those offsets."""
import json
import os
from dataclasses import dataclass
from typing import Any

from ...serialization import safetensors as _st
from .filesystem import (FileSystemReader, FileSystemWriter, SerializationFormat, _done,
                         _owned, load_into_target)
from .metadata import (ChunkStorageMetadata, Metadata, MetadataIndex, StorageMeta,
                       TensorProperties, TensorStorageMetadata)
from .planner import WriteItemType
from .storage import WriteResult

__all__ = ["HuggingFaceStorageWriter", "HuggingFaceStorageReader"]

_metadata_fn = "model.safetensors.index.json"
SUFFIX = ".safetensors"
CUSTOM_METADATA_KEY = "DCP_SHARDING_INFO"
SAVED_OFFSETS_KEY = "saved_offsets"
SHARDED_DIR_NAME = "sharded"


@dataclass
class _HFStorageInfo:
    relative_path: str
    shape: Any
    dtype: Any


def _gen_file_name(index, largest_index, shard_index=None):
    name = f"model-{index:05d}-of-{largest_index:05d}"
    if shard_index is not None:
        name = f"shard-{shard_index:05d}-{name}"
    return name + SUFFIX


def _write_index(folder, weight_map, total_size):
    with open(os.path.join(folder, _metadata_fn), "w") as f:
        json.dump({"metadata": {"total_size": total_size}, "weight_map": weight_map}, f,
                  indent=2)


class HuggingFaceStorageWriter(FileSystemWriter):
    def __init__(self, path, fqn_to_index_mapping=None, thread_count=1,
                 save_distributed=False, enable_consolidation=False,
                 thread_count_consolidation=1):
        super().__init__(path, serialization_format=SerializationFormat.SAFETENSORS,
                         thread_count=thread_count)
        self.fqn_to_index_mapping = fqn_to_index_mapping
        self.save_distributed = save_distributed
        self.enable_consolidation = enable_consolidation
        self.consolidated_output_path = None
        if enable_consolidation:
            self.consolidated_output_path = self.path
            self.path = os.path.join(self.path, SHARDED_DIR_NAME)
        self.thread_count_consolidation = thread_count_consolidation

    def prepare_global_plan(self, plans):
        import dataclasses
        out = []
        for i, plan in enumerate(plans, start=1):
            data = {}
            if self.fqn_to_index_mapping is not None:
                data["fqn_to_index_mapping"] = self.fqn_to_index_mapping
            if self.save_distributed:
                data["shard_index"] = i
            out.append(dataclasses.replace(plan, storage_data=data))
        return out

    def write_data(self, plan, planner):
        mapping = plan.storage_data.get("fqn_to_index_mapping")
        shard_index = plan.storage_data.get("shard_index")
        largest = max(mapping.values()) if mapping else 1
        buckets = {}
        for item in plan.items:
            if item.type == WriteItemType.BYTE_IO:
                raise ValueError(f"a safetensors checkpoint holds tensors only; "
                                 f"{item.index.fqn} is not a tensor")
            if mapping is not None and item.index.fqn not in mapping:
                raise KeyError(item.index.fqn)
            buckets.setdefault(mapping[item.index.fqn] if mapping else 1, []).append(item)
        results = []
        for index, items in sorted(buckets.items()):
            name = _gen_file_name(index, largest, shard_index)
            tensors, offsets = {}, {}
            for item in items:
                tensors[item.index.fqn] = _owned(planner.resolve_data(item))
                offsets[item.index.fqn] = {
                    SAVED_OFFSETS_KEY: list(item.tensor_data.chunk.offsets)}
            data = _st.save(tensors, {CUSTOM_METADATA_KEY: json.dumps(offsets),
                                      "DCP_VERSION": "1.0", "format": "pt"})
            with open(os.path.join(self.path, name), "wb") as out:
                out.write(data)
            for item in items:
                t = tensors[item.index.fqn]
                results.append(WriteResult(item.index, t.numel() * t.element_size(),
                                           _HFStorageInfo(name, t.shape, t.dtype)))
        return _done(results)

    def finish(self, metadata, results):
        if self.save_distributed:
            if self.enable_consolidation:
                from ._consolidate_hf_safetensors import consolidate_safetensors_files
                consolidate_safetensors_files(
                    self.path, self.consolidated_output_path,
                    self.fqn_to_index_mapping or dict.fromkeys(metadata.state_dict_metadata, 1),
                    self.thread_count_consolidation)
            return
        weight_map = {r.index.fqn: r.storage_data.relative_path for rank in results
                      for r in rank}
        _write_index(self.path, weight_map,
                     sum(r.size_in_bytes for rank in results for r in rank))

    @property
    def metadata_path(self):
        return _metadata_fn


def read_safetensors_dir(path):
    """{file name: (header entries, the chunk offsets of each tensor, data bytes)} of the
    directory's safetensors files."""
    out = {}
    for name in sorted(os.listdir(path)):
        if not name.endswith(SUFFIX):
            continue
        where = os.path.join(path, name)
        with open(where, "rb") as f:
            data = f.read()
        try:
            header, extra, body = _st.parse(data)
            sharding = json.loads(extra[CUSTOM_METADATA_KEY]) \
                if extra and extra.get(CUSTOM_METADATA_KEY) else {}
            offsets = {key: tuple(sharding[key][SAVED_OFFSETS_KEY]) if key in sharding
                       else (0,) * len(info["shape"]) for key, info in header.items()}
            for key, info in header.items():
                if len(offsets[key]) != len(info["shape"]) or not all(
                        isinstance(o, int) and o >= 0 for o in offsets[key]):
                    raise ValueError(f"tensor {key!r}: bad saved offsets {offsets[key]}")
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{where} is not a readable safetensors checkpoint file: "
                             f"{exc}") from exc
        out[name] = (header, offsets, body)
    return out


class HuggingFaceStorageReader(FileSystemReader):
    def __init__(self, path, thread_count=1):
        super().__init__(path)
        self.thread_count = thread_count

    def read_metadata(self, *args, **kwargs):
        from ..._tensor import Size
        md, storage = {}, {}
        for name, (header, offsets, _) in read_safetensors_dir(self.path).items():
            for key, info in header.items():
                shape, offset = info["shape"], offsets[key]
                dtype = _st._FROM_CODE[info["dtype"]]
                end = [o + s for o, s in zip(offset, shape)]
                entry = md.get(key)
                if entry is None:
                    md[key] = TensorStorageMetadata(TensorProperties(dtype=dtype), Size(end),
                                                    [])
                    entry = md[key]
                entry.chunks.append(ChunkStorageMetadata(Size(offset), Size(shape)))
                entry.size = Size(max(a, b) for a, b in zip(entry.size, end))
                storage[MetadataIndex(key, offset)] = _HFStorageInfo(name, Size(shape), dtype)
        metadata = Metadata(md, storage_data=storage, storage_meta=StorageMeta())
        metadata.storage_meta.load_id = self.load_id
        return metadata

    def read_data(self, plan, planner):
        files = {}
        for item in plan.items:
            info = self.storage_data[MetadataIndex(item.storage_index.fqn,
                                                   item.storage_index.offset)]
            if info.relative_path not in files:
                with open(os.path.join(self.path, info.relative_path), "rb") as f:
                    header, _, body = _st.parse(f.read())
                files[info.relative_path] = (header, body)
            header, body = files[info.relative_path]
            key = item.storage_index.fqn
            load_into_target(planner, item, _st.tensors_of({key: header[key]}, body)[key])
        return _done(None)
