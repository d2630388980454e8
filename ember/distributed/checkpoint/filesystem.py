"""A checkpoint as a directory (`torch.distributed.checkpoint.filesystem`), in PyTorch's
layout: rank i writes its items to `__i_0.distcp`, each tensor as a `torch.save` archive
and each object as its pickled bytes, one after the other; the coordinator writes
`.metadata`, the pickled Metadata whose `storage_data` says where each item's bytes lie.
Reading unpickles with the weights-only unpickler: a file cannot make it run code."""
import dataclasses
import enum
import io
import os
import warnings
from dataclasses import dataclass
from typing import Any

from ...futures import Future
from ._safe_pickle import dumps, loads
from .metadata import Metadata, StorageMeta
from .planner import LoadItemType, WriteItemType
from .storage import StorageReader, StorageWriter, WriteResult

__all__ = ["FileSystemWriter", "FileSystemReader", "SerializationFormat"]

_metadata_fn = ".metadata"
DEFAULT_SUFFIX = ".distcp"
CURRENT_DCP_VERSION = "1.0.0"


@dataclass
class _StorageInfo:
    """Where one item's bytes lie: a file of the checkpoint, an offset and a length."""
    relative_path: str
    offset: int
    length: int
    transform_descriptors: Any = None

    def __getstate__(self):
        return {k: v for k, v in self.__dict__.items() if v is not None}

    def __setstate__(self, state):
        self.__dict__.update({"transform_descriptors": None, **state})


@dataclass
class _StoragePrefix:
    prefix: str


class SerializationFormat(enum.Enum):
    TORCH_SAVE = "torch_save"
    SAFETENSORS = "safetensors"


def _done(value):
    future = Future()
    future.set_result(value)
    return future


def _owned(tensor):
    """`tensor` alone in its storage (torch.save writes a view's whole storage)."""
    tensor = tensor.detach().cpu()
    if tensor.untyped_storage().nbytes() != tensor.numel() * tensor.element_size():
        tensor = tensor.clone()
    return tensor


def dump_metadata(metadata, out):
    """`metadata` pickled with PyTorch's names for ember's classes (PyTorch's DCP reads it)."""
    out.write(dumps(metadata))


def load_metadata(data, where):
    """The Metadata pickled in `data`, read weights-only (see _safe_pickle); a damaged file
    is a ValueError naming it."""
    metadata = loads(data, where)
    if not isinstance(metadata, Metadata):
        raise ValueError(f"{where} holds a {type(metadata).__name__}, not checkpoint Metadata")
    return metadata


class _OnPath:
    """What the file system's writer and reader share: a directory as the checkpoint id, and
    a fresh id for each save or load."""

    def _reset_path(self, checkpoint_id):
        if checkpoint_id is not None:
            self.path = os.fspath(checkpoint_id)
        import uuid
        return str(uuid.uuid4())

    @property
    def checkpoint_id(self):
        return self.path

    @classmethod
    def validate_checkpoint_id(cls, checkpoint_id):
        return isinstance(checkpoint_id, (str, os.PathLike))


class FileSystemWriter(_OnPath, StorageWriter):
    """Writes a checkpoint directory. `single_file_per_rank=False` writes a file per item;
    `thread_count`, `per_thread_copy_ahead` and `sync_files` are accepted for PyTorch's
    signature (ember writes from one thread, and syncs when `sync_files`)."""

    def __init__(self, path, single_file_per_rank=True, sync_files=True, thread_count=1,
                 per_thread_copy_ahead=10_000_000, cache_staged_state_dict=False,
                 overwrite=True, _extensions=None,
                 serialization_format=SerializationFormat.TORCH_SAVE, *args, **kwargs):
        self.path = os.fspath(path)
        self.single_file_per_rank = single_file_per_rank
        self.sync_files = sync_files
        self.thread_count = thread_count
        self.overwrite = overwrite
        self.serialization_format = serialization_format
        self.save_id = None

    def reset(self, checkpoint_id=None):
        self.save_id = self._reset_path(checkpoint_id)

    def set_up_storage_writer(self, is_coordinator, *args, **kwargs):
        self.is_coordinator = is_coordinator

    def prepare_local_plan(self, plan):
        os.makedirs(self.path, exist_ok=True)
        if os.path.exists(os.path.join(self.path, self.metadata_path)):
            if not self.overwrite:
                raise RuntimeError(f"Checkpoint already exists and self.overwrite="
                                   f"{self.overwrite}.")
            warnings.warn(f"Detected an existing checkpoint in {self.path}, overwriting since "
                          f"self.overwrite={self.overwrite}. Past version 2.5 of PyTorch, "
                          f"`overwrite` will default to False. Set this variable to True to "
                          f"maintain this functionality or False to raise when an existing "
                          f"checkpoint is found.", stacklevel=2)
        return plan

    def prepare_global_plan(self, plans):
        return [dataclasses.replace(plan, storage_data=_StoragePrefix(f"__{i}_"))
                if plan.storage_data is None else plan for i, plan in enumerate(plans)]

    def write_data(self, plan, planner):
        prefix = plan.storage_data.prefix
        if self.single_file_per_rank:
            groups = [plan.items] if plan.items else []
        else:
            groups = [[item] for item in plan.items]
        results = []
        for count, items in enumerate(groups):
            name = f"{prefix}{count}{DEFAULT_SUFFIX}"
            with open(os.path.join(self.path, name), "wb") as out:
                for item in items:
                    results.append(self._write_item(out, name, item,
                                                    planner.resolve_data(item)))
                if self.sync_files:
                    out.flush()
                    os.fsync(out.fileno())
        return _done(results)

    def _write_item(self, out, name, item, data):
        from ...serialization import save
        offset = out.tell()
        if item.type == WriteItemType.BYTE_IO:
            out.write(data.getbuffer())
        else:
            # an archive of its own: its offsets count from its first byte, which is where
            # a reader's slice of the file starts
            buffer = io.BytesIO()
            save(_owned(data), buffer)
            out.write(buffer.getbuffer())
        return WriteResult(item.index, out.tell() - offset,
                           _StorageInfo(name, offset, out.tell() - offset))

    def finish(self, metadata, results):
        from ...serialization.saving import replace_atomically
        metadata.version = CURRENT_DCP_VERSION
        metadata.storage_data = {r.index: r.storage_data for rank in results for r in rank}
        metadata.storage_meta = self.storage_meta()
        replace_atomically(os.path.join(self.path, self.metadata_path),
                           lambda out: dump_metadata(metadata, out))

    def storage_meta(self):
        return StorageMeta(checkpoint_id=self.checkpoint_id, save_id=self.save_id)

    @property
    def metadata_path(self):
        return _metadata_fn


class FileSystemReader(_OnPath, StorageReader):
    def __init__(self, path, _extension_registry=None):
        self.path = os.fspath(path)
        self.storage_data = {}
        self.load_id = None

    def reset(self, checkpoint_id=None):
        self.storage_data = {}
        self.load_id = self._reset_path(checkpoint_id)

    def read_metadata(self, *args, **kwargs):
        rank = kwargs.get("rank")
        name = _metadata_fn if rank is None else f"__{rank}{_metadata_fn}"
        where = os.path.join(self.path, name)
        with open(where, "rb") as f:
            metadata = load_metadata(f.read(), where)
        if getattr(metadata, "storage_meta", None) is None:
            metadata.storage_meta = StorageMeta()
        metadata.storage_meta.load_id = self.load_id
        return metadata

    def set_up_storage_reader(self, metadata, is_coordinator, *args, **kwargs):
        self.storage_data = metadata.storage_data
        if self.storage_data is None:
            raise ValueError("the checkpoint's metadata says nothing of where its data lies")

    def prepare_local_plan(self, plan):
        return plan

    def prepare_global_plan(self, plans):
        return plans

    def read_data(self, plan, planner):
        by_file = {}
        for item in plan.items:
            info = self.storage_data.get(item.storage_index)
            if info is None:
                raise ValueError(f"the checkpoint's metadata has no storage entry for "
                                 f"{item.storage_index}")
            by_file.setdefault(info.relative_path, []).append((item, info))
        for relative_path, reads in by_file.items():
            path = os.path.join(self.path, relative_path)
            with open(path, "rb") as f:
                size = os.fstat(f.fileno()).st_size
                for item, info in sorted(reads, key=lambda r: r[1].offset):
                    if info.transform_descriptors:
                        raise ValueError(f"{path}: stream transforms "
                                         f"{info.transform_descriptors} are not supported")
                    if info.offset + info.length > size:
                        raise ValueError(
                            f"checkpoint file {path} is truncated: {item.storage_index.fqn} "
                            f"needs bytes {info.offset}..{info.offset + info.length}, the file "
                            f"has {size}")
                    f.seek(info.offset)
                    self._read_item(planner, item, io.BytesIO(f.read(info.length)), path)
        return _done(None)

    @staticmethod
    def _read_item(planner, item, data, path):
        from ...serialization import load
        if item.type == LoadItemType.BYTE_IO:
            planner.load_bytes(item, data)
            return
        try:
            tensor = load(data, map_location="cpu", weights_only=True)
        except Exception as exc:  # noqa: BLE001 (the item's bytes are damaged)
            raise ValueError(f"checkpoint file {path}: the bytes of "
                             f"{item.storage_index.fqn} are not a readable tensor: "
                             f"{type(exc).__name__}: {exc}") from exc
        from ..._tensor import Tensor
        if not isinstance(tensor, Tensor):
            raise ValueError(f"checkpoint file {path}: {item.storage_index.fqn} holds a "
                             f"{type(tensor).__name__}, not a tensor")
        load_into_target(planner, item, tensor)


def load_into_target(planner, item, tensor):
    """The read item's part of a stored `tensor` copied into the tensor the planner resolves
    for it, then committed (PyTorch's size mismatch error where their sizes differ)."""
    from .default_planner import narrow
    tensor = narrow(tensor, item.storage_offsets, item.lengths)
    target = planner.resolve_tensor(item).detach()
    if tuple(target.shape) != tuple(tensor.shape):
        raise ValueError(f"req {item.storage_index} mismatch sizes {target.shape} vs "
                         f"{tensor.shape}")
    target.copy_(tensor)
    planner.commit_tensor(item, target)
